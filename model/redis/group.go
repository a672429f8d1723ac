package redis

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The group's kernel event kinds.
const (
	evFailover    = iota + 1 // the detection timeout after the master went down
	evFault                  // a fault scheduled with At
	evWaitTimeout            // a WAIT's timeout; the argument is its sequence number
)

// Group is one logical Redis endpoint on the network: a master and its replicas, with
// asynchronous replication and Sentinel-like failover, fronted by a single network
// endpoint. Clients address the group; it hands each command to whichever node is master
// now and sends the reply back from the same endpoint, so a failover is invisible to a
// client except through its consequences (a write that never reached the new master is
// gone). A group of one node is a plain standalone Redis.
type Group struct {
	s      *sim.Sim
	tr     transport
	net    *network.Net[model.Message] // tr itself when it is the network, for a direct call (see reply)
	ep     network.Endpoint
	cfg    GroupConfig
	nodes  []*Node
	master int
	offset uint64 // writes the masters have produced so far (the replication offset)
	rng    *rand.Rand

	downSince sim.Time // when the current master went down, while it is down
	failEv    sim.EventID
	faults    []Fault // scheduled with At; the event's argument indexes it
	waits     []pendingWait
	waitSeq   uint64
	stats     GroupStats
}

// GroupStats counts what a group did.
type GroupStats struct {
	Failovers uint64
	// LostWrites counts the writes the masters had made that the promoted replicas had
	// not applied when they were promoted: the writes a failover lost.
	LostWrites uint64
}

// NewGroup builds the group's nodes and attaches the group to net under cfg.Name. Bad
// configuration is a *sim.ParamError (from the node's clock, a *sim.ParamError too).
func NewGroup(s *sim.Sim, net *network.Net[model.Message], cfg GroupConfig) (*Group, error) {
	g, err := newGroup(s, net, cfg)
	if err != nil {
		return nil, err
	}
	g.net = net
	if g.ep, err = net.AddEndpoint(g.cfg.Name, model.ServerEndpoint(g)); err != nil {
		return nil, fmt.Errorf("group %s: %w", g.cfg.Name, err)
	}
	return g, nil
}

// transport is the one thing a group needs from the network once attached: sending.
// *network.Net[Message] is one; the node benchmark plugs in a bare loopback instead, to
// measure the node's own request path without the network's cost.
type transport interface {
	Send(from, to network.Endpoint, m model.Message)
}

func newGroup(s *sim.Sim, tr transport, cfg GroupConfig) (*Group, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Group{s: s, tr: tr, cfg: cfg, rng: s.Rand(cfg.Name + "/repl")}
	for i, nc := range cfg.Nodes {
		name := cfg.Name
		if len(cfg.Nodes) > 1 {
			name += "." + strconv.Itoa(i)
		}
		n, err := newNode(g, i, name, nc)
		if err != nil {
			return nil, fmt.Errorf("group %s node %d: %w", cfg.Name, i, err)
		}
		g.nodes = append(g.nodes, n)
	}
	return g, nil
}

// Endpoint returns the group's network endpoint: where clients send their commands.
func (g *Group) Endpoint() network.Endpoint { return g.ep }

// Name returns the group's endpoint name.
func (g *Group) Name() string { return g.cfg.Name }

// Len returns the number of nodes.
func (g *Group) Len() int { return len(g.nodes) }

// Node returns node i, for i in [0, Len()) (0 is the initial master).
func (g *Group) Node(i int) *Node { return g.nodes[i] }

// Master returns the node that is master now (possibly down, before a failover).
func (g *Group) Master() *Node { return g.nodes[g.master] }

// Stats returns the group's counters.
func (g *Group) Stats() GroupStats { return g.stats }

// Receive is the group's network endpoint: commands go to the current master's queue.
func (g *Group) Receive(now sim.Time, from, _ network.Endpoint, m *model.Message) {
	if m.Kind != model.MsgCommand {
		if m.Kind == model.MsgProbe {
			g.nodes[g.master].probe(from, m)
			return
		}
		g.s.Trace(g.cfg.Name, RecDrop, sim.Str("reason", "not-a-command"), model.Describe(m, resp.Protocol{}))
		return
	}
	g.nodes[g.master].enqueue(now, from, m)
}

// Submit delivers c to the group's master now, from a client outside the world whose
// reply goes nowhere: another process on the same Redis (a scenario's outside_lock). Like
// any command it waits in the queue of a paused master and is lost by a stopped one.
func (g *Group) Submit(now sim.Time, c resp.Command) {
	m := model.Request(0, c.Payload())
	g.nodes[g.master].enqueue(now, model.NoEndpoint, &m)
}

