package viewer

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/world"
)

// Options are the viewer's limits and the address it answers for. A zero field takes its
// default (DefaultOptions); the limits bound what one request, and all of them together,
// may cost the machine, whoever sends them.
type Options struct {
	// Addr is the address the server listens on, HOST:PORT. A request's Host header must
	// carry its port; its host may be a loopback name (127.0.0.1, localhost, ::1), Addr's
	// own host, or one of Hosts. When empty, any port is accepted (a server whose
	// address is not known in advance, as in tests).
	Addr string
	// Hosts are more names or addresses a Host header may use: the host given to
	// `serve --addr`, or every address of the machine when it listens on all of them.
	Hosts []string

	// MaxRuns bounds the simulations running at once.
	MaxRuns int
	// MaxQueue bounds the requests waiting for one of the MaxRuns; past them a request is
	// answered 503 with Retry-After at once.
	MaxQueue int
	// RunDeadline bounds one run, and separately a request's wait in the queue: a run cut
	// at it is answered 504, a wait cut at it 503.
	RunDeadline time.Duration
	// MaxClientNodeSeconds bounds the work a request may ask for, refused up front:
	// simulated seconds × clients × redis-servers, since every client talks to every node.
	MaxClientNodeSeconds float64
	// MaxReplaySteps bounds the steps (narrated events) a response carries.
	MaxReplaySteps int
	// MaxReplayStateCells bounds the node and client states a response carries over all
	// its steps: a world of many actors gets fewer steps.
	MaxReplayStateCells int
	// MaxTimelineItems bounds the spans and marks of a response's diagram.
	MaxTimelineItems int
	// ReadTimeout bounds reading a whole request, its body included (a stalled upload).
	ReadTimeout time.Duration
}

// DefaultOptions are the limits `serve` runs with unless told otherwise. The stories a
// class steps through have at most a few thousand steps and take milliseconds; the
// baseline's minute of contention has about 31,000 steps, of which a response carries
// the first 10,000 (about 12 MB of JSON, 1 MB gzipped).
func DefaultOptions() Options {
	return Options{
		MaxRuns:              2,
		MaxQueue:             4,
		RunDeadline:          30 * time.Second,
		MaxClientNodeSeconds: 200_000,
		MaxReplaySteps:       10_000,
		MaxReplayStateCells:  100_000,
		MaxTimelineItems:     50_000,
		ReadTimeout:          30 * time.Second,
	}
}

