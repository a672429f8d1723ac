package report

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// MaxReplaySteps bounds the steps a Replay keeps. The stories a class steps through have a
// few hundred; the baseline's ten seconds of contention have about 31,000. Past this many
// the replay stops recording steps and says so (Replay.Truncated); the run itself, its
// record and its timeline still cover the whole duration.
const MaxReplaySteps = 50_000

// ReplayLimits bounds what one replay keeps, below the package's own limits, so that a
// server sending replays to browsers can bound the memory of each run. A zero field keeps
// the package's limit.
type ReplayLimits struct {
	Steps int // at most MaxReplaySteps
	// StateCells bounds the node and client states kept over all of the replay's States:
	// each State holds one per node and client, so a world of many actors fills memory
	// fastest. No bound when zero.
	StateCells    int
	TimelineItems int // at most MaxTimelineItems
}

// Replay is one run as the viewer steps through it: the timeline to draw, the messages as
// arrows, one step per narrated line, and the state of every node, client and the storage
// just after each step's event. Times are true time from the start of the run, in
// nanoseconds (the _ns fields), as the timeline's are.
type Replay struct {
	Timeline *Timeline `json:"timeline"`
	Messages []Message `json:"messages"`
	Steps    []Step    `json:"steps"`
	// States are the world's states after the events that made a line; steps of one event
	// share one state (Step.State).
	States []State `json:"states"`
	// Truncated reports that MaxReplaySteps (or a lower ReplayLimits) was reached: the
	// steps (and the messages and states) stop there.
	Truncated bool `json:"truncated"`
}

// Message is one network message: a command a client sent a node, its reply, a write to
// the storage and its acknowledgement, or a replica's stream.
type Message struct {
	ID     uint64 `json:"id"` // the network's id; a duplicate shares its original's
	From   string `json:"from"`
	To     string `json:"to"`
	SentNs int64  `json:"sent_ns"`
	AtNs   int64  `json:"at_ns"` // delivered, dropped or held (Fate)
	// Kind is "request" (client → node), "reply" (node → client), "write" (client →
	// storage), "ack" (storage → client), "replication" (node → node), or "tcp": a client
	// kernel's retransmission probe or a host's acknowledgement of one (model.MsgProbe,
	// model.MsgAck), which carry no command.
	Kind string `json:"kind"`
	// Text is the command, reply or write as redis-cli would show it.
	Text string `json:"text"`
	// Fate is "delivered", "dropped" (Reason says why) or "held" (a clogged link holds it).
	Fate   string `json:"fate"`
	Reason string `json:"reason,omitempty"`
	// Pair is the index of a request's reply or a reply's request, -1 when none (yet).
	Pair int `json:"pair"`
}

// Step is one narrated line: one event of the run as the text trace tells it.
type Step struct {
	AtNs   int64  `json:"at_ns"`
	Actor  string `json:"actor"`
	Marker string `json:"marker"` // "!!" a fault, "**" a violation, "" otherwise
	Local  string `json:"local"`  // the actor's own clock reading
	Text   string `json:"text"`
	Kind   string `json:"kind"` // faults, violations, lock, commands or writes (TraceKinds)
	// Peers are the other actors the line is about.
	Peers   []string `json:"peers,omitempty"`
	Cleanup bool     `json:"cleanup,omitempty"`
	// Violation is the index in Timeline.Violations of the violation the line reports,
	// -1 when none.
	Violation int `json:"violation"`
	// Msg is the index in Messages of the message the line is about, -1 when none.
	Msg   int      `json:"msg"`
	Notes []string `json:"notes,omitempty"`
	State int      `json:"state"` // index in States
	// Clock marks a line the replay adds for a clock step or slew (ReplayCollector.Until):
	// a fault with no event, so the narrated trace has no line for it.
	Clock bool `json:"clock,omitempty"`
}

// State is the world just after an event, as each actor sees it.
type State struct {
	Nodes   []NodeState   `json:"nodes"`   // in Timeline.Nodes order
	Clients []ClientState `json:"clients"` // in Timeline.Clients order
	// Tokens are the highest fencing token the storage accepted per resource, 0 when none.
	Tokens []int64 `json:"tokens"`
}

