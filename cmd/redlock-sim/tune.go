package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/experiments/tune"
	"github.com/redlock-sim/redlock-sim/internal/htmlpage"
	"github.com/redlock-sim/redlock-sim/internal/shell"
	"github.com/redlock-sim/redlock-sim/plots"
)

func runTune(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runTuneCtx(ctx, args, stdout, stderr)
}

// rateFlag is a rate of events a second that takes the forms people write (0.1, 5/min,
// 1/month: tune.ParseRate) and refuses NaN and infinities.
type rateFlag struct{ v *float64 }

func (r rateFlag) String() string {
	if r.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*r.v, 'g', -1, 64)
}
func (r rateFlag) Type() string { return "rate" }
func (r rateFlag) Set(s string) error {
	v, err := tune.ParseRate(s)
	if err != nil {
		return err
	}
	*r.v = v
	return nil
}

// runTuneCtx is runTune under ctx, whose cancellation stands for the signal. It parses
// the flags into tune.Inputs, prints the recommendation, runs the confirmation
// (experiments/tune does all of the reasoning), and writes the report and its figures.
func runTuneCtx(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	in := tune.DefaultInputs()
	fs := flag.NewFlagSet("tune", flag.ContinueOnError)
	rate := func(v *float64, name, usage string) { fs.Var(rateFlag{v}, name, usage) }
	float := func(v *float64, name, usage string) { finiteFloatVar(fs, v, name, *v, usage) }
	// The environment.
	fs.IntVar(&in.Nodes, "nodes", in.Nodes, "the independent Redis masters `N`")
	fs.StringVar(&in.Persistence, "persistence", in.Persistence, "what a node keeps across a crash: `none|aof-everysec|aof-always`")
	fs.StringVar(&in.Latency, "latency", in.Latency, "one-way network delay by `PERCENTILES`, e.g. p50=1ms,p99=5ms (a ping's round trip is two of them)")
	float(&in.ClientDriftPPM, "client-drift-ppm", "the worst rate error of a client's clock, in `PPM` (parts per million: 2 % is 20000), either sign")
	float(&in.NodeDriftPPM, "node-drift-ppm", "the worst rate error of a node's clock, in `PPM` (parts per million: 2 % is 20000), either sign")
	fs.StringVar(&in.Pauses, "pauses", in.Pauses, "stop-the-world pauses (GC) of a client by `PERCENTILES`, e.g. p99=100ms,p99.9=500ms (none by default)")
	rate(&in.PauseRate, "pause-rate", "pauses per client, `RATE` (0.1 a second, 5/min), when --pauses is given")
	fs.StringVar(&in.Work, "work", in.Work, "how long a holder uses the resource, per hold, by `PERCENTILES`")
	fs.StringVar(&in.Think, "think", in.Think, "the load as each client's rest between a release and its next acquire, by `PERCENTILES` (instead of --acquisitions-per-second; neither: every client wants the lock again at once)")
	fs.IntVar(&in.Clients, "clients", in.Clients, "the clients contending for the lock, `K`")
	rate(&in.NodeCrashRate, "node-crash-rate", "power losses of each node, `RATE` (0.001 a second, 1/month)")
	fs.DurationVar(&in.RestartDelay, "restart-delay", in.RestartDelay, "how long a crashed node stays down, `DURATION`")
	rate(&in.ClientCrashRate, "client-crash-rate", "crashes of each client process, `RATE` (a dead holder keeps the lock until its ttl)")
	rate(&in.JumpRate, "node-clock-jump-rate", "forward wall-clock steps of each node, `RATE` (an NTP step, an operator's date)")
	fs.StringVar(&in.Jump, "node-clock-jump", in.Jump, "the size of each step, a `DURATION` or a distribution (redlock-sim params node_clock_jump)")
	rate(&in.StallRate, "node-stall-rate", "stalls of each master, `RATE` (SIGSTOP, a long fork, swapping: it keeps its connections and answers late)")
	fs.StringVar(&in.Stall, "node-stall", in.Stall, "how long each stall lasts, a `DURATION` or a distribution (redlock-sim params node_pause_len)")
	fs.StringVar(&in.Client, "client", in.Client, "the lock library, a client profile `NAME` (redlock-sim params --client NAME)")
	// The targets.
	float(&in.MaxViolationsPer10k, "max-violations-per-10k", "the largest acceptable rate of incidents of each violation kind (a pause that lets two others in is one), per 10,000 acquisitions, `RATE` (its 95% upper bound is held to it)")
	float(&in.MaxViolationsPerYear, "max-violations-per-year", "the same limit as incidents per year, `N`, at --acquisitions-per-second (0: use the rate per 10,000)")
	float(&in.MaxValidity, "max-validity-overlaps-per-10k", "the limit for two holders believing themselves valid at once, per 10,000, `RATE` (-1: as --max-violations-per-10k)")
	float(&in.MaxUsage, "max-usage-overlaps-per-10k", "the limit for two holders working at once, per 10,000, `RATE` (-1: as --max-violations-per-10k)")
	float(&in.MaxStale, "max-stale-writes-per-10k", "the limit for stale writes the resource accepts, per 10,000, `RATE` (-1: as --max-violations-per-10k)")
	float(&in.MinSuccess, "min-success", "the lowest acceptable share of acquires that succeed, `FRACTION` in (0, 1] (0: the default, 0.99)")
	fs.DurationVar(&in.MaxAcquireP99, "max-acquire-p99", 0, "the largest acceptable p99 time to acquire, retries included, `DURATION` (0: no target)")
	fs.DurationVar(&in.MaxUnavailability, "max-unavailability", 0, "the longest the lock may stay taken by a holder that crashed, `DURATION` (0: no target)")
	rate(&in.PerSecond, "acquisitions-per-second", "the load: your service's acquisitions of this lock, all clients together, `RATE` (50 a second, 3/min); the report also gives each violation rate per year at it (0: not given)")
	file := fs.String("file", "", "read the inputs from a YAML `FILE`: keys are these flags' names (dashes or underscores), values as on the command line; flags given override it")
	// The confirmation.
	fs.DurationVar(&in.Duration, "duration", in.Duration, "simulated time of each confirmation run, `DURATION`")
	fs.IntVar(&in.Seeds, "seeds", in.Seeds, "confirmation runs per ttl (per session_timeout with --client curator) in the first round, `N`")
	fs.IntVar(&in.MaxSeeds, "max-seeds", in.MaxSeeds, "add rounds of runs until every violation bound meets its target or this many runs per ttl, `N`, are spent")
	fs.Uint64Var(&in.Seed, "seed", in.Seed, "the confirmation sweep's seed `N`; the same seed gives the same report")
	workers := fs.Int("workers", runtime.NumCPU(), "run `K` confirmation runs in parallel; results do not depend on it")
	out := fs.StringP("out", "o", "tune-out", "output folder `DIR`: report.md and the confirmation sweep")
	overwrite := fs.Bool("overwrite", false, "replace a report already in the output folder")
	resume := fs.Bool("resume", false, "continue the tune in the output folder, stopped by Ctrl-C or a kill, with the same inputs; it ends as an uninterrupted tune would")
	quiet := fs.BoolP("quiet", "q", false, "no progress output")
	setUsage(fs, stderr, "Answers \"which ttl, drift_factor, retries and timeout, and what violation and availability rates should I expect?\" for the environment described, shows the arithmetic behind every value, and checks the answer by simulation.")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: tune takes no arguments, got %q", errUsage, fs.Args())
	}
	bad := func(err error) error { return fmt.Errorf("%w: %w", errUsage, err) }
	if *file != "" {
		if err := loadTuneFile(fs, *file); err != nil {
			return bad(err)
		}
	}
	in.RestartDelayGiven = fs.Changed("restart-delay")
	if *overwrite && *resume {
		return bad(errors.New("--overwrite and --resume: choose one (replace the tune in the folder, or continue it)"))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"client-drift-ppm", in.ClientDriftPPM}, {"node-drift-ppm", in.NodeDriftPPM}} {
		if f.v > 0 && f.v < 1 {
			fmt.Fprintf(stderr, "warning: --%s %g is in parts per million, a rate error of %.2g %%; if you meant %g %%, give %g\n",
				f.name, f.v, f.v/1e4, f.v*100, f.v*1e6)
		}
	}
	var inputs []string
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Name {
		case "out", "quiet", "overwrite", "resume", "workers", "file", "help":
			return
		}
		if f.Value.String() == "" { // an input not given (--pauses, --think)
			return
		}
		inputs = append(inputs, "--"+f.Name+" "+shell.Quote(f.Value.String()))
	})
	plan, err := tune.Prepare(in)
	if err != nil {
		var ie *tune.InputError
		if errors.As(err, &ie) || sweep.IsUsage(err) {
			return bad(err)
		}
		return err
	}
	// The folder's lock first, held until report.html is written: a second tune (or a
	// sweep) into it is refused, naming this one, rather than deleting its runs.
	lock, err := sweep.LockFolder(*out, "tune")
	if err != nil {
		return usageIf(err)
	}
	defer lock.Unlock()
	if err := checkTuneFolder(*out, *overwrite, *resume); err != nil {
		return err
	}
	plan.WriteRecommendation(stdout)
	opt := tune.Options{Dir: *out, Workers: *workers, Overwrite: *overwrite, Resume: *resume,
		Tool: "redlock-sim " + version(), Progress: sweep.ProgressFor(os.Stderr, *quiet)}
	if !*quiet {
		opt.Log = stderr
	}
	rep, err := plan.Run(ctx, opt)
	switch {
	case errors.Is(err, tune.ErrInterrupted):
		return fmt.Errorf("%w: %v; to go on: %s", errInterrupted, err, resumeTuneCommand(args))
	case sweep.IsUsage(err):
		return bad(err)
	case err != nil:
		return err
	}
	defer rep.Release()
	rep.WriteConfirmation(stdout)
	md := rep.Markdown("redlock-sim tune "+strings.Join(args, " "), strings.Join(inputs, " "))
	return writeTuneReport(stdout, *out, rep, md)
}

