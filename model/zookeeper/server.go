package zookeeper

import (
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The server's kernel event kinds.
const (
	evElect  = iota + 1 // an election round decides
	evTick              // half a tick: the leader pings and checks its followers, a follower checks its leader
	evFsync             // the transaction log's fsync completes
	evExpire            // the leader's session expirer reaches its next bucket
	evInit              // a new leader's initLimit runs out before a quorum synced
	evCount
)

type role uint8

const (
	roleLooking role = iota
	roleFollowing
	roleLeading
)

var roleNames = [...]string{"looking", "following", "leading"}

func (r role) String() string { return roleNames[r] }

// Server is one ZooKeeper server process: a quorum peer (looking, following or leading),
// its data tree and transaction log, the client connections it serves and their watches,
// and, when it leads, the session tracker. It is a network receiver and a kernel event
// handler; Crash, Kill, Restart, Stall and Thaw are its faults, for the world to call.
type Server struct {
	e    *Ensemble
	idx  int
	name string
	ep   network.Endpoint
	clk  *clock.Clock

	up, paused bool
	killed     bool // the process is down but its host is up: the kernel closes connections (EOF)

	role    role
	serving bool // a leader established, or a follower told UPTODATE
	leader  int  // the leader followed (following) or self (leading)

	acceptedEpoch, currentEpoch uint32

	tree     *Tree
	snapTree *Tree       // the last snapshot on disk (nil: the empty tree), taken at snapZxid
	snapZxid int64       //
	log      []int64     // the zxids the transaction log holds on disk (fsynced) since the snapshot
	fsyncing []fsyncItem // under the fsync in progress
	fsyncQ   []fsyncItem // waiting for the next
	fsyncEv  sim.EventID

	// Following.
	pending  []int64 // proposals received and not yet applied, in zxid order
	lastRecv int64
	commitTo int64
	heard    time.Duration // monotonic reading of the last packet from the leader
	touched  []int64       // sessions touched since the leader's last ping

	// Leading.
	counter     uint32
	outstanding []proposal
	peers       []peerState
	acked       uint32 // servers that acknowledged NEWLEADER (self included)
	tracked     []tracked
	nextExpiry  time.Duration // the expirer's next bucket, monotonic
	expireEv    sim.EventID
	initEv      sim.EventID
	tickHalf    bool

	notTimeout time.Duration
	electEv    sim.EventID
	tickEv     sim.EventID
	deferred   [evCount]bool // events that came due while stalled

	conns map[network.Endpoint]*cnxn
	order []network.Endpoint // the connections in the order they opened, for determinism
	// opened is, per client endpoint, the number of the last connection it opened to
	// this server (model.Message.Conn): a message of an earlier one was held by its TCP
	// link after the client closed it. It outlives a restart, as the client's numbers do.
	opened      map[network.Endpoint]uint32
	tags        map[uint64]pendingReq
	nextTag     uint64
	nextSession int64
	dataW       map[string][]network.Endpoint
	childW      map[string][]network.Endpoint
	changes     []change

	stalled []stalledMsg
	stats   ServerStats
}

// ServerStats counts what a server did.
type ServerStats struct {
	Requests  uint64 // client requests served
	Watches   uint64 // watch events sent
	Refused   uint64 // client messages answered with EOF (not serving, stopped, unknown)
	Applied   uint64 // transactions applied
	Crashes   uint64
	Restarts  uint64
	Elections uint64 // times it went looking
}

type fsyncItem struct {
	zxid      int64
	newLeader bool // the sync with a new leader: acknowledge NEWLEADER when it is on disk
}

type proposal struct {
	zxid int64
	acks uint32
}

type peerState struct {
	heard      time.Duration // the leader's monotonic reading of the last packet from it
	forwarding bool          // it gets proposals and commits
	snap       *snapshot     // what NEWLEADER handed it
}

// snapshot is what a new follower syncs from: the leader's applied tree and the
// proposals still outstanding (a SNAP followed by those proposals).
type snapshot struct {
	epoch       uint32
	tree        *Tree
	outstanding []int64
	last        int64
}

type tracked struct {
	session   int64
	owner     int // the server the session's client is connected to; -1: the first to ask
	timeoutMs int64
	expiry    time.Duration // the bucket, on the leader's monotonic clock
	closing   bool
}

type stalledMsg struct {
	from network.Endpoint
	m    model.Message
}

// Name returns the server's name in traces (zk1, zk2, …).
func (sv *Server) Name() string { return sv.name }

// Endpoint returns the server's network endpoint.
func (sv *Server) Endpoint() network.Endpoint { return sv.ep }

// Clock returns the server's local clock.
func (sv *Server) Clock() *clock.Clock { return sv.clk }

// Up reports whether the process runs (possibly stalled).
func (sv *Server) Up() bool { return sv.up }

// Stalled reports whether the process is stalled.
func (sv *Server) Stalled() bool { return sv.paused }

// Paused is Stalled, by the name a Redis node gives it.
func (sv *Server) Paused() bool { return sv.paused }

// Role returns "looking", "following" or "leading".
func (sv *Server) Role() string { return sv.role.String() }

// Serving reports whether the server answers clients: a leader once a quorum synced with
// it, a follower once its leader said UPTODATE.
func (sv *Server) Serving() bool { return sv.up && sv.serving }

// Epoch returns the epoch the server last accepted.
func (sv *Server) Epoch() uint32 { return sv.acceptedEpoch }

// Tree returns the server's data tree, for inspection (nil while the process is down).
func (sv *Server) Tree() *Tree { return sv.tree }

// LogLen returns the number of transactions in the server's log since its last snapshot.
func (sv *Server) LogLen() int { return len(sv.log) }

// Stats returns the server's counters.
func (sv *Server) Stats() ServerStats { return sv.stats }

// SessionExpiry returns the expiry bucket of session on the leader's monotonic clock and
// whether this server, leading, tracks it.
func (sv *Server) SessionExpiry(session int64) (time.Duration, bool) {
	for _, t := range sv.tracked {
		if t.session == session {
			return t.expiry, sv.role == roleLeading
		}
	}
	return 0, false
}

// Crash stops the process as a power loss does: nothing answers its connections, and
// what was not yet fsynced to the log is lost; the log and the epochs survive.
func (sv *Server) Crash() { sv.stop(sv.e.s.Now(), "crash") }

// Kill stops the process as kill -9 does: its host's kernel closes the clients'
// connections (they see EOF at once) and answers new ones with a reset; the log survives.
func (sv *Server) Kill() { sv.stop(sv.e.s.Now(), "kill") }

// Shutdown stops the process cleanly: what it logged reaches the disk first, then it
// exits as Kill does (its connections closed at once).
func (sv *Server) Shutdown() {
	if sv.up {
		sv.flushLog()
	}
	sv.stop(sv.e.s.Now(), "shutdown")
}

// Stop is Crash: the process-neutral name the world's fault actions call.
func (sv *Server) Stop() { sv.Crash() }

// Restart starts a stopped process: it reloads its tree from its log and looks for a
// leader.
func (sv *Server) Restart() { sv.start(sv.e.s.Now()) }

// Start is Restart: the process-neutral name the world's fault actions call.
func (sv *Server) Start() { sv.Restart() }

// Stall freezes the process (a GC pause, SIGSTOP): its timers and the messages sent to it
// wait until Thaw.
func (sv *Server) Stall() {
	if !sv.up || sv.paused {
		return
	}
	sv.paused = true
	sv.e.s.Trace(sv.name, RecStall, sim.Str("role", sv.role.String()))
}

// Thaw ends a stall: the timers that came due run, then the messages that arrived are
// read, in order.
func (sv *Server) Thaw() {
	if !sv.up || !sv.paused {
		return
	}
	now := sv.e.s.Now()
	sv.paused = false
	sv.e.s.Trace(sv.name, RecThaw, sim.Int("queued", int64(len(sv.stalled))))
	for k := range sv.deferred {
		if sv.deferred[k] {
			sv.deferred[k] = false
			sv.run(now, k)
		}
	}
	q := sv.stalled
	sv.stalled = nil
	for i := range q {
		if sv.paused || !sv.up {
			break
		}
		sv.receive(now, q[i].from, &q[i].m)
	}
}

// stop ends the process: "crash" (a power loss: silence), "kill" or "shutdown" (its
// host closes its connections).
func (sv *Server) stop(now sim.Time, how string) {
	if !sv.up {
		return
	}
	kill := how != "crash"
	if kill {
		sv.closeClients(now)
		for j := range sv.e.servers {
			if j != sv.idx { // the kernel resets the quorum connections too
				sv.send(j, model.Message{Kind: model.MsgPush, Body: lock.Payload{Word: uint64(zk.OpEOF)}})
			}
		}
	}
	sv.e.s.Trace(sv.name, RecStop, sim.Str("how", how), sim.Str("role", sv.role.String()), sim.Int("lost", int64(len(sv.fsyncing)+len(sv.fsyncQ))))
	sv.up, sv.paused, sv.killed = false, false, kill
	sv.stats.Crashes++
	sv.forgetVolatile()
	sv.tree = nil
}

// forgetVolatile drops what a process holds in memory only.
func (sv *Server) forgetVolatile() {
	s := sv.e.s
	for _, id := range []sim.EventID{sv.electEv, sv.tickEv, sv.fsyncEv, sv.expireEv, sv.initEv} {
		s.Cancel(id)
	}
	sv.electEv, sv.tickEv, sv.fsyncEv, sv.expireEv, sv.initEv = 0, 0, 0, 0, 0
	sv.deferred = [evCount]bool{}
	sv.fsyncing, sv.fsyncQ, sv.stalled = nil, nil, nil
	sv.role, sv.serving = roleLooking, false
	sv.resetRole()
	sv.conns, sv.order = map[network.Endpoint]*cnxn{}, nil
	sv.tags = map[uint64]pendingReq{}
	sv.dataW, sv.childW = map[string][]network.Endpoint{}, map[string][]network.Endpoint{}
	sv.touched = sv.touched[:0]
}

// resetRole forgets the state of the role the server leaves.
func (sv *Server) resetRole() {
	sv.pending, sv.outstanding, sv.peers, sv.tracked = nil, nil, nil, nil
	sv.acked, sv.lastRecv, sv.commitTo = 0, 0, 0
}

func (sv *Server) start(now sim.Time) {
	if sv.up {
		return
	}
	sv.up, sv.killed = true, false
	sv.stats.Restarts++
	sv.tree = sv.replay()
	sv.e.s.Trace(sv.name, RecRestart, sim.Int("zxid", sv.tree.lastZxid), sim.Int("log", int64(len(sv.log))))
	if err := sv.look(now, "restart"); err != nil {
		sv.e.s.Fail(err)
	}
}

// replay rebuilds the tree from the log, as a restarted server loads its snapshot and
// transaction log.
func (sv *Server) replay() *Tree {
	t := newTree()
	if sv.snapTree != nil {
		t = sv.snapTree.clone()
	}
	for _, z := range sv.log {
		if x, ok := sv.e.txns[z]; ok {
			_, _, sv.changes = t.apply(&x, sv.changes[:0])
		}
	}
	return t
}

// HandleEvent runs the server's kernel events; a stalled server runs them when it thaws.
func (sv *Server) HandleEvent(now sim.Time, kind int, _ uint64) {
	if !sv.up {
		return
	}
	if sv.paused {
		sv.deferred[kind] = true
		return
	}
	sv.run(now, kind)
}

func (sv *Server) run(now sim.Time, kind int) {
	switch kind {
	case evElect:
		sv.electEv = 0
		sv.elect(now)
	case evTick:
		sv.tickEv = 0
		sv.tick(now)
	case evFsync:
		sv.fsyncEv = 0
		sv.fsynced(now)
	case evExpire:
		sv.expireEv = 0
		sv.expire(now)
	case evInit:
		sv.initEv = 0
		if sv.role == roleLeading && !sv.serving {
			sv.lookOrFail(now, "initLimit passed before a quorum synced")
		}
	}
}

// after schedules kind after d on the server's own clock.
func (sv *Server) after(now sim.Time, d time.Duration, kind int) sim.EventID {
	id, err := sv.e.s.Schedule(sv.clk.TimerFires(now, d), sv, kind, 0)
	if err != nil {
		sv.e.s.Fail(err)
	}
	return id
}

// Receive is the server's network endpoint.
func (sv *Server) Receive(now sim.Time, from, _ network.Endpoint, m *model.Message) {
	peer := sv.e.peer(from)
	if !sv.up {
		if sv.killed && peer < 0 && m.Kind == model.MsgCommand {
			sv.eof(from, m.Conn) // the host's kernel resets a connection to a dead process
		}
		sv.e.stats.Lost++
		return
	}
	if sv.paused {
		if len(sv.stalled) < sv.e.cfg.MaxQueue {
			sv.stalled = append(sv.stalled, stalledMsg{from: from, m: *m})
		}
		return
	}
	sv.receive(now, from, m)
}

func (sv *Server) receive(now sim.Time, from network.Endpoint, m *model.Message) {
	if peer := sv.e.peer(from); peer >= 0 {
		sv.quorumMsg(now, peer, m)
		return
	}
	if m.Kind == model.MsgPush && zk.OpOf(&m.Body) == zk.OpEOF {
		sv.clientClosed(from, m.Conn)
		return
	}
	if m.Kind != model.MsgCommand {
		return
	}
	sv.clientMsg(now, from, m)
}

// send sends m to server to, stamped with this server's accepted epoch: the quorum
// connections of an earlier epoch are closed, and what their TCP links held through a
// partition is discarded when it arrives (quorumMsg).
func (sv *Server) send(to int, m model.Message) {
	m.Conn = sv.acceptedEpoch
	sv.e.net.Send(sv.ep, sv.e.eps[to], m)
}

// eof closes client connection conn of endpoint to (an EOF, or a reset).
func (sv *Server) eof(to network.Endpoint, conn uint32) {
	sv.stats.Refused++
	sv.e.net.Send(sv.ep, to, model.Message{Kind: model.MsgPush, Body: lock.Payload{Word: uint64(zk.OpEOF)}, Conn: conn})
}
