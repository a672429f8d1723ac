package report

import (
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// MaxTimelineItems bounds the spans and marks a timeline keeps. A teaching run has a few
// hundred; a long sweep-sized run would otherwise grow without limit, so past this many the
// timeline stops recording new items and says so (Timeline.Truncated).
const MaxTimelineItems = 1 << 20

// Timeline is one run drawn as data for a space-time diagram: what each Redis node held
// (or when another service's server was down or stalled) and each client did, in true
// time. Package plots draws it. It exists for teaching, so it is collected only when asked
// for (Options.Timeline) and costs nothing otherwise; collecting it reads trace records
// and client events and never changes the run.
//
// Every time is true time from the start of the run. Spans still open at the end of the
// run end at Duration.
type Timeline struct {
	Scenario string        `json:"scenario"`
	Seed     uint64        `json:"seed"`
	Duration time.Duration `json:"duration_ns"` // the run's simulated length
	TTL      time.Duration `json:"ttl_ns"`
	Quorum   int           `json:"quorum"`
	// Lock says what governs the run's lock: its TTL, or a ZooKeeper session and the
	// recipe's settings; and how its fencing tokens read.
	Lock LockSettings `json:"lock"`
	// Nodes are the Redlock nodes in order, with replicas every node of each group; or
	// another service's servers, in order.
	Nodes   []NodeLane   `json:"nodes"`
	Clients []ClientLane `json:"clients"` // in client order; a client's index is its colour
	// NetFaults are the network's partitions and clogs, with the endpoints they cut.
	NetFaults []NetFault `json:"net_faults"`
	// Violations are the run's violations (and fenced writes rejected), as in its Record.
	Violations []oracle.Violation `json:"violations"`
	// Truncated reports that MaxTimelineItems (or a lower ReplayLimits) was reached and
	// later items are missing.
	Truncated bool `json:"truncated"`
}

// Span is a true-time interval [From, To).
type Span struct {
	From time.Duration `json:"from_ns"`
	To   time.Duration `json:"to_ns"`
}

// Mark is something that happened at one instant on a lane: a restart, a failover, a
// clock jump, a crash. Kind is one of the Mark* constants; Text says it for a reader.
type Mark struct {
	At   time.Duration `json:"at_ns"`
	Kind string        `json:"kind"`
	Text string        `json:"text"`
}

// The kinds of Mark.
const (
	MarkRestart   = "restart"
	MarkFailover  = "failover"
	MarkClockJump = "clock-jump"
	MarkClockSlew = "clock-slew" // a slew or a drift change begins (another service's servers)
	MarkCrash     = "crash"
	MarkExtend    = "extend"        // a client's lock was extended
	MarkExtendBad = "extend-failed" // an extension failed
)

// How a key span ended (KeySpan.Ended).
const (
	KeyExpired  = "expired"  // its TTL ran out on the node's wall clock
	KeyDeleted  = "deleted"  // a command removed it (a release)
	KeyLost     = "lost"     // the node crashed and lost it
	KeyReplaced = "replaced" // another value took its place (a resync, an overwrite)
	KeyRunEnd   = "run-end"  // it was still there when the run ended
)

// KeySpan is a lock key on one node: from the command that set it to the moment it
// expired (on the node's own wall clock, converted to true time), was deleted or was lost.
type KeySpan struct {
	Span
	Resource string `json:"resource"`
	Client   int    `json:"client"` // whose value it held: a client index, or -1 when no client's value
	Value    string `json:"value"`  // the lock value
	Ended    string `json:"ended"`  // one of the Key* constants
}

// NodeLane is one redis-server process, or one server of another lock service (whose keys
// the timeline does not know: its lane shows its process faults and clock jumps).
type NodeLane struct {
	Name  string `json:"name"`  // "redis3", or "redis1.0" for a node of a group with replicas; "lease1"
	Group string `json:"group"` // "redis3", "redis1"; another service's server's own name
	// Service is the service of a server that is not Redis ("zookeeper"); empty for a
	// Redis node.
	Service string    `json:"service,omitempty"`
	Keys    []KeySpan `json:"keys"`
	Down    []Span    `json:"down"`   // crashed, killed or shut down, until restart
	Paused  []Span    `json:"paused"` // stalled (SIGSTOP, a VM pause)
	Marks   []Mark    `json:"marks"`  // restarts, failovers (on the promoted node), clock jumps, sessions expired
	// Roles are a ZooKeeper server's roles in time: leader, follower, or looking (an
	// election); none for a Redis node.
	Roles []RoleSpan `json:"roles,omitempty"`
}

// ClientLane is one client process.
type ClientLane struct {
	Name     string    `json:"name"`
	Attempts []Attempt `json:"attempts"`
	// Validity are the windows in which the client believed it held a lock: from acquire
	// success to the earliest of its computed deadline, the start of its release and the
	// moment its algorithm said the lock was lost (Curator's LOST; the oracle's validity
	// window).
	Validity []Span  `json:"validity"`
	Work     []Span  `json:"work"`   // actually working on the resource, pauses included
	Pauses   []Span  `json:"pauses"` // stop-the-world pauses
	Writes   []Write `json:"writes"`
	Marks    []Mark  `json:"marks"` // crash, extensions, clock jumps
}

// Attempt is one acquire attempt: from its start to its verdict.
type Attempt struct {
	Span
	OKs    int    `json:"oks"`    // nodes that said OK
	Won    bool   `json:"won"`    // the attempt took the lock
	Reason string `json:"reason"` // why it failed ("no-quorum", "validity-expired", ...); "none" when won
	// Text says what the attempt did in its service's terms when OKs out of N would not:
	// a ZooKeeper lock's node and the predecessors it waited on ("node 1, waited on 0
	// (client1)"). Empty for a Redis lock.
	Text string `json:"text,omitempty"`
}

// Write is one storage write: sent by the client at Sent, judged by the storage at At.
type Write struct {
	Sent     time.Duration `json:"sent_ns"`
	At       time.Duration `json:"at_ns"`   // when the storage judged it; meaningful when Arrived
	Arrived  bool          `json:"arrived"` // false: lost, or still in the network at the end of the run
	Resource string        `json:"resource"`
	Token    int64         `json:"token"`
	Fenced   bool          `json:"fenced"`
	Accepted bool          `json:"accepted"`
	Stale    bool          `json:"stale"` // accepted although another client had acquired the resource since
}

// NetFault is one network fault with the true time it was in force.
type NetFault struct {
	Span
	Kind string `json:"kind"` // "cut" (both ways), "block" (one way A → B), "isolate", "clog" (A → B), "split"
	A    string `json:"a"`    // endpoint names; B is empty for isolate, both for split
	B    string `json:"b"`
	Text string // as a violation report says it
}

// TimelineCollector fills a Timeline during a run. It is a sim.Sink (node records tell it
// when to look at a node's keys; it parses no text), a client-event hook and a storage
// observer placed after the oracle. It only reads: it peeks at keys without side effects
// and never schedules, draws or traces anything, so the run and its trace hash are the same
// with and without it.
type TimelineCollector struct {
	w     *world.World
	tl    Timeline
	items int
	// maxItems lowers MaxTimelineItems for one run (ReplayLimits); 0 keeps it.
	maxItems int

	lanes  []*redis.Node         // node lane i's Redis node, nil for another service's server
	procs  []model.ServerProcess // node lane i's process: a Redis node, a service's server's, or nil when it has none
	actors map[string][]int      // a node's, a group's or a server's trace name → its node lanes
	epoch  []int64               // per lane: the node's wall clock's Unix ms at wall reading 0
	open   [][]openKey           // per lane, per resource: the key being drawn
	values map[string]int        // lock value → client index
	resIdx map[string]int        // resource → index
	epCl   []int                 // network endpoint → client index, -1 for others
	cl     []clientOpen          // per client: what is open
	writes map[writeKey]int      // (client, write id) → index in its lane's Writes
	obs    model.StorageObserver
	bad    error     // the first record that did not decode
	zk     *zkReader // a ZooKeeper run's lock nodes, sessions and roles; nil for another service
}

type openKey struct {
	on      bool
	from    sim.Time
	until   sim.Time // true time the key expires, sim.Never for no expiry
	expMs   int64
	value   string
	resName string
}

type clientOpen struct {
	validity, work, pause int      // index of the open span in the lane, -1 if none
	attemptFrom           sim.Time // true start of the attempt in progress
}

type writeKey struct {
	client int
	id     uint64
}

// attachTimeline starts collecting w's timeline; the caller installs the returned
// collector as (one of) the run's trace sinks and calls finish after the run.
func AttachTimeline(w *world.World) *TimelineCollector {
	c := &TimelineCollector{w: w, actors: map[string][]int{}, values: map[string]int{},
		resIdx: map[string]int{}, writes: map[writeKey]int{}}
	c.tl.Duration = w.Config.Duration
	c.tl.TTL = w.Config.Lock.TTL
	c.tl.Lock = lockSettings(w)
	c.tl.Quorum = w.Config.Lock.Quorum()
	for i, r := range w.Resources {
		c.resIdx[r] = i
	}
	for _, g := range w.Groups {
		for i := range g.Len() {
			n := g.Node(i)
			lane := len(c.lanes)
			c.lanes, c.procs = append(c.lanes, n), append(c.procs, n)
			c.tl.Nodes = append(c.tl.Nodes, NodeLane{Name: n.Name(), Group: g.Name()})
			c.actors[n.Name()] = append(c.actors[n.Name()], lane)
			if g.Name() != n.Name() {
				c.actors[g.Name()] = append(c.actors[g.Name()], lane)
			}
			now := w.Sim.Now()
			c.epoch = append(c.epoch, n.WallMs(now)-floorMs(n.Clock().Wall(now)))
			c.open = append(c.open, make([]openKey, len(w.Resources)))
		}
	}
	for i, e := range w.Servers { // another service's servers: a lane each, for its faults
		if w.Algorithm.Service == nil {
			break
		}
		p, name := w.Processes[i], w.Net.Name(e)
		if p != nil {
			name = p.Name()
		}
		c.actors[name] = append(c.actors[name], len(c.lanes))
		c.lanes, c.procs = append(c.lanes, nil), append(c.procs, p)
		c.tl.Nodes = append(c.tl.Nodes, NodeLane{Name: name, Group: name, Service: w.Algorithm.Service.Name})
		c.epoch = append(c.epoch, 0)
		c.open = append(c.open, nil)
	}
	c.epCl = make([]int, w.Net.Endpoints())
	for i := range c.epCl {
		c.epCl[i] = -1
	}
	for j, cl := range w.Clients {
		c.epCl[cl.Endpoint()] = j
		c.tl.Clients = append(c.tl.Clients, ClientLane{Name: cl.Name()})
		c.cl = append(c.cl, clientOpen{validity: -1, work: -1, pause: -1})
	}
	if c.tl.Lock.Service == "zookeeper" {
		var names []string
		for _, cl := range w.Clients {
			names = append(names, cl.Name())
		}
		c.zk = newZKReader(names, len(c.lanes), c.fail)
		c.zk.redisToo = len(w.Groups) > 0 // the hybrid lock: an attempt may take no lock node
	}
	w.OnEvent(c.clientEvent)
	c.obs = w.Oracle
	w.Storage.SetObserver(c)
	return c
}

// floorMs is the floor of d in whole milliseconds, rounding toward negative infinity.
func floorMs(d time.Duration) int64 {
	q := int64(d / time.Millisecond)
	if d%time.Millisecond < 0 {
		q--
	}
	return q
}

// room reports whether one more item may be recorded, and notes the truncation if not.
func (c *TimelineCollector) room() bool {
	limit := MaxTimelineItems
	if c.maxItems > 0 {
		limit = c.maxItems
	}
	if c.items >= limit {
		c.tl.Truncated = true
		return false
	}
	c.items++
	return true
}

// Record looks at the keys of the nodes a node or group record is about: every change of
// a node's keys (exec, expire, crash, restart, replication, resync, failover) is traced,
// so looking after each of its records sees every change.
func (c *TimelineCollector) Record(r *sim.Record) {
	if c.zk != nil && r.Actor == network.Actor {
		c.zk.netRecord(r)
		return
	}
	lanes, ok := c.actors[r.Actor]
	if !ok {
		return
	}
	for _, l := range lanes {
		c.nodeRecord(r, l)
	}
}

func (c *TimelineCollector) nodeRecord(r *sim.Record, l int) {
	if c.lanes[l] == nil { // another service's server: its faults, by model's descriptors
		if fault, ok := model.FaultByRecord(r.Kind); ok {
			c.nodeFault(r, &c.tl.Nodes[l], fault.Effect, false)
		}
		if c.zk != nil {
			c.zk.serverRecord(c, r, l)
		}
		return
	}
	fault, ok := redis.FaultByRecord(r.Kind)
	if ok {
		c.nodeFault(r, &c.tl.Nodes[l], fault.Effect, true)
	}
	c.peek(l, r.At, ok && fault.Effect == redis.EffectStop)
}

// nodeFault draws a process fault's record on node lane nl by what the fault does (its
// model.FaultEffect), never by its name, so a new kind with a known effect is drawn; isRedis
// says the lane is a Redis node's, whose restart record says how many keys it loaded.
func (c *TimelineCollector) nodeFault(r *sim.Record, nl *NodeLane, effect model.FaultEffect, isRedis bool) {
	now := r.At
	switch effect {
	case model.EffectStop:
		closeOpen(nl.Paused, now) // a stopped process is no longer stalled
		if c.room() {
			nl.Down = append(nl.Down, Span{From: now.Duration(), To: -1})
		}
		c.mark(&nl.Marks, now, MarkCrash, r.Kind)
	case model.EffectStart:
		closeOpen(nl.Down, now)
		if !isRedis {
			c.mark(&nl.Marks, now, MarkRestart, "restart")
			return
		}
		x, err := redis.DecodeRestart(r)
		c.fail(err)
		keys := "keys"
		if x.Keys == 1 {
			keys = "key"
		}
		if err == nil {
			c.mark(&nl.Marks, now, MarkRestart, "restart, "+strconv.Itoa(x.Keys)+" "+keys)
		}
	case model.EffectStall:
		if c.room() {
			nl.Paused = append(nl.Paused, Span{From: now.Duration(), To: -1})
		}
	case model.EffectThaw:
		closeOpen(nl.Paused, now)
	case model.EffectPromote:
		x, err := redis.DecodeFailover(r)
		c.fail(err)
		if err == nil && x.To == nl.Name {
			c.mark(&nl.Marks, now, MarkFailover, "promoted")
		}
	}
}

// fail keeps err, when it is the first record that did not decode.
func (c *TimelineCollector) fail(err error) {
	if c.bad == nil {
		c.bad = err
	}
}

// Undecoded returns the error of the first record the timeline could not decode, or nil.
// It is a bug (a record's writer and its decoder gone apart), which the run reports; the
// timeline leaves out the mark the record would have made.
func (c *TimelineCollector) Undecoded() error { return c.bad }

// closeOpen ends the last span of spans if it is still open (To = -1).
func closeOpen(spans []Span, now sim.Time) {
	if n := len(spans); n > 0 && spans[n-1].To < 0 {
		spans[n-1].To = now.Duration()
	}
}

func (c *TimelineCollector) mark(marks *[]Mark, at sim.Time, kind, text string) {
	if c.room() {
		*marks = append(*marks, Mark{At: at.Duration(), Kind: kind, Text: text})
	}
}

// peek compares what node lane l holds for each resource with what is being drawn, and
// closes or opens key spans where they differ; stopped says the node's process just
// ended, so a key that is gone was lost with it.
func (c *TimelineCollector) peek(l int, now sim.Time, stopped bool) {
	n := c.lanes[l]
	for ri, res := range c.w.Resources {
		ok := &c.open[l][ri]
		val, expMs, present := n.Peek(res)
		if ok.on && present && val == ok.value && expMs == ok.expMs {
			continue
		}
		if ok.on && present && val == ok.value && ok.until > now { // an extension
			ok.expMs, ok.until = expMs, c.expiry(l, now, expMs)
			continue
		}
		if ok.on {
			how := KeyReplaced
			switch {
			case ok.until <= now:
				how = KeyExpired
			case !present && stopped:
				how = KeyLost
			case !present:
				how = KeyDeleted
			}
			c.closeKey(l, ri, min(now, ok.until), how)
		}
		if present {
			*ok = openKey{on: true, from: now, until: c.expiry(l, now, expMs), expMs: expMs,
				value: val, resName: res}
		}
	}
}

// expiry converts a key's expiry in Unix ms on node lane l's wall clock to the true time
// at which a GET stops seeing it: when the wall clock passes the expiry's millisecond.
func (c *TimelineCollector) expiry(l int, now sim.Time, expMs int64) sim.Time {
	if expMs == redis.NoExpiry {
		return sim.Never
	}
	wall := time.Duration(expMs+1-c.epoch[l]) * time.Millisecond
	return c.lanes[l].Clock().WallReaches(now, wall)
}

func (c *TimelineCollector) closeKey(l, ri int, end sim.Time, how string) {
	ok := &c.open[l][ri]
	if ok.on && c.room() {
		nl := &c.tl.Nodes[l]
		nl.Keys = append(nl.Keys, KeySpan{Span: Span{From: ok.from.Duration(), To: end.Duration()},
			Resource: ok.resName, Client: -1, Value: ok.value, Ended: how})
	}
	ok.on = false
}

// clientEvent records a client's event; it runs after the oracle and the scenario's hooks
// have seen it, and keeps nothing of e.
func (c *TimelineCollector) clientEvent(now sim.Time, e *model.ClientEvent) {
	j := e.Client.Index()
	cl, op := &c.tl.Clients[j], &c.cl[j]
	if e.Lock != nil && e.Lock.Value != "" {
		if _, seen := c.values[e.Lock.Value]; !seen && c.room() {
			c.values[e.Lock.Value] = j
		}
	}
	t := now.Duration()
	switch e.Kind {
	case model.EvAttemptStarted:
		op.attemptFrom = now
		if c.zk != nil {
			c.zk.attemptStarted(j)
		}
	case model.EvAttemptEnded:
		if c.room() {
			a := Attempt{Span: Span{From: op.attemptFrom.Duration(), To: t},
				OKs: e.Lock.Votes, Won: e.Lock.Reason == lock.ReasonNone, Reason: e.Lock.Reason.String()}
			if c.zk != nil {
				a.Text = c.zk.attempt(j)
			}
			cl.Attempts = append(cl.Attempts, a)
		}
	case model.EvAcquired:
		op.work = c.openSpan(&cl.Work, t, -1)
		op.validity = -1
		if e.ValidUntil > now {
			op.validity = c.openSpan(&cl.Validity, t, e.ValidUntil.Duration())
		}
	case model.EvExtendFailed:
		c.mark(&cl.Marks, now, MarkExtendBad, "extend failed")
	case model.EvExtended:
		c.mark(&cl.Marks, now, MarkExtend, "extended")
		if op.validity >= 0 && cl.Validity[op.validity].To > t {
			cl.Validity[op.validity].To = e.ValidUntil.Duration()
		} else if e.ValidUntil > now {
			op.validity = c.openSpan(&cl.Validity, t, e.ValidUntil.Duration())
		}
	case model.EvReleaseStart, model.EvLost: // Curator's LOST, or SUSPENDED when the application stops there
		if op.validity >= 0 {
			cl.Validity[op.validity].To = min(cl.Validity[op.validity].To, t)
			op.validity = -1
		}
	case model.EvWorkEnd:
		op.work = closeSpan(cl.Work, op.work, t)
	case model.EvPause:
		op.pause = c.openSpan(&cl.Pauses, t, -1)
	case model.EvResume:
		op.pause = closeSpan(cl.Pauses, op.pause, t)
	case model.EvCrash:
		op.pause = closeSpan(cl.Pauses, op.pause, t)
		op.work = closeSpan(cl.Work, op.work, t)
		c.mark(&cl.Marks, now, MarkCrash, "crash")
	case model.EvRestart:
		c.mark(&cl.Marks, now, MarkRestart, "restart")
	case model.EvWrite:
		if c.room() {
			c.writes[writeKey{j, e.WriteID}] = len(cl.Writes)
			cl.Writes = append(cl.Writes, Write{Sent: t, Resource: e.Resource, Token: e.Token, Fenced: e.Fenced})
		}
	}
}

// openSpan appends a span from t (to `to`, or open when to < 0) and returns its index, or
// -1 when the timeline is full.
func (c *TimelineCollector) openSpan(spans *[]Span, t, to time.Duration) int {
	if !c.room() {
		return -1
	}
	*spans = append(*spans, Span{From: t, To: to})
	return len(*spans) - 1
}

func closeSpan(spans []Span, i int, t time.Duration) int {
	if i >= 0 && spans[i].To < 0 {
		spans[i].To = t
	}
	return -1
}

// StorageWrite passes the write to the oracle first, then records its verdict.
func (c *TimelineCollector) StorageWrite(now sim.Time, sw *model.StoredWrite) {
	c.obs.StorageWrite(now, sw)
	if sw.From < 0 || int(sw.From) >= len(c.epCl) || c.epCl[sw.From] < 0 {
		return
	}
	j := c.epCl[sw.From]
	k := writeKey{j, sw.ReqID}
	i, ok := c.writes[k]
	if !ok {
		return
	}
	delete(c.writes, k)
	wr := &c.tl.Clients[j].Writes[i]
	wr.At, wr.Arrived, wr.Accepted = now.Duration(), true, sw.Accepted
	_, known := c.resIdx[sw.Resource]
	wr.Stale = known && sw.Accepted && c.w.Oracle.LatestAcquirer(sw.Resource) != j
}

// finish closes what is still open at the end of the run, resolves whose value each key
// held, and adds what only the end of the run knows: network faults, clock jumps and the
// record's violations.
func (c *TimelineCollector) Finish(scenario string, seed uint64) *Timeline {
	end := sim.Time(c.w.Config.Duration)
	tl := &c.tl
	tl.Scenario, tl.Seed = scenario, seed
	for l := range tl.Nodes {
		for ri := range c.open[l] {
			if ok := &c.open[l][ri]; ok.on {
				how := KeyRunEnd
				if ok.until <= end {
					how = KeyExpired
				}
				c.closeKey(l, ri, min(end, ok.until), how)
			}
		}
		nl := &tl.Nodes[l]
		closeAll(nl.Down, end)
		closeAll(nl.Paused, end)
		for i := range nl.Roles {
			if nl.Roles[i].To < 0 {
				nl.Roles[i].To = end.Duration()
			}
		}
		for i := range nl.Keys {
			if j, ok := c.values[nl.Keys[i].Value]; ok {
				nl.Keys[i].Client = j
			}
		}
		if p := c.procs[l]; p != nil && p.Clock() != nil {
			for _, s := range p.Clock().Steps() {
				c.mark(&nl.Marks, s.At, MarkClockJump, "clock "+signed(s.By))
			}
			if nl.Service != "" { // a ZooKeeper leader expires sessions by its clock's rate: show where it changes
				for _, s := range p.Clock().Slews() {
					c.mark(&nl.Marks, s.At, MarkClockSlew, slewText(s))
				}
			}
		}
	}
	for j := range tl.Clients {
		cl := &tl.Clients[j]
		closeAll(cl.Work, end)
		closeAll(cl.Pauses, end)
		for i := range cl.Validity {
			cl.Validity[i].To = min(cl.Validity[i].To, end.Duration())
		}
		for _, s := range c.w.Clients[j].Clock().Steps() {
			c.mark(&cl.Marks, s.At, MarkClockJump, "clock "+signed(s.By))
		}
	}
	tl.NetFaults = c.netFaults(end)
	tl.Violations = append([]oracle.Violation(nil), c.w.Oracle.Violations()...)
	return tl
}

func closeAll(spans []Span, end sim.Time) {
	for i := range spans {
		if spans[i].To < 0 {
			spans[i].To = end.Duration()
		}
	}
}

// slewText says a slew as a mark reads it: "clock slews +4.75s at 500000 ppm". A drift
// change (the clock_drift action) is a slew to the end of the run at the new rate.
func slewText(s clock.Slew) string {
	return "clock slews " + signed(s.By) + " at " + strconv.FormatFloat(s.RatePPM, 'f', -1, 64) + " ppm"
}

// signed renders a clock step as "+2s" or "-500ms".
func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// netFaults lists the network's fault spans, a two-way cut as one.
func (c *TimelineCollector) netFaults(end sim.Time) []NetFault {
	w := c.w
	spans := w.Net.Faults()
	paired := make([]bool, len(spans))
	var out []NetFault
	for i, f := range spans {
		if paired[i] || f.Start >= end {
			continue
		}
		nf := NetFault{Span: Span{From: f.Start.Duration(), To: min(f.End, end).Duration()},
			Kind: f.Fault.Kind.String(), Text: w.NetFaultText(f.Fault)}
		switch f.Fault.Kind {
		case network.FaultIsolate:
			nf.A = w.Net.Name(f.Fault.Node)
		case network.FaultBlock, network.FaultClog:
			nf.A, nf.B = w.Net.Name(f.Fault.From), w.Net.Name(f.Fault.To)
		case network.FaultSplit:
			nf.Text = "split into " + strconv.Itoa(len(f.Fault.Groups)+1) + " sides"
		}
		if j := world.ReverseBlock(spans, i); j >= 0 {
			paired[j] = true
			nf.Kind = "cut"
			nf.Text = "cut " + nf.A + "↔" + nf.B
		}
		if c.room() {
			out = append(out, nf)
		}
	}
	return out
}