// NodeState is one redis-server, or one server of another lock service, at an instant.
type NodeState struct {
	Status string `json:"status"` // "up", "down" or "paused"
	// WallNs is the node's wall clock, on which its keys expire, from its reading at the
	// start of the run (0 for another service's server without a process).
	WallNs int64      `json:"wall_ns"`
	Keys   []KeyState `json:"keys"` // the lock keys it holds, in resource order (none for another service's server)
	// Role is a ZooKeeper server's role: "leader", "follower" or "looking" (in an
	// election); empty for a Redis node, or a server that is down.
	Role string `json:"role,omitempty"`
}

// KeyState is one lock key a node holds.
type KeyState struct {
	Resource string `json:"resource"`
	Value    string `json:"value"`
	Client   int    `json:"client"` // whose value: a client index, -1 when unknown
	// PTTLMs is what PTTL would answer on the node now: the TTL left on its own wall clock,
	// -1 for a key without one.
	PTTLMs int64 `json:"pttl_ms"`
}

// ClientState is one client process at an instant, as it believes.
type ClientState struct {
	// Status is "idle", "acquiring", "holding", "extending", "releasing" or "crashed".
	Status   string `json:"status"`
	Paused   bool   `json:"paused"`
	Resource string `json:"resource,omitempty"`
	MonoNs   int64  `json:"mono_ns"` // its monotonic clock
	// ValidNs is the validity it believes it has left, on its own clock: negative when the
	// deadline it computed has passed (it may not know: a paused client cannot look).
	// Zero when it holds nothing.
	ValidNs int64 `json:"valid_ns"`
	Token   int64 `json:"token"` // its lock's fencing token, 0 when none
}

// ReplayCollector fills a Replay during a run stepped one event at a time. It is a sim.Sink
// for the network's records and a client-event hook, and narrates through a line
// Narrator; like the TimelineCollector it only reads, so the run is the same without it.
type ReplayCollector struct {
	w      *world.World
	proto  lock.Protocol // the world's: how its messages read
	nar    *Narrator
	rp     Replay
	msgIdx map[uint64]int    // network id → latest message with it
	reqs   map[reqPair]int   // (client, node, request id) → the request's message
	clIdx  map[string]int    // client name → index
	values map[string]int    // lock value → client
	cl     []clientBelief    // per client
	kinds  map[string]string // endpoint name → "client", "node", "storage"
	dirty  int               // steps since the last state
	full   bool
	// maxSteps and maxCells bound the steps and the node and client states kept
	// (ReplayLimits); cells counts the states kept, perState the cells of one.
	maxSteps, maxCells, cells, perState int
	bad                                 error // the first network record that did not decode
	// jumps are the clock steps and slews of the world's nodes and clients, in time order,
	// and next the first not yet told: no event of the run marks one (a clock is a
	// function of true time), so the replay makes a line of each as the run passes it, for
	// a viewer's cursor to stop on.
	jumps []clockJump
	next  int
	tc    *TimelineCollector // the replay's timeline, which follows the servers' roles
}

// clockJump is one clock step or the start of one slew, on an actor's clock.
type clockJump struct {
	at    sim.Time
	actor string
	text  string
}

type reqPair struct {
	client, node string
	id           uint64
}

type clientBelief struct {
	status   string
	paused   bool
	resource string
	deadline time.Duration // mono
	holding  bool
	token    int64
}

