package experiments

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Limits of a benchmark run, beyond those of the knobs it sets.
const (
	// MaxBenchDuration bounds the simulated length of a benchmark: a day of the standard
	// workload is about a hundred million kernel events, minutes of machine time.
	MaxBenchDuration = 24 * time.Hour
	// benchStep is how often (in simulated time) the loop checks ctx and samples the heap.
	benchStep = time.Second
)

// BenchSpec is the standard speed workload of `redlock-sim bench`: N=5 nodes, Clients
// clients, TTL 10s, hold 5ms, think 1ms, latency uniform 0.2–0.8 ms, no faults, and
// otherwise the default knobs (retry_delay 200ms ± 100ms, FIFO links, ideal clocks).
//
// By default every client contends for one lock: the complete lock cycles then come one
// holder at a time, and the losers' failed attempts and clean-ups are part of the cost, as
// in the Redlock page's setting. With OwnLocks each client locks a resource of its own,
// nobody contends, and a simulated second holds about eight times as many cycles.
type BenchSpec struct {
	Duration time.Duration // simulated run length
	Clients  int
	ZeroHold bool // hold 0 and think 0: the variant compared with the real Redis testbed
	OwnLocks bool // each client locks its own resource instead of all sharing one
	Seed     uint64
	// Client is the client profile the workload runs with ("": Redlock as DefaultConfig
	// has it, the standard bench); curator runs it on a 5-server ZooKeeper ensemble.
	Client string
}

// DefaultBenchSpec returns the standard bench workload (docs/BENCHMARKS.md): one simulated hour of ten clients
// sharing one lock, seed 1.
func DefaultBenchSpec() BenchSpec {
	return BenchSpec{Duration: time.Hour, Clients: 10, Seed: 1}
}

// Validate checks the spec's own limits; the knobs it sets are checked by Config.Set.
func (b BenchSpec) Validate() error {
	switch {
	case b.Duration <= 0 || b.Duration > MaxBenchDuration:
		return sim.BadParam("duration", b.Duration, fmt.Sprintf("(0s, %v]", MaxBenchDuration))
	case b.Clients < 1 || b.Clients > knobs.MaxClients:
		return sim.BadParam("clients", b.Clients, fmt.Sprintf("[1, %d]", knobs.MaxClients))
	}
	if b.Client != "" {
		if _, err := knobs.LookupProfile(b.Client); err != nil {
			return err
		}
	}
	return nil
}

// Workload names the workload: "standard" or "zero-hold".
func (b BenchSpec) Workload() string {
	if b.ZeroHold {
		return "zero-hold"
	}
	return "standard"
}

// Locks says how the clients use locks: "shared" (one lock) or "own" (one each).
func (b BenchSpec) Locks() string {
	if b.OwnLocks {
		return "own"
	}
	return "shared"
}

// Knobs returns the workload as knob settings on top of DefaultConfig.
func (b BenchSpec) Knobs() []knobs.KV {
	hold, think := "5ms", "1ms"
	if b.ZeroHold {
		hold, think = "0s", "0s"
	}
	resources := 1
	if b.OwnLocks {
		resources = b.Clients
	}
	var kv []knobs.KV
	if b.Client != "" {
		kv = append(kv, knobs.KV{Name: "client", Value: b.Client})
	}
	return append(kv, []knobs.KV{
		{Name: "duration", Value: b.Duration.String()},
		{Name: "nodes", Value: "5"},
		{Name: "clients", Value: strconv.Itoa(b.Clients)},
		{Name: "resources", Value: strconv.Itoa(resources)},
		{Name: "ttl", Value: "10s"},
		{Name: "hold", Value: hold},
		{Name: "think", Value: think},
		{Name: "latency", Value: "uniform(200µs,800µs)"},
	}...)
}

