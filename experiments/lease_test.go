package experiments_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// This file proves the seam: a lock service that speaks no Redis, added as its own server,
// protocol and algorithm plus one registration (leaseAlgorithm, which names leaseService),
// runs in a world the world assembly, the client process, the oracle, the narration, the
// timeline and the replay know nothing about. Its server is a model.ServerProcess, so it
// crashes, restarts, pauses and resumes through the same scenario actions and node knobs as
// a Redis node, and draws a lane of its own on the timeline: no file outside this one
// changes for that either.

// The lease protocol: a request's Word is its op, a reply's Word its verdict; Str is the
// resource, Str2 the holder, Int a lease's length (GRANT) or its token (GRANTED).
const (
	leaseGrant   = 1 // GRANT resource holder ttl
	leaseRelease = 2 // RELEASE resource holder

	leaseGranted  = 1 // GRANTED token
	leaseHeld     = 2 // HELD by another holder (Str2)
	leaseReleased = 3 // RELEASED
	leaseNotYours = 4 // NOT-YOURS
)

type leaseProtocol struct{}

func (leaseProtocol) Name() string { return "lease" }

func (leaseProtocol) AppendRequest(dst []byte, p *lock.Payload) []byte {
	switch p.Word {
	case leaseGrant:
		return append(dst, "GRANT "+p.Str+" "+p.Str2+" "+time.Duration(p.Int).String()...)
	case leaseRelease:
		return append(dst, "RELEASE "+p.Str+" "+p.Str2...)
	}
	return append(dst, "?"...)
}

func (leaseProtocol) AppendReply(dst []byte, p *lock.Payload) []byte {
	switch p.Word {
	case leaseGranted:
		return append(dst, "GRANTED token="+strconv.FormatInt(p.Int, 10)...)
	case leaseHeld:
		return append(dst, "HELD by "+p.Str2...)
	case leaseReleased:
		return append(dst, "RELEASED"...)
	case leaseNotYours:
		return append(dst, "NOT-YOURS"...)
	}
	return append(dst, "?"...)
}

func (leaseProtocol) AppendPush(dst []byte, _ *lock.Payload) []byte { return append(dst, "?"...) }

// leaseServer grants one lease per resource, for the length asked, measured on its own
// clock, with a token that grows with every grant. Its leases live in memory only: a stop
// of any kind forgets them (its token counter is on disk, so tokens still grow). Stopped,
// it answers nothing; stalled, it keeps what it receives and serves it when it thaws.
type leaseServer struct {
	s          *sim.Sim
	net        *network.Net[model.Message]
	ep         network.Endpoint
	name       string
	clk        *clock.Clock
	leases     map[string]heldLease
	token      int64
	up, paused bool
	stalled    []stalledReq // received while paused, in order
}

type stalledReq struct {
	from network.Endpoint
	m    model.Message
}

type heldLease struct {
	holder string
	until  time.Duration // on the server's monotonic clock
}

func (sv *leaseServer) Receive(now sim.Time, from, _ network.Endpoint, m *model.Message) {
	switch {
	case m.Kind != model.MsgCommand || !sv.up:
		return
	case sv.paused:
		sv.stalled = append(sv.stalled, stalledReq{from, *m})
		return
	}
	sv.serve(now, from, m)
}

func (sv *leaseServer) serve(now sim.Time, from network.Endpoint, m *model.Message) {
	p, mono := &m.Body, sv.clk.Mono(now)
	var r lock.Payload
	l, held := sv.leases[p.Str]
	held = held && l.until > mono
	switch p.Word {
	case leaseGrant:
		if held && l.holder != p.Str2 {
			r = lock.Payload{Word: leaseHeld, Str2: l.holder}
			break
		}
		sv.token++
		sv.leases[p.Str] = heldLease{holder: p.Str2, until: mono + time.Duration(p.Int)}
		r = lock.Payload{Word: leaseGranted, Int: sv.token}
		sv.s.Trace(sv.name, "grant", sim.Str("resource", p.Str), sim.Str("holder", p.Str2), sim.Int("token", sv.token))
	case leaseRelease:
		r = lock.Payload{Word: leaseNotYours}
		if held && l.holder == p.Str2 {
			delete(sv.leases, p.Str)
			r = lock.Payload{Word: leaseReleased}
		}
	}
	sv.net.Send(sv.ep, from, model.Reply(m.ReqID, r))
}

