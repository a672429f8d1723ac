package zookeeper

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

// SessionConfig configures the client side of a ZooKeeper session.
type SessionConfig struct {
	// Timeout is the session timeout the client asks for; the ensemble clamps it to its
	// [MinSessionTimeout, MaxSessionTimeout].
	Timeout time.Duration
	// Rand, when set, shuffles each connection's list of servers as StaticHostProvider
	// does (in the order the connections are built) and draws the pause before each
	// reconnect (ClientCnxn's up to a second). It belongs to one world then: a NewConn
	// built with it must not serve another (a sweep runs worlds in parallel). nil: each
	// session draws both from its process's connection stream (model.Link.Rand, seeded by
	// the run and the client's name), and the NewConn holds no state, fit for a
	// registration's knobs.Service.
	Rand *rand.Rand
}

// NewSessionConn returns the connection of a client process to a ZooKeeper ensemble (a
// model.Conn): ZooKeeper's ClientCnxn with Curator's handling of an expired session. The
// algorithm addresses the ensemble as node 0 whatever n is; the connection talks to one
// server at a time, and:
//
//   - connects on the first request, to the first server in its shuffled list, asking
//     for cfg.Timeout; requests wait in order until the session is established;
//   - pings when it sent nothing for about a third of the negotiated timeout
//     (readTimeout/2, readTimeout being two thirds of it, less ClientCnxn's second of
//     margin, at most 10s: see PingAfter), and gives the server up when it heard nothing
//     for readTimeout (connectTimeout, the timeout over n, while connecting), or at once
//     when the server closes the connection (EOF);
//   - then, after ClientCnxn's cleanup sleep (CleanupSleep, 100ms), fails every request
//     in flight, and every one sent during the sleep, with CONNECTIONLOSS, tells the algorithm
//     Disconnected (a WatchedEvent of type None), and reconnects to the next server with
//     the session id and its last zxid; a server that still knows the session answers
//     SyncConnected and gets the session's watches again (setWatches), one that does not
//     answers SESSIONEXPIRED: the algorithm is told Expired, and a new session is made at
//     once (Curator's ConnectionState.handleExpiredSession);
//   - delivers watch events and state events as pushes (lock.PushReq); a state event's Int
//     is the session's id, and it comes once, though ZooKeeper hands it to every watcher
//     registered as well as the default one: the recipe treats it as reaching each of
//     its pending watches.
//
// The idle and read timeouts are measured in true time between the process's local
// timers (their drift, a few ppm, is not applied to the interval since the last message).
func NewSessionConn(cfg SessionConfig) model.NewConn {
	return func(link *model.Link, n int) model.Conn {
		s := &session{link: link, cfg: cfg, rng: cfg.Rand, pos: -1}
		if cfg.Rand != nil {
			s.shuffle(n)
		} else {
			s.n = n
		}
		return s
	}
}

