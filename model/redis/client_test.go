package redis

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// logged is a copy of one ClientEvent.
type logged struct {
	at         sim.Time
	client     string
	kind       model.ClientEventKind
	validUntil sim.Time
	token      int64
	reason     lock.Reason
}

// eventLog is an Observer that keeps every event; hook, when set, runs on each.
type eventLog struct {
	events []logged
	hook   func(now sim.Time, e *model.ClientEvent)
}

func (l *eventLog) ClientEvent(now sim.Time, e *model.ClientEvent) {
	g := logged{at: now, client: e.Client.Name(), kind: e.Kind, validUntil: e.ValidUntil, token: e.Token}
	if e.Lock != nil {
		g.reason = e.Lock.Reason
	}
	l.events = append(l.events, g)
	if l.hook != nil {
		l.hook(now, e)
	}
}

func (l *eventLog) of(client string, kinds ...model.ClientEventKind) []logged {
	var out []logged
	for _, e := range l.events {
		if e.client != client {
			continue
		}
		for _, k := range kinds {
			if e.kind == k {
				out = append(out, e)
			}
		}
	}
	return out
}

// lockWorld is n single-node Redis groups and a storage on a constant-latency network.
type lockWorld struct {
	*world
	groups  []*Group
	nodes   []network.Endpoint
	storage *model.Storage
	log     *eventLog
}

func newLockWorld(t testing.TB, seed uint64, n int, link network.Link, preload bool) *lockWorld {
	w := &lockWorld{world: newWorld(t, seed, link), log: &eventLog{}}
	for i := 0; i < n; i++ {
		g := w.group(GroupConfig{Name: fmt.Sprintf("redis%d", i+1), Nodes: []NodeConfig{{PreloadScripts: preload}}})
		w.groups = append(w.groups, g)
		w.nodes = append(w.nodes, g.Endpoint())
	}
	st, err := model.NewStorage(w.s, w.net, model.StorageConfig{})
	require.NoError(t, err)
	w.storage = st
	return w
}

func constLink(d time.Duration) network.Link {
	return network.Link{Latency: network.Latency{Fast: dist.Constant(d)}}
}

// clientCfg is a client of w's nodes with a short TTL and constant timings.
func (w *lockWorld) clientCfg(name string, ttl, hold time.Duration) model.ClientConfig {
	lc := redlock.DefaultConfig()
	lc.Nodes, lc.TTL, lc.RetryDelay, lc.RetryJitter = len(w.nodes), ttl, 10*ms, 5*ms
	algo, err := redlock.Factory(lc)
	require.NoError(w.t, err)
	return model.ClientConfig{Name: name, Conn: ConnQueued.Conn, Lock: algo, AckTimeout: lc.Effective().NodeTimeout(), Nodes: w.nodes, Storage: w.storage.Endpoint(),
		Resources: []string{"lock"}, Hold: dist.Constant(hold), Think: dist.Constant(ms)}
}

func (w *lockWorld) client(cfg model.ClientConfig) *model.Client {
	c, err := model.NewClient(w.s, w.net, cfg, w.log)
	require.NoError(w.t, err)
	return c
}

// usage returns each client's [acquired, work-end] intervals.
func (l *eventLog) usage(client string) [][2]sim.Time {
	var out [][2]sim.Time
	for _, e := range l.of(client, model.EvAcquired, model.EvWorkEnd) {
		if e.kind == model.EvAcquired {
			out = append(out, [2]sim.Time{e.at, sim.Never})
		} else {
			out[len(out)-1][1] = e.at
		}
	}
	return out
}

