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
	"strings"
	"sync"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/search"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

func runSearch(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runSearchCtx(ctx, args, stdout, stderr)
}

// runSearchCtx is runSearch under ctx, whose cancellation stands for the signal. It parses
// the flags into a search.Spec, runs the search (experiments/search does all of the
// reasoning), prints the findings, and writes each shrunk case's narrated trace and
// timeline beside its scenario file, through the same code as `run --scenario-file`.
func runSearchCtx(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	assume := fs.StringArray("assume", nil, "bound the worlds: `NAME=VALUE`, NAME<=VALUE, NAME>=VALUE or NAME=LO..HI, a knob (redlock-sim params)\nor a fault length (pause_len, node_down, node_pause_len, client_down, partition_len, clog_len,\nnode_clock_jump bound the scheduled faults of their kind); repeatable")
	faults := fs.StringSlice("faults", nil, "the fault `KINDS` a world may draw, comma-separated scenario actions (docs/scenarios.md), all (the default) or none")
	client := fs.String("client", "", "the lock library, a client profile `NAME` (redlock-sim params --client NAME)")
	runs := fs.Int("runs", 1000, "draw `N` worlds")
	forDur := fs.Duration("for", 0, "draw worlds for this machine `DURATION` instead, up to --runs (the findings then depend on the machine's speed)")
	seed := fs.Uint64("seed", 1, "the search seed `N`; the same seed and --runs give the same findings for any --workers")
	workers := fs.Int("workers", runtime.NumCPU(), "run `K` worlds in parallel; findings do not depend on it")
	maxUnavailable := fs.Duration("max-unavailable", 0, "a finding: a crashed holder that keeps the lock from the others longer than `DURATION`, from its crash to the next acquisition (0: not bounded)")
	minSuccess := finiteFloat64(fs, "min-success", 0, "a finding: a run in which a smaller share of acquires than `FRACTION` succeeds (0: not bounded)")
	maxSplit := fs.Int("max-split-brain", -1, "a finding: a run with more than `N` split-brain rounds, attempts in which no client won a majority (-1: not bounded)")
	budget := fs.Int("shrink-budget", search.DefaultShrinkBudget, "shrink each finding in at most `N` runs")
	out := fs.StringP("out", "o", "search-out", "output folder `DIR`: findings.csv, KIND.yaml (+ .trace.txt, .png) for each kind found, runs/ (the sweep of every world)")
	overwrite := fs.Bool("overwrite", false, "replace a search already in the output folder")
	specFile := fs.String("spec", "", "read the search from a YAML `FILE`: keys are these flags' names (assume and faults take lists); flags given override it")
	quiet := fs.BoolP("quiet", "q", false, "no progress output")
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: search takes no arguments, got %q", errUsage, fs.Args())
	}
	bad := func(err error) error { return fmt.Errorf("%w: %w", errUsage, err) }
	if *specFile != "" {
		if err := loadSearchSpec(fs, *specFile); err != nil {
			return bad(err)
		}
	}
	s := &search.Spec{Client: *client, MaxUnavailable: *maxUnavailable, MinSuccess: *minSuccess,
		MaxSplitBrain: *maxSplit, Seed: *seed}
	for _, text := range *assume {
		a, err := search.ParseAssumption(text)
		if err != nil {
			return bad(err)
		}
		s.Assume = append(s.Assume, a)
	}
	var err error
	if s.Faults, err = search.ParseFaults(*faults); err != nil {
		return bad(err)
	}
	if *client != "" {
		if _, err := knobs.LookupProfile(*client); err != nil {
			return bad(fmt.Errorf("--client: %w", err))
		}
	}
	switch {
	case *maxSplit < -1:
		return bad(fmt.Errorf("--max-split-brain %d: want a number of rounds from 0, or -1 for no bound", *maxSplit))
	case *budget < 1:
		return bad(fmt.Errorf("--shrink-budget %d: want a number of runs from 1", *budget))
	case *forDur < 0:
		return bad(fmt.Errorf("--for %s: want a duration above 0s", *forDur))
	}
	if err := s.Check(); err != nil {
		return bad(err)
	}
	if !fs.Changed("runs") && *forDur > 0 {
		*runs = sweep.MaxRuns
	}
	lock, err := sweep.LockFolder(*out, "search")
	if err != nil {
		return usageIf(err)
	}
	defer lock.Unlock()
	if err := checkSearchFolder(*out, *overwrite); err != nil {
		return err
	}
	opt := search.Options{Dir: *out, Runs: *runs, For: *forDur, Workers: *workers, Overwrite: *overwrite,
		ShrinkBudget: *budget, Tool: "redlock-sim " + version()}
	if !*quiet {
		opt.Log = stderr
		opt.Progress = func(c search.Counts) sweep.Progress { return &searchProgress{w: stderr, counts: c, every: time.Second} }
	}
	res, err := search.Run(ctx, s, opt)
	var ie *search.InputError
	switch {
	case errors.As(err, &ie) || sweep.IsUsage(err):
		return bad(err)
	case res == nil:
		return err
	}
	if terr := res.WriteTable(stdout); terr != nil {
		return terr
	}
	if errors.Is(err, search.ErrInterrupted) {
		return fmt.Errorf("%w: %v after %d runs; the findings so far are in %s (not shrunk)", errInterrupted, err, res.Runs, filepath.Join(*out, search.FindingsFile))
	}
	if err != nil {
		return err
	}
	logw := stderr
	if *quiet {
		logw = io.Discard
	}
	for _, f := range res.Findings {
		if err := replayFinding(f, logw); err != nil {
			return err
		}
	}
	return nil
}

