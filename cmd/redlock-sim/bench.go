package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/testbed"
	"github.com/redlock-sim/redlock-sim/internal/redisproc"
	"github.com/redlock-sim/redlock-sim/redlock"
)

// The speed targets, printed next to the figures they judge.
const (
	targetCompression = 2000.0
	targetCycles      = 300000.0
	targetHeapMiB     = 64.0
	targetRatio       = 50.0
)

// benchFlags are the flags of `redlock-sim bench`.
type benchFlags struct {
	spec       experiments.BenchSpec
	procs      int
	real       bool
	realFor    time.Duration
	asJSON     bool
	cpuprofile string
}

// runBench is `redlock-sim bench`: the standard workload in the simulator, or with --real
// the zero-hold workload on real redis-server processes and in the simulator, side by side.
func runBench(args []string, stdout, stderr io.Writer) error {
	f, err := parseBench(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !f.real {
		res, err := benchSim(ctx, f)
		if err != nil {
			return err
		}
		if f.asJSON {
			return writeJSON(stdout, res)
		}
		return writeBench(stdout, res)
	}
	return benchReal(ctx, f, stdout, stderr)
}

func parseBench(args []string, stderr io.Writer) (*benchFlags, error) {
	f := &benchFlags{spec: experiments.DefaultBenchSpec()}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&f.spec.Duration, "duration", f.spec.Duration, "simulated time to run (cost should grow linearly with it)")
	fs.IntVar(&f.spec.Clients, "clients", f.spec.Clients, "client processes (cost should grow linearly with them)")
	fs.BoolVar(&f.spec.OwnLocks, "own-locks", false, "each client locks a resource of its own (default: all contend for one lock)")
	fs.BoolVar(&f.spec.ZeroHold, "zero-hold", false, "hold 0 and think 0 (the workload --real uses)")
	fs.Uint64Var(&f.spec.Seed, "seed", f.spec.Seed, "the run seed")
	fs.IntVar(&f.procs, "gomaxprocs", 1, "GOMAXPROCS while the simulator runs (the targets are for one core)")
	fs.BoolVar(&f.real, "real", false, "also run the zero-hold workload on 5 real redis-server processes and compare")
	fs.DurationVar(&f.realFor, "real-duration", 10*time.Second, "wall-clock length of the real-Redis phase of --real")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the simulator run to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redlock-sim bench [--duration 1h] [--clients 10] [--own-locks] [--real] [--json] [--cpuprofile FILE]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: bench takes no arguments, got %q", errUsage, fs.Args())
	}
	if f.real {
		f.spec.ZeroHold = true
	}
	if err := f.spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: --%v", errUsage, err)
	}
	switch {
	case f.procs < 1 || f.procs > 1024:
		return nil, fmt.Errorf("%w: --gomaxprocs %d: want [1, 1024]", errUsage, f.procs)
	case f.realFor <= 0 || f.realFor > testbed.MaxDuration:
		return nil, fmt.Errorf("%w: --real-duration %v: want (0s, %v]", errUsage, f.realFor, testbed.MaxDuration)
	}
	return f, nil
}

// benchSim runs the simulator phase under the requested GOMAXPROCS, with the CPU profile
// around the measured run only.
func benchSim(ctx context.Context, f *benchFlags) (*experiments.BenchResult, error) {
	var opts experiments.BenchOptions
	var prof *os.File
	if f.cpuprofile != "" {
		var err error
		if prof, err = os.Create(f.cpuprofile); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		defer prof.Close()
		var perr error
		opts.OnStart = func() { perr = pprof.StartCPUProfile(prof) }
		opts.OnEnd = func() {
			if perr == nil {
				pprof.StopCPUProfile()
			}
		}
		defer func() {
			if perr != nil {
				fmt.Fprintln(os.Stderr, "redlock-sim: --cpuprofile:", perr)
			}
		}()
	}
	old := runtime.GOMAXPROCS(f.procs)
	defer runtime.GOMAXPROCS(old)
	res, err := experiments.RunBench(ctx, f.spec, opts)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, errors.New("bench: interrupted")
		}
		return nil, userError(err)
	}
	return res, nil
}

// realResult is the JSON of `bench --real`.
type realResult struct {
	Real  *testbed.Result          `json:"real"`
	Sim   *experiments.BenchResult `json:"sim"`
	Ratio float64                  `json:"ratio"` // simulator cycles per wall second / real cycles per second
}