func TestClientsTakeTurnsWithoutOverlap(t *testing.T) {
	w := newLockWorld(t, 1, 5, constLink(ms), true)
	a := w.client(w.clientCfg("alice", time.Second, 5*ms))
	bcfg := w.clientCfg("bob", time.Second, 5*ms)
	bcfg.Index = 1
	b := w.client(bcfg)
	w.run(2 * time.Second)

	ua, ub := w.log.usage("alice"), w.log.usage("bob")
	require.Greater(t, len(ua), 20)
	require.Greater(t, len(ub), 20)
	for _, x := range ua {
		for _, y := range ub {
			assert.False(t, x[0] < y[1] && y[0] < x[1], "alice %v and bob %v overlap", x, y)
		}
	}
	for _, c := range []*model.Client{a, b} {
		st := c.Stats()
		working := st.Acquired - st.Cycles // 1 if the run ended mid-cycle
		assert.LessOrEqual(t, working, uint64(1), "%s: every acquired lock but one in hand was released", c.Name())
		assert.GreaterOrEqual(t, st.Writes, 2*st.Acquired-1, "%s: a write when work starts and one when it ends", c.Name())
		assert.LessOrEqual(t, st.Writes, 2*st.Acquired)
		assert.Zero(t, st.Conn.Resent)
	}
	assert.Equal(t, 0, a.Index())
	assert.Equal(t, 1, b.Index(), "Index comes from the config")
}

func TestLifecycleOrder(t *testing.T) {
	w := newLockWorld(t, 1, 3, constLink(ms), true)
	cfg := w.clientCfg("alice", time.Second, 5*ms)
	cfg.MaxCycles = 1
	w.client(cfg)
	w.run(time.Second)
	var kinds []model.ClientEventKind
	for _, e := range w.log.events {
		kinds = append(kinds, e.kind)
	}
	assert.Equal(t, []model.ClientEventKind{model.EvAcquireStart, model.EvAttemptStarted, model.EvAttemptEnded, model.EvAcquired, model.EvWrite,
		model.EvWrite, model.EvWorkEnd, model.EvReleaseStart, model.EvReleased}, kinds)
	// 1ms out, 1ms back; the validity deadline is TTL − drift after the start, in true time
	// because this client's clock is ideal.
	acq := w.log.of("alice", model.EvAcquired)[0]
	assert.Equal(t, sim.Time(2*ms), acq.at)
	drift := time.Duration(float64(time.Second)*0.01) + 2*ms
	assert.Equal(t, sim.Time(time.Second-drift), acq.validUntil)
	assert.Equal(t, sim.Time(7*ms), w.log.of("alice", model.EvWorkEnd)[0].at, "5ms of work")
}

func TestNoScriptIsRetriedAsEval(t *testing.T) {
	// Redis 7 starts with an empty script cache: the first EVALSHA on each node gets
	// NOSCRIPT, and the client resends it as EVAL, as go-redis does.
	w := newLockWorld(t, 1, 5, constLink(ms), false)
	cfg := w.clientCfg("alice", time.Second, 5*ms)
	cfg.MaxCycles = 3
	c := w.client(cfg)
	w.run(time.Second)
	assert.EqualValues(t, 5, c.Stats().Conn.Resent, "one NOSCRIPT per node; EVAL loads the script")
	rel := w.log.of("alice", model.EvReleased)
	require.Len(t, rel, 3)
	for _, g := range w.groups {
		_, _, ok := g.Node(0).Peek("lock")
		assert.False(t, ok, "%s: the release deleted the key", g.Name())
	}
}

