package model

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// This file tests the client process on its own: a one-lease server and a lock algorithm
// of a protocol of the test's own, so that nothing here knows Redis.

const ms = time.Millisecond

// The test protocol: a request's Word is its op, a reply's Word its verdict.
const (
	opGrant   = 1 // GRANT Str (resource) to Str2 (holder) for Int ns
	opRelease = 2 // RELEASE Str by Str2

	repGranted  = 1 // GRANTED token Int
	repHeld     = 2 // HELD by Str2
	repReleased = 3
	repNotYours = 4
)

// oneLease is a fake server: one lease, granted to whoever asks while nobody else holds it,
// with a token that grows with each grant, freed by its holder's release. It answers every
// command after delay (0: at once) and keeps what it received.
type oneLease struct {
	s      *sim.Sim
	net    *network.Net[Message]
	ep     network.Endpoint
	delay  time.Duration
	holder string
	token  int64
	got    []seen
	later  []seen // replies waiting for their delay: to whom, what
}

// seen is a message an endpoint received (or, in oneLease.later, will send).
type seen struct {
	at   sim.Time
	peer network.Endpoint
	m    Message
}

func (sv *oneLease) Receive(now sim.Time, from, _ network.Endpoint, m *Message) {
	if m.Kind != MsgCommand {
		return
	}
	sv.got = append(sv.got, seen{now, from, *m})
	p := &m.Body
	var r lock.Payload
	switch {
	case p.Word == opGrant && (sv.holder == "" || sv.holder == p.Str2):
		sv.token++
		sv.holder = p.Str2
		r = lock.Payload{Word: repGranted, Int: sv.token, Str: p.Str, Str2: p.Str2}
	case p.Word == opGrant:
		r = lock.Payload{Word: repHeld, Str2: sv.holder}
	case p.Word == opRelease && sv.holder == p.Str2:
		sv.holder = ""
		r = lock.Payload{Word: repReleased}
	default:
		r = lock.Payload{Word: repNotYours}
	}
	if sv.delay == 0 {
		sv.net.Send(sv.ep, from, Reply(m.ReqID, r))
		return
	}
	sv.later = append(sv.later, seen{peer: from, m: Reply(m.ReqID, r)})
	_, err := sv.s.Schedule(now.Add(sv.delay), sv, 0, uint64(len(sv.later)-1))
	if err != nil {
		panic(err)
	}
}

func (sv *oneLease) HandleEvent(_ sim.Time, _ int, i uint64) {
	sv.net.Send(sv.ep, sv.later[i].peer, sv.later[i].m)
}

// input is one call the client process made into its lock algorithm.
type input struct {
	op     string // acquire, release, reply, timer
	now    time.Duration
	server int
	req    lock.Req
	p      lock.Payload
	timer  lock.TimerID
}

// fakeLock asks server 0 for the lease (GRANT resource name ttl), holds it until
// now+ttl, and releases it; it keeps every input. With timeout > 0 it arms a timer with each
// request and gives up when it fires.
type fakeLock struct {
	name     string
	ttl      time.Duration
	timeout  time.Duration
	in       []input
	out      []lock.Output
	state    string // "", acquiring, held, releasing
	resource string
	last     lock.Req // the latest request sent
	awaited  lock.Req // the request whose reply it waits for; 0: none
	timer    lock.TimerID
}

func (l *fakeLock) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	l.in = append(l.in, input{op: "acquire", now: now})
	l.out = l.out[:0]
	if l.state != "" {
		return nil, lock.ErrBusy
	}
	l.state, l.resource = "acquiring", resource
	l.send(lock.Payload{Word: opGrant, Str: resource, Str2: l.name, Int: int64(l.ttl)})
	return l.out, nil
}

func (l *fakeLock) Extend(time.Duration) ([]lock.Output, error) { return nil, lock.ErrBusy }

func (l *fakeLock) Release(now time.Duration) ([]lock.Output, error) {
	l.in = append(l.in, input{op: "release", now: now})
	l.out = l.out[:0]
	if l.state != "held" {
		return nil, lock.ErrNotHeld
	}
	l.state = "releasing"
	l.send(lock.Payload{Word: opRelease, Str: l.resource, Str2: l.name})
	return l.out, nil
}