// The lease server's process, as the world's process faults reach it (model.ServerProcess):
// each change writes its kind's record under the server's name.

func (sv *leaseServer) Name() string        { return sv.name }
func (sv *leaseServer) Clock() *clock.Clock { return sv.clk }
func (sv *leaseServer) Up() bool            { return sv.up }
func (sv *leaseServer) Paused() bool        { return sv.paused }

func (sv *leaseServer) Stop(_ sim.Time, how model.FaultKind) {
	d, ok := how.Desc()
	if !sv.up || !ok || d.Effect != model.EffectStop {
		return
	}
	forgotten := len(sv.leases)
	sv.up, sv.paused, sv.stalled = false, false, nil
	clear(sv.leases)
	sv.s.Trace(sv.name, d.Record, sim.Int("leases", int64(forgotten)))
}

func (sv *leaseServer) Start(sim.Time) {
	if !sv.up {
		sv.up = true
		sv.s.Trace(sv.name, model.RecRestart)
	}
}

func (sv *leaseServer) Stall(sim.Time) {
	if sv.up && !sv.paused {
		sv.paused = true
		sv.s.Trace(sv.name, model.RecPause)
	}
}

func (sv *leaseServer) Thaw(now sim.Time) {
	if !sv.paused {
		return
	}
	sv.paused = false
	sv.s.Trace(sv.name, model.RecResume, sim.Int("queued", int64(len(sv.stalled))))
	for len(sv.stalled) > 0 && sv.up && !sv.paused {
		q := sv.stalled[0]
		sv.stalled = sv.stalled[1:]
		sv.serve(now, q.from, &q.m)
	}
}

// leaseService is the registration's service: one lease server per server the clients
// address, each with its own drifting clock, and each its own process.
var leaseService = knobs.Service{Name: "lease", Protocol: leaseProtocol{},
	Servers: func(env knobs.ServiceEnv) ([]knobs.Server, error) {
		var servers []knobs.Server
		for i := range env.Servers {
			name := "lease" + strconv.Itoa(i+1)
			ck, err := env.Clock(name)
			if err != nil {
				return nil, err
			}
			clk, err := clock.New(ck, env.Sim.Rand(name+"/clock"))
			if err != nil {
				return nil, err
			}
			sv := &leaseServer{s: env.Sim, net: env.Net, name: name, clk: clk, leases: map[string]heldLease{}, up: true}
			if sv.ep, err = env.Net.AddEndpoint(name, sv); err != nil {
				return nil, err
			}
			servers = append(servers, knobs.Server{Endpoint: sv.ep, Process: sv})
		}
		return servers, nil
	}}

// leaseLock asks server 0 for a lease of ttl, trusts it for ttl less 1% from the request's
// start, fences its writes with the lease's token, retries a held lease 20ms later up to
// five tries, and gives a server 50ms to answer.
type leaseLock struct {
	ttl      time.Duration
	name     string
	out      []lock.Output
	state    string // "", acquiring, waiting, held, releasing
	resource string
	attempt  int
	start    time.Duration
	req      lock.Req
	timer    lock.TimerID
}

const leaseTimeout, leaseRetry, leaseTries = 50 * time.Millisecond, 20 * time.Millisecond, 5

func (l *leaseLock) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	l.out = l.out[:0]
	if l.state != "" {
		return nil, lock.ErrBusy
	}
	l.resource, l.attempt = resource, 0
	l.try(now)
	return l.out, nil
}

