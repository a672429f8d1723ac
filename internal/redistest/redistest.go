// Package redistest starts real redis-server processes for tests: on a free loopback port,
// without persistence unless asked, stopped when the test ends. The real-Redis driver's
// integration test and the Redis model's differential test share it, so both talk to a
// server started the same way. The processes themselves are internal/redisproc's, which
// `redlock-sim bench --real` uses too.
//
// When redis-server is not on PATH a test that needs it is skipped with a message saying
// how to install it, so `go test ./...` passes on a bare machine; with
// REDLOCK_SIM_REQUIRE_REDIS=1 (set by CI) it fails instead.
package redistest

import (
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-sim/redlock-sim/internal/redisproc"
)

// RequireEnv names the environment variable that turns a missing redis-server from a skip
// into a failure.
const RequireEnv = "REDLOCK_SIM_REQUIRE_REDIS"

// Path returns the redis-server executable, or skips (fails under REDLOCK_SIM_REQUIRE_REDIS=1)
// the test when there is none.
func Path(t testing.TB) string {
	t.Helper()
	path, err := redisproc.Path()
	if err == nil {
		return path
	}
	msg := "redis-server not found on PATH; " + redisproc.InstallHint
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s (%s=1 makes this a failure)", msg, RequireEnv)
	}
	t.Skipf("%s, or set %s=1 to make its absence a failure", msg, RequireEnv)
	return ""
}

// Server is one redis-server process started by Start.
type Server struct {
	*redisproc.Server
	t testing.TB

	mu     sync.Mutex
	client *redis.Client
}

// Start starts redis-server on a free 127.0.0.1 port with no persistence
// (--save "" --appendonly no), in a temporary directory, and waits until it answers PING.
// extraArgs are appended to the command line, so they override the defaults (e.g.
// "--appendonly", "yes"). The server is killed when the test ends.
func Start(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	Path(t)
	p, err := redisproc.Start(t.TempDir(), extraArgs...)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	s := &Server{Server: p, t: t}
	t.Cleanup(s.stop)
	return s
}

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		s.client = redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true})
	}
	return s.client
}

// Restart starts a killed server again on the same port and directory, so a test can see
// what persistence kept.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.Server.Restart(); err != nil {
		s.t.Fatalf("redistest: restarting redis-server: %v", err)
	}
}

func (s *Server) stop() {
	s.mu.Lock()
	client := s.client
	s.client = nil
	s.mu.Unlock()
	if client != nil {
		_ = client.Close()
	}
	s.Kill()
}
