// Package testbed runs the benchmark's zero-hold workload against real Redis: it starts
// redis-server processes on loopback (internal/redisproc), drives the redlock state
// machine against them through redlock/redisdriver from one goroutine per client, and
// counts complete lock cycles for a fixed wall-clock duration. A run in which servers
// stop answering is an error that names them, not a slow result. `redlock-sim bench --real`
// compares its rate with the simulator's on the same workload.
//
// It lives outside package experiments because it is the opposite of a simulation: real
// time, real sockets, goroutines.
package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-sim/redlock-sim/internal/redisproc"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/redisdriver"
)

// Limits of a testbed run.
const (
	MaxNodes    = redlock.MaxNodes
	MaxClients  = 64
	MaxDuration = time.Hour
	// maxErrors stops a run whose servers keep failing (one died, a port vanished): the
	// figure would measure nothing, and a hundred failures are enough to say which servers
	// failed and how.
	maxErrors = 100
	// exitGrace is how long a server that failed commands is given to be reaped before it
	// is reported alive: its sockets close a moment before its parent learns it died.
	exitGrace = 2 * time.Second
)

// Spec is one testbed run.
type Spec struct {
	Nodes    int  // redis-server processes, one per Redlock node
	Clients  int  // client goroutines, each with its own connections
	OwnLocks bool // client j locks "lock<j+1>"; otherwise all lock "lock"
	// Duration is the wall-clock length of the measured phase; with Cycles, its upper
	// bound.
	Duration time.Duration
	// Cycles, when above zero, ends the run once the clients have completed that many
	// lock cycles between them (a few more may finish meanwhile): work bounded by count,
	// for tests that must not depend on the machine's speed.
	Cycles uint64
	// Lock holds the algorithm's knobs; Nodes is set from Spec.Nodes. The zero value means
	// redlock.DefaultConfig().
	Lock redlock.Config
}

// Result is what a testbed run measured.
type Result struct {
	Servers      int     `json:"servers"`
	RedisVersion string  `json:"redis_version"`
	Clients      int     `json:"clients"`
	Locks        string  `json:"locks"` // shared or own
	WallTimeS    float64 `json:"wall_time_s"`
	Cycles       uint64  `json:"cycles"`   // Lock then Unlock, both finished
	Attempts     uint64  `json:"attempts"` // acquire attempts, won or lost
	// Failed counts Locks that gave up after every try while every server answered: lost
	// to the other clients, not to a failing server.
	Failed uint64 `json:"failed"`
	// Errors counts commands a server did not answer because the connection was refused
	// or broke, and any other error: none in a healthy run.
	Errors uint64 `json:"errors"`
	// Timeouts counts commands not answered within the per-node timeout. The algorithm
	// takes them as lost replies; on loopback they mean a loaded machine or a hung server.
	Timeouts   uint64  `json:"timeouts"`
	CyclesPerS float64 `json:"cycles_per_s"`
	// ServerFailures lists, for each server that failed a command or died during the
	// run, what happened; empty in a healthy run.
	ServerFailures []ServerFailure `json:"server_failures,omitempty"`
}

// ServerFailure is what went wrong with one server during a run.
type ServerFailure struct {
	Node     int    `json:"node"` // 1-based, as in the run's messages
	Addr     string `json:"addr"`
	Errors   uint64 `json:"errors"`   // refused or broken connections
	Timeouts uint64 `json:"timeouts"` // commands not answered in time
	First    string `json:"first"`    // the first failure, e.g. "dial tcp ...: connection refused"
	// Exited says how the server process ended when it died during the run
	// ("signal: killed"); empty while it ran to the end.
	Exited string `json:"exited,omitempty"`
	// Hung is set when the server, alive but having timed out during the run, did not
	// answer a PING within the per-node timeout after it either: it stopped answering,
	// rather than answering late now and then on a loaded machine.
	Hung bool `json:"hung,omitempty"`
}

func (f ServerFailure) String() string {
	if f.Node == 0 {
		return fmt.Sprintf("%d other errors, the first: %s", f.Errors, f.First)
	}
	var parts []string
	if f.Exited != "" {
		parts = append(parts, "the redis-server process died ("+f.Exited+")")
	}
	if f.Hung {
		parts = append(parts, "the redis-server stopped answering (no reply to PING after the run either)")
	}
	if f.Errors+f.Timeouts > 0 {
		parts = append(parts, commandCounts(f.Errors, f.Timeouts)+", the first: "+f.First)
	}
	return fmt.Sprintf("%s (node %d): %s", f.Addr, f.Node, strings.Join(parts, "; "))
}

// commandCounts says how many commands failed and timed out, naming only what happened.
func commandCounts(errs, timeouts uint64) string {
	switch {
	case timeouts == 0:
		return fmt.Sprintf("%d commands failed", errs)
	case errs == 0:
		return fmt.Sprintf("%d commands timed out", timeouts)
	}
	return fmt.Sprintf("%d commands failed and %d timed out", errs, timeouts)
}

