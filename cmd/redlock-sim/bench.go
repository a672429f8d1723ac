package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/testbed"
	"github.com/redlock-sim/redlock-sim/internal/redisproc"
	"github.com/redlock-sim/redlock-sim/redlock"
)

// The speed targets docs/BENCHMARKS.md holds the simulator to, printed next to the figures
// they judge so that a reader of the bench output sees at once which one fell short.
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
	runs       int
}

// maxBenchRuns bounds --runs: enough for a median that noise cannot move, few enough that
// a typo does not start an afternoon of runs.
const maxBenchRuns = 100

// benchReport is the simulator phase's result: the run with the median rate of cycles per
// wall second, and with --runs above one every run's rate, so that a noisy machine's
// spread is in plain sight. Every run has the same counts and trace hash; only the wall
// time, the rates and the heap are the machine's.
type benchReport struct {
	*experiments.BenchResult
	Runs               int       `json:"runs"`
	CyclesPerWallSRuns []float64 `json:"cycles_per_wall_s_runs,omitempty"` // in run order
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
	fs.StringVar(&f.spec.Client, "client", "", "run the workload with the client profile `NAME` (redlock-sim params --client NAME): curator measures Curator's mutex on a 5-server ZooKeeper ensemble (default: the standard Redlock bench)")
	fs.IntVar(&f.procs, "gomaxprocs", 1, "GOMAXPROCS while the simulator runs (the targets are for one core)")
	fs.BoolVar(&f.real, "real", false, "also run the zero-hold workload on 5 real redis-server processes and compare")
	fs.DurationVar(&f.realFor, "real-duration", 10*time.Second, "wall-clock length of the real-Redis phase of --real")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as one JSON object")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the simulator run (the first, with --runs) to `FILE`")
	fs.IntVar(&f.runs, "runs", 1, fmt.Sprintf("run the simulator phase this many times and report the median run, 1 to %d (wall time on a shared machine varies by a few percent)", maxBenchRuns))
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: bench takes no arguments, got %q", errUsage, fs.Args())
	}
	if f.real {
		if f.spec.Client != "" {
			return nil, fmt.Errorf("%w: --client %s with --real: the real testbed runs Redlock on redis-server processes only; drop one of them", errUsage, f.spec.Client)
		}
		f.spec.ZeroHold = true
	}
	if err := f.spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: --%v", errUsage, err)
	}
	switch {
	case f.procs < 1 || f.procs > 1024:
		return nil, fmt.Errorf("%w: --gomaxprocs %d: want [1, 1024]", errUsage, f.procs)
	case f.runs < 1 || f.runs > maxBenchRuns:
		return nil, fmt.Errorf("%w: --runs %d: want [1, %d]", errUsage, f.runs, maxBenchRuns)
	case f.realFor <= 0 || f.realFor > testbed.MaxDuration:
		return nil, fmt.Errorf("%w: --real-duration %v: want (0s, %v]", errUsage, f.realFor, testbed.MaxDuration)
	}
	return f, nil
}

// benchSim runs the simulator phase --runs times under the requested GOMAXPROCS and
// reports the median run (the lower of the middle two for an even count).
func benchSim(ctx context.Context, f *benchFlags) (*benchReport, error) {
	old := runtime.GOMAXPROCS(f.procs)
	defer runtime.GOMAXPROCS(old)
	runs := make([]*experiments.BenchResult, 0, f.runs)
	rep := &benchReport{Runs: f.runs}
	for i := range f.runs {
		profile := ""
		if i == 0 {
			profile = f.cpuprofile
		}
		res, err := benchOnce(ctx, f.spec, profile)
		if err != nil {
			return nil, err
		}
		if i > 0 && (res.TraceHash != runs[0].TraceHash || res.Cycles != runs[0].Cycles) {
			return nil, fmt.Errorf("bench: run %d traced %s (%d cycles), run 1 %s (%d cycles): the same seed must give the same run; this is a bug",
				i+1, res.TraceHash, res.Cycles, runs[0].TraceHash, runs[0].Cycles)
		}
		runs = append(runs, res)
		if f.runs > 1 {
			rep.CyclesPerWallSRuns = append(rep.CyclesPerWallSRuns, res.CyclesPerWallS)
		}
	}
	sorted := slices.SortedStableFunc(slices.Values(runs), func(a, b *experiments.BenchResult) int {
		return cmp.Compare(a.CyclesPerWallS, b.CyclesPerWallS)
	})
	rep.BenchResult = sorted[(len(sorted)-1)/2]
	return rep, nil
}

// benchOnce runs the workload once, with the CPU profile around the measured run only
// when profile names a file.
func benchOnce(ctx context.Context, spec experiments.BenchSpec, profile string) (*experiments.BenchResult, error) {
	var opts experiments.BenchOptions
	var prof *os.File
	if profile != "" {
		var err error
		if prof, err = os.Create(profile); err != nil {
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
	res, err := experiments.RunBench(ctx, spec, opts)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, errors.New("bench: interrupted")
		}
		return nil, userError(err)
	}
	return res, nil
}

