// Package redistest starts real redis-server processes for tests: on a free loopback port,
// without persistence unless asked, stopped when the test ends. The real-Redis driver's
// integration test and the Redis model's differential test share it, so both talk to a
// server started the same way.
//
// When redis-server is not on PATH a test that needs it is skipped with a message saying
// how to install it, so `go test ./...` passes on a bare machine; with
// REDLOCK_SIM_REQUIRE_REDIS=1 (set by CI) it fails instead.
package redistest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv names the environment variable that turns a missing redis-server from a skip
// into a failure.
const RequireEnv = "REDLOCK_SIM_REQUIRE_REDIS"

const (
	startAttempts = 5                // a free port can be taken between probe and bind
	startTimeout  = 10 * time.Second // until PING answers
)

// Path returns the redis-server executable, or skips (fails under REDLOCK_SIM_REQUIRE_REDIS=1)
// the test when there is none.
func Path(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err == nil {
		return path
	}
	msg := "redis-server not found on PATH; install it with `apt-get install -y redis-server`"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s (%s=1 makes this a failure)", msg, RequireEnv)
	}
	t.Skipf("%s, or set %s=1 to make its absence a failure", msg, RequireEnv)
	return ""
}

// Server is one redis-server process started by Start.
type Server struct {
	t    testing.TB
	path string
	dir  string
	args []string
	port int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current process has exited
	log    *syncBuffer
	client *redis.Client
}

// Start starts redis-server on a free 127.0.0.1 port with no persistence
// (--save "" --appendonly no), in a temporary directory, and waits until it answers PING.
// extraArgs are appended to the command line, so they override the defaults (e.g.
// "--appendonly", "yes"). The server is killed when the test ends.
func Start(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	s := &Server{t: t, path: Path(t), dir: t.TempDir(), args: extraArgs}
	t.Cleanup(s.stop)
	var err error
	for range startAttempts {
		if s.port, err = freePort(); err != nil {
			continue
		}
		if err = s.launch(); err == nil {
			return s
		}
	}
	t.Fatalf("redistest: starting redis-server: %v", err)
	return nil
}

// Addr returns host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port returns the TCP port.
func (s *Server) Port() int { return s.port }

// Dir returns the server's working directory, where RDB and AOF files go.
func (s *Server) Dir() string { return s.dir }

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		s.client = redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true})
	}
	return s.client
}

// Kill sends SIGKILL, as a crash would, and waits for the process to exit. Nothing is
// flushed: with persistence on, exactly what was synced survives. Killing twice is harmless.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// Alive reports whether the process is running.
func (s *Server) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Restart starts a killed server again on the same port and directory, so a test can see
// what persistence kept.
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	if err := s.launch(); err != nil {
		s.t.Fatalf("redistest: restarting redis-server: %v", err)
	}
}

// Log returns what the server printed so far.
func (s *Server) Log() string { return s.log.String() }

func (s *Server) launch() error {
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--dir", s.dir, "--logfile", "", "--loglevel", "warning",
	}, s.args...)
	cmd := exec.Command(s.path, args...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited, s.log = cmd, exited, log
	s.mu.Unlock()

	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on port %d exited: %s", s.port, log.String())
		default:
		}
		if ping(s.Addr()) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("redis-server on port %d did not answer PING within %v: %s",
				s.port, startTimeout, log.String())
		}
		time.Sleep(10 * time.Millisecond)
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

// freePort asks the kernel for a free loopback port. Another process may take it before
// redis-server binds it; Start retries then.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ping speaks just enough RESP to ask PING, so readiness does not depend on a client
// library's own retries.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return err
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", buf)
	}
	return nil
}

// syncBuffer is a bytes.Buffer safe for the process's output goroutines and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