// benchReal runs the real-Redis phase, then the simulator phase. The servers are stopped
// by testbed.Run before it returns, also on Ctrl-C (ctx is cancelled by the signal).
func benchReal(ctx context.Context, f *benchFlags, stdout, stderr io.Writer) error {
	if _, err := redisproc.Path(); err != nil {
		return fmt.Errorf("bench --real: %w", err)
	}
	lock := redlock.DefaultConfig()
	lock.TTL = 10 * time.Second
	if !f.asJSON {
		fmt.Fprintf(stderr, "bench: real phase, %v on 5 redis-server processes...\n", f.realFor)
	}
	real, err := testbed.Run(ctx, testbed.Spec{Nodes: 5, Clients: f.spec.Clients, OwnLocks: f.spec.OwnLocks,
		Duration: f.realFor, Lock: lock})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("bench --real: interrupted; the servers are stopped")
		}
		return fmt.Errorf("bench --real: %w", err)
	}
	if !f.asJSON {
		fmt.Fprintf(stderr, "bench: simulator phase, %v simulated...\n", f.spec.Duration)
	}
	sim, err := benchSim(ctx, f)
	if err != nil {
		return err
	}
	out := realResult{Real: real, Sim: sim}
	if real.CyclesPerS > 0 {
		out.Ratio = sim.CyclesPerWallS / real.CyclesPerS
	}
	if f.asJSON {
		return writeJSON(stdout, out)
	}
	return writeReal(stdout, &out)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// describeWorkload says in one line what ran.
func describeWorkload(r *experiments.BenchResult) string {
	locks := "sharing one lock"
	if r.Locks == "own" {
		locks = "each with its own lock"
	}
	work := "hold 5ms, think 1ms"
	if r.Workload == "zero-hold" {
		work = "hold 0, think 0"
	}
	return fmt.Sprintf("%s workload: N=5 nodes, %d clients %s, ttl 10s, %s, latency uniform(200µs,800µs), no faults, seed %d",
		r.Workload, r.Clients, locks, work, r.Seed)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func writeBench(w io.Writer, r *experiments.BenchResult) error {
	var b strings.Builder
	fmt.Fprintln(&b, describeWorkload(r))
	fmt.Fprintf(&b, "simulated        %v in %.3f s wall, GOMAXPROCS=%d\n", time.Duration(r.SimTimeS*float64(time.Second)), r.WallTimeS, r.GOMAXPROCS)
	fmt.Fprintf(&b, "cycles           %d complete (acquired, then released); %d attempts, %d acquired\n", r.Cycles, r.Attempts, r.Acquired)
	fmt.Fprintf(&b, "events           %d (%.1f per cycle)\n", r.Events, float64(r.Events)/max(float64(r.Cycles), 1))
	fmt.Fprintf(&b, "time compression %.0f× simulated s per wall s   (target ≥ %.0f×: %s)\n",
		r.TimeCompression, targetCompression, verdict(r.TimeCompression >= targetCompression))
	fmt.Fprintf(&b, "cycles / wall s  %.0f   (target ≥ %.0f: %s)\n",
		r.CyclesPerWallS, targetCycles, verdict(r.CyclesPerWallS >= targetCycles))
	fmt.Fprintf(&b, "events / wall s  %.0f\n", r.EventsPerWallS)
	heap := float64(r.PeakHeapBytes) / (1 << 20)
	fmt.Fprintf(&b, "peak heap        %.1f MiB   (target < %.0f MiB: %s)\n", heap, targetHeapMiB, verdict(heap < targetHeapMiB))
	fmt.Fprintf(&b, "run              %v; trace %s\n", r.Safety, r.TraceHash)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeReal(w io.Writer, r *realResult) error {
	var b strings.Builder
	fmt.Fprintln(&b, describeWorkload(r.Sim))
	re := r.Real
	fmt.Fprintf(&b, "real Redis       %d redis-server %s on 127.0.0.1, %.2f s: %d cycles, %.0f cycles/s (%d attempts, %d acquires failed)\n",
		re.Servers, re.RedisVersion, re.WallTimeS, re.Cycles, re.CyclesPerS, re.Attempts, re.Failed)
	s := r.Sim
	fmt.Fprintf(&b, "simulator        %v simulated in %.3f s wall (GOMAXPROCS=%d): %d cycles, %.0f cycles per wall s\n",
		time.Duration(s.SimTimeS*float64(time.Second)), s.WallTimeS, s.GOMAXPROCS, s.Cycles, s.CyclesPerWallS)
	fmt.Fprintf(&b, "ratio            %.0f× the real testbed's cycles per second   (target ≥ %.0f×: %s)\n",
		r.Ratio, targetRatio, verdict(r.Ratio >= targetRatio))
	_, err := io.WriteString(w, b.String())
	return err
}
