//go:build linux

package conformance_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/redlock-sim/redlock-sim/internal/zkproc"
)

// RequireZooKeeperEnv names the environment variable that turns missing ZooKeeper,
// Curator or JDK packages from a skip into a failure (CI sets it).
const RequireZooKeeperEnv = "REDLOCK_SIM_REQUIRE_ZOOKEEPER"

// TimelineDirEnv names the environment variable that, when set, has each ZooKeeper script
// also write its observed timeline (zkTimeline as JSON) into that folder, which outlives
// the test's temporary one.
const TimelineDirEnv = "REDLOCK_SIM_ZK_TIMELINE_DIR"

// needZooKeeper returns the java executable, or skips the test without ZooKeeper, Curator
// and a JDK (fails it under REDLOCK_SIM_REQUIRE_ZOOKEEPER).
func needZooKeeper(t *testing.T) string {
	t.Helper()
	java, err := zkproc.Java()
	if err != nil {
		if os.Getenv(RequireZooKeeperEnv) != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return java
}

// compileHarness compiles zookeeper/CuratorLock.java with javac against Debian's Curator
// into a temporary folder and returns it, for the class path.
func compileHarness(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("javac", "-Xlint:all,-path", "-Werror", "-d", dir, "-cp", zkproc.CuratorJar,
		filepath.Join("zookeeper", "CuratorLock.java")).CombinedOutput()
	require.NoError(t, err, "javac: %s", out)
	return dir
}

// monotonic reads CLOCK_MONOTONIC, the clock Java's System.nanoTime reads on Linux: the
// harness's events and the test's faults are on one timeline, and so is the leader's
// session expiry (ZooKeeper's Time.currentElapsedTime is System.nanoTime in ms).
func monotonic(t *testing.T) time.Duration {
	var ts unix.Timespec
	require.NoError(t, unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts))
	return time.Duration(ts.Nano())
}

// zkEvent is one line of the harness's output (CuratorLock.java), or one fault the test
// played (Client "test").
type zkEvent struct {
	T      time.Duration `json:"-"`
	TNs    int64         `json:"t_ns"`
	Client string        `json:"client"`
	Event  string        `json:"event"`
	// State is Curator's connection state (event "state") or ZooKeeper's (event "zk").
	State   string `json:"state,omitempty"`
	Session string `json:"session,omitempty"`
	// Node and Czxid are the lock node a client acquired with and its creation zxid.
	Node      string `json:"node,omitempty"`
	Czxid     int64  `json:"czxid,omitempty"`
	Owner     string `json:"ephemeral_owner,omitempty"`
	TookNs    int64  `json:"took_ns,omitempty"`
	TimeoutMs int64  `json:"timeout_ms,omitempty"`
	Op        string `json:"op,omitempty"`
	Error     string `json:"error,omitempty"`
	// NegotiatedMs is the session timeout the ensemble granted.
	NegotiatedMs int `json:"negotiated_timeout_ms,omitempty"`
	// Target is what a fault of the test hit: "client a", "server 2".
	Target string `json:"target,omitempty"`
}

func (e zkEvent) String() string {
	s := fmt.Sprintf("%s %s", e.Client, e.Event)
	for _, f := range []string{e.State, e.Target, e.Node, e.Session, e.Error} {
		if f != "" {
			s += " " + f
		}
	}
	return s
}

// zkClient is one JVM running CuratorLock lock: the test writes its commands and reads
// its events.
type zkClient struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	log   string

	mu      sync.Mutex
	events  []zkEvent
	changed chan struct{} // closed and replaced on every event
	done    bool
}

// zkRun is one script's real side: the ensemble, its clients, and the faults played, on
// one timeline.
type zkRun struct {
	t        *testing.T
	java     string
	classes  string
	ensemble *zkproc.Ensemble
	start    time.Duration
	clients  []*zkClient

	mu     sync.Mutex
	faults []zkEvent
	bounds []tlBound
	setup  []tlClient
}