// reply sends r back to the requester from a node in its boot. Through the transport
// interface, a call to the network's Send goes through Go's wrapper for the generic
// method, which copies the 104-byte message once more and calls again; a direct call
// skips both, one reply per command.
func (g *Group) reply(to network.Endpoint, id uint64, r resp.Reply, boot uint32) {
	if to == model.NoEndpoint { // an outside client's command (Submit)
		return
	}
	m := model.Message{Kind: model.MsgReply, ReqID: id, Body: r.Payload(), Conn: boot}
	if g.net != nil {
		g.net.Send(g.ep, to, m)
		return
	}
	g.tr.Send(g.ep, to, m)
}

// ack acknowledges TCP probe id from a host in its boot.
func (g *Group) ack(to network.Endpoint, id uint64, boot uint32) {
	g.tr.Send(g.ep, to, model.Message{Kind: model.MsgAck, ReqID: id, Conn: boot})
}

// push sends a published message to a subscriber: ["message", channel, payload], on no
// request of its own.
func (g *Group) push(to network.Endpoint, channel, payload string) {
	if to == model.NoEndpoint {
		return
	}
	g.tr.Send(g.ep, to, model.Message{Kind: model.MsgPush, Body: resp.Push(channel, payload)})
}

// replicate sends one of the master's writes to every replica.
func (g *Group) replicate(now sim.Time, from *Node, e *effect) {
	g.offset++
	for _, r := range g.nodes {
		if r == from || r.master || !r.up {
			continue
		}
		d := g.cfg.ReplicationDelay
		if j := g.cfg.ReplicationJitter; j > 0 {
			d += time.Duration(g.rng.Int64N(int64(j) + 1))
		}
		r.pushRepl(now, e, g.offset, d)
	}
}

// nodeDown is told that n stopped. A master's power loss also loses the writes it had
// sent that no replica applied yet; a kill or shutdown lets them arrive (the kernel, or
// SHUTDOWN's wait for replicas, still delivers them).
func (g *Group) nodeDown(now sim.Time, n *Node, how FaultKind) {
	if n.idx != g.master {
		return
	}
	if faultKinds[how].HostDown {
		for _, r := range g.nodes {
			if r != n {
				r.dropRepl()
			}
		}
	}
	g.downSince = now
	if g.cfg.FailoverAfter > 0 && len(g.nodes) > 1 && g.failEv == 0 {
		id, err := g.s.Schedule(now.Add(g.cfg.FailoverAfter), g, evFailover, 0)
		if err != nil {
			g.s.Fail(fmt.Errorf("group %s: %w", g.cfg.Name, err))
		}
		g.failEv = id
	}
}

// nodeUp is told that n restarted: a master back before any failover makes its replicas
// resynchronise from it (and so inherit whatever it lost); any other node rejoins as a
// replica of the current master.
func (g *Group) nodeUp(now sim.Time, n *Node) {
	if n.idx == g.master {
		if g.failEv != 0 {
			g.s.Cancel(g.failEv)
			g.failEv = 0
		}
		for _, r := range g.nodes {
			if r != n {
				g.resyncFrom(now, r, n)
			}
		}
		return
	}
	n.master = false
	if m := g.nodes[g.master]; m.up {
		g.resyncFrom(now, n, m)
		return
	}
	g.maybeFailover(now)
}

// resync gives replica n the full resynchronisation it is due, if its master is up.
func (g *Group) resync(now sim.Time, n *Node) {
	if m := g.nodes[g.master]; m.up && m != n {
		n.syncFrom(now, m, g.offset)
	}
}

// resyncFrom resynchronises replica r from master m now, or, if r is paused (a frozen
// process cannot load a snapshot), when it resumes.
func (g *Group) resyncFrom(now sim.Time, r, m *Node) {
	switch {
	case !r.up:
	case r.paused:
		r.dropRepl()
		r.needSync = true
	default:
		r.syncFrom(now, m, g.offset)
	}
}

// maybeFailover promotes the most up-to-date running replica once the master has been
// down for FailoverAfter. Without a candidate it waits: a replica that restarts or
// resumes later calls it again.
func (g *Group) maybeFailover(now sim.Time) {
	m := g.nodes[g.master]
	if m.up || g.cfg.FailoverAfter == 0 || now.Sub(g.downSince) < g.cfg.FailoverAfter {
		return
	}
	var best *Node
	for _, r := range g.nodes {
		if r == m || !r.up || r.paused {
			continue
		}
		if best == nil || r.offset > best.offset {
			best = r
		}
	}
	if best != nil {
		g.promote(now, best)
	}
}