// BenchResult is what one benchmark run measured. Counts are exact and replay with the
// seed (the trace hash says so); wall time, the rates and the heap are the machine's.
type BenchResult struct {
	Workload  string   `json:"workload"`         // standard or zero-hold
	Locks     string   `json:"locks"`            // shared (one lock) or own (one per client)
	Client    string   `json:"client,omitempty"` // the client profile, when not the standard Redlock
	Clients   int      `json:"clients"`
	Seed      uint64   `json:"seed"`
	Config    KnobList `json:"config"`
	TraceHash string   `json:"trace_hash"`
	Safe      bool     `json:"safe"`
	// Safety holds the oracle's counts. With no faults the one way the bench workloads go
	// unsafe is a stale write: a client sends its last storage write and releases at once,
	// and now and then the write lands after the next holder acquired (the 4 h standard run
	// has one, the 1 h zero-hold run 17).
	Safety     Safety `json:"safety"`
	GOMAXPROCS int    `json:"gomaxprocs"`

	SimTimeS  float64 `json:"sim_time_s"`
	WallTimeS float64 `json:"wall_time_s"`
	// Cycles counts complete lock cycles: acquired, worked, and released (the release
	// round finished).
	Cycles   uint64 `json:"cycles"`
	Attempts int64  `json:"attempts"` // acquire attempts, won or lost
	Acquired int64  `json:"acquired"`
	Events   uint64 `json:"events"` // kernel events run

	TimeCompression float64 `json:"time_compression"` // simulated seconds per wall second
	CyclesPerWallS  float64 `json:"cycles_per_wall_s"`
	EventsPerWallS  float64 `json:"events_per_wall_s"`
	// PeakHeapBytes is the largest heap seen (runtime/metrics
	// /memory/classes/heap/objects:bytes: live objects and garbage not yet swept), sampled
	// every simulated second.
	PeakHeapBytes uint64 `json:"peak_heap_bytes"`
}

// BenchOptions controls what a benchmark run does besides running.
type BenchOptions struct {
	// OnStart, when set, runs once the world is built, just before the measured run
	// starts (the CLI starts its CPU profile there); OnEnd runs as soon as it ends.
	OnStart, OnEnd func()
}

// RunBench builds the benchmark world and runs it, measuring wall time and the peak heap.
// World assembly is not measured. ctx is checked every simulated second.
func RunBench(ctx context.Context, spec BenchSpec, opts BenchOptions) (*BenchResult, error) {
	w, err := AssembleBench(spec)
	if err != nil {
		return nil, err
	}
	runtime.GC() // start the heap from the world's own size, not the caller's garbage
	heap := newHeapSampler()
	if opts.OnStart != nil {
		opts.OnStart()
	}
	start := time.Now() // determinism:allow measures wall time only; nothing in the run reads it
	end := sim.Time(spec.Duration)
	for t := sim.Time(0); t < end; {
		t = min(end, t.Add(benchStep))
		if err := w.Sim.RunUntil(t); err != nil {
			return nil, fmt.Errorf("bench %s seed %d at %v: %w", spec.Workload(), spec.Seed, w.Sim.Now(), err)
		}
		heap.sample()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	wall := time.Since(start).Seconds() // determinism:allow
	if opts.OnEnd != nil {
		opts.OnEnd()
	}
	w.Oracle.Finish(end)
	rec := record(w, "bench-"+spec.Workload())
	res := &BenchResult{
		Workload: spec.Workload(), Locks: spec.Locks(), Client: spec.Client, Clients: spec.Clients, Seed: spec.Seed,
		Config: rec.Config, TraceHash: rec.TraceHash, Safe: rec.Safety.Safe(), Safety: rec.Safety,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		SimTimeS:   spec.Duration.Seconds(), WallTimeS: wall,
		Attempts: rec.Liveness.Attempts, Acquired: rec.Liveness.Acquired, Events: rec.Events,
		PeakHeapBytes: heap.peak,
	}
	for _, c := range w.Clients {
		res.Cycles += c.Stats().Cycles
	}
	if wall > 0 {
		res.TimeCompression = res.SimTimeS / wall
		res.CyclesPerWallS = float64(res.Cycles) / wall
		res.EventsPerWallS = float64(res.Events) / wall
	}
	return res, nil
}

// AssembleBench plans and builds the benchmark world without running it. With OwnLocks,
// client j locks resource j only (Config.Resources alone would send every client round
// all the resources, and they would still meet).
func AssembleBench(spec BenchSpec) (*world.World, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	cfg := knobs.DefaultConfig()
	if err := cfg.Apply(spec.Knobs()); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	w, err := world.Plan(cfg, spec.Seed)
	if err != nil {
		return nil, err
	}
	if spec.OwnLocks {
		for j := range w.ClientCfgs {
			w.ClientCfgs[j].Resources = []string{w.Resources[j]}
		}
	}
	return w, w.Build()
}

// heapSampler keeps the largest heap size read from runtime/metrics, which reads without
// stopping the world (unlike runtime.ReadMemStats).
type heapSampler struct {
	s    []metrics.Sample
	peak uint64
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func newHeapSampler() *heapSampler {
	h := &heapSampler{s: []metrics.Sample{{Name: heapMetric}}}
	h.sample()
	return h
}

func (h *heapSampler) sample() {
	metrics.Read(h.s)
	if h.s[0].Value.Kind() == metrics.KindUint64 {
		h.peak = max(h.peak, h.s[0].Value.Uint64())
	}
}