func (l *fakeLock) Reply(now time.Duration, server int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	l.in = append(l.in, input{op: "reply", now: now, server: server, req: req, p: p})
	l.out = l.out[:0]
	if req == lock.PushReq || req != l.awaited {
		return l.out, nil
	}
	l.awaited = 0
	if l.timer != 0 {
		l.out = append(l.out, lock.Output{Kind: lock.OutCancelTimer, Timer: l.timer})
	}
	l.done(now, p.Word == repGranted || p.Word == repReleased, p.Int)
	return l.out, nil
}

func (l *fakeLock) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	l.in = append(l.in, input{op: "timer", now: now, timer: id})
	l.out = l.out[:0]
	if id == l.timer && l.awaited != 0 {
		l.out = append(l.out, lock.Output{Kind: lock.OutAbandon, Req: l.awaited})
		l.awaited = 0
		l.done(now, false, 0)
	}
	return l.out, nil
}

func (l *fakeLock) done(now time.Duration, ok bool, token int64) {
	e := lock.Event{Resource: l.resource, Value: l.name, Needed: 1, Servers: 1, Replies: 1}
	switch {
	case l.state == "acquiring" && ok:
		l.state = "held"
		e.Kind, e.Votes, e.Deadline, e.Validity, e.Token, e.Fenced = lock.Acquired, 1, now+l.ttl, l.ttl, token, true
	case l.state == "acquiring":
		l.state = ""
		e.Kind, e.Reason = lock.AcquireFailed, lock.ReasonNoQuorum
	default:
		l.state = ""
		e.Kind = lock.Released
	}
	l.out = append(l.out, lock.Output{Kind: lock.OutEvent, Event: e})
}

func (l *fakeLock) send(p lock.Payload) {
	l.last++
	l.awaited = l.last
	l.out = append(l.out, lock.Output{Kind: lock.OutSend, Node: 0, Req: l.last, Request: p})
	if l.timeout > 0 {
		l.timer++
		l.out = append(l.out, lock.Output{Kind: lock.OutSetTimer, Timer: l.timer, After: l.timeout})
	}
}

// evLog is an Observer that keeps every client event.
type evLog []logged

type logged struct {
	at      sim.Time
	kind    ClientEventKind
	token   int64
	writeID uint64
}

func (l *evLog) ClientEvent(now sim.Time, e *ClientEvent) {
	*l = append(*l, logged{at: now, kind: e.Kind, token: e.Token, writeID: e.WriteID})
}

// of returns the events of the given kinds, in order.
func (l evLog) of(kinds ...ClientEventKind) []logged {
	var out []logged
	for _, e := range l {
		for _, k := range kinds {
			if e.kind == k {
				out = append(out, e)
			}
		}
	}
	return out
}

// procWorld is a storage and a one-lease server on a network whose every link takes 1ms.
type procWorld struct {
	t       *testing.T
	s       *sim.Sim
	net     *network.Net[Message]
	storage *Storage
	srv     *oneLease
	locks   []*fakeLock // every algorithm the client built, one per life
	log     evLog
}

func newProcWorld(t *testing.T, st StorageConfig) *procWorld {
	s := newSimT(t)
	net, err := network.New[Message](s, network.Config{Default: network.Link{Latency: network.Latency{Fast: dist.Constant(ms)}}},
		s.Source("net"))
	require.NoError(t, err)
	net.SetMessage(MessageParts, MessageFormat(nil))
	w := &procWorld{t: t, s: s, net: net, srv: &oneLease{s: s, net: net}}
	w.storage, err = NewStorage(s, net, st)
	require.NoError(t, err)
	w.srv.ep, err = net.AddEndpoint("server", ServerEndpoint(w.srv))
	require.NoError(t, err)
	return w
}

