package testbed

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redisproc"
	"github.com/redlock-sim/redlock-sim/internal/redistest"
	"github.com/redlock-sim/redlock-sim/redlock"
)

// safetyBound is the Duration of runs whose work is bounded by count or by cancellation:
// far beyond what any machine needs, so that reaching it means a hang, not a slow machine.
const safetyBound = 2 * time.Minute

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{}) // the tests kill servers on purpose; go-redis would log each refused dial
	m.Run()
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestRunCountsCyclesOnRealRedis(t *testing.T) {
	redistest.Path(t)
	const cycles, clients = 30, 3
	for _, own := range []bool{false, true} {
		r, err := Run(context.Background(), Spec{Nodes: 3, Clients: clients, OwnLocks: own, Duration: safetyBound, Cycles: cycles})
		require.NoError(t, err)
		assert.GreaterOrEqual(t, r.Cycles, uint64(cycles), "stopped by the count, not the %v bound", safetyBound)
		assert.Less(t, r.Cycles, uint64(cycles+clients), "each client finishes at most the cycle it is in")
		assert.GreaterOrEqual(t, r.Attempts, r.Cycles)
		assert.Zero(t, r.Errors)
		assert.Empty(t, r.ServerFailures)
		assert.Equal(t, 3, r.Servers)
		assert.NotEmpty(t, r.RedisVersion)
		assert.InDelta(t, float64(r.Cycles)/r.WallTimeS, r.CyclesPerS, 1e-6)
		if own {
			assert.Equal(t, "own", r.Locks)
			assert.Zero(t, r.Failed, "nobody contends")
		} else {
			assert.Equal(t, "shared", r.Locks)
		}
	}
}

// TestRunStopsOnCancel: a run of an hour, cancelled at its start and while it runs, ends
// with ctx's error; if cancellation were ignored it would end only with the safety bound,
// without an error.
func TestRunStopsOnCancel(t *testing.T) {
	redistest.Path(t)
	for _, after := range []time.Duration{0, 500 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(after, cancel)
		_, err := Run(ctx, Spec{Nodes: 1, Clients: 2, Duration: safetyBound})
		assert.ErrorIs(t, err, context.Canceled, "cancelled after %v", after)
		cancel()
	}
}