func (l *leaseLock) try(now time.Duration) {
	l.attempt++
	l.state, l.start = "acquiring", now
	l.event(lock.Event{Kind: lock.AttemptStarted})
	l.send(lock.Payload{Word: leaseGrant, Str: l.resource, Str2: l.name, Int: int64(l.ttl)})
}

func (l *leaseLock) Extend(time.Duration) ([]lock.Output, error) { return nil, lock.ErrBusy }

func (l *leaseLock) Release(now time.Duration) ([]lock.Output, error) {
	l.out = l.out[:0]
	if l.state != "held" {
		return nil, lock.ErrNotHeld
	}
	l.state, l.start = "releasing", now
	l.send(lock.Payload{Word: leaseRelease, Str: l.resource, Str2: l.name})
	return l.out, nil
}

func (l *leaseLock) Reply(now time.Duration, _ int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	l.out = l.out[:0]
	if req == 0 || req != l.req {
		return l.out, nil
	}
	l.req = 0
	l.out = append(l.out, lock.Output{Kind: lock.OutCancelTimer, Timer: l.timer})
	l.answer(now, &p, true)
	return l.out, nil
}

func (l *leaseLock) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	l.out = l.out[:0]
	if id != l.timer {
		return l.out, nil
	}
	switch l.state {
	case "waiting":
		l.try(now)
	case "acquiring", "releasing":
		l.out = append(l.out, lock.Output{Kind: lock.OutAbandon, Node: 0, Req: l.req})
		l.req = 0
		l.answer(now, &lock.Payload{}, false)
	}
	return l.out, nil
}

func (l *leaseLock) answer(now time.Duration, p *lock.Payload, replied bool) {
	replies := 0
	if replied {
		replies = 1
	}
	switch l.state {
	case "acquiring":
		deadline := l.start + l.ttl - l.ttl/100
		if p.Word == leaseGranted && deadline > now {
			l.event(lock.Event{Kind: lock.AttemptEnded, Votes: 1, Replies: 1})
			l.state = "held"
			l.event(lock.Event{Kind: lock.Acquired, Votes: 1, Replies: 1, Deadline: deadline,
				Validity: deadline - now, Token: p.Int, Fenced: true})
			return
		}
		l.event(lock.Event{Kind: lock.AttemptEnded, Reason: lock.ReasonNoQuorum, Replies: replies})
		if l.attempt >= leaseTries {
			l.state = ""
			l.event(lock.Event{Kind: lock.AcquireFailed, Reason: lock.ReasonNoQuorum, Replies: replies})
			return
		}
		l.state = "waiting"
		l.arm(leaseRetry)
	case "releasing":
		votes := 0
		if p.Word == leaseReleased {
			votes = 1
		}
		l.state = ""
		l.event(lock.Event{Kind: lock.Released, Votes: votes, Replies: replies})
	}
}

func (l *leaseLock) send(p lock.Payload) {
	l.req++
	l.out = append(l.out, lock.Output{Kind: lock.OutSend, Node: 0, Req: l.req, Request: p})
	l.arm(leaseTimeout)
}

func (l *leaseLock) arm(after time.Duration) {
	l.timer++
	l.out = append(l.out, lock.Output{Kind: lock.OutSetTimer, Timer: l.timer, After: after})
}

func (l *leaseLock) event(e lock.Event) {
	e.Resource, e.Value, e.Attempt, e.Start = l.resource, l.name, l.attempt, l.start
	e.Needed, e.Servers = 1, 1
	l.out = append(l.out, lock.Output{Kind: lock.OutEvent, Event: e})
}

// leaseAlgorithm is the one registration: the algorithm, and through it its service.
var leaseAlgorithm = knobs.Algorithm{Name: "lease-test", Help: "a lease from one server of a protocol of its own",
	Masters: 1, Fences: func(*knobs.Config) bool { return true }, Service: &leaseService,
	New: func(cfg *knobs.Config) (lock.Factory, error) {
		ttl := cfg.Lock.TTL
		return func(rng *rand.Rand) (lock.Client, error) {
			return &leaseLock{ttl: ttl, name: strconv.FormatUint(rng.Uint64()>>40, 16)}, nil
		}, nil
	}}