// cfg is client alice of the server, writing to the storage, holding the lock for hold,
// once.
func (w *procWorld) cfg(hold time.Duration) ClientConfig {
	return ClientConfig{Name: "alice", Nodes: []network.Endpoint{w.srv.ep}, Storage: w.storage.Endpoint(),
		Resources: []string{"lock"}, Hold: dist.Constant(hold), Think: dist.Constant(ms), MaxCycles: 1, Fenced: true,
		Lock: func(*rand.Rand) (lock.Client, error) {
			l := &fakeLock{name: "alice", ttl: time.Second}
			w.locks = append(w.locks, l)
			return l, nil
		}}
}

func (w *procWorld) client(cfg ClientConfig) *Client {
	c, err := NewClient(w.s, w.net, cfg, &w.log)
	require.NoError(w.t, err)
	return c
}

// at runs f at true time t.
func (w *procWorld) at(t time.Duration, f func()) {
	_, err := w.s.Schedule(sim.Time(t), call(f), 0, 0)
	require.NoError(w.t, err)
}

type call func()

func (f call) HandleEvent(sim.Time, int, uint64) { f() }

func (w *procWorld) run(until time.Duration) {
	require.NoError(w.t, w.s.RunUntil(sim.Time(until)))
}

// fast is a clock that runs 25% fast: its monotonic reading is 1.25× true time, so a
// reading tells which true time it was taken at.
var fast = clock.Config{DriftPPM: 250000}

// TestDirectConnCarriesPayloadsUnchanged: the algorithm's request reaches the server as
// the exact payload it built, under the algorithm's request id; the server's reply reaches
// the algorithm as the exact payload the server sent; a push reaches it as a reply to
// lock.PushReq.
func TestDirectConnCarriesPayloadsUnchanged(t *testing.T) {
	w := newProcWorld(t, StorageConfig{})
	c := w.client(w.cfg(10 * ms))
	push := lock.Payload{Word: 9, Int: -3, Str: "chan", Str2: "news"}
	w.at(5*ms, func() { w.net.Send(w.srv.ep, c.Endpoint(), Message{Kind: MsgPush, Body: push}) })
	w.run(4 * ms)

	require.Len(t, w.srv.got, 1)
	assert.Equal(t, seen{at: sim.Time(ms), peer: c.Endpoint(),
		m: Message{Kind: MsgCommand, ReqID: 1, Body: lock.Payload{Word: opGrant, Int: int64(time.Second), Str: "lock", Str2: "alice"}}},
		w.srv.got[0])
	require.Len(t, w.locks, 1)
	l := w.locks[0]
	grant := lock.Payload{Word: repGranted, Int: 1, Str: "lock", Str2: "alice"}
	assert.Equal(t, []input{{op: "acquire"}, {op: "reply", now: 2 * ms, server: 0, req: 1, p: grant}}, l.in)

	w.run(8 * ms)
	require.Len(t, l.in, 3)
	assert.Equal(t, input{op: "reply", now: 6 * ms, server: 0, req: lock.PushReq, p: push}, l.in[2])
	acq := w.log.of(EvAcquired)
	require.Len(t, acq, 1)
	assert.Equal(t, logged{at: sim.Time(2 * ms), kind: EvAcquired, token: 1}, acq[0])
	assert.Equal(t, StorageStats{Accepted: 1}, w.storage.Stats(), "the write carries the grant's token")
	assert.Zero(t, c.Stats().Stray)
}