func (g *Group) promote(now sim.Time, c *Node) {
	old := g.nodes[g.master]
	old.master, c.master = false, true
	g.master = c.idx
	c.dropRepl()
	c.needSync = false
	lost := g.offset - c.offset
	c.offset = g.offset
	g.stats.Failovers++
	g.stats.LostWrites += lost
	g.s.Trace(g.cfg.Name, RecFailover, sim.Str("from", old.name), sim.Str("to", c.name), sim.Int("lost_writes", int64(lost)))
	for _, r := range g.nodes {
		if r != c {
			g.resyncFrom(now, r, c)
		}
	}
	c.armCron(now)
}

// HandleEvent runs the group's kernel events.
func (g *Group) HandleEvent(now sim.Time, kind int, arg uint64) {
	switch kind {
	case evFailover:
		g.failEv = 0
		g.maybeFailover(now)
	case evFault:
		g.apply(now, g.faults[arg])
	case evWaitTimeout:
		for i := range g.waits {
			if g.waits[i].seq == arg {
				g.answerWait(now, i)
				return
			}
		}
	}
}

// pendingWait is a WAIT its master has not answered yet.
type pendingWait struct {
	seq    uint64
	master *Node
	from   network.Endpoint
	id     uint64
	cmd    resp.Command
	target uint64 // the replication offset every write before the WAIT reached
	need   int
	ev     sim.EventID
}

// wait runs WAIT on master m: answered now if enough replicas acknowledged every write the
// master made before it (a replica acknowledges a write as it applies it), else when they
// have or when its timeout passes, with how many had. A WAIT left waiting when its master
// goes down is never answered.
func (g *Group) wait(now sim.Time, m *Node, from network.Endpoint, id uint64, c *resp.Command) {
	need, err := strconv.Atoi(c.Value)
	if err != nil || need < 0 || c.TTL < 0 {
		g.reply(from, id, resp.Reply{Kind: resp.ReplyError, Str: "ERR value is out of range, must be positive"}, m.boot)
		return
	}
	w := pendingWait{master: m, from: from, id: id, cmd: *c, target: g.offset, need: need}
	if g.acked(w.target) >= need {
		g.waits = append(g.waits, w)
		g.answerWait(now, len(g.waits)-1)
		return
	}
	g.waitSeq++
	w.seq = g.waitSeq
	if c.TTL > 0 {
		id, err := g.s.Schedule(m.clk.TimerFires(now, c.TTL), g, evWaitTimeout, w.seq)
		if err != nil {
			g.s.Fail(fmt.Errorf("group %s: %w", g.cfg.Name, err))
			return
		}
		w.ev = id
	}
	g.waits = append(g.waits, w)
}

// info answers INFO replication: the master's role and its connected replicas (the
// running ones).
func (g *Group) info() resp.Reply {
	k := 0
	for _, r := range g.nodes {
		if !r.master && r.up {
			k++
		}
	}
	return resp.Reply{Kind: resp.ReplyBulk, Str: "# Replication\r\nrole:master\r\nconnected_slaves:" + strconv.Itoa(k) + "\r\n"}
}

// acked counts the running replicas that applied every write up to offset target.
func (g *Group) acked(target uint64) int {
	k := 0
	for _, r := range g.nodes {
		if !r.master && r.up && r.offset >= target {
			k++
		}
	}
	return k
}

// checkWaits answers the WAITs that enough replicas now acknowledged.
func (g *Group) checkWaits(now sim.Time) {
	for i := 0; i < len(g.waits); {
		if g.acked(g.waits[i].target) >= g.waits[i].need {
			g.answerWait(now, i)
			continue
		}
		i++
	}
}

// answerWait answers WAIT i with the replicas that acknowledged it, from its master if
// that is still up and master, and forgets it.
func (g *Group) answerWait(now sim.Time, i int) {
	w := g.waits[i]
	g.waits = append(g.waits[:i], g.waits[i+1:]...)
	g.s.Cancel(w.ev)
	if !w.master.up || !w.master.master {
		return
	}
	reply := resp.IntReply(int64(g.acked(w.target)))
	w.master.traceExec(&w.cmd, reply)
	g.reply(w.from, w.id, reply, w.master.boot)
}

// FaultKind names a process fault of a Redis node: every kind any server can suffer
// (model.FaultKinds: crash, kill, shutdown, restart, pause, resume), and Redis's own
// (failover). Each kind has one descriptor in faultKinds, which every reader above model
// (the world's fault notes, the scenario actions, the timeline, the narration, the random
// draws) reads instead of naming kinds; FaultKinds lists them.
type FaultKind uint8

