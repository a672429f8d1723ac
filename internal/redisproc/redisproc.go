// Package redisproc starts and stops real redis-server processes on free loopback ports,
// for the tests that compare the model with Redis (through internal/redistest) and for
// `redlock-sim bench --real`. A server listens on 127.0.0.1 only, keeps nothing on disk
// unless asked (--save "" --appendonly no), and is killed by Close; on Linux it is also
// killed if the process that started it dies first.
package redisproc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// InstallHint says how to get redis-server on the machines the project targets.
const InstallHint = "install it with `apt-get install -y redis-server`"

// ErrNotInstalled is wrapped by the error of Path (and of Start) when redis-server is not
// on PATH.
var ErrNotInstalled = errors.New("redis-server not found on PATH")

const (
	startAttempts = 5 // a free port can be taken between probe and bind
	// startTimeout bounds the wait for PING. A server answers in milliseconds, and one that
	// exits is noticed at once; the bound only catches a hang, so it is generous enough
	// that a machine loaded by other work never reaches it.
	startTimeout = time.Minute
)

// Path returns the redis-server executable, or an error wrapping ErrNotInstalled that
// says how to install it.
func Path() (string, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("%w; %s", ErrNotInstalled, InstallHint)
	}
	return path, nil
}

// Version returns the version redis-server reports ("7.0.15"), or "" if it cannot tell.
func Version(path string) string {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return ""
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return v
		}
	}
	return ""
}

// Server is one redis-server process started by Start.
type Server struct {
	path string
	dir  string
	args []string
	port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit *exitStatus // of the current process
	log  *syncBuffer
}

// exitStatus is how one process ended: err is cmd.Wait's error, readable once done is
// closed.
type exitStatus struct {
	done chan struct{}
	err  error
}

// Start starts redis-server on a free 127.0.0.1 port with no persistence, working in dir
// (which must exist), and waits until it answers PING. extraArgs are appended to the
// command line, so they override the defaults (e.g. "--appendonly", "yes"). The caller
// must Close the server.
func Start(dir string, extraArgs ...string) (*Server, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	s := &Server{path: path, dir: dir, args: extraArgs}
	for range startAttempts {
		if s.port, err = freePort(); err != nil {
			continue
		}
		if err = s.launch(); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("starting redis-server: %w", err)
}

// Addr returns host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port returns the TCP port.
func (s *Server) Port() int { return s.port }

// Dir returns the server's working directory, where RDB and AOF files go.
func (s *Server) Dir() string { return s.dir }

// Kill sends SIGKILL, as a crash would, and waits for the process to exit. Nothing is
// flushed: with persistence on, exactly what was synced survives. Killing twice is harmless.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exit := s.cmd, s.exit
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exit.done
}

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		return errors.New("redis-server not started")
	}
	return cmd.Process.Signal(sig)
}

// Pid returns the server process's id, 0 when it is not running: for a test harness in
// another language that stops and continues it itself (the node-redlock conformance).
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// KillAll sends SIGKILL to every server before it waits for any, so that they die within
// microseconds of each other rather than one reap apart, then waits for all of them.
func KillAll(servers ...*Server) {
	for _, s := range servers {
		_ = s.signal(syscall.SIGKILL)
	}
	for _, s := range servers {
		s.Kill()
	}
}

// Close kills the server; it is Kill under the name io.Closer callers expect.
func (s *Server) Close() error {
	s.Kill()
	return nil
}

// Alive reports whether the process is running.
func (s *Server) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exit.done:
		return false
	default:
		return true
	}
}

// Exited reports whether the process has ended, and how: "signal: killed", "exit status
// 1", or "exited" for a clean exit. A caller that did not stop the server itself learns
// from it why the server stopped answering.
func (s *Server) Exited() (bool, string) {
	return s.ExitedWithin(0)
}

// ExitedWithin is Exited after waiting up to d for the process to end. A client sees its
// connection reset as soon as the kernel closes a dying server's sockets, a moment before
// the process is reaped; a caller that saw a reset waits a little so that it reports the
// death rather than a live server that merely broke connections.
func (s *Server) ExitedWithin(d time.Duration) (bool, string) {
	s.mu.Lock()
	exit := s.exit
	s.mu.Unlock()
	if exit == nil {
		return false, ""
	}
	select {
	case <-exit.done:
	default:
		if d <= 0 {
			return false, ""
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-exit.done:
		case <-t.C:
			return false, ""
		}
	}
	if exit.err != nil {
		return true, exit.err.Error()
	}
	return true, "exited"
}

// Restart starts a killed server again on the same port and directory, so a caller can
// see what persistence kept.
func (s *Server) Restart() error {
	s.Kill()
	return s.launch()
}

// Log returns what the server printed so far.
func (s *Server) Log() string {
	s.mu.Lock()
	log := s.log
	s.mu.Unlock()
	if log == nil {
		return ""
	}
	return log.String()
}

func (s *Server) launch() error {
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--dir", s.dir, "--logfile", "", "--loglevel", "warning",
	}, s.args...)
	cmd := exec.Command(s.path, args...)
	cmd.SysProcAttr = sysProcAttr()
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	exit := &exitStatus{done: make(chan struct{})}
	go func() {
		exit.err = cmd.Wait()
		close(exit.done)
	}()
	s.mu.Lock()
	s.cmd, s.exit, s.log = cmd, exit, log
	s.mu.Unlock()

	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-exit.done:
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

// syncBuffer is a bytes.Buffer safe for the process's output goroutines and the reader.
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