// TestRepliesToAnEarlierLifeAreStray: a request's id carries the process's incarnation.
// The server answers 20ms late; the process crashes and restarts meanwhile, and its new
// algorithm numbers its first request 1 again. The reply to the first life's request 1
// is counted stray and never reaches the new algorithm, which takes only the reply to its
// own request, sent with the new life.
func TestRepliesToAnEarlierLifeAreStray(t *testing.T) {
	w := newProcWorld(t, StorageConfig{})
	w.srv.delay = 20 * ms
	cfg := w.cfg(10 * ms)
	cfg.MaxCycles = 0 // the count of acquires outlives a crash
	c := w.client(cfg)
	w.at(2*ms, func() { c.CrashAndRestart(ms) })
	w.run(23 * ms)
	assert.EqualValues(t, 1, c.Stats().Stray, "the reply to the first life, at 22ms")
	w.run(30 * ms)

	require.Len(t, w.srv.got, 2)
	assert.Equal(t, []uint64{1, 1<<lifeShift | 1}, []uint64{w.srv.got[0].m.ReqID, w.srv.got[1].m.ReqID})
	assert.Equal(t, w.srv.got[0].m.Body, w.srv.got[1].m.Body, "the same request, only the id tells the lives apart")
	require.Len(t, w.locks, 2)
	assert.Equal(t, []input{{op: "acquire"}}, w.locks[0].in, "the dead algorithm hears nothing more")
	assert.Equal(t, []input{{op: "acquire", now: 3 * ms},
		{op: "reply", now: 25 * ms, req: 1, p: lock.Payload{Word: repGranted, Int: 2, Str: "lock", Str2: "alice"}}},
		w.locks[1].in, "the new algorithm takes only its own reply, token 2")
	acq := w.log.of(EvAcquired)
	require.Len(t, acq, 1)
	assert.Equal(t, logged{at: sim.Time(25 * ms), kind: EvAcquired, token: 2}, acq[0])
	assert.EqualValues(t, 1, c.Stats().Stray)
	assert.EqualValues(t, 1, c.Stats().Crashes)
	assert.EqualValues(t, 1, c.Stats().Restarts)
}

// TestPauseHoldsRepliesAndTimersUntilResume: a pause from 1ms to 11ms holds the grant
// (arriving at 2ms) and the algorithm's 5ms timer (firing at 4ms true on a clock 25% fast);
// at resume the algorithm gets them in that order, both read at the resumed monotonic
// reading (11ms × 1.25). A pause while working (20ms to 30ms) holds the end of the work;
// at resume the client first sends the write it was in the middle of, then the late work
// timer's last write, then releases.
func TestPauseHoldsRepliesAndTimersUntilResume(t *testing.T) {
	w := newProcWorld(t, StorageConfig{})
	cfg := w.cfg(15 * ms) // 12ms of true time on the fast clock: work ends at 23ms
	cfg.Clock = fast
	cfg.Pauses = []Pause{{At: sim.Time(ms), For: 10 * ms}, {At: sim.Time(20 * ms), For: 10 * ms}}
	lf := cfg.Lock
	cfg.Lock = func(r *rand.Rand) (lock.Client, error) {
		l, err := lf(r)
		l.(*fakeLock).timeout = 5 * ms
		return l, err
	}
	c := w.client(cfg)
	w.run(100 * ms)

	require.Len(t, w.locks, 1)
	grant := lock.Payload{Word: repGranted, Int: 1, Str: "lock", Str2: "alice"}
	assert.Equal(t, []input{
		{op: "acquire"},
		{op: "reply", now: 13750 * time.Microsecond, req: 1, p: grant}, // held from 2ms
		{op: "timer", now: 13750 * time.Microsecond, timer: 1},         // held from 4ms, stale by then
		{op: "release", now: 30 * ms * 5 / 4},
		{op: "reply", now: 32 * ms * 5 / 4, req: 2, p: lock.Payload{Word: repReleased}},
	}, w.locks[0].in)

	var got []logged
	for _, e := range w.log.of(EvAcquired, EvPause, EvResume, EvWrite, EvWorkEnd, EvReleaseStart) {
		got = append(got, logged{at: e.at, kind: e.kind, writeID: e.writeID})
	}
	assert.Equal(t, []logged{
		{at: sim.Time(ms), kind: EvPause},
		{at: sim.Time(11 * ms), kind: EvResume},
		{at: sim.Time(11 * ms), kind: EvAcquired},
		{at: sim.Time(11 * ms), kind: EvWrite, writeID: 1},
		{at: sim.Time(20 * ms), kind: EvPause},
		{at: sim.Time(30 * ms), kind: EvResume},
		{at: sim.Time(30 * ms), kind: EvWrite, writeID: 2}, // the interrupted write, first
		{at: sim.Time(30 * ms), kind: EvWrite, writeID: 3}, // the late work timer's last write
		{at: sim.Time(30 * ms), kind: EvWorkEnd},
		{at: sim.Time(30 * ms), kind: EvReleaseStart},
	}, got)
	require.Len(t, w.srv.got, 2)
	assert.Equal(t, sim.Time(31*ms), w.srv.got[1].at, "the release left at resume")
	st := c.Stats()
	assert.EqualValues(t, 2, st.Pauses)
	assert.EqualValues(t, 3, st.Held, "the grant, the algorithm's timer, the work timer")
	assert.EqualValues(t, 3, st.Writes)
	assert.EqualValues(t, 1, st.Cycles)
}