// The process faults.
const (
	FaultCrash    FaultKind = iota + 1 // power loss: memory, queue and unsynced AOF writes lost
	FaultKill                          // kill -9: memory and queue lost, AOF writes kept
	FaultShutdown                      // SHUTDOWN: final fsync, then exit
	FaultRestart                       // start a stopped node
	FaultPause                         // stall the process, queue intact
	FaultResume                        // end a pause
	// FaultFailover promotes the most up-to-date running replica now, whatever the
	// master's state, as SENTINEL FAILOVER does: writes the replica had not received are
	// lost, and a running old master becomes its replica. Node is ignored.
	FaultFailover
	faultEnd // one past the last kind; TestEveryFaultKindHasADescriptor holds each below it to a descriptor
)

// FaultEffect is what a process fault does to its node (model.FaultEffect: the effects
// are the same for every service). The group applies a fault by its effect, so a new kind
// with an existing effect needs no code outside its descriptor.
type FaultEffect = model.FaultEffect

// The effects of process faults (model's), as a Redis node suffers them.
const (
	// EffectStop ends the process: the node is down until it restarts. Its record
	// carries keys, dropped and lost_writes.
	EffectStop = model.EffectStop
	// EffectStart restarts a stopped node from what its persistence kept. Its record
	// carries keys.
	EffectStart = model.EffectStart
	// EffectStall freezes the process with its queue (SIGSTOP).
	EffectStall = model.EffectStall
	// EffectThaw ends a stall.
	EffectThaw = model.EffectThaw
	// EffectPromote promotes the group's most up-to-date running replica. Its record
	// carries from and to.
	EffectPromote = model.EffectPromote
)

// FaultDesc describes one kind of a Redis node's process fault: a server-neutral kind's
// descriptor (model.FaultDesc, which it copies) or one of Redis's own, with what only
// Redis has (a replica to promote).
type FaultDesc struct {
	Kind   FaultKind
	Name   string // how the kind prints ("crash")
	Record string // the kind of the trace record the node or group writes as it applies
	Effect FaultEffect
	// HostDown says the host goes down with the process, as in a power loss: writes not
	// yet fsynced to the AOF and replication the master sent but no replica applied are
	// lost, and while it is down nothing answers a connection (after a kill or a shutdown
	// the host refuses it at once).
	HostDown bool
	// NeedsReplica says the fault acts on a replica, so its group must have one.
	NeedsReplica bool
	// Action is the scenario action that schedules it on a node's master ("crash_node";
	// its arguments follow from Effect), or "" when a scenario cannot ask for it (a
	// restart or resume comes as the end of a stop or a stall).
	Action string
	// Process is the server-neutral kind this is (model.FaultKind), which any lock
	// service's server can suffer; 0 for Redis's own (a failover).
	Process model.FaultKind
}

// Lasts reports whether a fault of this kind lasts (Fault.For, or Forever) rather than
// happening at an instant.
func (d FaultDesc) Lasts() bool { return d.Effect == EffectStop || d.Effect == EffectStall }

// faultKinds is every kind's descriptor, indexed by kind: the server-neutral kinds as
// model describes them, and Redis's own.
var faultKinds = [faultEnd]FaultDesc{
	FaultCrash:    neutral(model.FaultCrash),
	FaultKill:     neutral(model.FaultKill),
	FaultShutdown: neutral(model.FaultShutdown),
	FaultRestart:  neutral(model.FaultRestart),
	FaultPause:    neutral(model.FaultPause),
	FaultResume:   neutral(model.FaultResume),
	FaultFailover: {Name: "failover", Record: RecFailover, Effect: EffectPromote, NeedsReplica: true, Action: "failover"},
}

// neutral is the descriptor of server-neutral kind k, as a Redis node's.
func neutral(k model.FaultKind) FaultDesc {
	d, _ := k.Desc()
	return FaultDesc{Name: d.Name, Record: d.Record, Effect: d.Effect, HostDown: d.HostDown, Action: d.Action, Process: k}
}

// FaultKinds returns the descriptor of every process fault kind, in kind order.
func FaultKinds() []FaultDesc {
	out := make([]FaultDesc, 0, len(faultKinds)-1)
	for k := FaultCrash; k < faultEnd; k++ {
		d := faultKinds[k]
		d.Kind = k
		out = append(out, d)
	}
	return out
}