// checkSearchFolder refuses a folder that holds a search unless --overwrite, and then
// removes the old search's files, so no finding of another search stays beside the new.
func checkSearchFolder(out string, overwrite bool) error {
	path := filepath.Join(out, search.FindingsFile)
	if _, err := os.Stat(path); err == nil && !overwrite {
		return fmt.Errorf("%w: --out %s already holds a search (%s); choose another folder or add --overwrite", errUsage, out, search.FindingsFile)
	}
	if !overwrite {
		return nil
	}
	for _, k := range search.Kinds() {
		for _, ext := range []string{".yaml", ".trace.txt", ".png"} {
			if err := os.Remove(filepath.Join(out, k.Name+ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// replayFinding runs a shrunk finding's scenario file as `run --scenario-file FILE --seed
// SEED --trace --timeline` does, writes the narrated trace and the timeline beside it, and
// says so; a replay without the finding's kind would be a bug in the search, and is an error.
func replayFinding(f *search.Finding, stderr io.Writer) error {
	sc, err := scenarios.LoadFile(f.File)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(f.File, ".yaml")
	trace, err := os.Create(base + ".trace.txt")
	if err != nil {
		return err
	}
	defer trace.Close()
	opts := experiments.Options{Trace: trace, Timeline: &report.Timeline{}}
	rec, err := experiments.RunScenario(context.Background(), sc, nil, f.Case.Seed, opts)
	if err != nil {
		return err
	}
	if err := trace.Close(); err != nil {
		return err
	}
	if isSafetyKind(f.Kind) && !search.Shows(f.Kind, rec) {
		return fmt.Errorf("search: %s replays without a %s (a bug in search: please report it with the file)", f.File, f.Kind)
	}
	return drawTimeline(base+".png", false, opts, sc.Story, rec.Safety, nil, stderr)
}

func isSafetyKind(k string) bool {
	return k == "validity_overlap" || k == "usage_overlap" || k == "stale_write"
}

// searchProgress prints a line at most once per every: runs done of the total, runs a
// second, and the runs that showed each kind so far.
type searchProgress struct {
	w      io.Writer
	counts search.Counts
	every  time.Duration

	mu             sync.Mutex
	total, start   int
	began, printed time.Time
}

func (p *searchProgress) Begin(total, done int) {
	p.total, p.start = total, done
	p.began = time.Now()
	p.printed = p.began
}

func (p *searchProgress) Advance(done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := time.Now(); t.Sub(p.printed) >= p.every {
		p.printed = t
		p.print(t, done)
	}
}

func (p *searchProgress) End() {
	runs, _ := p.counts()
	p.print(time.Now(), p.start+int(runs))
}

func (p *searchProgress) print(t time.Time, done int) {
	rate := 0.0
	if s := t.Sub(p.began).Seconds(); s > 0 {
		rate = float64(done-p.start) / s
	}
	_, found := p.counts()
	kinds := search.Kinds()
	var parts []string
	for i, n := range found {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s in %d", kinds[i].Name, n))
		}
	}
	total := fmt.Sprint(p.total)
	if p.total == sweep.MaxRuns {
		total = "?"
	}
	fmt.Fprintf(p.w, "search: %d/%s runs, %.0f runs/s, found: %s\n", done, total, rate, joinNone(parts))
}

func joinNone(parts []string) string {
	if len(parts) == 0 {
		return "nothing yet"
	}
	return strings.Join(parts, ", ")
}

// loadSearchSpec sets, from the YAML file path, every flag of fs the command line did not
// set. Keys are flag names, with dashes or underscores; assume and faults take a list.
func loadSearchSpec(fs *flag.FlagSet, path string) error {
	return flagsFile{flag: "spec", of: "flags", key: "key", lists: true,
		want: "a value such as 5, 200ms or pause_len<=500ms, or a list of them"}.load(fs, path)
}