func TestPauseHoldsTimersAndWritesOnResume(t *testing.T) {
	w := newLockWorld(t, 1, 5, constLink(ms), true)
	cfg := w.clientCfg("alice", 100*ms, 50*ms)
	cfg.MaxCycles = 1
	cfg.Pauses = []model.Pause{{At: sim.Time(20 * ms), For: 300 * ms}}
	c := w.client(cfg)
	w.run(time.Second)

	acq := w.log.of("alice", model.EvAcquired)[0]
	require.Less(t, acq.validUntil, sim.Time(320*ms), "the lock expired during the pause")
	after := w.log.of("alice", model.EvPause, model.EvResume, model.EvWrite, model.EvWorkEnd)
	require.Len(t, after, 6)
	// The write as work starts; the pause; on resume first the write it was in the middle
	// of, then the late work timer: the write as work ends, and work-end.
	assert.Equal(t, []model.ClientEventKind{model.EvWrite, model.EvPause, model.EvResume, model.EvWrite, model.EvWrite, model.EvWorkEnd}, kinds(after))
	assert.Equal(t, sim.Time(20*ms), after[1].at)
	for _, e := range after[2:] {
		assert.Equal(t, sim.Time(320*ms), e.at, "%v: resume, the interrupted write, then the late work timer", e.kind)
	}
	end := w.log.of("alice", model.EvWorkEnd)
	require.Len(t, end, 1)
	assert.Equal(t, sim.Time(320*ms), end[0].at, "the 50ms work timer fired late, at resume")
	assert.EqualValues(t, 1, c.Stats().Pauses)
	assert.Positive(t, c.Stats().Held)
}

func kinds(es []logged) []model.ClientEventKind {
	var out []model.ClientEventKind
	for _, e := range es {
		out = append(out, e.kind)
	}
	return out
}

func TestStopAtDeadlineStopsWithoutWriting(t *testing.T) {
	w := newLockWorld(t, 1, 3, constLink(ms), true)
	cfg := w.clientCfg("alice", 100*ms, 500*ms)
	cfg.MaxCycles, cfg.StopAtDeadline = 1, true
	c := w.client(cfg)
	w.run(time.Second)
	acq := w.log.of("alice", model.EvAcquired)[0]
	end := w.log.of("alice", model.EvWorkEnd)[0]
	assert.Equal(t, acq.validUntil, end.at, "a careful client stops when validity runs out")
	assert.EqualValues(t, 1, c.Stats().Writes, "only the write at the start of work")
}

func TestExtensionsKeepTheLockPastItsTTL(t *testing.T) {
	w := newLockWorld(t, 1, 5, constLink(ms), true)
	cfg := w.clientCfg("alice", 100*ms, 350*ms)
	cfg.MaxCycles, cfg.StopAtDeadline, cfg.ExtendEvery = 1, true, 50*ms
	w.client(cfg)
	w.run(time.Second)
	ext := w.log.of("alice", model.EvExtended)
	require.GreaterOrEqual(t, len(ext), 5)
	end := w.log.of("alice", model.EvWorkEnd)[0]
	assert.Equal(t, sim.Time(352*ms), end.at, "the work ran its full 350ms, past the 100ms TTL")
	assert.Greater(t, ext[len(ext)-1].validUntil, end.at, "still valid when the work ended")
}

func TestCrashWhileWorkingLeavesTheKeyToExpire(t *testing.T) {
	w := newLockWorld(t, 1, 3, constLink(ms), true)
	cfg := w.clientCfg("alice", 100*ms, 50*ms)
	cfg.CrashAt = sim.Time(20 * ms)
	c := w.client(cfg)
	w.run(50 * time.Millisecond)
	assert.True(t, c.Dead())
	tail := w.log.events[len(w.log.events)-2:]
	assert.Equal(t, []model.ClientEventKind{model.EvWorkEnd, model.EvCrash}, kinds(tail))
	assert.Equal(t, sim.Time(20*ms), tail[1].at)
	_, _, held := w.groups[0].Node(0).Peek("lock")
	assert.True(t, held, "nobody released it")
	w.run(200 * time.Millisecond)
	_, _, held = w.groups[0].Node(0).Peek("lock")
	assert.False(t, held, "it expired after its TTL")
	assert.Len(t, w.log.events, len(tail)+len(w.log.events)-2, "a dead client does nothing more")
}