// leaseWorld plans and builds a world of three clients on one lease server.
func leaseWorld(t *testing.T, settings ...knobs.KV) *world.World {
	t.Helper()
	w := leasePlan(t, settings...)
	require.NoError(t, w.Build())
	return w
}

// leasePlan plans the world of leaseWorld, for a scenario to shape before it is built.
func leasePlan(t *testing.T, settings ...knobs.KV) *world.World {
	t.Helper()
	cfg := knobs.DefaultConfig()
	require.NoError(t, cfg.Apply(append([]knobs.KV{{Name: "duration", Value: "3s"}, {Name: "ttl", Value: "500ms"}},
		settings...)))
	cfg.Algorithm = leaseAlgorithm.Name
	w, err := world.Plan(cfg, 1, world.WithAlgorithm(leaseAlgorithm))
	require.NoError(t, err)
	return w
}

// leaseScenario builds a lease world and sets the scenario file text up on it, as
// experiments.AssembleScenario does for a registered algorithm.
func leaseScenario(t *testing.T, text string, settings ...knobs.KV) (*world.World, error) {
	t.Helper()
	sc, err := scenarios.ParseFile("lease.yaml", []byte(text))
	require.NoError(t, err)
	v, _, err := sc.Bind(nil)
	require.NoError(t, err)
	w := leasePlan(t, settings...)
	require.NoError(t, sc.Configure(w, v))
	require.NoError(t, w.Build())
	return w, sc.Setup(w, v)
}

// TestALockServiceThatSpeaksNoRedis: the lease service runs in a world; the oracle judges
// it, the narration shows its messages in its own protocol's words, the timeline draws its
// clients' locks, and the replay steps through it.
func TestALockServiceThatSpeaksNoRedis(t *testing.T) {
	w := leaseWorld(t)
	require.Empty(t, w.Groups, "no Redis in a lease world")
	require.Len(t, w.Servers, 1)
	var trace bytes.Buffer
	var tl report.Timeline
	rec, err := experiments.RunWorld(context.Background(), w, "lease-test", experiments.Options{Trace: &trace, Timeline: &tl})
	require.NoError(t, err)
	assert.True(t, rec.Safety.Safe(), "one healthy server: %v", rec.Safety)
	assert.Greater(t, rec.Liveness.Acquired, int64(10))
	assert.Positive(t, rec.Liveness.FailuresByReason.NoQuorum, "contenders meet the lease held")
	text := trace.String()
	assert.Contains(t, text, "GRANT lock ")
	assert.Contains(t, text, "GRANTED token=")
	assert.Contains(t, text, "HELD by ")
	assert.Contains(t, text, "RELEASED")
	assert.NotContains(t, text, "word=", "every payload is rendered in the lease protocol's words")
	require.Len(t, tl.Clients, 3)
	for _, cl := range tl.Clients {
		assert.NotEmpty(t, cl.Attempts, cl.Name)
		assert.NotEmpty(t, cl.Validity, cl.Name)
		assert.NotEmpty(t, cl.Work, cl.Name)
	}

	// Work that outlasts the lease: the oracle sees the holder's work overlap the next
	// holder's, and the storage refuses its late write by the lease's token.
	long := leaseWorld(t, knobs.KV{Name: "hold", Value: "700ms"})
	rec, err = experiments.RunWorld(context.Background(), long, "lease-test", experiments.Options{})
	require.NoError(t, err)
	assert.Positive(t, rec.Safety.UsageOverlaps, "a pause outlives the lease: %v", rec.Safety)
	assert.Zero(t, rec.Safety.ValidityOverlaps, "the leases' validities never overlap: %v", rec.Safety)
	assert.Zero(t, rec.Safety.StaleWritesAccepted, "every write carries its lease's token: %v", rec.Safety)
	assert.Positive(t, rec.Safety.FencedWritesRejected, "the token fences the stale write off: %v", rec.Safety)

	// The viewer's replay of the same world, line by line with the world's state.
	rp, _, err := experiments.ReplayWorld(context.Background(), leaseWorld(t), "lease-test", report.ReplayLimits{})
	require.NoError(t, err)
	require.NotEmpty(t, rp.Steps)
	var grants, replies int
	for _, st := range rp.Steps {
		if strings.Contains(st.Text, "GRANTED token=") {
			grants++
		}
	}
	for _, m := range rp.Messages {
		if strings.HasPrefix(m.Text, "GRANTED") && m.From == "lease1" {
			replies++
		}
	}
	assert.Positive(t, grants, "the replay narrates the lease protocol")
	assert.Positive(t, replies, "the replay's messages show the lease protocol")
}

