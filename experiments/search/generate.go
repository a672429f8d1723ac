package search

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// Case is one world a search drew: the knobs inside the assumptions and a fault schedule,
// with the choices that generated it and the world seed it runs with.
type Case struct {
	Choices  Choices
	Seed     uint64 // the world's seed (run --seed)
	Knobs    []knobs.KV
	Faults   []Fault
	Duration time.Duration
	// TTL is the lock's lease, which holds and the run's length are drawn in: Redlock's
	// ttl, or the session a ZooKeeper lock lives by; Lease names which ("ttl", "session").
	TTL     time.Duration
	Lease   string
	Clients int
	Nodes   int
	// Servers names the world's servers faults can reach, Nodes of them: redis1…redisN,
	// or a service's own (zk1…zkN), or both (the hybrid lock); the first Masters are
	// Redis's, which alone take Redis's own faults (a key written outside the lock, a
	// failover).
	Servers []string
	Masters int
}

// Fault is one step of a drawn schedule: its action, when it acts, and the words that
// tell it.
type Fault struct {
	Kind string
	At   time.Duration // when On is nil
	On   *Trigger
	// Action is the step's action, as a scenario file's parser would return it.
	Action scenarios.Action
	// Length is how long the fault lasts or how far it moves a clock, for the size of a
	// schedule: shrinking never grows the sum.
	Length time.Duration
	// Text tells what happens, for the story ("client1 pauses for 1.2s").
	Text string
	span span
}

// Trigger makes a fault wait for a client's nth acquisition, After later.
type Trigger struct {
	Client string
	Nth    int
	After  time.Duration
}

// Size is how big a schedule is: its steps, then the sum of their lengths.
func (c *Case) Size() (steps int, length time.Duration) {
	for _, f := range c.Faults {
		length += f.Length
	}
	return len(c.Faults), length
}

// Limits of a drawn world, each a bound on what one choice can ask for.
const (
	maxPerKind = 4  // faults of one kind in a schedule
	lengthStep = 20 // a fault's length is one of this many steps of its range, and 0
	timeSteps  = 20 // a fault's time is one of this many steps of the run
)

// generate draws a case from ch: the assumptions' knobs, the world's shape, then the fault
// schedule, swarm-style (each allowed kind on or off, then how many and how strong). A
// choice of 0 is always the simplest: the knob's default, off, the shortest, the first.
func (s *Spec) generate(ch *chooser, seed uint64) *Case {
	c := &Case{Seed: seed}
	cfg := knobs.DefaultConfig()
	// set sets a knob the world may take (Spec.Check validated the fixed ones, the shape's
	// are inside every limit); setChecked a drawn one, which must leave the world valid.
	set := func(name, value string) bool {
		if cfg.Set(name, value) != nil {
			return false
		}
		c.Knobs = append(c.Knobs, knobs.KV{Name: name, Value: value})
		return true
	}
	setChecked := func(name, value string) bool {
		trial := cfg
		if trial.Set(name, value) != nil || trial.Validate() != nil {
			return false
		}
		return set(name, value)
	}
	if s.Client != "" {
		set("client", s.Client)
	}
	assumed := map[string]bool{}
	for _, a := range s.Assume {
		assumed[a.Knob] = true
		if a.Op == OpEq {
			set(a.Knob, a.Value)
		}
	}
	for _, a := range s.Assume {
		if _, isLength := lengthKnobs[a.Knob]; a.Op == OpEq || isLength {
			continue
		}
		k := ch.draw(101)
		if v, ok := a.pick(k, cfg.Get(a.Knob)); !ok || !setChecked(a.Knob, v) {
			setChecked(a.Knob, a.clamped(cfg.Get(a.Knob)))
		}
	}
	// The world's shape where the user left it open: contenders, how long each holds, and
	// a run long enough for a few holds.
	if !assumed["clients"] {
		set("clients", strconv.Itoa(2+ch.intn(3)))
	}
	c.TTL, c.Lease = cfg.Lock.TTL, "ttl"
	if alg, err := knobs.LookupAlgorithm(cfg.Algorithm); err == nil && alg.RedisMasters(&cfg) == 0 &&
		alg.Service != nil && alg.Service.Name == "zookeeper" {
		c.TTL, c.Lease = cfg.CuratorConfig().SessionTimeout, "session" // it never reads the ttl
	}
	// A client that works past its own validity breaks the lock by itself (the
	// careless-client scenario): a search's clients are careful unless assumed otherwise,
	// so that what it finds is the lock's doing, or a pause's, not the workload's.
	if !assumed["stop_at_deadline"] {
		set("stop_at_deadline", "true")
	}
	if !assumed["hold"] {
		if k := ch.intn(11); k > 0 {
			set("hold", "const("+roundDuration(c.TTL*time.Duration(k)/10).String()+")")
		}
	}
	if !assumed["duration"] {
		d := min(max(c.TTL<<(1+ch.intn(3)), time.Second), time.Hour)
		set("duration", d.String())
	}
	c.Duration, c.Clients = cfg.Duration, cfg.Clients
	if alg, err := knobs.LookupAlgorithm(cfg.Algorithm); err == nil {
		c.Servers = alg.ServerNames(&cfg)
		c.Nodes, c.Masters = len(c.Servers), alg.RedisMasters(&cfg)
	}
	w := world{s: s, ch: ch, c: c, replicas: cfg.EffectiveReplicas(), slewed: map[string]bool{}}
	for _, kind := range s.Faults {
		on := len(ch.used)
		if !ch.flip() {
			continue
		}
		// Each fault of a kind is its own choices, then "another?" (0: no), so that a
		// fault is a span of choices that shrinking can cut out whole (dropFault).
		prev := -1
		for n := 0; n < maxPerKind; n++ {
			start := len(ch.used)
			f, ok := w.fault(kind)
			more := ch.flip()
			if ok {
				f.span = span{start: start, end: len(ch.used), on: on, prev: prev}
				prev = len(c.Faults)
				c.Faults = append(c.Faults, f)
			}
			if !more {
				break
			}
		}
	}
	c.Choices = ch.used
	return c
}

