package redisproc_test

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

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

// TestPauseResume: a paused server keeps its port but answers nothing until resumed.
func TestPauseResume(t *testing.T) {
	requireRedis(t)
	s, err := redisproc.Start(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	c, err := net.Dial("tcp", s.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, s.Pause())
	_, err = io.WriteString(c, "PING\r\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, err = c.Read(make([]byte, 7))
	var ne net.Error
	require.ErrorAs(t, err, &ne, "a paused server does not answer")
	assert.True(t, ne.Timeout())
	require.NoError(t, s.Resume())
	require.NoError(t, c.SetReadDeadline(time.Time{})) // it answers once resumed, however long that takes
	buf := make([]byte, 7)
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)
	assert.Equal(t, "+PONG\r\n", string(buf))
	assert.True(t, s.Alive())
}

// TestExitedWithinWaitsForADeathItDidNotCause: a server killed from outside is reported
// dead once reaped, however long that takes, and a live one is reported alive after the
// wait; KillAll leaves every server dead.
func TestExitedWithinWaitsForADeathItDidNotCause(t *testing.T) {
	requireRedis(t)
	a, err := redisproc.Start(t.TempDir())
	require.NoError(t, err)
	defer a.Close()
	b, err := redisproc.Start(t.TempDir())
	require.NoError(t, err)
	defer b.Close()

	exited, how := a.ExitedWithin(20 * time.Millisecond)
	assert.False(t, exited, "a live server waits out the grace and is alive")
	assert.Empty(t, how)

	p, err := os.FindProcess(a.Pid())
	require.NoError(t, err)
	require.NoError(t, p.Kill()) // as the OOM killer would: not through the Server
	exited, how = a.ExitedWithin(time.Minute)
	assert.True(t, exited, "a server killed from outside is reported dead once reaped")
	assert.Equal(t, "signal: killed", how)
	assert.True(t, b.Alive(), "the other server is untouched")

	require.NoError(t, b.Pause())
	redisproc.KillAll(a, b)
	for _, s := range []*redisproc.Server{a, b} {
		exited, how := s.Exited()
		assert.True(t, exited, "KillAll returns once every server is reaped, paused or already dead")
		assert.Equal(t, "signal: killed", how)
	}
}