// leaseFaults is a scenario on the lease world: the server loses power 10ms into client1's
// first lease and is back 50ms later, then stalls for 300ms at 2s.
const leaseFaults = `name: lease-faults
story: the lease server forgets a lease in a crash, then stalls
workload:
  client1: {hold: 300ms}
schedule:
  - on: {event: acquired, client: client1}
    after: 10ms
    crash_node: {node: lease1, restart_after: 50ms}
  - at: 2s
    pause_node: {node: last, for: 300ms}
`

// TestALockServiceSuffersProcessFaults: the lease server is a model.ServerProcess, so the
// scenario actions that crash and pause a Redis node crash and pause it, through the same
// schedule, with nothing outside this file but its registration. The crash forgets the
// lease client1 holds, so the server grants it again while client1 still believes it holds
// it (the oracle sees the overlap, and its report names the crash); the requests that reach
// the stalled server wait and are answered when it thaws; the narration marks each fault,
// the timeline draws the server's lane with its down and paused spans and marks, and the
// replay shows the server down and paused.
func TestALockServiceSuffersProcessFaults(t *testing.T) {
	w, err := leaseScenario(t, leaseFaults)
	require.NoError(t, err)
	var trace bytes.Buffer
	var tl report.Timeline
	rec, err := experiments.RunWorld(context.Background(), w, "lease-faults", experiments.Options{Trace: &trace, Timeline: &tl})
	require.NoError(t, err)

	// The crash forgot client1's lease: another client was granted it within client1's
	// validity, which a healthy server never allows (TestALockServiceThatSpeaksNoRedis).
	assert.Positive(t, rec.Safety.ValidityOverlaps, "the lease was granted twice: %v", rec.Safety)
	require.NotEmpty(t, rec.Violations)
	assert.Contains(t, strings.Join(rec.Violations[0].Faults, "; "), "lease1 crash at ", "the report names the crash")

	faultLine := func(text string) string {
		for _, l := range strings.Split(trace.String(), "\n") {
			if strings.Contains(l, " !! lease1 ") && strings.Contains(l, "]    "+text) {
				return l
			}
		}
		return ""
	}
	for _, text := range []string{"crash leases=1", "restart", "pause", "resume queued="} {
		assert.NotEmpty(t, faultLine(text), "the narration marks %q as a fault of lease1", text)
	}

	require.Len(t, tl.Nodes, 1, "one lane, the lease server's")
	lane := tl.Nodes[0]
	assert.Equal(t, "lease1", lane.Name)
	require.Len(t, lane.Down, 1)
	crashAt := lane.Down[0].From
	assert.Equal(t, report.Span{From: crashAt, To: crashAt + 50*time.Millisecond}, lane.Down[0], "down until restart_after")
	assert.Equal(t, []report.Span{{From: 2 * time.Second, To: 2300 * time.Millisecond}}, lane.Paused)
	assert.Equal(t, []report.Mark{{At: crashAt, Kind: report.MarkCrash, Text: "crash"},
		{At: crashAt + 50*time.Millisecond, Kind: report.MarkRestart, Text: "restart"}}, lane.Marks)
	assert.Empty(t, lane.Keys, "the timeline knows no lease server's keys")
	var acquired time.Duration
	for _, a := range tl.Clients[0].Attempts {
		if a.Won {
			acquired = a.To
			break
		}
	}
	assert.Equal(t, acquired+10*time.Millisecond, crashAt, "the crash came 10ms after client1's first lease")

	// The replay of the same run: the server's fault lines, its state after each, and the
	// requests that reached it stalled, answered as it thawed.
	w, err = leaseScenario(t, leaseFaults)
	require.NoError(t, err)
	rp, _, err := experiments.ReplayWorld(context.Background(), w, "lease-faults", report.ReplayLimits{})
	require.NoError(t, err)
	status := map[string]string{}
	for _, st := range rp.Steps {
		if st.Actor == "lease1" && st.Marker == "!!" {
			status[strings.Fields(st.Text)[0]] = rp.States[st.State].Nodes[0].Status
		}
	}
	assert.Equal(t, map[string]string{"crash": "down", "restart": "up", "pause": "paused", "resume": "up"}, status)
	pause, thaw := int64(2*time.Second), int64(2300*time.Millisecond)
	var waited, answered int
	for _, m := range rp.Messages {
		switch {
		case m.To == "lease1" && m.Fate == "delivered" && m.AtNs >= pause && m.AtNs < thaw:
			waited++
		case m.From == "lease1" && m.SentNs >= pause && m.SentNs < thaw:
			t.Errorf("lease1 answered while stalled: %+v", m)
		case m.From == "lease1" && m.SentNs == thaw:
			answered++
		}
	}
	assert.Positive(t, waited, "requests reached the stalled server")
	assert.Equal(t, waited, answered, "each was answered as the server thawed")
}