// span is where a fault's choices lie in its case's choices: [start, end), its "another?"
// choice last; on is its kind's on/off choice, prev the kind's fault before it (-1: none).
type span struct{ start, end, on, prev int }

// pick is the value of choice k of a range: 0 is the knob's current value (its default or
// its profile's) clamped into the range, k > 0 the k-th hundredth of the range, rounded.
func (a Assumption) pick(k uint64, current string) (string, bool) {
	if k == 0 {
		return a.clamped(current), true
	}
	p, err := knobs.LookupParam(a.Knob)
	if err != nil {
		return "", false
	}
	lo, err1 := number(p.Unit, false, a.Lo)
	hi, err2 := number(p.Unit, false, a.Hi)
	if err1 != nil || err2 != nil {
		return "", false
	}
	v, err := format(a.Knob, p.Unit, false, lo+(hi-lo)*float64(k)/100)
	return v, err == nil
}

// clamped is current moved into the range.
func (a Assumption) clamped(current string) string {
	p, err := knobs.LookupParam(a.Knob)
	if err != nil {
		return a.Lo
	}
	x, err := number(p.Unit, false, current)
	lo, _ := number(p.Unit, false, a.Lo)
	hi, _ := number(p.Unit, false, a.Hi)
	switch {
	case err != nil || x < lo:
		return a.Lo
	case x > hi:
		return a.Hi
	}
	return current
}

// world draws the faults of one case.
type world struct {
	s        *Spec
	ch       *chooser
	c        *Case
	replicas int
	slewed   map[string]bool // the clocks a clock_slew or clock_drift already moves
}

func (w *world) client() string { return fmt.Sprintf("client%d", 1+w.ch.intn(w.c.Clients)) }
func (w *world) node() string   { return w.c.Servers[w.ch.intn(w.c.Nodes)] }

// redisNode draws a Redis master, for a fault only Redis suffers; false when the world has
// none (a ZooKeeper lock's).
func (w *world) redisNode() (string, bool) {
	if w.c.Masters == 0 {
		return "", false
	}
	return w.c.Servers[w.ch.intn(w.c.Masters)], true
}

