package experiments_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// setnxLock is the simplest Redis lock there is, written only against the lock-client
// interface, to show that a lock algorithm is a package plus one registration: SET NX PX on
// server 0, trusted for ttl − 10ms from the attempt's start, up to three tries 20ms apart,
// released with the compare-and-delete script. It has no quorum and no fencing: a restart
// of its one server without persistence hands the lock out twice.
type setnxLock struct {
	ttl      time.Duration
	rng      *rand.Rand
	out      []lock.Output
	state    string // idle, acquiring, backing-off, held, releasing
	resource string
	value    string
	attempt  int
	start    time.Duration
	req      lock.Req
	timer    lock.TimerID
}

const setnxTimeout, setnxRetry, setnxTries = 50 * time.Millisecond, 20 * time.Millisecond, 3

func (l *setnxLock) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	l.out = l.out[:0]
	if l.state != "" && l.state != "idle" {
		return nil, lock.ErrBusy
	}
	l.resource, l.value, l.attempt = resource, strconv.FormatUint(l.rng.Uint64(), 16), 0
	l.startAttempt(now)
	return l.out, nil
}

func (l *setnxLock) Extend(time.Duration) ([]lock.Output, error) { return nil, lock.ErrBusy }

func (l *setnxLock) Release(now time.Duration) ([]lock.Output, error) {
	l.out = l.out[:0]
	switch l.state {
	case "", "idle":
		return nil, lock.ErrNotHeld
	case "releasing":
		return nil, lock.ErrBusy
	case "acquiring":
		l.event(lock.Event{Kind: lock.AttemptEnded, Reason: lock.ReasonAborted, Needed: 1, Servers: 1})
		fallthrough
	case "backing-off":
		l.event(lock.Event{Kind: lock.AcquireFailed, Reason: lock.ReasonAborted, Needed: 1, Servers: 1})
	}
	l.state, l.start = "releasing", now
	l.send(now, resp.EvalSHA(resp.ScriptRelease, l.resource, l.value, 0))
	return l.out, nil
}

func (l *setnxLock) Reply(now time.Duration, _ int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	l.out = l.out[:0]
	if req == 0 || req != l.req {
		return l.out, nil // an earlier request's reply, or one given up on
	}
	l.req = 0
	l.out = append(l.out, lock.Output{Kind: lock.OutCancelTimer, Timer: l.timer})
	l.answer(now, resp.ReplyOf(&p))
	return l.out, nil
}

func (l *setnxLock) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	l.out = l.out[:0]
	if id != l.timer {
		return l.out, nil
	}
	if l.state == "backing-off" {
		l.startAttempt(now)
		return l.out, nil
	}
	l.req = 0
	l.answer(now, resp.NoReply)
	return l.out, nil
}

func (l *setnxLock) startAttempt(now time.Duration) {
	l.attempt++
	l.state, l.start = "acquiring", now
	l.event(lock.Event{Kind: lock.AttemptStarted, Needed: 1, Servers: 1})
	l.send(now, resp.Set(l.resource, l.value, resp.CondNX, l.ttl))
}

func (l *setnxLock) answer(now time.Duration, r resp.Reply) {
	replies := 1
	if r.Kind == resp.ReplyNone {
		replies = 0
	}
	switch l.state {
	case "acquiring":
		deadline := l.start + l.ttl - 10*time.Millisecond
		if r.IsOK() && deadline > now {
			l.event(lock.Event{Kind: lock.AttemptEnded, Votes: 1, Needed: 1, Replies: 1, Servers: 1})
			l.state = "held"
			l.event(lock.Event{Kind: lock.Acquired, Votes: 1, Needed: 1, Replies: 1, Servers: 1,
				Deadline: deadline, Validity: deadline - now})
			return
		}
		l.event(lock.Event{Kind: lock.AttemptEnded, Reason: lock.ReasonNoQuorum, Needed: 1, Replies: replies, Servers: 1})
		if l.attempt >= setnxTries {
			l.state = "idle"
			l.event(lock.Event{Kind: lock.AcquireFailed, Reason: lock.ReasonNoQuorum, Needed: 1, Replies: replies, Servers: 1})
			return
		}
		l.state = "backing-off"
		l.arm(setnxRetry)
	case "releasing":
		votes := 0
		if r.Kind == resp.ReplyInt && r.Int == 1 {
			votes = 1
		}
		l.state = "idle"
		l.event(lock.Event{Kind: lock.Released, Votes: votes, Needed: 1, Replies: replies, Servers: 1})
	}
}

func (l *setnxLock) send(now time.Duration, c resp.Command) {
	l.req++
	l.out = append(l.out, lock.Output{Kind: lock.OutSend, Node: 0, Req: l.req, Request: c.Payload()})
	l.arm(setnxTimeout)
}