// TestALockServiceDrawsTheNodeKnobsFaults: the node knobs' random faults reach another
// service's servers as they reach Redis's nodes, from the server's own streams, and the
// timeline draws each.
func TestALockServiceDrawsTheNodeKnobsFaults(t *testing.T) {
	w := leaseWorld(t, knobs.KV{Name: "node_crash_rate", Value: "1"}, knobs.KV{Name: "node_down", Value: "const(100ms)"},
		knobs.KV{Name: "node_pause_rate", Value: "1"}, knobs.KV{Name: "node_pause_len", Value: "const(200ms)"})
	var trace bytes.Buffer
	var tl report.Timeline
	_, err := experiments.RunWorld(context.Background(), w, "lease-random", experiments.Options{Trace: &trace, Timeline: &tl})
	require.NoError(t, err)
	require.Len(t, tl.Nodes, 1)
	lane := tl.Nodes[0]
	require.NotEmpty(t, lane.Down, "node_crash_rate crashes the lease server")
	require.NotEmpty(t, lane.Paused, "node_pause_rate stalls it")
	text := trace.String()
	assert.Equal(t, len(lane.Down), strings.Count(text, "crash leases="), "a down span per crash")
	assert.Equal(t, len(lane.Paused), strings.Count(text, " pause\n"), "a paused span per stall")
	for _, d := range lane.Down {
		assert.True(t, d.To-d.From == 100*time.Millisecond || d.To == tl.Duration, "down for node_down: %v", d)
	}
	for _, p := range lane.Paused {
		assert.True(t, p.To-p.From == 200*time.Millisecond || p.To == tl.Duration, "stalled for node_pause_len: %v", p)
	}
}

// TestALockServiceRefusesRedisOnlyActions: a node field names the lease server as it
// names a Redis node, and an action only Redis can take on it is refused naming why.
func TestALockServiceRefusesRedisOnlyActions(t *testing.T) {
	for action, want := range map[string]string{
		"failover: {node: lease1}":             "failover: node lease1 is a server of the lease service, and only a Redis group with replicas takes a failover",
		"outside_lock: {node: last, ttl: 1s}":  "outside_lock: node last is a server of the lease service",
		"crash_node: {node: redis1}":           "lease.yaml:4: crash_node: node = redis1: out of range, allowed one of this world's 1 nodes: lease1",
		"kill_node: {node: lease2}":            "one of this world's 1 nodes: lease1 (algorithm lease-test addresses 1), or last",
		"shutdown_node: {node: lease1}":        "",
		"pause_node: {node: lease1, for: 1ms}": "",
	} {
		_, err := leaseScenario(t, "name: x\nstory: y\nschedule:\n  - at: 1s\n    "+action+"\n")
		if want == "" {
			assert.NoError(t, err, action)
			continue
		}
		assert.ErrorContains(t, err, want, action)
	}
}

