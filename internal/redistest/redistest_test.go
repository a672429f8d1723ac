package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
)

func TestStartKillRestart(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	require.True(t, s.Alive())
	c := s.Client()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	assert.Equal(t, "v", c.Get(ctx, "k").Val())
	save, err := c.ConfigGet(ctx, "save").Result()
	require.NoError(t, err)
	assert.Equal(t, "", save["save"], "no RDB snapshots")

	s.Kill()
	assert.False(t, s.Alive())
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	assert.Error(t, c.Ping(short).Err(), "a killed server does not answer")
	s.Kill() // harmless twice

	s.Restart()
	require.True(t, s.Alive())
	require.NoError(t, c.Ping(ctx).Err())
	assert.Equal(t, int64(0), c.Exists(ctx, "k").Val(), "without persistence the key is gone")
}

func TestExtraArgsOverrideDefaults(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	c := s.Client()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	s.Kill()
	s.Restart()
	assert.Equal(t, "v", c.Get(ctx, "k").Val(), "appendfsync always keeps every acknowledged write")
}

func TestServersAreIndependent(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	assert.NotEqual(t, a.Addr(), b.Addr())
	require.NoError(t, a.Client().Set(context.Background(), "k", "a", 0).Err())
	assert.Equal(t, int64(0), b.Client().Exists(context.Background(), "k").Val())
}