func (s Spec) validate() error {
	switch {
	case s.Nodes < 1 || s.Nodes > MaxNodes:
		return fmt.Errorf("testbed: nodes = %d, want [1, %d]", s.Nodes, MaxNodes)
	case s.Clients < 1 || s.Clients > MaxClients:
		return fmt.Errorf("testbed: clients = %d, want [1, %d]", s.Clients, MaxClients)
	case s.Duration <= 0 || s.Duration > MaxDuration:
		return fmt.Errorf("testbed: duration = %v, want (0s, %v]", s.Duration, MaxDuration)
	}
	return nil
}

// Run starts Spec.Nodes redis-server processes in a temporary directory, runs the
// workload for Spec.Duration, and stops and removes everything before it returns, also
// when ctx is cancelled (the run then returns ctx's error). Without redis-server on PATH
// it returns an error wrapping redisproc.ErrNotInstalled.
//
// A run in which a server failed a command or died, or that completed no cycle at all,
// measured something other than the workload: Run then returns the Result (for its
// counts) and an error naming each failing server and the cause.
func Run(ctx context.Context, spec Spec) (res *Result, err error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	path, err := redisproc.Path()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redlock-sim-testbed-")
	if err != nil {
		return nil, fmt.Errorf("testbed: %w", err)
	}
	defer os.RemoveAll(dir)
	servers, err := startServers(dir, spec.Nodes)
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	res, err = measure(ctx, spec, servers)
	if res != nil {
		res.RedisVersion = redisproc.Version(path)
	}
	return res, err
}

func startServers(dir string, n int) ([]*redisproc.Server, error) {
	var servers []*redisproc.Server
	for i := range n {
		d := filepath.Join(dir, "node"+strconv.Itoa(i+1))
		if err := os.Mkdir(d, 0o755); err != nil {
			return servers, fmt.Errorf("testbed: %w", err)
		}
		s, err := redisproc.Start(d)
		if err != nil {
			return servers, fmt.Errorf("testbed: node %d: %w", i+1, err)
		}
		servers = append(servers, s)
	}
	return servers, nil
}

// measure runs the workload against servers, which the caller started and stops, and
// judges the run: which servers failed or died during it.
func measure(ctx context.Context, spec Spec, servers []*redisproc.Server) (*Result, error) {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr()
	}
	res, failures, err := drive(ctx, spec, addrs)
	if err != nil {
		return nil, err
	}
	for i, s := range servers {
		wait := time.Duration(0)
		if failures[i].Errors > 0 {
			wait = exitGrace
		}
		if exited, how := s.ExitedWithin(wait); exited {
			failures[i].Exited = how
		} else if failures[i].Timeouts > 0 {
			failures[i].Hung = !answers(ctx, s.Addr(), spec.lockConfig().NodeTimeout())
		}
	}
	for _, f := range failures {
		if f.Exited != "" || f.Hung || f.Errors+f.Timeouts > 0 {
			res.ServerFailures = append(res.ServerFailures, f)
		}
	}
	return res, judge(res, spec)
}

// judge returns the error of a run that did not measure the healthy workload: a server
// that refused, broke a connection or died, another error, or no complete cycle.
func judge(r *Result, spec Spec) error {
	var b strings.Builder
	died, hung := 0, 0
	for _, f := range r.ServerFailures {
		if f.Exited != "" {
			died++
		}
		if f.Hung {
			hung++
		}
	}
	switch {
	case r.Errors > 0 || died > 0 || hung > 0:
		b.WriteString("testbed: the redis-servers stopped answering")
		if r.Errors+r.Timeouts > 0 {
			b.WriteString(": " + commandCounts(r.Errors, r.Timeouts))
		}
		if died > 0 {
			fmt.Fprintf(&b, ", %d of %d server processes died", died, r.Servers)
		}
		if hung > 0 {
			fmt.Fprintf(&b, ", %d of %d hung", hung, r.Servers)
		}
	case r.Cycles == 0:
		fmt.Fprintf(&b, "testbed: no lock cycle completed in %.1f s", r.WallTimeS)
		if r.Timeouts > 0 {
			fmt.Fprintf(&b, ": %d commands timed out", r.Timeouts)
		}
	default:
		return nil
	}
	for _, f := range r.ServerFailures {
		b.WriteString("\n  " + f.String())
	}
	return errors.New(b.String())
}

// lockConfig returns the algorithm's knobs the clients run with.
func (s Spec) lockConfig() redlock.Config {
	cfg := s.Lock
	if cfg == (redlock.Config{}) {
		cfg = redlock.DefaultConfig()
	}
	cfg.Nodes = s.Nodes
	return cfg
}

// answers reports whether the server at addr answers PING within timeout.
func answers(ctx context.Context, addr string, timeout time.Duration) bool {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout})
	defer rdb.Close()
	return rdb.Ping(ctx).Err() == nil
}

// counts is one client's tally, kept by its goroutine alone.
type counts struct {
	cycles, attempts, failed uint64
}