// ms is a time on the run's clock in milliseconds from the script's start.
func (r *zkRun) ms(t time.Duration) float64 { return float64(t-r.start) / float64(time.Millisecond) }

// startZK starts a 3-server ensemble with the scripts' tick in the test's temporary
// folder, stopped when the test ends (failed or not).
func startZK(t *testing.T, java, classes string) *zkRun {
	t.Helper()
	e, err := zkproc.Start(t.TempDir(), zkproc.Config{Servers: 3, Tick: zkTick, InitLimit: zkInitLimit, SyncLimit: zkSyncLimit})
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return &zkRun{t: t, java: java, classes: classes, ensemble: e, start: monotonic(t)}
}

// client starts a harness JVM named name that may connect to the servers of the given
// indices (all of them when nil), through the addresses via when given (one per server:
// proxies), and waits until its session is established. It is killed when the test ends.
func (r *zkRun) client(name string, servers []int, via []string) *zkClient {
	t := r.t
	t.Helper()
	if servers == nil {
		for i := range r.ensemble.Servers() {
			servers = append(servers, i)
		}
	}
	addrs := via
	if addrs == nil {
		for _, i := range servers {
			addrs = append(addrs, r.ensemble.Servers()[i].Addr())
		}
	}
	require.Len(t, addrs, len(servers))
	connect := strings.Join(addrs, ",")
	r.mu.Lock()
	r.setup = append(r.setup, tlClient{Name: name, Servers: servers, Proxied: via != nil})
	r.mu.Unlock()
	log := filepath.Join(t.TempDir(), "client-"+name+".log")
	args := append(zkproc.JVMFlags(),
		"-Dorg.slf4j.simpleLogger.logFile="+log,
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
		"-cp", strings.Join([]string{r.classes, zkproc.CuratorJar, zkproc.LoggerJar}, string(os.PathListSeparator)),
		"CuratorLock", "lock", "--name", name, "--connect", connect, "--path", zkLockPath,
		"--session-timeout-ms", strconv.FormatInt(zkSession.Milliseconds(), 10),
		"--connection-timeout-ms", strconv.FormatInt(zkConnection.Milliseconds(), 10),
		"--retry-base-ms", strconv.FormatInt(zkRetryBase.Milliseconds(), 10),
		"--retry-max", strconv.Itoa(zkRetryMax))
	c := &zkClient{name: name, cmd: zkproc.Command(r.java, args...), log: log, changed: make(chan struct{})}
	c.cmd.Stderr = os.Stderr
	stdout, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	c.stdin, err = c.cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(unix.SIGCONT) // a paused JVM dies of SIGKILL too, but say so
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		if t.Failed() {
			if b, err := os.ReadFile(log); err == nil {
				t.Logf("client %s's log:\n%s", name, tail(string(b), 6000))
			}
		}
	})
	go c.read(stdout)
	r.clients = append(r.clients, c)
	c.wait(t, "ready", 30*time.Second, func(e zkEvent) bool { return e.Event == "ready" })
	return c
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func (c *zkClient) read(stdout io.Reader) {
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var e zkEvent
		if json.Unmarshal(lines.Bytes(), &e) != nil {
			e = zkEvent{Client: c.name, Event: "output", Error: lines.Text()}
		}
		e.T = time.Duration(e.TNs)
		c.mu.Lock()
		c.events = append(c.events, e)
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.done = true
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// send writes one command line to the client.
func (c *zkClient) send(t *testing.T, line string) {
	t.Helper()
	_, err := fmt.Fprintln(c.stdin, line)
	require.NoError(t, err, "client %s: %s", c.name, line)
}

// wait returns the client's first event that match accepts, waiting for it up to
// timeout; it fails the test (naming what) when none comes. timeout only catches a hang:
// the facts are asserted on the events' own times.
func (c *zkClient) wait(t *testing.T, what string, timeout time.Duration, match func(zkEvent) bool) zkEvent {
	t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		i := slices.IndexFunc(c.events, match)
		var e zkEvent
		if i >= 0 {
			e = c.events[i]
		}
		changed, done, seen := c.changed, c.done, slices.Clone(c.events)
		c.mu.Unlock()
		if i >= 0 {
			return e
		}
		if done {
			require.FailNow(t, "client "+c.name+" exited before "+what, "events: %v", seen)
		}
		select {
		case <-changed:
		case <-deadline:
			require.FailNow(t, "client "+c.name+": no "+what+" within "+timeout.String(), "events: %v", seen)
		}
	}
}

