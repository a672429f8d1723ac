package testbed

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redisproc"
	"github.com/redlock-sim/redlock-sim/internal/redistest"
)

func TestRunCountsCyclesOnRealRedis(t *testing.T) {
	redistest.Path(t)
	for _, own := range []bool{false, true} {
		r, err := Run(context.Background(), Spec{Nodes: 3, Clients: 3, OwnLocks: own, Duration: 300 * time.Millisecond})
		require.NoError(t, err)
		assert.Positive(t, r.Cycles)
		assert.GreaterOrEqual(t, r.Attempts, r.Cycles)
		assert.Zero(t, r.Errors)
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

func TestRunStopsOnCancel(t *testing.T) {
	redistest.Path(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err := Run(ctx, Spec{Nodes: 1, Clients: 2, Duration: time.Minute})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 30*time.Second, "cancelled long before its duration")
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