// TestALockServiceStopEndsItsStall: a server killed while stalled is no longer stalled:
// its paused span ends where its down span begins, the thaw the stall had scheduled never
// comes, and what it kept for the thaw is gone with it.
func TestALockServiceStopEndsItsStall(t *testing.T) {
	w, err := leaseScenario(t, `name: stop-in-stall
story: the lease server is killed while stalled
schedule:
  - at: 1s
    pause_node: {node: lease1, for: 1s}
  - at: 1500ms
    kill_node: {node: lease1, restart_after: 100ms}
`)
	require.NoError(t, err)
	var trace bytes.Buffer
	var tl report.Timeline
	_, err = experiments.RunWorld(context.Background(), w, "stop-in-stall", experiments.Options{Trace: &trace, Timeline: &tl})
	require.NoError(t, err)
	require.Len(t, tl.Nodes, 1)
	assert.Equal(t, []report.Span{{From: time.Second, To: 1500 * time.Millisecond}}, tl.Nodes[0].Paused)
	assert.Equal(t, []report.Span{{From: 1500 * time.Millisecond, To: 1600 * time.Millisecond}}, tl.Nodes[0].Down)
	assert.NotContains(t, trace.String(), "resume", "no thaw after the kill")
	assert.Contains(t, trace.String(), "kill leases=")
}

// TestALockServiceServerClockSteps: a scenario changes a lease server's clocks, as it
// changes a Redis node's, though the server exists only once the world is built: the
// world plans its clock by name. A fast clock (+50 %) ends the lease, measured on the
// server's monotonic clock, early, and another client is granted it within the holder's
// validity; a wall-clock step is marked on the server's lane. A name the service does not
// create is refused when the world is built.
func TestALockServiceServerClockSteps(t *testing.T) {
	step := `name: lease-clock
story: lease1's clocks run 50 % fast from 1s, and its wall clock jumps at 1s
schedule:
  - at: 1s
    clock_drift: {node: lease1, ppm: 500000}
  - at: 1s
    clock_step: {node: lease1, by: 5s}
`
	hold := []knobs.KV{{Name: "hold", Value: "const(450ms)"}, {Name: "think", Value: "const(10ms)"}}
	w, err := leaseScenario(t, step, hold...)
	require.NoError(t, err)
	var tl report.Timeline
	rec, err := experiments.RunWorld(context.Background(), w, "lease-clock", experiments.Options{Timeline: &tl})
	require.NoError(t, err)
	assert.Positive(t, rec.Safety.ValidityOverlaps, "the fast clock ended client1's lease early: %v", rec.Safety)
	require.Len(t, tl.Nodes, 1)
	assert.Contains(t, tl.Nodes[0].Marks, report.Mark{At: time.Second, Kind: report.MarkClockJump, Text: "clock +5s"}, "the lane marks the jump")

	w, err = leaseScenario(t, step, hold...)
	require.NoError(t, err)
	rec, err = experiments.RunWorld(context.Background(), w, "lease-clock", experiments.Options{})
	require.NoError(t, err)
	assert.Positive(t, rec.Safety.ValidityOverlaps, "the same run again")

	sc, err := scenarios.ParseFile("lease.yaml", []byte(strings.ReplaceAll(step, "step: {node: lease1", "step: {node: lease9")))
	require.NoError(t, err)
	v, _, err := sc.Bind(nil)
	require.NoError(t, err)
	w = leasePlan(t)
	require.NoError(t, sc.Configure(w, v))
	assert.ErrorContains(t, w.Build(), "no server of the lease service is called lease9")
}