// find returns the client's events that match accepts.
func (c *zkClient) find(match func(zkEvent) bool) []zkEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []zkEvent
	for _, e := range c.events {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

// isState matches a Curator connection state event.
func isState(state string) func(zkEvent) bool {
	return func(e zkEvent) bool { return e.Event == "state" && e.State == state }
}

// isEvent matches an event by name.
func isEvent(name string) func(zkEvent) bool {
	return func(e zkEvent) bool { return e.Event == name }
}

// after matches what match does, at or after t.
func after(t time.Duration, match func(zkEvent) bool) func(zkEvent) bool {
	return func(e zkEvent) bool { return e.T >= t && match(e) }
}

// fault records a fault the test played on target, timed just before do runs, and
// returns that time.
func (r *zkRun) fault(what, target string, do func()) time.Duration {
	at := monotonic(r.t)
	do()
	r.mu.Lock()
	r.faults = append(r.faults, zkEvent{T: at, TNs: int64(at), Client: "test", Event: what, Target: target})
	r.mu.Unlock()
	return at
}

// zkNode is a znode as one server has it.
type zkNode struct {
	Path  string `json:"path"`
	Czxid int64  `json:"czxid"`
	Owner string `json:"ephemeral_owner"`
}

// znodes lists every znode each server has (through the harness's tree mode, one client
// per server connected to it alone): nil for a server that is down or did not answer.
func (r *zkRun) znodes() [][]zkNode {
	t := r.t
	t.Helper()
	servers := r.ensemble.Servers()
	args := append(zkproc.JVMFlags(),
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
		"-cp", strings.Join([]string{r.classes, zkproc.CuratorJar, zkproc.LoggerJar}, string(os.PathListSeparator)),
		"CuratorLock", "tree")
	for _, s := range servers {
		if s.Alive() { // a dead server would cost the tree's whole connection wait
			args = append(args, s.Addr())
		}
	}
	out, err := zkproc.Command(r.java, args...).Output()
	require.NoError(t, err, "CuratorLock tree")
	trees := make([][]zkNode, len(servers))
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var got struct {
			Server string   `json:"server"`
			OK     bool     `json:"ok"`
			Nodes  []zkNode `json:"nodes"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &got), line)
		for i, s := range servers {
			if s.Addr() == got.Server && got.OK {
				trees[i] = append([]zkNode{}, got.Nodes...)
			}
		}
	}
	return trees
}

// lockNodes returns the lock's children among nodes.
func lockNodes(nodes []zkNode) []zkNode {
	var out []zkNode
	for _, n := range nodes {
		if strings.HasPrefix(n.Path, zkLockPath+"/") {
			out = append(out, n)
		}
	}
	return out
}

// waitZnodes lists the servers' znodes until ok accepts them (a follower applies a
// commit a moment after the leader, and a restarted one after it synced), for at most
// timeout, and returns the last listing.
func (r *zkRun) waitZnodes(timeout time.Duration, ok func([][]zkNode) bool) ([][]zkNode, bool) {
	deadline := time.Now().Add(timeout)
	for {
		trees := r.znodes()
		if ok(trees) || time.Now().After(deadline) {
			return trees, ok(trees)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// proxy forwards every connection made to a loopback port of its own to target, so a
// client that connects through it can be cut off by the firewall (its port) while the
// ensemble's own traffic and the other clients' still flow. It stops when the test ends.
func proxy(t *testing.T, target string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				_ = dst.Close()
				_ = src.Close()
			}
			go pipe(in, out)
			go pipe(out, in)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// zkTimeline is what one script observed on the real ensemble, in the form the
// simulation's comparison reads: every client event and fault on one clock, in
// milliseconds from the script's start, and the znodes each server had at the end.
type zkTimeline struct {
	Script              string `json:"script"`
	TickMs              int64  `json:"tick_ms"`
	SessionTimeoutMs    int64  `json:"session_timeout_ms"`
	ConnectionTimeoutMs int64  `json:"connection_timeout_ms"`
	Servers             int    `json:"servers"`
	// Leader is the index of the server that led at the start (myid − 1).
	Leader int `json:"leader"`
	// Clients are the harness's clients and the servers each may connect to.
	Clients []tlClient `json:"clients"`
	Events  []tlRow    `json:"events"`
	// Bounds are the times the script held the real events to, as it asserted them.
	Bounds []tlBound `json:"bounds"`
	// Znodes are the lock's children each server had at the end (null: did not answer).
	Znodes [][]zkNode `json:"znodes"`
}

// tlClient is one client of a zkTimeline: the indices of the servers in its connect
// string, and whether it reached them through the test's proxies (which the partition
// script cuts).
type tlClient struct {
	Name    string `json:"name"`
	Servers []int  `json:"servers"`
	Proxied bool   `json:"proxied"`
}

// tlBound is one time a script asserted: the event's time and the arithmetic's bounds in
// milliseconds from the script's start, and the tolerances that widened them.
type tlBound struct {
	What    string  `json:"what"`
	GotMs   float64 `json:"got_ms"`
	LoMs    float64 `json:"lo_ms"`
	HiMs    float64 `json:"hi_ms"`
	EarlyMs int64   `json:"early_ms"`
	LateMs  int64   `json:"late_ms"`
}

// tlRow is one event of a zkTimeline.
type tlRow struct {
	TMs float64 `json:"t_ms"`
	zkEvent
}

// writeTimeline writes the script's timeline as JSON into the test's temporary folder
// (and into REDLOCK_SIM_ZK_TIMELINE_DIR when set), logs where, and compares it with the
// simulated script (compareWithSimulation).
func (r *zkRun) writeTimeline(script string, leader int, znodes [][]zkNode) zkTimeline {
	t := r.t
	t.Helper()
	tl := zkTimeline{Script: script, TickMs: zkTick.Milliseconds(), SessionTimeoutMs: zkSession.Milliseconds(),
		ConnectionTimeoutMs: zkConnection.Milliseconds(), Servers: len(r.ensemble.Servers()), Leader: leader}
	var all []zkEvent
	r.mu.Lock()
	all = append(all, r.faults...)
	tl.Bounds = append(tl.Bounds, r.bounds...)
	tl.Clients = append(tl.Clients, r.setup...)
	r.mu.Unlock()
	for _, c := range r.clients {
		all = append(all, c.find(func(zkEvent) bool { return true })...)
	}
	slices.SortStableFunc(all, func(a, b zkEvent) int { return int(a.T - b.T) })
	for _, e := range all {
		tl.Events = append(tl.Events, tlRow{TMs: r.ms(e.T), zkEvent: e})
	}
	for _, nodes := range znodes {
		if nodes == nil {
			tl.Znodes = append(tl.Znodes, nil)
			continue
		}
		tl.Znodes = append(tl.Znodes, append([]zkNode{}, lockNodes(nodes)...))
	}
	b, err := json.MarshalIndent(tl, "", "  ")
	require.NoError(t, err)
	dirs := []string{t.TempDir()}
	if d := os.Getenv(TimelineDirEnv); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		path := filepath.Join(d, "zookeeper-"+script+".json")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		t.Logf("timeline: %s", path)
	}
	for _, row := range tl.Events {
		t.Logf("%9.1fms  %s", row.TMs, row.zkEvent)
	}
	for _, b := range tl.Bounds {
		t.Logf("%s at %.1fms: bounds [%.1f, %.1f]ms", b.What, b.GotMs, b.LoMs, b.HiMs)
	}
	t.Run("simulated", func(t *testing.T) { compareWithSimulation(t, tl) })
	return tl
}