func TestHookMayPauseTheClientWhileItDrainsHeldItems(t *testing.T) {
	w := newLockWorld(t, 1, 3, constLink(ms), true)
	cfg := w.clientCfg("alice", time.Second, 10*ms)
	cfg.MaxCycles = 1
	cfg.Pauses = []model.Pause{{At: sim.Time(ms + ms/2), For: 10 * ms}} // replies arrive while frozen
	var c *model.Client
	again := true
	w.log.hook = func(now sim.Time, e *model.ClientEvent) {
		if e.Kind == model.EvResume && again { // before the held replies are handled
			again = false
			c.PauseNow(5 * ms)
		}
	}
	c = w.client(cfg)
	w.run(time.Second)
	require.Len(t, w.log.of("alice", model.EvReleased), 1, "nothing held was lost by the second pause")
	acq := w.log.of("alice", model.EvAcquired)[0]
	assert.Equal(t, sim.Time(16500*time.Microsecond), acq.at, "acquired after both pauses")
}

func TestClientRunsAreDeterministic(t *testing.T) {
	run := func(seed uint64) uint64 {
		link := network.Link{Latency: network.Latency{Fast: dist.Uniform(200*time.Microsecond, 2*ms)}, Loss: 0.01}
		w := newLockWorld(t, seed, 5, link, false)
		w.s.SetSink(nil)
		for i := 0; i < 3; i++ {
			cfg := w.clientCfg(fmt.Sprintf("c%d", i), 100*ms, 5*ms)
			cfg.Index, cfg.PauseRate, cfg.PauseLen = i, 2, dist.Exponential(0, 20*ms)
			cfg.Hold, cfg.Think = dist.Uniform(ms, 10*ms), dist.Uniform(0, 5*ms)
			w.client(cfg)
		}
		w.run(3 * time.Second)
		return w.s.TraceHash()
	}
	h := run(7)
	assert.Equal(t, h, run(7))
	assert.NotEqual(t, h, run(8))
}

func TestClientBadConfig(t *testing.T) {
	w := newLockWorld(t, 1, 3, constLink(ms), true)
	good := w.clientCfg("alice", time.Second, 5*ms)
	cases := map[string]func(c *model.ClientConfig){
		"name":         func(c *model.ClientConfig) { c.Name = "" },
		"nodes":        func(c *model.ClientConfig) { c.Nodes = nil },
		"lock":         func(c *model.ClientConfig) { c.Lock = nil },
		"ack_timeout":  func(c *model.ClientConfig) { c.ReleaseAfterAck, c.AckTimeout = true, 0 },
		"resources":    func(c *model.ClientConfig) { c.Resources = nil },
		"resources[0]": func(c *model.ClientConfig) { c.Resources = []string{""} },
		"extend_every": func(c *model.ClientConfig) { c.ExtendEvery = -ms },
		"pause_rate":   func(c *model.ClientConfig) { c.PauseRate = -1 },
		"pauses[0]":    func(c *model.ClientConfig) { c.Pauses = []model.Pause{{At: 0, For: -ms}} },
		"hold.max":     func(c *model.ClientConfig) { c.Hold = dist.Uniform(2*ms, ms) },
		"storage":      func(c *model.ClientConfig) { c.Storage = 99 },
	}
	for param, breakIt := range cases {
		cfg := good
		breakIt(&cfg)
		_, err := model.NewClient(w.s, w.net, cfg, nil)
		require.Error(t, err, param)
		var se *sim.ParamError
		var re *redlock.ParamError
		switch {
		case errors.As(err, &se):
			assert.Equal(t, param, se.Param)
		case errors.As(err, &re):
			assert.Equal(t, param, re.Param)
		default:
			t.Errorf("%s: %v is not a ParamError", param, err)
		}
	}
}