// recConn is a Conn that carries requests as DirectConn does, sets a timer of after on
// each (its argument the request id) and one more it cancels at once, and keeps its timer
// firings and restarts.
type recConn struct {
	link     *Link
	after    time.Duration
	fired    []firing
	restarts []sim.Time
}

type firing struct {
	at  sim.Time
	arg uint32
}

func (rc *recConn) Send(now sim.Time, node int, req lock.Req, p *lock.Payload, _ time.Duration) {
	rc.link.Send(node, Request(uint64(req), *p))
	rc.link.After(now, rc.after, uint32(req))
	rc.link.Cancel(rc.link.After(now, rc.after, 1000+uint32(req)))
}

func (rc *recConn) Abandon(sim.Time, int, lock.Req) {}

func (rc *recConn) Receive(now sim.Time, node int, id uint64, m *Message) {
	rc.link.Deliver(now, node, lock.Req(id), m.Body)
}

func (rc *recConn) Timer(now sim.Time, arg uint32) { rc.fired = append(rc.fired, firing{now, arg}) }
func (rc *recConn) Restart(now sim.Time)           { rc.restarts = append(rc.restarts, now) }
func (rc *recConn) Stats() ConnStats               { return ConnStats{Connects: 3, Resent: 4} }

// TestConnTimersRunOnTheProcessClock: a connection's timer of 10ms fires 8ms later in true
// time on a clock 25% fast, waits out a pause, and never fires once the process has died:
// neither after a crash for good nor in the process's next life, where only the new
// life's timers fire. A cancelled timer never fires.
func TestConnTimersRunOnTheProcessClock(t *testing.T) {
	clk, err := clock.New(fast, nil)
	require.NoError(t, err)
	require.Equal(t, sim.Time(8*ms), clk.TimerFires(0, 10*ms), "the arithmetic below")
	for _, tc := range []struct {
		name     string
		at       time.Duration // when fault strikes
		fault    func(c *Client)
		fired    []firing
		restarts []sim.Time
	}{
		{"alive", 0, nil, []firing{{sim.Time(8 * ms), 1}}, nil},
		{"paused", 7 * ms, func(c *Client) { c.PauseNow(13 * ms) }, []firing{{sim.Time(20 * ms), 1}}, nil},
		{"crashed", 5 * ms, func(c *Client) { c.CrashNow() }, nil, nil},
		{"restarted", 5 * ms, func(c *Client) { c.CrashAndRestart(ms) }, []firing{{sim.Time(14 * ms), 1}},
			[]sim.Time{sim.Time(6 * ms)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newProcWorld(t, StorageConfig{})
			w.srv.delay = 100 * ms // no reply before the end
			cfg := w.cfg(5 * ms)
			cfg.Clock, cfg.MaxCycles = fast, 0
			var rc *recConn
			cfg.Conn = func(link *Link, n int) Conn {
				require.Equal(t, 1, n)
				assert.Equal(t, w.srv.ep, link.Endpoint(0))
				rc = &recConn{link: link, after: 10 * ms}
				return rc
			}
			c := w.client(cfg)
			if tc.fault != nil {
				w.at(tc.at, func() { tc.fault(c) })
			}
			w.run(50 * ms)
			assert.Equal(t, tc.fired, rc.fired)
			assert.Equal(t, tc.restarts, rc.restarts)
			assert.Equal(t, tc.name == "crashed", rc.link.Dead())
			assert.Equal(t, ConnStats{Connects: 3, Resent: 4}, c.Stats().Conn)
		})
	}
}
