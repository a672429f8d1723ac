package zookeeper

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// This file is the ensemble in a small world: three servers, client processes whose
// connection is a ZooKeeper session (NewSessionConn), and a tiny scripted lock recipe of
// its own (ephLock) — not Curator's, which is another package's job — to show what the
// session gives a recipe: requests in order, their failures on a connection loss, watch
// events and the session's states.

// ephLock holds resource by creating the ephemeral node /<resource>; a client that finds
// it taken watches it (exists) and tries again when it is deleted. Its fencing token is
// the node's czxid. It trusts a held lock until its session is reported Expired.
type ephLock struct {
	name     string
	out      []lock.Output
	state    string // "", creating, watching, held, releasing
	resource string
	start    time.Duration
	req      lock.Req
	attempt  int
	states   *[]stateAt
	codes    *[]zk.Code // the codes of the replies it got, in order
}

func (l *ephLock) path() string { return "/" + l.resource }

func (l *ephLock) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	l.out = l.out[:0]
	if l.state != "" {
		return nil, lock.ErrBusy
	}
	l.resource, l.start, l.attempt = resource, now, 0
	l.create()
	return l.out, nil
}

func (l *ephLock) create() {
	l.attempt++
	l.state = "creating"
	l.event(lock.Event{Kind: lock.AttemptStarted})
	l.send(zk.Create(l.path(), l.name, zk.FlagEphemeral))
}

func (l *ephLock) Extend(time.Duration) ([]lock.Output, error) { return nil, lock.ErrBusy }

func (l *ephLock) Release(now time.Duration) ([]lock.Output, error) {
	l.out = l.out[:0]
	if l.state != "held" {
		return nil, lock.ErrNotHeld
	}
	l.state, l.start = "releasing", now
	l.send(zk.Delete(l.path(), zk.AnyVersion))
	return l.out, nil
}

func (l *ephLock) Reply(now time.Duration, _ int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	l.out = l.out[:0]
	m := zk.Unpack(&p)
	if req == lock.PushReq {
		l.pushed(now, &m)
		return l.out, nil
	}
	if req != l.req {
		return l.out, nil
	}
	l.req = 0
	*l.codes = append(*l.codes, m.Code)
	switch {
	case l.state == "creating" && m.Code == zk.OK:
		l.held(now, m.Int)
	case l.state == "creating" && m.Code == zk.NodeExists:
		l.event(lock.Event{Kind: lock.AttemptEnded, Reason: lock.ReasonNoQuorum, Replies: 1})
		l.state = "watching"
		l.send(zk.Read(zk.OpExists, l.path(), true))
	case l.state == "watching" && m.Code == zk.NoNode:
		l.create()
	case l.state == "watching" && m.Code == zk.OK && m.Flags&zk.FlagMine != 0:
		l.held(now, m.Int) // our create went through before a connection loss
	case l.state == "watching" && m.Code == zk.OK:
		// wait for the watch
	case l.state == "releasing":
		l.state = ""
		l.event(lock.Event{Kind: lock.Released, Votes: b2i(m.Code == zk.OK), Replies: 1})
	default: // a connection loss or an expired session: give up this acquire
		l.event(lock.Event{Kind: lock.AttemptEnded, Reason: lock.ReasonNoQuorum})
		l.state = ""
		l.event(lock.Event{Kind: lock.AcquireFailed, Reason: lock.ReasonNoQuorum})
	}
	return l.out, nil
}

func (l *ephLock) pushed(now time.Duration, m *zk.Msg) {
	if m.Event == zk.EventNone {
		*l.states = append(*l.states, stateAt{m.State, now, m.Int})
		if m.State == zk.StateExpired && l.state == "held" {
			l.state = ""
			l.event(lock.Event{Kind: lock.Lost})
		}
		return
	}
	if l.state == "watching" && m.Event == zk.EventNodeDeleted && m.Str == l.path() {
		l.create()
	}
}

func (l *ephLock) held(now time.Duration, czxid int64) {
	l.event(lock.Event{Kind: lock.AttemptEnded, Votes: 1, Replies: 1})
	l.state = "held"
	l.event(lock.Event{Kind: lock.Acquired, Votes: 1, Replies: 1, Deadline: now + time.Hour, Validity: time.Hour,
		Token: czxid, Fenced: true})
}

func (l *ephLock) Timer(time.Duration, lock.TimerID) ([]lock.Output, error) { return l.out[:0], nil }

func (l *ephLock) send(p lock.Payload) {
	l.req++
	l.out = append(l.out, lock.Output{Kind: lock.OutSend, Node: 0, Req: l.req, Request: p})
}