// AttachReplay starts collecting w's replay, and the timeline it includes; the caller
// installs the collector as the run's trace sink, calls AfterEvent after every kernel
// event, and Finish at the end.
func AttachReplay(w *world.World) (*ReplayCollector, *TimelineCollector, error) {
	c := &ReplayCollector{w: w, proto: w.Protocol(), msgIdx: map[uint64]int{}, reqs: map[reqPair]int{},
		clIdx: map[string]int{}, values: map[string]int{}, kinds: map[string]string{},
		maxSteps: MaxReplaySteps, maxCells: math.MaxInt, perState: len(w.Clients)}
	var err error
	if c.nar, err = NewLineNarrator(w, c.line, TraceOptions{}); err != nil {
		return nil, nil, err
	}
	tc := AttachTimeline(w)
	c.tc = tc
	for j, cl := range w.Clients {
		c.clIdx[cl.Name()] = j
		c.kinds[cl.Name()] = "client"
		c.cl = append(c.cl, clientBelief{status: "idle"})
	}
	for _, g := range w.Groups {
		c.kinds[g.Name()] = "node"
		for i := range g.Len() {
			c.kinds[g.Node(i).Name()] = "node"
		}
		c.perState += g.Len()
	}
	for _, e := range w.Servers { // a lock service's servers that are not Redis's
		if name := w.Net.Name(e); c.kinds[name] == "" {
			c.kinds[name] = "node"
			c.perState++
		}
	}
	c.kinds[w.Net.Name(w.Storage.Endpoint())] = "storage"
	c.jumps = clockJumps(w)
	w.OnEvent(c.clientEvent)
	return c, tc, nil
}

// clockJumps lists the world's scheduled clock steps and slews, nodes before clients, in
// time order (a stable sort: the same order on every run).
func clockJumps(w *world.World) []clockJump {
	var out []clockJump
	add := func(actor string, ck *clock.Clock) {
		for _, s := range ck.Steps() {
			out = append(out, clockJump{at: s.At, actor: actor, text: "clock-step by=" + signed(s.By) + " (the wall clock jumps)"})
		}
		for _, s := range ck.Slews() {
			out = append(out, clockJump{at: s.At, actor: actor, text: "clock-slew by=" + signed(s.By) + " (the clock starts to slew)"})
		}
	}
	for _, g := range w.Groups {
		for i := range g.Len() {
			add(g.Node(i).Name(), g.Node(i).Clock())
		}
	}
	for _, p := range w.Processes { // another service's servers, whose clocks step too
		if p != nil && p.Clock() != nil && w.Algorithm.Service != nil {
			add(p.Name(), p.Clock())
		}
	}
	for _, cl := range w.Clients {
		add(cl.Name(), cl.Clock())
	}
	slices.SortStableFunc(out, func(a, b clockJump) int { return cmp.Compare(a.at, b.at) })
	return out
}

// Limit lowers what the replay keeps, and its timeline tc, to l; call it before the run.
func (c *ReplayCollector) Limit(l ReplayLimits, tc *TimelineCollector) {
	if l.Steps > 0 {
		c.maxSteps = min(l.Steps, MaxReplaySteps)
	}
	if l.StateCells > 0 {
		c.maxCells = l.StateCells
	}
	if l.TimelineItems > 0 {
		tc.maxItems = min(l.TimelineItems, MaxTimelineItems)
	}
}

// Record takes a trace record: the network's tell the messages; every record is narrated.
func (c *ReplayCollector) Record(r *sim.Record) {
	if c.full {
		return
	}
	if r.Actor == network.Actor {
		c.netRecord(r)
	}
	c.nar.Record(r)
}

func (c *ReplayCollector) netRecord(r *sim.Record) {
	fate := ""
	switch r.Kind {
	case network.RecDeliver:
		fate = "delivered"
	case network.RecDrop:
		fate = "dropped"
	case network.RecHold:
		fate = "held"
	case network.RecDup:
		return // the copy is told by its own delivery
	default:
		return
	}
	x, msg, err := decodeMsg(r)
	if err != nil {
		if c.bad == nil {
			c.bad = err
		}
		return // the narration shows the record as undecoded
	}
	from, to, id := x.From, x.To, x.ID
	req := msg.ReqID
	at := r.At.Duration().Nanoseconds()
	m := Message{ID: id, From: from, To: to, SentNs: at - x.Latency.Nanoseconds(), AtNs: at,
		Text: messageText(&msg, c.proto, &c.nar.lock), Fate: fate, Reason: x.Reason, Pair: -1, Kind: c.msgKind(from, to)}
	if msg.Kind == model.MsgProbe || msg.Kind == model.MsgAck {
		m.Kind = "tcp"
	}
	if i, ok := c.msgIdx[id]; ok && c.rp.Messages[i].Fate == "held" {
		m.SentNs = c.rp.Messages[i].SentNs // released from a clog: one arrow, its whole way
	}
	i := len(c.rp.Messages)
	switch m.Kind {
	case "request":
		c.reqs[reqPair{from, to, req}] = i
	case "reply":
		key := reqPair{to, from, req}
		if j, ok := c.reqs[key]; ok {
			m.Pair = j
			c.rp.Messages[j].Pair = i
			delete(c.reqs, key)
		}
	}
	c.msgIdx[id] = i
	c.rp.Messages = append(c.rp.Messages, m)
}