// startProcs starts n servers for measure, stopped when the test ends.
func startProcs(t *testing.T, n int) []*redisproc.Server {
	t.Helper()
	redistest.Path(t)
	servers := make([]*redisproc.Server, n)
	for i := range servers {
		s, err := redisproc.Start(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		servers[i] = s
	}
	return servers
}

// killWhenBusy kills every server once the first has processed enough commands: mid-run
// by construction, whatever the machine's speed.
func killWhenBusy(t *testing.T, servers []*redisproc.Server) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: servers[0].Addr(), Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), safetyBound)
	defer cancel()
	for ctx.Err() == nil {
		info, err := rdb.Info(ctx, "stats").Result()
		require.NoError(t, err)
		if processed(info) >= 500 {
			// Freeze them all first: a client then waits on a frozen server instead of
			// piling up errors from the first one killed before the others die.
			for _, s := range servers {
				require.NoError(t, s.Pause())
			}
			redisproc.KillAll(servers...)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the clients sent fewer than 500 commands in %v", safetyBound)
}

func processed(info string) int {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// TestServersDyingMidRunFailTheRun: servers killed while the clients run are an error
// naming each server and the cause; their refused commands count as errors, not as
// locks lost (with own locks nobody contends, so any lost lock would be miscounted).
func TestServersDyingMidRunFailTheRun(t *testing.T) {
	servers := startProcs(t, 3)
	done := make(chan struct{})
	go func() {
		defer close(done)
		killWhenBusy(t, servers)
	}()
	r, err := measure(context.Background(), Spec{Nodes: 3, Clients: 4, OwnLocks: true, Duration: safetyBound}, servers)
	<-done
	require.Error(t, err)
	require.NotNil(t, r, "the counts come with the error")
	msg := err.Error()
	assert.Contains(t, msg, "testbed: the redis-servers stopped answering: ")
	assert.Contains(t, msg, "3 of 3 server processes died")
	for i, s := range servers {
		assert.Contains(t, msg, s.Addr()+" (node "+strconv.Itoa(i+1)+"): the redis-server process died (signal: killed)")
	}
	assert.Positive(t, r.Cycles, "they ran before the kill")
	assert.GreaterOrEqual(t, r.Errors, uint64(maxErrors), "the run stopped at the error limit, not the %v bound", safetyBound)
	assert.Zero(t, r.Failed, "a dead server loses no lock to another client")
	require.Len(t, r.ServerFailures, 3)
	var sum uint64
	for _, f := range r.ServerFailures {
		sum += f.Errors
		assert.Equal(t, "signal: killed", f.Exited)
	}
	assert.Equal(t, r.Errors, sum, "every error is some server's")
	// Connections open at the kill are reset; new ones are refused.
	assert.Regexp(t, `the first: .*(connection reset by peer|EOF|connection refused)`, msg)
}

// TestClosedPortsFailTheRun: servers that never answer at all (nothing listens) give the
// same error, naming the address and the refused connection.
func TestClosedPortsFailTheRun(t *testing.T) {
	servers := startProcs(t, 2)
	for _, s := range servers {
		s.Kill()
	}
	r, err := measure(context.Background(), Spec{Nodes: 2, Clients: 2, Duration: safetyBound}, servers)
	require.Error(t, err)
	assert.Zero(t, r.Cycles)
	assert.Zero(t, r.Failed)
	assert.GreaterOrEqual(t, r.Errors, uint64(maxErrors))
	for _, s := range servers {
		assert.Contains(t, err.Error(), s.Addr()+" (node ")
		assert.Contains(t, err.Error(), "dial tcp "+s.Addr()+": connect: connection refused")
	}
}

// TestHungServersFailTheRun: servers that keep their port but answer nothing (stopped
// with SIGSTOP) time out rather than refuse; they still fail the run, named as hung,
// because they do not answer a PING after it either. The run lasts its duration, 3 s,
// thirty times the per-node timeout.
func TestHungServersFailTheRun(t *testing.T) {
	servers := startProcs(t, 3)
	for _, s := range servers {
		require.NoError(t, s.Pause())
	}
	lock := redlock.DefaultConfig()
	lock.Timeout = 100 * time.Millisecond
	r, err := measure(context.Background(), Spec{Nodes: 3, Clients: 2, Duration: 3 * time.Second, Lock: lock}, servers)
	require.Error(t, err)
	assert.Zero(t, r.Cycles)
	assert.Zero(t, r.Failed, "a hung server loses no lock to another client")
	assert.Zero(t, r.Errors)
	assert.Positive(t, r.Timeouts)
	assert.Regexp(t, `^testbed: the redis-servers stopped answering: \d+ commands timed out, 3 of 3 hung\n`, err.Error())
	assert.Contains(t, err.Error(), ", 3 of 3 hung")
	for _, s := range servers {
		assert.Contains(t, err.Error(), s.Addr()+" (node ")
	}
	assert.Contains(t, err.Error(), "the redis-server stopped answering (no reply to PING after the run either)")
	assert.Contains(t, err.Error(), "no answer within 100ms")
}

func TestRunWithoutRedis(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Run(context.Background(), Spec{Nodes: 5, Clients: 1, Duration: time.Second})
	assert.True(t, errors.Is(err, redisproc.ErrNotInstalled))
}

func TestBadSpecs(t *testing.T) {
	for _, s := range []Spec{
		{Nodes: 0, Clients: 1, Duration: time.Second},
		{Nodes: 5, Clients: 0, Duration: time.Second},
		{Nodes: 5, Clients: 1, Duration: 0},
		{Nodes: 5, Clients: 1, Duration: 2 * time.Hour},
	} {
		_, err := Run(context.Background(), s)
		assert.Error(t, err, "%+v", s)
	}
}