// Desc returns the kind's descriptor, and false for a value that names no kind.
func (k FaultKind) Desc() (FaultDesc, bool) {
	if k < FaultCrash || k >= faultEnd {
		return FaultDesc{}, false
	}
	d := faultKinds[k]
	d.Kind = k
	return d, true
}

// KindOf returns the Redis kind of server-neutral kind p, and false for a value that
// names none.
func KindOf(p model.FaultKind) (FaultKind, bool) {
	for k := FaultCrash; k < faultEnd; k++ {
		if p != 0 && faultKinds[k].Process == p {
			return k, true
		}
	}
	return 0, false
}

// FaultByRecord returns the descriptor of the kind whose record is called kind, and
// false for a record no process fault writes.
func FaultByRecord(kind string) (FaultDesc, bool) {
	for k := FaultCrash; k < faultEnd; k++ {
		if faultKinds[k].Record == kind {
			return k.Desc()
		}
	}
	return FaultDesc{}, false
}

func (k FaultKind) String() string {
	if d, ok := k.Desc(); ok {
		return d.Name
	}
	return "fault(" + strconv.Itoa(int(k)) + ")"
}

// faultNames lists the kinds' names for an error message: "{crash, kill, ...}".
func faultNames() string {
	s := "{"
	for k := FaultCrash; k < faultEnd; k++ {
		if k > FaultCrash {
			s += ", "
		}
		s += faultKinds[k].Name
	}
	return s + "}"
}

// CurrentMaster, as Fault.Node, means whichever node is master when the fault applies.
const CurrentMaster = -1

// Fault is a process fault to apply to one node of a group at a given true time.
type Fault struct {
	Kind FaultKind
	Node int // index in the group, or CurrentMaster
	// For is how long a fault that lasts (FaultDesc.Lasts: a crash, kill or shutdown, a
	// pause) keeps the node down before it restarts by itself, or paused before it
	// resumes (0: at once). Ignored by the others.
	For time.Duration
	// Forever keeps the node down (or paused) until a FaultRestart (or FaultResume).
	// Ignored by a fault that does not last.
	Forever bool
}

// At schedules fault f at true time t. It is validated now, so a bad schedule is an
// error at setup rather than a failed run.
func (g *Group) At(t sim.Time, f Fault) error {
	d, known := f.Kind.Desc()
	switch {
	case !known:
		return sim.BadParam("fault", int(f.Kind), faultNames())
	case d.NeedsReplica && len(g.nodes) < 2:
		return sim.BadParam(d.Name, g.cfg.Name, "a group with a replica to promote (replicas ≥ 1)")
	case f.Node < CurrentMaster || f.Node >= len(g.nodes):
		return sim.BadParam("fault_node", f.Node, fmt.Sprintf("[-1, %d] (-1 = the master)", len(g.nodes)-1))
	case f.For < 0 || f.For > MaxDowntime:
		return sim.BadParam("fault_for", f.For, fmt.Sprintf("[0s, %v]", MaxDowntime))
	case len(g.faults) >= MaxScheduledFaults:
		return sim.BadParam("faults", len(g.faults)+1, fmt.Sprintf("[0, %d] per group", MaxScheduledFaults))
	}
	if _, err := g.s.Schedule(t, g, evFault, uint64(len(g.faults))); err != nil {
		return err
	}
	g.faults = append(g.faults, f)
	return nil
}

func (g *Group) apply(now sim.Time, f Fault) {
	n := g.Master()
	if f.Node != CurrentMaster {
		n = g.nodes[f.Node]
	}
	switch faultKinds[f.Kind].Effect {
	case EffectStop:
		if !n.up {
			return
		}
		n.stop(now, f.Kind)
		if !f.Forever {
			n.restartEv = n.schedule(now.Add(f.For), evRestart)
		}
	case EffectStart:
		n.restart(now)
	case EffectStall:
		if !n.up || n.paused {
			return
		}
		n.pause(now)
		if !f.Forever {
			n.resumeEv = n.schedule(now.Add(f.For), evResume)
		}
	case EffectThaw:
		n.resume(now)
	case EffectPromote:
		g.forceFailover(now)
	}
}

// forceFailover promotes the most up-to-date running, unpaused replica now. Without one
// it does nothing, as Sentinel refuses a failover with no good replica.
func (g *Group) forceFailover(now sim.Time) {
	var best *Node
	for _, r := range g.nodes {
		if r.idx == g.master || !r.up || r.paused {
			continue
		}
		if best == nil || r.offset > best.offset {
			best = r
		}
	}
	if best == nil {
		return
	}
	if g.failEv != 0 {
		g.s.Cancel(g.failEv)
		g.failEv = 0
	}
	g.promote(now, best)
}