func (c *ReplayCollector) msgKind(from, to string) string {
	switch [2]string{c.kinds[from], c.kinds[to]} {
	case [2]string{"client", "node"}:
		return "request"
	case [2]string{"node", "client"}:
		return "reply"
	case [2]string{"client", "storage"}:
		return "write"
	case [2]string{"storage", "client"}:
		return "ack"
	}
	return "replication"
}

// line takes one narrated line as a step.
func (c *ReplayCollector) line(l *Line) {
	// A line of a new event needs a new state (AfterEvent): it must fit too.
	if len(c.rp.Steps) >= c.maxSteps || c.dirty == 0 && c.cells > c.maxCells-c.perState {
		c.full, c.rp.Truncated = true, true
		return
	}
	st := Step{AtNs: l.At.Duration().Nanoseconds(), Actor: l.Actor, Marker: l.Marker, Local: l.Local,
		Text: l.Text, Kind: l.Kind, Cleanup: l.Cleanup, Violation: l.Violation, Msg: -1,
		Notes: l.Notes, State: len(c.rp.States)}
	if st.Marker == "  " {
		st.Marker = ""
	}
	for _, p := range l.Peers {
		if p != "" {
			st.Peers = append(st.Peers, p)
		}
	}
	if i, ok := c.msgIdx[l.Msg]; ok && l.Msg != 0 {
		st.Msg = i
	}
	c.rp.Steps = append(c.rp.Steps, st)
	c.dirty++
}

// Until makes a line, with the world's state at its instant, of each clock step or slew at
// or before next, the time of the run's next event: the driver calls it between events,
// when the world is still. A jump at an event's instant comes before the event, which
// already reads the jumped clock.
func (c *ReplayCollector) Until(next sim.Time) {
	for c.next < len(c.jumps) && c.jumps[c.next].at <= next && !c.full {
		j := c.jumps[c.next]
		if len(c.rp.Steps) >= c.maxSteps || c.cells > c.maxCells-c.perState {
			c.full, c.rp.Truncated = true, true
			return
		}
		c.next++
		c.rp.Steps = append(c.rp.Steps, Step{AtNs: j.at.Duration().Nanoseconds(), Actor: j.actor, Marker: "!!",
			Local: c.nar.localAt(j.actor, j.at), Text: j.text, Kind: "faults", Violation: -1, Msg: -1,
			State: len(c.rp.States), Clock: true})
		c.cells += c.perState
		c.rp.States = append(c.rp.States, c.state(j.at))
	}
}

// clientEvent follows what each client believes.
func (c *ReplayCollector) clientEvent(_ sim.Time, e *model.ClientEvent) {
	if c.full && c.dirty == 0 {
		return // no state is taken any more: following on would only grow c.values
	}
	j := e.Client.Index()
	b := &c.cl[j]
	if e.Lock != nil && e.Lock.Value != "" {
		if _, seen := c.values[e.Lock.Value]; !seen {
			c.values[e.Lock.Value] = j
		}
	}
	switch e.Kind {
	case model.EvAcquireStart:
		b.status, b.resource = "acquiring", e.Resource
	case model.EvAcquired:
		b.status, b.holding, b.token = "holding", true, e.Token
		if e.Lock != nil {
			b.deadline = e.Lock.Deadline
		}
	case model.EvAcquireFailed:
		b.status, b.holding = "idle", false
	case model.EvExtendStart:
		b.status = "extending"
	case model.EvExtended:
		b.status = "holding"
		if e.Lock != nil {
			b.deadline = e.Lock.Deadline
		}
	case model.EvExtendFailed:
		b.status = "holding"
	case model.EvLost:
		b.holding = false
	case model.EvReleaseStart:
		b.status, b.holding = "releasing", false
	case model.EvReleased:
		b.status, b.token = "idle", 0
	case model.EvPause:
		b.paused = true
	case model.EvResume:
		b.paused = false
	case model.EvCrash:
		*b = clientBelief{status: "crashed"}
	case model.EvRestart:
		*b = clientBelief{status: "idle"}
	}
}

