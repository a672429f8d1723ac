// Package testbed runs the benchmark's zero-hold workload against real Redis: it starts
// redis-server processes on loopback (internal/redisproc), drives the redlock state
// machine against them through redlock/redisdriver from one goroutine per client, and
// counts complete lock cycles for a fixed wall-clock duration. `redlock-sim bench --real`
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
	"strconv"
	"sync"
	"time"

	"github.com/redlock-sim/redlock-sim/internal/redisproc"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/redisdriver"
)

// Limits of a testbed run.
const (
	MaxNodes    = redlock.MaxNodes
	MaxClients  = 64
	MaxDuration = time.Hour
	// maxErrors stops a run whose clients keep meeting errors other than a lost lock (a
	// server that died, a port that vanished): the figure would measure nothing.
	maxErrors = 100
)

// Spec is one testbed run.
type Spec struct {
	Nodes    int           // redis-server processes, one per Redlock node
	Clients  int           // client goroutines, each with its own connections
	OwnLocks bool          // client j locks "lock<j+1>"; otherwise all lock "lock"
	Duration time.Duration // wall-clock length of the measured phase
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
	Failed       uint64  `json:"failed"`   // Locks that gave up after every try
	Errors       uint64  `json:"errors"`   // other errors (none in a healthy run)
	CyclesPerS   float64 `json:"cycles_per_s"`
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
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr()
	}
	res, err = drive(ctx, spec, addrs)
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

// counts is one client's tally.
type counts struct {
	cycles, attempts, failed, errors uint64
	firstErr                         error
}

// drive runs the clients against addrs until the duration is over or ctx is done.
func drive(ctx context.Context, spec Spec, addrs []string) (*Result, error) {
	cfg := spec.Lock
	if cfg == (redlock.Config{}) {
		cfg = redlock.DefaultConfig()
	}
	cfg.Nodes = spec.Nodes
	clients := make([]*redisdriver.Client, spec.Clients)
	for j := range clients {
		c, err := redisdriver.New(addrs, redisdriver.Options{Config: cfg})
		if err != nil {
			return nil, fmt.Errorf("testbed: %w", err)
		}
		defer c.Close()
		clients[j] = c
	}
	runCtx, cancel := context.WithTimeout(ctx, spec.Duration)
	defer cancel()
	tallies := make([]counts, spec.Clients)
	var wg sync.WaitGroup
	start := time.Now()
	for j, c := range clients {
		res := "lock"
		if spec.OwnLocks {
			res = "lock" + strconv.Itoa(j+1)
		}
		wg.Go(func() { loop(runCtx, cancel, c, res, &tallies[j]) })
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &Result{Servers: spec.Nodes, Clients: spec.Clients, Locks: "shared", WallTimeS: wall}
	if spec.OwnLocks {
		r.Locks = "own"
	}
	var firstErr error
	for _, t := range tallies {
		r.Cycles += t.cycles
		r.Attempts += t.attempts
		r.Failed += t.failed
		r.Errors += t.errors
		if firstErr == nil {
			firstErr = t.firstErr
		}
	}
	if r.Errors >= maxErrors {
		return r, fmt.Errorf("testbed: %d errors talking to the servers, the first: %w", r.Errors, firstErr)
	}
	if wall > 0 {
		r.CyclesPerS = float64(r.Cycles) / wall
	}
	return r, nil
}

// loop is one client: acquire, release at once, again, until ctx ends. A Lock cut short
// by ctx releases what it took before returning; an Unlock is bounded by the per-node
// timeout.
func loop(ctx context.Context, stop context.CancelFunc, c *redisdriver.Client, resource string, t *counts) {
	for ctx.Err() == nil {
		lease, err := c.Lock(ctx, resource)
		var oe *redisdriver.OutcomeError
		switch {
		case err == nil:
			t.attempts += uint64(lease.Attempts())
			if err := c.Unlock(context.WithoutCancel(ctx), lease); err != nil {
				t.fail(err, stop)
				continue
			}
			t.cycles++
		case errors.As(err, &oe):
			t.attempts += uint64(oe.Outcome.Attempt)
			t.failed++
		case ctx.Err() != nil:
			return
		default:
			t.fail(err, stop)
		}
	}
}

func (t *counts) fail(err error, stop context.CancelFunc) {
	t.errors++
	if t.firstErr == nil {
		t.firstErr = err
	}
	if t.errors >= maxErrors {
		stop()
	}
}