// withDefaults fills o's zero fields from DefaultOptions and refuses negative ones.
func (o Options) withDefaults() (Options, error) {
	d := DefaultOptions()
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxRuns", &o.MaxRuns, d.MaxRuns}, {"MaxQueue", &o.MaxQueue, d.MaxQueue},
		{"MaxReplaySteps", &o.MaxReplaySteps, d.MaxReplaySteps},
		{"MaxReplayStateCells", &o.MaxReplayStateCells, d.MaxReplayStateCells},
		{"MaxTimelineItems", &o.MaxTimelineItems, d.MaxTimelineItems},
	} {
		if *f.v < 0 {
			return o, fmt.Errorf("viewer options: %s = %d: want 0 (the default, %d) or more", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	for _, f := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"RunDeadline", &o.RunDeadline, d.RunDeadline}, {"ReadTimeout", &o.ReadTimeout, d.ReadTimeout}} {
		if *f.v < 0 {
			return o, fmt.Errorf("viewer options: %s = %v: want 0 (the default, %v) or more", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.MaxClientNodeSeconds < 0 || math.IsNaN(o.MaxClientNodeSeconds) {
		return o, fmt.Errorf("viewer options: MaxClientNodeSeconds = %v: want 0 (the default, %v) or more",
			o.MaxClientNodeSeconds, d.MaxClientNodeSeconds)
	}
	if o.MaxClientNodeSeconds == 0 {
		o.MaxClientNodeSeconds = d.MaxClientNodeSeconds
	}
	return o, nil
}

// Stats are the server's run counters, for tests and for a look at a busy server.
type Stats struct {
	Running     int // simulations running now
	Waiting     int // requests waiting for a slot now
	PeakRunning int // the most simulations that ever ran at once
	Busy        int // requests answered 503 because the server was busy
}

// limiter bounds the simulations running at once (slots) and the requests waiting for a
// slot (admitted holds one token per request running or waiting).
type limiter struct {
	slots    chan struct{}
	admitted chan struct{}
	wait     time.Duration
	running  atomic.Int64
	waiting  atomic.Int64
	peak     atomic.Int64
	busy     atomic.Int64
}

func newLimiter(o Options) *limiter {
	return &limiter{slots: make(chan struct{}, o.MaxRuns), admitted: make(chan struct{}, o.MaxRuns+o.MaxQueue),
		wait: o.RunDeadline}
}

// errBusy is a request that found every slot and the queue taken, or waited its whole
// RunDeadline in the queue: it is answered 503 with Retry-After.
type errBusy struct{ msg string }

func (e *errBusy) Error() string { return e.msg }

// acquire takes a slot, waiting in the queue while there is room in it; it returns the
// function that gives the slot back. It gives up when ctx is done (the client went away).
func (l *limiter) acquire(ctx context.Context) (release func(), err error) {
	select {
	case l.admitted <- struct{}{}:
	default:
		l.busy.Add(1)
		return nil, &errBusy{fmt.Sprintf("the server is running %d simulations and %d more are waiting: "+
			"try again in a few seconds (serve --max-runs sets how many run at once)", cap(l.slots), cap(l.admitted)-cap(l.slots))}
	}
	l.waiting.Add(1)
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	select {
	case l.slots <- struct{}{}:
		l.waiting.Add(-1)
	case <-timer.C:
		l.waiting.Add(-1)
		<-l.admitted
		l.busy.Add(1)
		return nil, &errBusy{fmt.Sprintf("the server stayed busy with other runs for %v: try again in a few seconds", l.wait)}
	case <-ctx.Done():
		l.waiting.Add(-1)
		<-l.admitted
		return nil, ctx.Err()
	}
	n := l.running.Add(1)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
	return func() {
		l.running.Add(-1)
		<-l.slots
		<-l.admitted
	}, nil
}

func (l *limiter) stats() Stats {
	return Stats{Running: int(l.running.Load()), Waiting: int(l.waiting.Load()),
		PeakRunning: int(l.peak.Load()), Busy: int(l.busy.Load())}
}

// checkWork refuses, before it runs, a world that asks for more than max client-node-seconds:
// the work of a run grows with its simulated time, its clients and its redis-servers,
// since every client sends every node its commands. The message is in the words of the
// knobs, as `run` says a limit, and names the way out: the command line has no such limit.
func checkWork(w *world.World, max float64) error {
	servers := 0
	for _, g := range w.Groups {
		servers += g.Len()
	}
	clients := len(w.Clients)
	work := w.Config.Duration.Seconds() * float64(clients) * float64(servers)
	if work <= max {
		return nil
	}
	nodes := fmt.Sprintf("nodes = %d", len(w.Groups))
	if servers != len(w.Groups) {
		nodes = fmt.Sprintf("nodes = %d and replicas = %s (%d redis-servers)", len(w.Groups), w.Config.Get("replicas"), servers)
	}
	return &userError{fmt.Errorf("duration = %s, clients = %d and %s make about %s client-node-seconds "+
		"(simulated seconds × clients × redis-servers: every client talks to every node), and serve simulates "+
		"at most %s in one run: shorten the duration or use fewer clients or nodes, or run it with "+
		"`redlock-sim run`, which has no such limit",
		w.Config.Get("duration"), clients, nodes, roundCount(work), roundCount(max))}
}

// roundCount prints a count without false precision: 86,400, 1.2 million, 2,280 billion.
func roundCount(f float64) string {
	switch {
	case f >= 1e9:
		return sig3(f/1e9) + " billion"
	case f >= 1e6:
		return sig3(f/1e6) + " million"
	}
	return grouped(int64(math.Ceil(f)))
}

// sig3 prints x ≥ 1 to three significant digits, or whole with thousands grouped.
func sig3(x float64) string {
	if x >= 1000 {
		return grouped(int64(math.Round(x)))
	}
	return fmt.Sprintf("%.3g", x)
}

// grouped prints n with its thousands separated by commas: 200,000.
func grouped(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