// checkTuneFolder refuses a folder that holds a report unless --overwrite or --resume
// says what to do with it, and a folder a running tune or sweep holds (its lock).
func checkTuneFolder(out string, overwrite, resume bool) error {
	_, err := os.Stat(filepath.Join(out, "report.md"))
	hasReport := err == nil
	_, err = os.Stat(filepath.Join(out, "confirm"))
	hasRuns := err == nil
	switch {
	case hasReport && !overwrite && !resume:
		return fmt.Errorf("%w: --out %s already holds a report; choose another folder or add --overwrite", errUsage, out)
	case hasRuns && !hasReport && !overwrite && !resume:
		return fmt.Errorf("%w: --out %s holds a tune that did not finish; add --resume to continue it (same inputs) or --overwrite to start again", errUsage, out)
	}
	return nil
}

// resumeTuneCommand is the command line that continues an interrupted tune: the same
// one with --resume.
func resumeTuneCommand(args []string) string {
	parts := []string{"redlock-sim", "tune"}
	for _, a := range args {
		if a == "--resume" || a == "--overwrite" {
			continue
		}
		parts = append(parts, shell.Quote(a))
	}
	return strings.Join(append(parts, "--resume"), " ")
}

// writeTuneReport writes report.md, the figures and report.html into out.
func writeTuneReport(stdout io.Writer, out string, rep *tune.Report, md string) error {
	path := filepath.Join(out, "report.md")
	if err := writeFileAtomic(path, []byte(md)); err != nil {
		return err
	}
	// The figures (the ttl against each safety and liveness measure) from every round's
	// runs pooled, the same runs as the table, drawn into the folder and embedded in
	// report.html.
	figDir := filepath.Join(out, "figures")
	if err := os.MkdirAll(figDir, 0o755); err != nil {
		return err
	}
	var rounds []*plots.Sweep
	for _, dir := range rep.Rounds {
		sw, err := plots.ReadSweep(dir)
		if err != nil {
			return fmt.Errorf("figures: %w", err)
		}
		rounds = append(rounds, sw)
	}
	pooled, err := plots.PoolSweeps(rounds)
	if err != nil {
		return fmt.Errorf("figures: %w", err)
	}
	drawn, err := plots.DrawSweep(pooled, figDir, plots.SweepOptions{})
	if err != nil {
		return fmt.Errorf("figures: %w", err)
	}
	var figs []htmlpage.Figure
	for _, f := range drawn {
		if filepath.Ext(f) != ".png" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		figs = append(figs, htmlpage.Figure{Name: f, PNG: b, Caption: fmt.Sprintf("confirmation, every round pooled (%d runs per %s): %s", rep.Outcomes[0].Runs, rep.Axis(), filepath.Base(f))})
	}
	page, err := htmlpage.Render("Tuning report", md, figs)
	if err != nil {
		return err
	}
	htmlPath := filepath.Join(out, "report.html")
	if err := writeFileAtomic(htmlPath, page); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nreport written to %s and %s (self-contained, %d figures)\n", path, htmlPath, len(figs))
	return nil
}

// loadTuneFile sets, from the YAML file path, every flag of fs the command line did not
// set. Keys are flag names, with dashes or underscores; values are scalars, spelled as on
// the command line.
func loadTuneFile(fs *flag.FlagSet, path string) error {
	return flagsFile{flag: "file", of: "inputs", key: "input",
		want: "a single value such as 5, 200 or p50=1ms,p99=5ms"}.load(fs, path)
}

// writeFileAtomic writes data to path through a temporary file and a rename, so that a
// crash never leaves half a report.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