// failureLog collects the failures of every client's commands. The driver reports them
// from its command goroutines, hence the lock.
type failureLog struct {
	mu     sync.Mutex
	nodes  []ServerFailure
	other  uint64 // errors not tied to a server
	first  error  // the first of those
	frozen bool   // the run is over: late reports from commands still in flight are dropped
	stop   context.CancelFunc
}

func (l *failureLog) node(ne *redisdriver.NodeError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.frozen {
		return
	}
	f := &l.nodes[ne.Node]
	if f.Errors+f.Timeouts == 0 {
		f.First = ne.Err.Error()
	}
	if ne.Timeout() {
		f.Timeouts++
		return
	}
	f.Errors++
	l.checkLimit()
}

func (l *failureLog) otherErr(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.frozen {
		return
	}
	l.other++
	if l.first == nil {
		l.first = err
	}
	l.checkLimit()
}

func (l *failureLog) checkLimit() {
	n := l.other
	for _, f := range l.nodes {
		n += f.Errors
	}
	if n >= maxErrors {
		l.stop()
	}
}

// drive runs the clients against addrs until the duration is over, the cycles are done,
// too many commands failed, or ctx is done.
func drive(ctx context.Context, spec Spec, addrs []string) (*Result, []ServerFailure, error) {
	cfg := spec.lockConfig()
	log := &failureLog{nodes: make([]ServerFailure, len(addrs))}
	for i, a := range addrs {
		log.nodes[i].Node, log.nodes[i].Addr = i+1, a
	}
	clients := make([]*redisdriver.Client, spec.Clients)
	for j := range clients {
		c, err := redisdriver.New(addrs, redisdriver.Options{Config: cfg, OnNodeError: log.node})
		if err != nil {
			return nil, nil, fmt.Errorf("testbed: %w", err)
		}
		defer c.Close()
		clients[j] = c
	}
	tallies := make([]counts, spec.Clients)
	var done atomic.Uint64 // cycles of all clients, for Spec.Cycles
	var wg sync.WaitGroup
	start := time.Now()
	// The deadline counts from start, so that a run that ends with it lasted Duration.
	runCtx, cancel := context.WithTimeout(ctx, spec.Duration)
	defer cancel()
	log.mu.Lock()
	log.stop = cancel
	log.mu.Unlock()
	for j, c := range clients {
		cl := &client{c: c, resource: "lock", log: log, done: &done, limit: spec.Cycles, stop: cancel, t: &tallies[j]}
		if spec.OwnLocks {
			cl.resource = "lock" + strconv.Itoa(j+1)
		}
		wg.Go(func() { cl.loop(runCtx) })
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	log.mu.Lock()
	log.frozen = true
	failures, other, first := slices.Clone(log.nodes), log.other, log.first
	log.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	r := &Result{Servers: spec.Nodes, Clients: spec.Clients, Locks: "shared", WallTimeS: wall, Errors: other}
	if spec.OwnLocks {
		r.Locks = "own"
	}
	for _, t := range tallies {
		r.Cycles += t.cycles
		r.Attempts += t.attempts
		r.Failed += t.failed
	}
	for _, f := range failures {
		r.Errors += f.Errors
		r.Timeouts += f.Timeouts
	}
	if other > 0 {
		// Not tied to one server, but reported with them so that the message shows it.
		failures = append(failures, ServerFailure{Addr: "other", Errors: other, First: first.Error()})
	}
	if wall > 0 {
		r.CyclesPerS = float64(r.Cycles) / wall
	}
	return r, failures, nil
}

// client is one client goroutine's state.
type client struct {
	c        *redisdriver.Client
	resource string
	log      *failureLog
	done     *atomic.Uint64
	limit    uint64
	stop     context.CancelFunc
	t        *counts
}

// loop acquires, releases at once, and again, until ctx ends. A Lock cut short by ctx
// releases what it took before returning; an Unlock is bounded by the per-node timeout.
// A Lock or Unlock that failed because servers did not answer is not a lost lock: the
// driver reported those commands to the failure log already.
func (cl *client) loop(ctx context.Context) {
	for ctx.Err() == nil {
		lease, err := cl.c.Lock(ctx, cl.resource)
		var oe *redisdriver.OutcomeError
		switch {
		case err == nil:
			cl.t.attempts += uint64(lease.Attempts())
			err := cl.c.Unlock(context.WithoutCancel(ctx), lease)
			if err != nil {
				cl.unexpected(err)
				continue
			}
			cl.t.cycles++
			if cl.limit > 0 && cl.done.Add(1) >= cl.limit {
				cl.stop()
			}
		case errors.As(err, &oe):
			cl.t.attempts += uint64(oe.Outcome.Attempt)
			if len(oe.NodeErrors) == 0 {
				cl.t.failed++
			}
		case ctx.Err() != nil:
			return
		default:
			cl.unexpected(err)
		}
	}
}

// unexpected logs an error that the driver has not reported as a node's failure.
func (cl *client) unexpected(err error) {
	var oe *redisdriver.OutcomeError
	if errors.As(err, &oe) && len(oe.NodeErrors) > 0 {
		return // an Unlock that too few servers answered: their failures are logged
	}
	cl.log.otherErr(err)
}
