package redisproc_test

import (
	"errors"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redisproc"
)

// requireRedis skips without redis-server, unless REDLOCK_SIM_REQUIRE_REDIS=1 makes its
// absence a failure (internal/redistest is built on this package, so it cannot be used here).
func requireRedis(t *testing.T) {
	t.Helper()
	if _, err := redisproc.Path(); err != nil {
		if os.Getenv("REDLOCK_SIM_REQUIRE_REDIS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func TestPathWithoutRedisSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := redisproc.Path()
	require.Error(t, err)
	assert.True(t, errors.Is(err, redisproc.ErrNotInstalled))
	assert.Contains(t, err.Error(), "apt-get install -y redis-server")
	_, err = redisproc.Start(t.TempDir())
	assert.True(t, errors.Is(err, redisproc.ErrNotInstalled))
}

func TestStartListensOnLoopbackAndCloseKills(t *testing.T) {
	requireRedis(t)
	s, err := redisproc.Start(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	host, _, err := net.SplitHostPort(s.Addr())
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	assert.True(t, s.Alive())
	exited, how := s.Exited()
	assert.False(t, exited)
	assert.Empty(t, how)
	path, _ := redisproc.Path()
	assert.NotEmpty(t, redisproc.Version(path))
	require.NoError(t, s.Close())
	assert.False(t, s.Alive())
	exited, how = s.Exited()
	assert.True(t, exited)
	assert.Equal(t, "signal: killed", how, "says why the server stopped")
	require.NoError(t, s.Close(), "closing twice is harmless")
}