func (l *setnxLock) arm(after time.Duration) {
	l.timer++
	l.out = append(l.out, lock.Output{Kind: lock.OutSetTimer, Timer: l.timer, After: after})
}

func (l *setnxLock) event(e lock.Event) {
	e.Resource, e.Value, e.Attempt, e.Start = l.resource, l.value, l.attempt, l.start
	l.out = append(l.out, lock.Output{Kind: lock.OutEvent, Event: e})
}

// setnx is the test lock's registration.
var setnx = knobs.Algorithm{Name: "setnx", Help: "SET NX PX on one server",
	New: func(cfg *knobs.Config) (lock.Factory, error) {
		ttl := cfg.Lock.TTL
		return func(rng *rand.Rand) (lock.Client, error) { return &setnxLock{ttl: ttl, rng: rng}, nil }, nil
	}}

// setnxWorld plans and builds a world of three clients on the test lock's one server.
func setnxWorld(t *testing.T, settings ...knobs.KV) *world.World {
	cfg := knobs.DefaultConfig()
	require.NoError(t, cfg.Apply(append([]knobs.KV{{Name: "nodes", Value: "1"}, {Name: "duration", Value: "3s"},
		{Name: "ttl", Value: "2s"}, {Name: "release_after_ack", Value: "true"}}, settings...)))
	cfg.Algorithm = setnx.Name
	w, err := world.Plan(cfg, 1, world.WithAlgorithm(setnx))
	require.NoError(t, err)
	require.NoError(t, w.Build())
	return w
}

// TestANewLockAlgorithmRunsInAWorld: a lock algorithm written only against lock.Client and
// plugged in with one registration runs in a world; the oracle judges it (many safe
// cycles) and the timeline draws it (attempts, validity and work on every client's lane,
// and the keys on the node's lane, each attributed to the client whose value it holds).
func TestANewLockAlgorithmRunsInAWorld(t *testing.T) {
	w := setnxWorld(t)
	var tl report.Timeline
	rec, err := experiments.RunWorld(context.Background(), w, "setnx-test", experiments.Options{Timeline: &tl})
	require.NoError(t, err)
	assert.True(t, rec.Safety.Safe(), "one healthy server: %v", rec.Safety)
	assert.Greater(t, rec.Liveness.Acquired, int64(20))
	assert.GreaterOrEqual(t, rec.Liveness.Attempts, rec.Liveness.Acquired)
	assert.Positive(t, rec.Liveness.FailuresByReason.NoQuorum, "contenders meet the key held")
	require.Len(t, tl.Clients, 3)
	for _, cl := range tl.Clients {
		assert.NotEmpty(t, cl.Attempts, cl.Name)
		assert.NotEmpty(t, cl.Validity, cl.Name)
		assert.NotEmpty(t, cl.Work, cl.Name)
	}
	require.NotEmpty(t, tl.Nodes)
	owners := map[int]bool{}
	for _, k := range tl.Nodes[0].Keys {
		owners[k.Client] = true
	}
	assert.Equal(t, map[int]bool{0: true, 1: true, 2: true}, owners, "every key is drawn in its owner's colour")
}

// TestTheOracleJudgesANewLockAlgorithm: the test lock's one server restarts empty just
// after the first acquire, and the oracle, which knows nothing of the algorithm, reports
// the second holder as a validity overlap with the restart among its causes.
func TestTheOracleJudgesANewLockAlgorithm(t *testing.T) {
	w := setnxWorld(t, knobs.KV{Name: "hold", Value: "500ms"}, knobs.KV{Name: "start_spread", Value: "0s"})
	done, crashAt := false, sim.Time(0)
	w.OnEvent(func(now sim.Time, e *model.ClientEvent) {
		if done || e.Kind != model.EvAcquired {
			return
		}
		done, crashAt = true, now
		require.NoError(t, w.NodeFault(w.Groups[0], now, redis.Fault{Kind: redis.FaultCrash, For: 10 * time.Millisecond}))
	})
	rec, err := experiments.RunWorld(context.Background(), w, "setnx-restart", experiments.Options{})
	require.NoError(t, err)
	require.Positive(t, rec.Safety.ValidityOverlaps)
	require.Positive(t, rec.Safety.UsageOverlaps)
	for _, v := range rec.Violations {
		if v.Kind == oracle.KindValidityOverlap {
			us := func(t sim.Time) string { return t.Duration().Round(time.Microsecond).String() }
			assert.Equal(t, []string{"redis1 crash at " + us(crashAt) + " until " + us(crashAt.Add(10*time.Millisecond))},
				v.Faults)
			return
		}
	}
	t.Fatal("no validity overlap listed")
}