func (l *ephLock) event(e lock.Event) {
	e.Resource, e.Value, e.Attempt, e.Start = l.resource, l.name, l.attempt, l.start
	e.Needed, e.Servers = 1, 1
	l.out = append(l.out, lock.Output{Kind: lock.OutEvent, Event: e})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stateAt is a session state event the recipe heard, when (on the client's clock), and
// the session it names.
type stateAt struct {
	state   zk.KeeperState
	at      time.Duration
	session int64
}

// holds records who held the lock when, in true time.
type holds struct {
	spans []span
	open  map[string]int
}

type span struct {
	who        string
	from, to   sim.Time
	token      int64
	lostByPush bool
}

func (h *holds) ClientEvent(now sim.Time, e *model.ClientEvent) {
	name := e.Client.Name()
	switch e.Kind {
	case model.EvAcquired:
		h.open[name] = len(h.spans)
		h.spans = append(h.spans, span{who: name, from: now, to: sim.Never, token: e.Token})
	case model.EvReleaseStart, model.EvLost, model.EvCrash:
		if i, ok := h.open[name]; ok {
			h.spans[i].to = now
			h.spans[i].lostByPush = e.Kind == model.EvLost
			delete(h.open, name)
		}
	}
}

// zkWorld is three servers and n clients on the ephemeral-node lock, each client's
// session asking for timeout.
type zkWorld struct {
	*world
	clients []*model.Client
	states  [][]stateAt
	codes   []*[]zk.Code
	h       *holds
}

func newZKWorld(t *testing.T, n int, timeout time.Duration, hold time.Duration) *zkWorld {
	return newZKWorldWith(t, n, timeout, true, hold, 50*time.Millisecond, nil)
}

// newZKWorldWith is newZKWorld with the think time given, and without the world's
// stream for the sessions when seeded is false (each draws its own, as a registration's
// connection does), and with conn as the clients' connection when it is not nil.
func newZKWorldWith(t *testing.T, n int, timeout time.Duration, seeded bool, hold, think time.Duration,
	conn model.NewConn) *zkWorld {
	w := &zkWorld{world: newWorld(t, DefaultConfig()), h: &holds{open: map[string]int{}}}
	w.states = make([][]stateAt, n)
	sc := SessionConfig{Timeout: timeout}
	if seeded {
		sc.Rand = w.s.Rand("sessions")
	}
	if conn == nil {
		conn = NewSessionConn(sc)
	}
	for i := 0; i < n; i++ {
		name := "c" + string(rune('1'+i))
		states, codes := &w.states[i], &[]zk.Code{}
		w.codes = append(w.codes, codes)
		c, err := model.NewClient(w.s, w.net, model.ClientConfig{Name: name, Index: i,
			Lock: func(*rand.Rand) (lock.Client, error) {
				return &ephLock{name: name, states: states, codes: codes}, nil
			},
			Nodes: w.e.Endpoints(), Storage: model.NoEndpoint, Resources: []string{"lock"},
			Hold: dist.Constant(hold), Think: dist.Constant(think),
			StartAt: sim.Time(time.Second), Conn: conn}, w.h)
		require.NoError(t, err)
		w.clients = append(w.clients, c)
	}
	return w
}

// TestAnExampleWorld: three clients take turns on the lock through their sessions; a
// leader crash costs them a reconnect and the lock keeps passing, never to two at once.
func TestAnExampleWorld(t *testing.T) {
	w := newZKWorld(t, 3, 6*time.Second, 100*time.Millisecond)
	w.run(5 * time.Second)
	before := len(w.h.spans)
	require.Greater(t, before, 5, "the lock passes around")
	w.e.Server(w.e.Leader()).Kill()
	w.run(20 * time.Second)
	assert.Greater(t, len(w.h.spans), before+5, "and passes again after the election")
	for i := range w.h.spans {
		for j := i + 1; j < len(w.h.spans); j++ {
			a, b := w.h.spans[i], w.h.spans[j]
			assert.False(t, a.from < b.to && b.from < a.to, "%s and %s held together", a.who, b.who)
		}
		if i > 0 {
			assert.Greater(t, w.h.spans[i].token, w.h.spans[i-1].token, "czxid tokens grow")
		}
	}
	text := strings.Join(w.lines, "\n")
	for _, want := range []string{"create -e /lock \"c", "Created /lock czxid=", "NODEEXISTS", "exists /lock watch",
		"WatchedEvent NodeDeleted /lock", "delete /lock"} {
		assert.True(t, strings.Contains(text, want), "the trace shows %q", want)
	}
	reconnected := 0
	for _, st := range w.states {
		if i := indexOf(st, zk.StateDisconnected); i >= 0 && indexOf(st[i:], zk.StateSyncConnected) > 0 {
			reconnected++
		}
	}
	assert.Positive(t, reconnected, "a client of the killed server was told Disconnected, then SyncConnected")
}

func indexOf(xs []stateAt, x zk.KeeperState) int {
	for i, y := range xs {
		if y.state == x {
			return i
		}
	}
	return -1
}

// TestAPartitionedHolderIsExpiredAndTheLockPasses: a holder cut off from the whole
// ensemble keeps pinging into the void; the leader expires its session, its ephemeral
// node goes, another client takes the lock within a bucket of the timeout; when the
// partition heals, the holder's reconnect is answered SESSIONEXPIRED and it hears
// Expired.
func TestAPartitionedHolderIsExpiredAndTheLockPasses(t *testing.T) {
	w := newZKWorld(t, 2, 4*time.Second, 100*time.Millisecond)
	w.run(1200 * time.Millisecond)
	holder := ""
	for name := range w.h.open {
		holder = name
	}
	require.NotEmpty(t, holder)
	var hc *model.Client
	for _, c := range w.clients {
		if c.Name() == holder {
			hc = c
		}
	}
	cut := w.now()
	id, err := w.net.Isolate(hc.Endpoint())
	require.NoError(t, err)
	w.run(cut + 8*time.Second)
	var other []span
	for _, s := range w.h.spans {
		if s.who != holder && s.from.Duration() > cut {
			other = append(other, s)
		}
	}
	require.NotEmpty(t, other, "the lock passed on")
	assert.GreaterOrEqual(t, other[0].from.Duration(), cut+4*time.Second, "not before the session timeout")
	assert.LessOrEqual(t, other[0].from.Duration(), cut+4*time.Second+2*time.Second+100*time.Millisecond,
		"within a bucket of it")
	w.net.Heal(id)
	w.run(cut + 14*time.Second)
	i := w.clients[0].Index()
	if w.clients[1].Name() == holder {
		i = 1
	}
	assert.GreaterOrEqual(t, indexOf(w.states[i], zk.StateExpired), 0, "the holder learns its session expired")
}