// nodes draws a non-empty set of nodes, each in or out.
func (w *world) nodes() []string {
	var out []string
	for _, name := range w.c.Servers {
		if w.ch.flip() {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		out = []string{w.c.Servers[0]}
	}
	return out
}

// length draws a fault's length inside its assumption, or up to the run's length.
func (w *world) length(kind string) time.Duration {
	lo, hi := time.Millisecond, w.c.Duration
	if a, ok := w.s.lengthOf(kind); ok {
		l, _ := time.ParseDuration(a.Lo)
		h, _ := time.ParseDuration(a.Hi)
		lo, hi = max(l, time.Millisecond), max(h, time.Millisecond)
	}
	k := time.Duration(w.ch.intn(lengthStep + 1))
	return min(roundDuration(lo+(hi-lo)*k/lengthStep), hi)
}

// when draws when a fault acts: at a time of the run, or (1) after a client's nth
// acquisition, the moment most stories turn on. Clocks are planned before the run and act
// at a time only.
func (w *world) when(f *Fault, timed bool) {
	if !timed && w.ch.flip() {
		f.On = &Trigger{Client: w.client(), Nth: 1 + w.ch.intn(3),
			After: roundDuration(w.c.TTL * time.Duration(w.ch.intn(timeSteps+1)) / timeSteps)}
		if f.On.After == time.Millisecond && w.c.TTL > 0 {
			f.On.After = 0 // roundDuration's floor: 0 is the simplest delay
		}
		return
	}
	f.At = roundDuration(w.c.Duration * time.Duration(w.ch.intn(timeSteps)) / timeSteps)
	if f.At == time.Millisecond {
		f.At = 0
	}
}

// restart draws a stopped process's return: after a length (0), or never (1). It sets the
// action's restart_after and the fault's length, and returns the words for the story.
func (w *world) restart(kind string, f *Fault) string {
	if w.ch.flip() {
		f.Action.Restart = scenarios.Value{Never: true, Set: true}
		return "stays down"
	}
	f.Length = w.length(kind)
	f.Action.Restart = dur(f.Length)
	return "restarts " + f.Length.String() + " later"
}

// fault draws one fault of kind; false when the world cannot have it (a failover without
// a replica, a clock drift with no room).
func (w *world) fault(kind string) (Fault, bool) {
	f := Fault{Kind: kind, Action: scenarios.Action{Kind: kind}}
	a := &f.Action
	w.when(&f, strings.HasPrefix(kind, "clock_"))
	switch kind {
	case "pause_client":
		a.Client, f.Length = w.client(), w.length(kind)
		a.For = dur(f.Length)
		f.Text = fmt.Sprintf("%s pauses (stop the world) for %s", a.Client, f.Length)
	case "crash_client":
		a.Client = w.client()
		text := w.restart(kind, &f)
		f.Text = a.Client + " crashes and " + text
	case "crash_node", "kill_node", "shutdown_node":
		a.Node = w.node()
		text := w.restart(kind, &f)
		verb := map[string]string{"crash_node": "loses power", "kill_node": "is killed", "shutdown_node": "shuts down"}[kind]
		f.Text = a.Node + " " + verb + " and " + text
	case "pause_node":
		a.Node, f.Length = w.node(), w.length(kind)
		a.For = dur(f.Length)
		f.Text = fmt.Sprintf("%s stalls for %s", a.Node, f.Length)
	case "failover":
		if w.replicas == 0 {
			return f, false
		}
		var ok bool
		if a.Node, ok = w.redisNode(); !ok {
			return f, false
		}
		f.Text = a.Node + "'s replica is promoted"
	case "isolate":
		a.Endpoint, f.Length = w.endpoint(), w.length(kind)
		a.For = dur(f.Length)
		f.Text = fmt.Sprintf("%s is cut off for %s", a.Endpoint, f.Length)
	case "block":
		a.From, a.To, a.BothWays, f.Length = []string{w.client()}, w.nodes(), w.ch.flip(), w.length(kind)
		a.For = dur(f.Length)
		way := "cannot reach"
		if a.BothWays {
			way = "and cannot reach one another:"
		}
		f.Text = fmt.Sprintf("%s %s %s for %s", a.From[0], way, strings.Join(a.To, ", "), f.Length)
	case "clog", "drop", "slow_link":
		from, to := w.client(), w.node()
		if w.ch.flip() {
			from, to = to, from
		}
		a.From, a.To = []string{from}, []string{to}
		switch kind {
		case "clog":
			f.Length = w.length(kind)
			a.For = dur(f.Length)
			f.Text = fmt.Sprintf("the link %s→%s holds its messages for %s", from, to, f.Length)
		case "drop":
			k := 1 + w.ch.intn(5)
			a.Count = scenarios.Value{N: k, Set: true}
			f.Text = fmt.Sprintf("the next %d messages %s→%s are lost", k, from, to)
		default:
			lat := w.length(kind)
			f.Length = w.length(kind)
			a.Latency, a.For = lat.String(), dur(f.Length)
			f.Text = fmt.Sprintf("the link %s→%s takes %s a message for %s", from, to, lat, f.Length)
		}
	case "partition":
		a.Sides, f.Length = [][]string{w.side()}, w.length(kind)
		a.For = dur(f.Length)
		f.Text = fmt.Sprintf("the network splits %s from the rest for %s", strings.Join(a.Sides[0], ", "), f.Length)
	case "outside_lock":
		var ok bool
		if a.Node, ok = w.redisNode(); !ok {
			return f, false
		}
		f.Length = w.length(kind)
		a.TTL = dur(f.Length)
		f.Text = fmt.Sprintf("someone outside takes the lock's key on %s for %s", a.Node, f.Length)
	case "clock_step", "clock_slew":
		a.Node, f.Length = w.clockOwner(), w.length(kind)
		if kind == "clock_slew" && !w.slew(a.Node) {
			return f, false
		}
		by, dir := f.Length, "forward"
		if w.ch.flip() {
			by, dir = -by, "back"
		}
		a.By = dur(by)
		f.Text = fmt.Sprintf("%s's wall clock steps %s by %s", a.Node, dir, f.Length)
		if kind == "clock_slew" {
			f.Text = fmt.Sprintf("%s's wall clock is slewed %s by %s", a.Node, dir, f.Length)
		}
	case "clock_drift":
		bound := w.s.driftBound()
		if bound <= 0 {
			return f, false
		}
		a.Node = w.clockOwner()
		if !w.slew(a.Node) {
			return f, false
		}
		a.RatePPM = roundSig(bound*float64(1+w.ch.intn(lengthStep))/lengthStep, 2)
		if w.ch.flip() {
			a.RatePPM = -a.RatePPM
		}
		f.Text = fmt.Sprintf("%s's clock rate changes by %s ppm", a.Node, strconv.FormatFloat(a.RatePPM, 'g', -1, 64))
	default:
		return f, false
	}
	return f, true
}

// slew claims owner's clock for a slew: a clock_slew corrects at ntpd's 500 ppm, 2000
// times its size, and a clock_drift is a slew to the end of the run, so two on one clock
// would overlap, which a clock refuses. One per clock; false when it has one.
func (w *world) slew(owner string) bool {
	if w.slewed[owner] {
		return false
	}
	w.slewed[owner] = true
	return true
}

// dur is a duration as a schedule's value, written out.
func dur(d time.Duration) scenarios.Value { return scenarios.Value{Dur: d, Set: true} }

// endpoint draws a client or a node.
func (w *world) endpoint() string {
	if w.ch.flip() {
		return w.client()
	}
	return w.node()
}

// clockOwner draws the process whose clock a clock fault moves: a node (0) or a client.
func (w *world) clockOwner() string { return w.endpoint() }

// side draws one side of a partition: a non-empty set of endpoints, not all of them.
func (w *world) side() []string {
	var all, out []string
	for i := range w.c.Clients {
		all = append(all, fmt.Sprintf("client%d", i+1))
	}
	all = append(all, w.c.Servers...)
	for _, e := range all {
		if w.ch.flip() {
			out = append(out, e)
		}
	}
	switch len(out) {
	case 0:
		out = all[:1]
	case len(all):
		out = out[:len(out)-1]
	}
	return out
}

// lengthOf returns the assumption that bounds the length of faults of kind, if any.
func (s *Spec) lengthOf(kind string) (Assumption, bool) {
	for _, a := range s.Assume {
		for _, k := range lengthKnobs[a.Knob] {
			if k != kind {
				continue
			}
			if a.Op == OpEq {
				a.Lo, a.Hi = a.Value, a.Value
			}
			return a, true
		}
	}
	return Assumption{}, false
}

// driftBound is the largest rate change a clock_drift fault may make, in ppm: the drift
// assumptions' upper ends, else a tenth (clocks far worse than any quartz).
func (s *Spec) driftBound() float64 {
	bound, given := 0.0, false
	for _, a := range s.Assume {
		if a.Knob != "node_clock_drift_ppm" && a.Knob != "client_clock_drift_ppm" {
			continue
		}
		hi := a.Hi
		if a.Op == OpEq {
			hi = a.Value
		}
		if v, err := number("ppm", false, hi); err == nil {
			bound, given = max(bound, v), true
		}
	}
	if !given {
		return 100_000
	}
	return bound
}

// generators are the fault kinds generate can draw; ParseFaults refuses a scenario action
// missing here, and a test holds it to the scenario language.
var generators = []string{"pause_client", "crash_client", "crash_node", "kill_node", "shutdown_node", "pause_node",
	"failover", "isolate", "block", "clog", "drop", "partition", "outside_lock", "slow_link", "clock_step", "clock_slew", "clock_drift"}