// BenchmarkRedlockCycle measures one complete lock cycle in the simulator: a client
// acquires on N=5 nodes (SET NX PX to each, replies, validity check), works 0s, releases
// (compare-and-delete on each), with constant 100µs latency, fenced storage writes and
// no trace sink. Reported per cycle.
func BenchmarkRedlockCycle(b *testing.B) {
	w := newLockWorld(b, 1, 5, constLink(100*time.Microsecond), true)
	w.s.SetSink(nil)
	cfg := w.clientCfg("alice", 10*time.Second, 0)
	cfg.Think = dist.Constant(0)
	c, err := model.NewClient(w.s, w.net, cfg, nil) // no test observer: it would log every event
	require.NoError(b, err)
	for c.Stats().Cycles < 100 { // warm up: slabs, queues and maps at their working size
		w.s.Step()
	}
	start := c.Stats().Cycles
	b.ReportAllocs()
	b.ResetTimer()
	for c.Stats().Cycles-start < uint64(b.N) {
		if !w.s.Step() {
			b.Fatal("the world stopped")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(w.s.Executed())/float64(c.Stats().Cycles), "events/cycle")
}

// TestRestartedClientStartsOverAndIgnoresItsEarlierLife crashes alice while her SETs are
// in flight (replies 4ms away) and restarts her 1ms later: the old replies arrive at her
// new life and must be dropped (counted stray), the restarted process acquires afresh
// with a new lock value, and her first keys are left to block her until they expire.
func TestRestartedClientStartsOverAndIgnoresItsEarlierLife(t *testing.T) {
	w := newLockWorld(t, 1, 3, constLink(2*ms), true)
	cfg := w.clientCfg("alice", 100*ms, 5*ms)
	var c *model.Client
	crashed := false
	w.log.hook = func(now sim.Time, e *model.ClientEvent) {
		if e.Kind == model.EvAttemptStarted && !crashed {
			crashed = true
			_, err := w.s.Schedule(now.Add(ms), crashAndRestart{&c, ms}, 0, 0)
			require.NoError(t, err)
		}
	}
	c = w.client(cfg)
	w.run(400 * time.Millisecond)
	crash, restart := w.log.of("alice", model.EvCrash), w.log.of("alice", model.EvRestart)
	require.Len(t, crash, 1)
	require.Len(t, restart, 1)
	assert.Equal(t, sim.Time(ms), crash[0].at)
	assert.Equal(t, sim.Time(2*ms), restart[0].at)
	assert.Equal(t, uint64(3), c.Stats().Stray, "the three replies to her first life's SETs")
	acq := w.log.of("alice", model.EvAcquired)
	require.NotEmpty(t, acq)
	assert.Greater(t, acq[0].at, sim.Time(100*ms), "her own first keys block her new life until they expire")
	assert.Equal(t, uint64(1), c.Stats().Crashes)
	assert.Equal(t, uint64(1), c.Stats().Restarts)
}

// crashAndRestart is a kernel event that crashes a client and restarts it after d.
type crashAndRestart struct {
	c **model.Client
	d time.Duration
}

func (h crashAndRestart) HandleEvent(sim.Time, int, uint64) { (*h.c).CrashAndRestart(h.d) }

// TestRandomClientCrashesRestart: with a crash rate, clients die and come back, the run
// is deterministic, and no crash leaves a client dead for good.
func TestRandomClientCrashesRestart(t *testing.T) {
	run := func() (model.ClientStats, []model.ClientEventKind) {
		w := newLockWorld(t, 3, 3, constLink(ms), true)
		cfg := w.clientCfg("alice", 50*ms, 5*ms)
		cfg.CrashRate, cfg.RestartAfter = 20, dist.Constant(3*ms)
		c := w.client(cfg)
		w.run(2 * time.Second)
		var ks []model.ClientEventKind
		for _, e := range w.log.events {
			ks = append(ks, e.kind)
		}
		return c.Stats(), ks
	}
	st, ks := run()
	assert.Greater(t, st.Crashes, uint64(10), "20 per second over 2s")
	assert.Contains(t, []uint64{st.Crashes, st.Crashes - 1}, st.Restarts, "each crash but perhaps the last restarted")
	assert.Greater(t, st.Acquired, st.Crashes, "it keeps working between crashes")
	st2, ks2 := run()
	assert.Equal(t, st, st2)
	assert.Equal(t, ks, ks2)
}