// AfterEvent is called after every kernel event: when the event made lines, it records
// the world's state for them.
func (c *ReplayCollector) AfterEvent() {
	c.nar.Finish() // a violation line waits for the faults the oracle lists in its event
	if c.dirty == 0 {
		return
	}
	c.dirty = 0
	c.cells += c.perState
	c.rp.States = append(c.rp.States, c.state(c.w.Sim.Now()))
}

// state reads the world at now, without side effects.
func (c *ReplayCollector) state(now sim.Time) State {
	w := c.w
	var s State
	for _, g := range w.Groups {
		for i := range g.Len() {
			n := g.Node(i)
			ns := NodeState{Status: "up", WallNs: n.Clock().Wall(now).Nanoseconds()}
			switch {
			case !n.Up():
				ns.Status = "down"
			case n.Paused():
				ns.Status = "paused"
			}
			for _, res := range w.Resources {
				val, expMs, ok := n.Peek(res)
				if !ok {
					continue
				}
				k := KeyState{Resource: res, Value: val, Client: -1, PTTLMs: -1}
				if j, ok := c.values[val]; ok {
					k.Client = j
				}
				if expMs != redis.NoExpiry && n.WallMs(now) > expMs {
					continue // expired by now, on the node's clock, as its next read finds it (Until's instants)
				}
				if expMs != redis.NoExpiry {
					k.PTTLMs = max(0, expMs-n.WallMs(now))
				}
				ns.Keys = append(ns.Keys, k)
			}
			s.Nodes = append(s.Nodes, ns)
		}
	}
	for i := range w.Servers { // another service's servers, as their processes say
		if w.Algorithm.Service == nil {
			break
		}
		ns := processState(w.Processes[i], now)
		ns.Role = c.tc.zk.roleAt(c.tc, len(s.Nodes))
		s.Nodes = append(s.Nodes, ns)
	}
	for j, cl := range w.Clients {
		b := &c.cl[j]
		mono := cl.Clock().Mono(now)
		cs := ClientState{Status: b.status, Paused: b.paused, Resource: b.resource,
			MonoNs: mono.Nanoseconds(), Token: b.token}
		if b.holding {
			cs.ValidNs = (b.deadline - mono).Nanoseconds()
			if cs.ValidNs == 0 {
				cs.ValidNs = -1 // zero means "holds nothing"
			}
		}
		s.Clients = append(s.Clients, cs)
	}
	for _, res := range w.Resources {
		t, _ := w.Storage.Highest(res)
		s.Tokens = append(s.Tokens, t)
	}
	return s
}

// processState is another service's server at now, as its process says (nil: it has
// none, and is up as far as anyone knows).
func processState(p model.ServerProcess, now sim.Time) NodeState {
	ns := NodeState{Status: "up"}
	if p == nil {
		return ns
	}
	if ck := p.Clock(); ck != nil {
		ns.WallNs = ck.Wall(now).Nanoseconds()
	}
	switch {
	case !p.Up():
		ns.Status = "down"
	case p.Paused():
		ns.Status = "paused"
	}
	return ns
}

// Undecoded returns the error of the first record the replay, its narration or its
// timeline tc could not decode, or nil: a bug, which the run reports.
func (c *ReplayCollector) Undecoded(tc *TimelineCollector) error {
	return cmp.Or(c.bad, c.nar.Undecoded(), tc.Undecoded())
}

// Finish flushes the narration, finishes the timeline and returns the replay.
func (c *ReplayCollector) Finish(tc *TimelineCollector, scenario string, seed uint64) *Replay {
	c.nar.Finish()
	c.AfterEvent()
	c.Until(sim.Time(c.w.Config.Duration))
	c.rp.Timeline = tc.Finish(scenario, seed)
	return &c.rp
}
