package redis

import (
	"fmt"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The node's kernel event kinds.
const (
	evDone    = iota + 1 // the command in service completes
	evCron               // the cron: active expiry and the everysec fsync check
	evRestart            // a crashed node restarts
	evResume             // a paused node resumes
	evRepl               // the head of the replication backlog arrives
)

// Node is one redis-server process inside a Group: an Engine, a local clock, a bounded
// request queue served one command at a time, persistence, and the replica side of
// replication. It is driven entirely by kernel events and its group; see the package
// documentation for its life cycle.
type Node struct {
	g    *Group
	s    *sim.Sim
	idx  int
	name string
	nm   model.TraceName // name and "exec" with their trace digests
	cfg  NodeConfig
	clk  *clock.Clock
	eng  *Engine
	cron time.Duration // the cron period on the monotonic clock: 1s / hz

	up, paused, master bool
	// refusing: the process is down but its host is up (kill -9, SHUTDOWN), so the kernel
	// answers a request with a reset, which the client sees at once as a connection
	// error; after a power loss (crash) nothing answers at all.
	refusing bool
	// boot numbers the host's boots from 1: a power loss's restart is a new one, and a
	// TCP connection opened before it is unknown to the host (see Message.Conn).
	boot uint32

	q      ring[request] // the head is in service while busy
	busy   bool
	doneEv sim.EventID
	doneAt sim.Time
	left   time.Duration // service left on the head when the node was paused

	cronEv    sim.EventID
	restartEv sim.EventID
	resumeEv  sim.EventID

	// Persistence. disk is what the AOF holds once replayed; unsynced are the writes
	// since the last fsync (latest state per key, in first-write order).
	disk         map[string]diskKey
	unsynced     []effect
	unsyncedIdx  map[string]int32
	lastFsyncSec int64

	// Replica side of replication: writes in flight from the master, in arrival order.
	repl     ring[replItem]
	replEv   sim.EventID
	replLast sim.Time // arrival of the newest item, so writes never overtake each other
	needSync bool     // the backlog overflowed: a full resynchronisation is due
	offset   uint64   // the group's write number of the last write applied

	stats NodeStats
}

type request struct {
	from network.Endpoint
	id   uint64
	cmd  resp.Command
}

type replItem struct {
	at     sim.Time
	offset uint64
	eff    effect
}

type diskKey struct {
	val  string
	hash []hashField
	exp  int64
}

// NodeStats counts what a node did.
type NodeStats struct {
	Commands    uint64   // commands executed
	DroppedDown uint64   // requests that reached the node while it was down
	Resets      uint64   // resets for connections the host does not have: probes while the process is down, requests and probes on a connection opened before a power loss
	DroppedFull uint64   // requests dropped because the queue was full
	Expired     uint64   // keys removed by expiry, lazy or active
	Fsyncs      uint64   // AOF fsyncs (everysec)
	LastFsync   sim.Time // when the last one happened
	Crashes     uint64   // crashes, kills and shutdowns
	Restarts    uint64
	LostWrites  uint64 // key states a crash lost because they were not yet fsynced
	Applied     uint64 // replicated writes applied
	Syncs       uint64 // full resynchronisations from a master
}

func newNode(g *Group, idx int, name string, cfg NodeConfig) (*Node, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	clk, err := clock.New(cfg.Clock, g.s.Rand(name+"/clock"))
	if err != nil {
		return nil, err
	}
	eng, err := NewEngine(EngineConfig{MaxKeys: cfg.MaxKeys})
	if err != nil {
		return nil, err
	}
	n := &Node{g: g, s: g.s, idx: idx, name: name, nm: model.NewTraceName(name, RecExec), cfg: cfg, clk: clk, eng: eng,
		cron: time.Second / time.Duration(cfg.Hz), up: true, master: idx == 0, boot: 1,
		q: newRing[request](cfg.MaxQueue), repl: newRing[replItem](g.cfg.MaxBacklog)}
	if cfg.Persistence != PersistNone {
		n.disk = make(map[string]diskKey)
		n.unsyncedIdx = make(map[string]int32)
	}
	n.lastFsyncSec = floorDiv(n.WallMs(g.s.Now()), 1000)
	if cfg.PreloadScripts {
		n.preload()
	}
	return n, nil
}

// Name returns the node's name in traces.
func (n *Node) Name() string { return n.name }

// Index returns the node's index in its group.
func (n *Node) Index() int { return n.idx }

// Up reports whether the process is running (possibly paused).
func (n *Node) Up() bool { return n.up }

// Paused reports whether the process is stalled.
func (n *Node) Paused() bool { return n.paused }

// IsMaster reports whether the node is its group's master.
func (n *Node) IsMaster() bool { return n.master }

// Clock returns the node's local clock.
func (n *Node) Clock() *clock.Clock { return n.clk }

// Engine returns the node's data path, for inspection (use Peek, Len, ScriptLoaded).
func (n *Node) Engine() *Engine { return n.eng }

// Stats returns the node's counters.
func (n *Node) Stats() NodeStats { return n.stats }

// QueueLen returns the number of requests waiting, including the one in service.
func (n *Node) QueueLen() int { return n.q.n }

// WallMs returns the node's wall clock at true time t in Unix milliseconds: what Redis's
// mstime() returns there.
func (n *Node) WallMs(t sim.Time) int64 {
	return n.cfg.EpochMs + floorDiv(int64(n.clk.Wall(t)), int64(time.Millisecond))
}

// Peek returns key's value and absolute expiry in Unix ms as a GET on this node would
// see them now, without side effects.
func (n *Node) Peek(key string) (val string, expMs int64, ok bool) {
	return n.eng.Peek(key, n.WallMs(n.s.Now()))
}

// Crash stops the process as a power loss does: memory, the request queue and AOF writes
// not yet fsynced are lost.
func (n *Node) Crash() { n.stop(n.s.Now(), FaultCrash) }

// Kill stops the process as kill -9 does: memory and the queue are lost, but what was
// written to the AOF file survives in the OS (with AOF, everything acknowledged).
func (n *Node) Kill() { n.stop(n.s.Now(), FaultKill) }

// Shutdown stops the process cleanly, as SHUTDOWN does: a final fsync, then exit.
// Without persistence nothing is saved.
func (n *Node) Shutdown() { n.stop(n.s.Now(), FaultShutdown) }

// Restart starts a stopped process: it reloads what its persistence kept, with every
// key's absolute expiry, and rejoins its group (as a replica if another node took over).
func (n *Node) Restart() { n.restart(n.s.Now()) }

// Pause stalls the process (a GC pause, SIGSTOP, a VM migration): nothing is served,
// expired or fsynced, but the queue is kept and keeps filling up to its limit.
func (n *Node) Pause() { n.pause(n.s.Now()) }

// Resume ends a pause; the queue is served from where it stopped.
func (n *Node) Resume() { n.resume(n.s.Now()) }

// Stop ends the process at now as how does (model.ServerProcess): a crash, a kill or a
// shutdown, each as its namesake above; a kind that is no stop does nothing.
func (n *Node) Stop(now sim.Time, how model.FaultKind) {
	if k, ok := KindOf(how); ok && faultKinds[k].Effect == EffectStop {
		n.stop(now, k)
	}
}

// Start starts a stopped process at now, as Restart does (model.ServerProcess).
func (n *Node) Start(now sim.Time) { n.restart(now) }

// Stall stalls the process at now, as Pause does (model.ServerProcess).
func (n *Node) Stall(now sim.Time) { n.pause(now) }

// Thaw ends a stall at now, as Resume does (model.ServerProcess).
func (n *Node) Thaw(now sim.Time) { n.resume(now) }

// A Redis node is a server process the world's faults reach like any service's.
var _ model.ServerProcess = (*Node)(nil)

// HandleEvent runs the node's kernel events.
func (n *Node) HandleEvent(now sim.Time, kind int, _ uint64) {
	switch kind {
	case evDone:
		n.doneEv, n.busy = 0, false
		n.serve(now)
		n.kick(now)
	case evCron:
		n.cronEv = 0
		n.tick(now)
	case evRestart:
		n.restartEv = 0
		n.restart(now)
	case evResume:
		n.resumeEv = 0
		n.resume(now)
	case evRepl:
		n.replEv = 0
		n.applyRepl(now)
	}
}

// enqueue accepts a request from the group.
func (n *Node) enqueue(now sim.Time, from network.Endpoint, m *model.Message) {
	cmd := resp.CommandOf(&m.Body)
	switch {
	case !n.up && n.refusing:
		n.stats.DroppedDown++
		n.s.Trace(n.name, RecDrop, sim.Str("reason", "refused"), cmdField(&cmd))
		n.g.reply(from, m.ReqID, resp.NoReply, n.boot)
		return
	case !n.up:
		n.stats.DroppedDown++
		n.s.Trace(n.name, RecDrop, sim.Str("reason", "down"), cmdField(&cmd))
		return
	case m.Conn != 0 && m.Conn != n.boot && !n.connect(from, m):
		return
	}
	switch {
	case n.q.n == 0 && n.cfg.ServiceTime == 0 && !n.paused && !n.busy:
		// What push and kick would do, without copying the command through the queue: an
		// idle node with no service time answers at once.
		n.execute(now, from, m.ReqID, &cmd)
		return
	case !n.q.push(request{from: from, id: m.ReqID, cmd: cmd}):
		n.stats.DroppedFull++
		n.s.Trace(n.name, RecDrop, sim.Str("reason", "queue-full"), cmdField(&cmd))
		return
	}
	n.kick(now)
}

// connect takes a request whose connection is not bound to the host's current boot. A new
// connection's first segment (connSYN) is acknowledged at once by the host's kernel,
// whatever the process is doing, and goes on to the process: connect reports true. Any
// other came on a connection opened before the host lost power, which its kernel answers
// with a reset: connect reports false.
func (n *Node) connect(from network.Endpoint, m *model.Message) bool {
	if m.Conn == connSYN {
		n.g.ack(from, m.ReqID, n.boot)
		return true
	}
	n.reset(from, m)
	return false
}

// reset answers a request or probe on a connection the host no longer has, because it
// was opened before the host lost power or because the server's process is gone: the
// host's kernel sends a reset, which the client sees as a connection error.
func (n *Node) reset(from network.Endpoint, m *model.Message) {
	n.stats.Resets++
	if m.Kind == model.MsgCommand {
		cmd := resp.CommandOf(&m.Body)
		n.s.Trace(n.name, RecDrop, sim.Str("reason", "reset"), cmdField(&cmd))
	}
	n.g.reply(from, m.ReqID, resp.NoReply, n.boot)
}

// probe answers a client kernel's TCP probe (MsgProbe): nothing without power, a reset
// from a host whose process is down or that rebooted since the connection opened, else an
// acknowledgement, even from a paused process, whose kernel still runs.
func (n *Node) probe(from network.Endpoint, m *model.Message) {
	switch {
	case !n.up && !n.refusing:
	case !n.up, m.Conn != 0 && m.Conn != n.boot:
		n.reset(from, m)
	default:
		n.g.ack(from, m.ReqID, n.boot)
	}
}

// kick starts serving the queue if the node is free to.
func (n *Node) kick(now sim.Time) {
	for n.up && !n.paused && !n.busy && n.q.n > 0 {
		if n.cfg.ServiceTime == 0 {
			n.serve(now)
			continue
		}
		n.busy = true
		n.doneAt = now.Add(n.cfg.ServiceTime)
		n.doneEv = n.schedule(n.doneAt, evDone)
	}
}

// serve executes the head of the queue and answers it. The command takes effect when its
// service ends: a crash during service loses it unanswered.
func (n *Node) serve(now sim.Time) {
	req := n.q.front()
	from, id := req.from, req.id
	if req.cmd.Op.Route() == resp.RouteGroup { // its turn came: the group answers it
		c := req.cmd
		n.q.drop()
		n.toGroup(now, from, id, &c)
		return
	}
	reply, nowMs := n.run(now, from, &req.cmd)
	n.q.drop()
	n.finish(now, nowMs, from, id, reply)
}

// execute is serve for a request that never waited in the queue.
func (n *Node) execute(now sim.Time, from network.Endpoint, id uint64, c *resp.Command) {
	if c.Op.Route() == resp.RouteGroup {
		n.toGroup(now, from, id, c)
		return
	}
	reply, nowMs := n.run(now, from, c)
	n.finish(now, nowMs, from, id, reply)
}

// toGroup hands a command routed to the group (resp.RouteGroup) to it. A routed Op the
// group has no answer for is a bug of the model, which fails the run rather than answer
// something else.
//
//go:noinline
func (n *Node) toGroup(now sim.Time, from network.Endpoint, id uint64, c *resp.Command) {
	n.stats.Commands++
	switch c.Op {
	case resp.OpWait: // it blocks its client, not the node
		n.g.wait(now, n, from, id, c)
	case resp.OpInfo: // INFO replication
		reply := n.g.info()
		n.traceExec(c, reply)
		n.g.reply(from, id, reply, n.boot)
	default:
		n.s.Fail(fmt.Errorf("node %s: %v is routed to the group, which does not answer it", n.name, c.Op))
	}
}

// run executes c, sent from endpoint from, on the node's wall clock and traces it.
func (n *Node) run(now sim.Time, from network.Endpoint, c *resp.Command) (resp.Reply, int64) {
	nowMs := n.WallMs(now)
	n.eng.conn = Subscriber(from)
	reply := n.eng.exec(c, nowMs)
	if invariant.Enabled {
		n.checkExpiries(c, nowMs)
	}
	n.stats.Commands++
	n.traceExpired()
	n.traceExec(c, reply)
	return reply, nowMs
}

// finish persists and replicates what the command did, then answers it.
func (n *Node) finish(now sim.Time, nowMs int64, from network.Endpoint, id uint64, reply resp.Reply) {
	n.commit(now, nowMs)
	n.g.reply(from, id, reply, n.boot)
	if len(n.eng.sent) > 0 {
		n.deliver()
	}
}

// deliver pushes the messages the command published to their subscribers, after its
// reply: Redis writes both in the same event-loop turn, to different connections.
func (n *Node) deliver() {
	for _, d := range n.eng.Deliveries() {
		n.g.push(network.Endpoint(d.To), d.Channel, d.Payload)
	}
	n.eng.ClearDeliveries()
}

// commit hands the engine's last effects to persistence and replication. With
// appendfsync always they are on disk before the reply leaves.
func (n *Node) commit(now sim.Time, nowMs int64) {
	effs := n.eng.effects
	if len(effs) == 0 {
		return
	}
	if n.cfg.Persistence == PersistNone && len(n.g.nodes) == 1 {
		// Nothing to persist and no replica to tell: only the replication offset moves,
		// as replicate would move it. This is every node of the standard workload.
		if n.master {
			n.g.offset += uint64(len(effs))
		}
		n.armCron(now)
		return
	}
	for i := range effs {
		n.persist(&effs[i])
		if n.master {
			n.g.replicate(now, n, &effs[i])
		}
	}
	n.maybeFsync(now, nowMs)
	n.armCron(now)
}

// traceExec records an executed command. Without a sink the record is only folded into
// the trace hash, without building its fields.
func (n *Node) traceExec(c *resp.Command, reply resp.Reply) {
	if !n.s.Tracing() {
		emitExecHasher(n.s.Hasher(), &n.nm, c, reply)
	} else {
		emitExecTexter(n.s.Texter(), &n.nm, c, reply)
	}
}

// emitExec writes an exec record, once, for either emitter (see sim.Emitter): the command
// and, packed into the same field when it is one of the common replies (OK, nil, a 32-bit
// integer), its reply, so the hash folds one field per command; a reply that does not fit
// gets a field of its own. DecodeExec (records.go) reads them back.
//
//lint:ignore U1000 the template internal/cmd/emitgen copies into emit_gen.go once per emitter; never called itself
func emitExec[E sim.Emitter[E]](e E, nm *model.TraceName, c *resp.Command, rep resp.Reply) {
	i, compact := execInt(c, rep)
	e = e.Begin(nm.Actor, nm.Kind).Custom("cmd", i, int64(c.TTL), c.Key, c.Value, formatCmd)
	if !compact {
		e = e.Custom("reply", int64(rep.Kind), rep.Int, rep.Str, "", formatReply)
	}
	e.End()
}

func (n *Node) traceExpired() {
	for i := range n.eng.effects {
		if e := &n.eng.effects[i]; e.expired {
			n.stats.Expired++
			n.s.Trace(n.name, RecExpire, sim.Str("key", e.key))
		}
	}
}

// tick is the cron: active expiry on a master, and the everysec fsync check.
func (n *Node) tick(now sim.Time) {
	if !n.up || n.paused {
		return
	}
	nowMs := n.WallMs(now)
	if n.master && n.eng.ExpireDue(nowMs) > 0 {
		n.traceExpired()
		n.commit(now, nowMs)
	}
	n.maybeFsync(now, nowMs)
	n.armCron(now)
}

// armCron schedules the next cron run if there is work for it: keys that will expire (on
// a master; replicas wait for their master's DELs, as in Redis) or writes to fsync. An
// idle node schedules nothing, so a world with no work left lets sim.Run return.
func (n *Node) armCron(now sim.Time) {
	if n.cronEv != 0 || !n.up || n.paused {
		return
	}
	_, expiring := n.eng.NextExpiry()
	if !(n.master && expiring) && len(n.unsynced) == 0 {
		return
	}
	n.cronEv = n.schedule(n.clk.TimerFires(now, n.cron), evCron)
}

func (n *Node) persist(e *effect) {
	switch n.cfg.Persistence {
	case PersistAOFAlways:
		n.applyDisk(e)
	case PersistAOFEverySec:
		if i, ok := n.unsyncedIdx[e.key]; ok {
			n.unsynced[i] = *e
			return
		}
		if len(n.unsynced) >= MaxUnsynced {
			n.s.Fail(fmt.Errorf("node %s: %d writes waiting for fsync (limit %d)", n.name, len(n.unsynced), MaxUnsynced))
			return
		}
		n.unsyncedIdx[e.key] = int32(len(n.unsynced))
		n.unsynced = append(n.unsynced, *e)
	}
}

func (n *Node) applyDisk(e *effect) {
	if e.del {
		delete(n.disk, e.key)
		return
	}
	n.disk[e.key] = diskKey{val: e.val, hash: e.hash, exp: e.exp}
}

// maybeFsync is Redis's everysec rule: fsync when there is something to sync and the
// wall clock's second has moved past the last fsync's. It follows the wall clock, so a
// backward step delays fsyncs until the clock catches up, as on a real server.
func (n *Node) maybeFsync(now sim.Time, nowMs int64) {
	if n.cfg.Persistence != PersistAOFEverySec || len(n.unsynced) == 0 {
		return
	}
	if sec := floorDiv(nowMs, 1000); sec > n.lastFsyncSec {
		n.lastFsyncSec = sec
		n.fsync(now)
	}
}

func (n *Node) fsync(now sim.Time) {
	count := len(n.unsynced)
	n.syncUnsynced()
	n.stats.Fsyncs++
	n.stats.LastFsync = now
	n.s.Trace(n.name, RecFsync, sim.Int("writes", int64(count)))
}

func (n *Node) syncUnsynced() {
	for i := range n.unsynced {
		n.applyDisk(&n.unsynced[i])
	}
	n.dropUnsynced()
}

func (n *Node) dropUnsynced() {
	clear(n.unsynced) // let the strings go
	n.unsynced = n.unsynced[:0]
	clear(n.unsyncedIdx)
}

// stop ends the process: how, a kind of EffectStop, says what survives (its HostDown).
func (n *Node) stop(now sim.Time, how FaultKind) {
	if !n.up {
		return
	}
	d := &faultKinds[how]
	lost := 0
	if d.HostDown {
		lost = len(n.unsynced)
		n.dropUnsynced()
	} else if len(n.unsynced) > 0 {
		n.syncUnsynced()
	}
	dropped := n.q.n
	n.q.clear()
	n.repl.clear()
	n.cancel(&n.doneEv)
	n.cancel(&n.cronEv)
	n.cancel(&n.replEv)
	n.cancel(&n.resumeEv)
	n.cancel(&n.restartEv)
	n.up, n.paused, n.busy, n.needSync = false, false, false, false
	n.refusing = !d.HostDown
	keys := n.eng.Len()
	n.eng.Reset()
	n.stats.Crashes++
	n.stats.LostWrites += uint64(lost)
	n.s.Trace(n.name, d.Record, sim.Int("keys", int64(keys)), sim.Int("dropped", int64(dropped)),
		sim.Int("lost_writes", int64(lost)))
	n.g.nodeDown(now, n, how)
}

// restart starts the process again from what persistence kept.
func (n *Node) restart(now sim.Time) {
	if n.up {
		return
	}
	n.cancel(&n.restartEv)
	n.up = true
	if !n.refusing {
		n.boot++ // after a power loss, the host booted again
	}
	n.eng.Reset()
	nowMs := n.WallMs(now)
	n.load(nowMs)
	n.lastFsyncSec = floorDiv(nowMs, 1000)
	if n.cfg.PreloadScripts {
		n.preload()
	}
	n.stats.Restarts++
	n.s.Trace(n.name, RecRestart, sim.Int("keys", int64(n.eng.Len())))
	n.g.nodeUp(now, n)
	n.armCron(now)
}

// load replays the AOF: keys come back with their absolute expiries, so time has passed
// for them while the node was down, and keys already expired are dropped (as an AOF
// rewrite would). Keys are loaded in sorted order, never in map order.
func (n *Node) load(nowMs int64) {
	if len(n.disk) == 0 {
		return
	}
	keys := make([]string, 0, len(n.disk))
	for k := range n.disk {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d := n.disk[k]
		if d.exp != NoExpiry && nowMs > d.exp {
			delete(n.disk, k)
			continue
		}
		n.eng.apply(&effect{key: k, val: d.val, hash: d.hash, exp: d.exp})
	}
}

func (n *Node) preload() {
	for _, s := range []resp.Script{resp.ScriptRelease, resp.ScriptExtend, resp.ScriptExtendOrSet} {
		n.eng.LoadScript(s)
	}
}

func (n *Node) pause(now sim.Time) {
	if !n.up || n.paused {
		return
	}
	n.paused = true
	if n.busy {
		n.left = n.doneAt.Sub(now)
		n.cancel(&n.doneEv)
	}
	n.cancel(&n.cronEv)
	n.cancel(&n.replEv)
	n.s.Trace(n.name, RecPause, sim.Int("queued", int64(n.q.n)))
}

func (n *Node) resume(now sim.Time) {
	n.cancel(&n.resumeEv)
	if !n.up || !n.paused {
		return
	}
	n.paused = false
	n.s.Trace(n.name, RecResume, sim.Int("queued", int64(n.q.n)))
	if n.busy {
		n.doneAt = now.Add(n.left)
		n.doneEv = n.schedule(n.doneAt, evDone)
	}
	n.kick(now)
	if n.needSync {
		n.g.resync(now, n)
	}
	n.applyRepl(now)
	n.g.maybeFailover(now)
}

// pushRepl queues a write from the master, arriving after delay and never before the
// writes queued earlier.
func (n *Node) pushRepl(now sim.Time, e *effect, offset uint64, delay time.Duration) {
	if !n.up || n.needSync {
		return
	}
	at := max(now.Add(delay), n.replLast)
	if !n.repl.push(replItem{at: at, offset: offset, eff: *e}) {
		n.repl.clear()
		n.cancel(&n.replEv)
		n.needSync = true
		n.s.Trace(n.name, RecReplOverflow, sim.Int("backlog", int64(n.repl.limit)))
		return
	}
	n.replLast = at
	if n.replEv == 0 && !n.paused {
		n.replEv = n.schedule(at, evRepl)
	}
}

// applyRepl applies the writes that have arrived, then waits for the next one.
func (n *Node) applyRepl(now sim.Time) {
	if !n.up || n.paused {
		return
	}
	applied := false
	for n.repl.n > 0 && n.repl.front().at <= now {
		it := n.repl.pop()
		n.eng.apply(&it.eff)
		n.offset = it.offset
		n.persist(&it.eff)
		n.stats.Applied++
		applied = true
		n.s.Trace(n.name, RecApply, sim.Str("key", it.eff.key), sim.Int("offset", int64(it.offset)))
	}
	if applied {
		n.maybeFsync(now, n.WallMs(now))
		n.armCron(now)
		if len(n.g.waits) > 0 {
			n.g.checkWaits(now)
		}
	}
	if n.replEv == 0 && n.repl.n > 0 {
		n.replEv = n.schedule(n.repl.front().at, evRepl)
	}
}

// dropRepl forgets the writes in flight: their master lost them with its power.
func (n *Node) dropRepl() {
	n.repl.clear()
	n.cancel(&n.replEv)
}

// syncFrom replaces the node's data with its master's: a full resynchronisation. The
// snapshot is taken now and written through to the node's own AOF.
func (n *Node) syncFrom(now sim.Time, m *Node, offset uint64) {
	n.eng.copyKeys(m.eng)
	n.dropRepl()
	n.needSync = false
	n.replLast = now
	n.offset = offset
	if n.disk != nil {
		clear(n.disk)
		n.dropUnsynced()
		n.eng.ks.each(func(k *kentry) {
			exp := NoExpiry
			if k.hpos >= 0 {
				exp = k.exp
			}
			n.disk[k.key] = diskKey{val: k.val, hash: k.hash.snapshot(), exp: exp}
		})
	}
	n.stats.Syncs++
	n.s.Trace(n.name, RecSync, sim.Str("from", m.name), sim.Int("keys", int64(n.eng.Len())))
}

func (n *Node) schedule(at sim.Time, kind int) sim.EventID {
	id, err := n.s.Schedule(at, n, kind, 0)
	if err != nil {
		n.s.Fail(fmt.Errorf("node %s: %w", n.name, err))
	}
	return id
}

func (n *Node) cancel(id *sim.EventID) {
	if *id != 0 {
		n.s.Cancel(*id)
		*id = 0
	}
}

// floorDiv divides rounding toward negative infinity, so a wall reading just before the
// epoch falls in the previous millisecond (or second), not in the same one as just after.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// checkExpiries asserts that a key's expiry is on its node's own clock: a SET with PX that
// wrote its key set the expiry to this node's wall reading plus the TTL, and no key was
// written with an expiry already past on this clock (Redis deletes those at once).
func (n *Node) checkExpiries(c *resp.Command, nowMs int64) {
	for i := range n.eng.effects {
		e := &n.eng.effects[i]
		if e.del {
			continue
		}
		if !(e.exp == NoExpiry || e.exp > nowMs) {
			invariant.Check(false, "node %s: key %q written with expiry %d, not after its own wall clock %d",
				n.name, e.key, e.exp, nowMs)
		}
		if c.Op == resp.OpSet && c.TTL > 0 && !c.InSecs && e.key == c.Key && e.exp != nowMs+c.TTL.Milliseconds() {
			invariant.Check(false, "node %s: SET %q PX %d gave expiry %d on a wall clock reading %d",
				n.name, e.key, c.TTL.Milliseconds(), e.exp, nowMs)
		}
	}
}