// shuffle makes the session's list of n servers, in the order its stream draws.
func (s *session) shuffle(n int) {
	s.order = make([]int, n)
	for i := range s.order {
		s.order[i] = i
	}
	s.rng.Shuffle(n, func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
}

type sessState uint8

const (
	ssIdle       sessState = iota // no session: connects on the next request
	ssConnecting                  // a ConnectRequest is out
	ssConnected
	ssCleanup // a connection closed: ClientCnxnSocketNIO.cleanup's sleep before anyone is told
)

// Timer kinds (an arg's low byte; the rest is the generation it was set in).
const (
	tConnect = iota + 1 // a connect attempt's deadline
	tRead               // the read timeout's check
	tPing               // the idle check
	tRetry              // reconnect after a pause
	tFail               // deliver failures of requests sent while the session was expired
	tCleanup            // the end of the cleanup sleep: tell of the loss, then reconnect
)

// CleanupSleep is how long a ZooKeeper client sleeps after it closed a connection and
// before it fails the requests in flight, says Disconnected and tries the next server
// (ClientCnxnSocketNIO.cleanup's Thread.sleep(100), called from
// ClientCnxn.SendThread.cleanAndNotifyState): Curator's SUSPENDED comes that much after
// the connection is gone, as the real conformance scripts show (103–115ms).
const CleanupSleep = 100 * time.Millisecond

type session struct {
	link  *model.Link
	cfg   SessionConfig
	rng   *rand.Rand // cfg.Rand, or the session's own stream once it first connects
	n     int        // the servers, until order is drawn
	order []int
	pos   int // index in order of the current server
	state sessState

	id        int64
	timeout   time.Duration // negotiated
	lastZxid  int64
	gen       uint32 // numbers connections: a timer of an earlier one is stale
	nextID    uint64
	connectID uint64
	tries     int // servers tried since the last established connection

	lastSend, lastRecv sim.Time
	sent               []sent     // requests on the wire, in order
	queued             []sent     // requests waiting for the session
	watches            []watchReg // watches the session left on its server
	closing            bool
	wasConnected       bool // during the cleanup sleep: the connection lost was established

	stats model.ConnStats
}

type sent struct {
	node int
	req  lock.Req
	p    lock.Payload
}

type watchReg struct {
	kind zk.Op
	path string
}

func (s *session) server() int { return s.order[s.pos] }

// Send carries the algorithm's request: at once when connected, after the connect
// otherwise, and to its CONNECTIONLOSS when the connection is in its cleanup sleep.
func (s *session) Send(now sim.Time, node int, req lock.Req, p *lock.Payload, _ time.Duration) {
	r := sent{node: node, req: req, p: *p}
	if zk.OpOf(p) == zk.OpClose {
		s.closing = true
	}
	if s.state == ssCleanup {
		// ClientCnxn.queuePacket: the state is still alive, so the packet joins the
		// outgoing queue, which cleanup() fails with CONNECTIONLOSS when the sleep ends.
		s.sent = append(s.sent, r)
		return
	}
	if s.state != ssConnected {
		s.queued = append(s.queued, r)
		if s.state == ssIdle {
			s.connect(now)
		}
		return
	}
	s.sendNow(now, r)
}

func (s *session) sendNow(now sim.Time, r sent) {
	s.sent = append(s.sent, r)
	s.lastSend = now
	s.link.SendRequest(s.server(), uint64(r.req), &r.p)
}

// Abandon forgets a request the algorithm stopped waiting for.
func (s *session) Abandon(_ sim.Time, _ int, req lock.Req) {
	s.sent = slices.DeleteFunc(s.sent, func(r sent) bool { return r.req == req })
	s.queued = slices.DeleteFunc(s.queued, func(r sent) bool { return r.req == req })
}

// connect starts a connection to the next server in the list.
func (s *session) connect(now sim.Time) {
	if s.order == nil {
		s.rng = s.link.Rand()
		s.shuffle(s.n)
	}
	s.state = ssConnecting
	s.gen++
	s.pos = (s.pos + 1) % len(s.order)
	s.tries++
	s.nextID++
	s.connectID = model.ConnID + s.nextID
	s.stats.Connects++
	asked := s.cfg.Timeout
	p := zk.Connect(s.id, asked, s.lastZxid)
	s.lastSend, s.lastRecv = now, now
	s.link.SendRequest(s.server(), s.connectID, &p)
	timeout := asked
	if s.timeout > 0 {
		timeout = s.timeout
	}
	s.arm(now, timeout/time.Duration(len(s.order)), tConnect)
}

func (s *session) arm(now sim.Time, d time.Duration, kind uint32) {
	s.link.After(now, max(d, 0), kind|s.gen<<8)
}

// Receive takes what the current server sends; anything from another server (one given
// up) is stray.
func (s *session) Receive(now sim.Time, node int, id uint64, m *model.Message) {
	if s.pos < 0 || node != s.server() || s.state == ssIdle || s.state == ssCleanup {
		s.link.Stray()
		return
	}
	s.lastRecv = now
	switch m.Kind {
	case model.MsgPush:
		s.push(now, m)
	case model.MsgReply:
		if id == s.connectID && s.state == ssConnecting {
			s.connected(now, &m.Body)
			return
		}
		if id >= model.ConnID {
			return // a ping's or a setWatches' answer: the word is what counts
		}
		s.reply(now, lock.Req(id), m.Body)
	default:
		s.link.Stray()
	}
}

func (s *session) push(now sim.Time, m *model.Message) {
	switch zk.OpOf(&m.Body) {
	case zk.OpEOF:
		s.lost(now)
	case zk.OpWatch:
		if s.state != ssConnected {
			return
		}
		ev := zk.Unpack(&m.Body)
		s.watches = slices.DeleteFunc(s.watches, func(w watchReg) bool {
			return w.path == ev.Str && (ev.Event == zk.EventNodeChildrenChanged) == (w.kind == zk.OpGetChildren) ||
				w.path == ev.Str && ev.Event == zk.EventNodeDeleted
		})
		s.link.Deliver(now, 0, lock.PushReq, m.Body)
	}
}

// connected handles the answer to a ConnectRequest.
func (s *session) connected(now sim.Time, p *lock.Payload) {
	m := zk.Unpack(p)
	if m.Code == zk.SessionExpired {
		s.expired(now)
		return
	}
	if m.Code != zk.OK {
		s.lost(now)
		return
	}
	same := s.id == m.Int
	s.id, s.timeout, s.state, s.tries = m.Int, m.Timeout, ssConnected, 0
	s.gen++
	s.arm(now, s.readTimeout(), tRead)
	s.arm(now, PingAfter(s.readTimeout()), tPing)
	if !same {
		s.watches = s.watches[:0]
	}
	for _, w := range s.watches {
		s.nextID++
		p := zk.SetWatch(w.kind, w.path, s.lastZxid)
		s.link.SendRequest(s.server(), model.ConnID+s.nextID, &p)
	}
	q := s.queued
	s.queued = nil
	for _, r := range q {
		s.sendNow(now, r)
	}
	s.link.Deliver(now, 0, lock.PushReq, s.stateEvent(zk.StateSyncConnected))
}

func (s *session) stateEvent(st zk.KeeperState) lock.Payload {
	p := zk.Event(zk.EventNone, st, "")
	p.Int = s.id
	return p
}

func (s *session) readTimeout() time.Duration { return s.timeout * 2 / 3 }

// PingAfter is how long a connection with read timeout r stays idle before it pings; tune
// reads it too, for the longest gap between a session's touches
// (ClientCnxn.SendThread.run): when readTimeout/2 − idle − (idle > 1s ? 1s : 0) reaches
// zero, or once idle passes MAX_SEND_PING_INTERVAL (10s). That is readTimeout/2 less a
// second above 2s, a second between 1s and 2s, readTimeout/2 below, and never past 10s.
func PingAfter(r time.Duration) time.Duration {
	d := r / 2
	switch {
	case d > 2*time.Second:
		d -= time.Second
	case d > time.Second:
		d = time.Second
	}
	return min(d, 10*time.Second)
}

// expired: the ensemble no longer knows the session. The algorithm hears Expired, what
// was waiting fails with SESSIONEXPIRED, and a new session starts at once.
func (s *session) expired(now sim.Time) {
	s.id, s.timeout, s.watches, s.closing = 0, 0, s.watches[:0], false
	failed := append(s.sent, s.queued...)
	s.sent, s.queued = nil, nil
	s.state = ssIdle
	s.link.Deliver(now, 0, lock.PushReq, s.stateEvent(zk.StateExpired))
	for _, r := range failed {
		if s.link.Dead() {
			return
		}
		s.link.Deliver(now, r.node, r.req, zk.Err(zk.OpOf(&r.p), zk.SessionExpired))
	}
	if !s.link.Dead() && s.state == ssIdle {
		s.connect(now)
	}
}

// lost gives the current server up: after ClientCnxn's cleanup sleep (CleanupSleep, in
// which nothing more is read from the server), requests in flight fail with
// CONNECTIONLOSS, the algorithm hears Disconnected, and the next server is tried.
func (s *session) lost(now sim.Time) {
	wasConnected := s.state == ssConnected
	s.gen++
	if s.closing && wasConnected {
		// A closed session's server closes the connection: nothing to resume.
		failed := s.sent
		s.sent = nil
		s.state, s.id, s.closing = ssIdle, 0, false
		s.link.Deliver(now, 0, lock.PushReq, s.stateEvent(zk.StateDisconnected))
		s.failInFlight(now, failed)
		return
	}
	s.state, s.wasConnected = ssCleanup, wasConnected
	s.arm(now, CleanupSleep, tCleanup)
}

// cleanedUp ends the cleanup sleep: what was in flight fails, the algorithm hears
// Disconnected if the session was connected, and the next server is tried.
func (s *session) cleanedUp(now sim.Time) {
	failed := s.sent
	s.sent = nil
	s.state = ssConnecting
	s.retry(now)
	if s.wasConnected {
		s.link.Deliver(now, 0, lock.PushReq, s.stateEvent(zk.StateDisconnected))
	}
	s.failInFlight(now, failed)
}

// failInFlight fails the requests that were on the wire with CONNECTIONLOSS.
func (s *session) failInFlight(now sim.Time, failed []sent) {
	for _, r := range failed {
		if s.link.Dead() {
			return
		}
		s.link.Deliver(now, r.node, r.req, zk.Err(zk.OpOf(&r.p), zk.ConnectionLoss))
	}
}

// retry connects to the next server after ClientCnxn's pause (a draw under a second,
// ClientCnxn.java 1131–1136), and after a whole pass over the list without a session a
// second more (StaticHostProvider's spin delay).
func (s *session) retry(now sim.Time) {
	d := time.Duration(s.rng.Int64N(int64(time.Second)))
	if s.tries >= len(s.order) {
		d += time.Second
		s.tries = 0
	}
	if d == 0 {
		s.connect(now)
		return
	}
	s.arm(now, d, tRetry)
}

// reply hands the algorithm a server's answer, noting the zxid it shows and the watch it
// left.
func (s *session) reply(now sim.Time, req lock.Req, p lock.Payload) {
	i := slices.IndexFunc(s.sent, func(r sent) bool { return r.req == req })
	if i < 0 {
		s.link.Stray() // abandoned
		return
	}
	r := s.sent[i]
	s.sent = slices.Delete(s.sent, i, i+1)
	m := zk.Unpack(&p)
	switch m.Op {
	case zk.OpCreate, zk.OpDelete, zk.OpSync:
		if m.Code == zk.OK {
			s.lastZxid = max(s.lastZxid, m.Int)
		}
	}
	rq := zk.Unpack(&r.p)
	if rq.Flags&zk.FlagWatch != 0 && (m.Code == zk.OK || m.Code == zk.NoNode && rq.Op == zk.OpExists) {
		w := watchReg{kind: rq.Op, path: rq.Str}
		if !slices.Contains(s.watches, w) {
			s.watches = append(s.watches, w)
		}
	}
	if rq.Op == zk.OpClose && m.Code == zk.OK {
		s.state, s.id, s.closing, s.watches = ssIdle, 0, false, s.watches[:0]
	}
	s.link.Deliver(now, r.node, req, p)
}

// Timer runs the connection's timers.
func (s *session) Timer(now sim.Time, arg uint32) {
	kind, gen := arg&0xff, arg>>8
	if gen != s.gen&(1<<24-1) {
		return
	}
	switch kind {
	case tConnect:
		if s.state == ssConnecting {
			s.lost(now)
		}
	case tRetry:
		if s.state == ssConnecting {
			s.connect(now)
		}
	case tCleanup:
		if s.state == ssCleanup {
			s.cleanedUp(now)
		}
	case tRead:
		if s.state != ssConnected {
			return
		}
		if left := s.readTimeout() - now.Sub(s.lastRecv); left > 0 {
			s.arm(now, left, tRead)
			return
		}
		s.lost(now)
	case tPing:
		if s.state != ssConnected {
			return
		}
		idle := PingAfter(s.readTimeout())
		if left := idle - now.Sub(s.lastSend); left > 0 {
			s.arm(now, left, tPing)
			return
		}
		s.nextID++
		p := zk.Ping()
		s.lastSend = now
		s.link.SendRequest(s.server(), model.ConnID+s.nextID, &p)
		s.arm(now, idle, tPing)
	}
}

// Restart forgets the session: a restarted process opens a new ZooKeeper handle.
func (s *session) Restart(sim.Time) {
	s.state, s.id, s.timeout, s.lastZxid, s.closing = ssIdle, 0, 0, 0, false
	s.sent, s.queued, s.watches = nil, nil, nil
	s.gen++
	s.tries = 0
}

// Stats returns the connections the session opened.
func (s *session) Stats() model.ConnStats { return s.stats }

// ID returns the session's id (0: none yet), for tests and tools.
func (s *session) ID() int64 { return s.id }