// realResult is the JSON of `bench --real`. When the real phase fails (its servers
// stopped answering), Real holds its counts, Error says why, and there is no Sim or Ratio.
type realResult struct {
	Real  *testbed.Result `json:"real"`
	Sim   *benchReport    `json:"sim"`
	Ratio float64         `json:"ratio"` // simulator cycles per wall second / real cycles per second
	Error string          `json:"error,omitempty"`
}

// quietRedis drops go-redis's log lines: a server that stops answering would print one per
// refused dial, thousands in a run, while the real phase reports each server's failures
// once, in its error.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

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
	redis.SetLogger(quietRedis{})
	real, err := testbed.Run(ctx, testbed.Spec{Nodes: 5, Clients: f.spec.Clients, OwnLocks: f.spec.OwnLocks,
		Duration: f.realFor, Lock: lock})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("bench --real: interrupted; the servers are stopped")
		}
		err = fmt.Errorf("bench --real: the real phase failed, so there is nothing to compare: %w", err)
		if real != nil && f.asJSON {
			// The counts are the evidence: print them, then fail.
			if werr := writeJSON(stdout, realResult{Real: real, Error: err.Error()}); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return err
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
	lock := "N=5 nodes, %d clients %s, ttl 10s"
	if r.Client != "" {
		lock = "client " + r.Client + ", 5 servers, %d clients %s"
	}
	return fmt.Sprintf("%s workload: "+lock+", %s, latency uniform(200µs,800µs), no faults, seed %d",
		r.Workload, r.Clients, locks, work, r.Seed)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func writeBench(w io.Writer, rep *benchReport) error {
	var b strings.Builder
	r := rep.BenchResult
	fmt.Fprintln(&b, describeWorkload(r))
	fmt.Fprintf(&b, "simulated        %v in %.3f s wall, GOMAXPROCS=%d%s\n", time.Duration(r.SimTimeS*float64(time.Second)), r.WallTimeS, r.GOMAXPROCS, rep.median())
	fmt.Fprintf(&b, "cycles           %d complete (acquired, then released); %d attempts, %d acquired\n", r.Cycles, r.Attempts, r.Acquired)
	fmt.Fprintf(&b, "events           %d (%.1f per cycle)\n", r.Events, float64(r.Events)/max(float64(r.Cycles), 1))
	fmt.Fprintf(&b, "time compression %.0f× simulated s per wall s   (target ≥ %.0f×: %s)\n",
		r.TimeCompression, targetCompression, verdict(r.TimeCompression >= targetCompression))
	fmt.Fprintf(&b, "cycles / wall s  %.0f   (target ≥ %.0f: %s)\n",
		r.CyclesPerWallS, targetCycles, verdict(r.CyclesPerWallS >= targetCycles))
	if len(rep.CyclesPerWallSRuns) > 1 {
		fmt.Fprintf(&b, "                 runs: %.0f to %.0f, %d of %d at or above the target\n",
			slices.Min(rep.CyclesPerWallSRuns), slices.Max(rep.CyclesPerWallSRuns),
			countAtLeast(rep.CyclesPerWallSRuns, targetCycles), len(rep.CyclesPerWallSRuns))
	}
	fmt.Fprintf(&b, "events / wall s  %.0f\n", r.EventsPerWallS)
	heap := float64(r.PeakHeapBytes) / (1 << 20)
	fmt.Fprintf(&b, "peak heap        %.1f MiB   (target < %.0f MiB: %s)\n", heap, targetHeapMiB, verdict(heap < targetHeapMiB))
	fmt.Fprintf(&b, "run              %v; trace %s\n", r.Safety, r.TraceHash)
	_, err := io.WriteString(w, b.String())
	return err
}

// median says which run the figures are from when there were several.
func (rep *benchReport) median() string {
	if rep.Runs < 2 {
		return ""
	}
	return fmt.Sprintf(", the median of %d runs", rep.Runs)
}

func countAtLeast(xs []float64, target float64) int {
	n := 0
	for _, x := range xs {
		if x >= target {
			n++
		}
	}
	return n
}

func writeReal(w io.Writer, r *realResult) error {
	var b strings.Builder
	fmt.Fprintln(&b, describeWorkload(r.Sim.BenchResult))
	re := r.Real
	fmt.Fprintf(&b, "real Redis       %d redis-server %s on 127.0.0.1, %.2f s: %d cycles, %.0f cycles/s (%d attempts, %d acquires lost to other clients)\n",
		re.Servers, re.RedisVersion, re.WallTimeS, re.Cycles, re.CyclesPerS, re.Attempts, re.Failed)
	if re.Timeouts > 0 {
		fmt.Fprintf(&b, "                 %d commands got no answer within the per-node timeout (a loaded machine?); the real rate is understated\n", re.Timeouts)
	}
	s := r.Sim
	fmt.Fprintf(&b, "simulator        %v simulated in %.3f s wall (GOMAXPROCS=%d%s): %d cycles, %.0f cycles per wall s\n",
		time.Duration(s.SimTimeS*float64(time.Second)), s.WallTimeS, s.GOMAXPROCS, s.median(), s.Cycles, s.CyclesPerWallS)
	fmt.Fprintf(&b, "ratio            %.0f× the real testbed's cycles per second   (target ≥ %.0f×: %s)\n",
		r.Ratio, targetRatio, verdict(r.Ratio >= targetRatio))
	_, err := io.WriteString(w, b.String())
	return err
}
