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
	"slices"
	"strings"
	"syscall"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/internal/htmlpage"
	"github.com/redlock-sim/redlock-sim/internal/shell"
	"github.com/redlock-sim/redlock-sim/plots"
)

// sweepPlan is one sweep to run and the folder it writes.
type sweepPlan struct {
	name string // the default study's sweep name, or "" for a --spec sweep
	dir  string
	spec *sweep.Spec
}

// errInterrupted marks a sweep stopped by SIGINT or SIGTERM; it exits with status 130
// (128 + SIGINT) for both signals: what matters to a shell or a scheduler is "stopped
// from outside, resumable", and one code is simpler to script against than two.
var errInterrupted = errors.New("interrupted")

func runSweep(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runSweepCtx(ctx, args, stdout, stderr)
}

// runSweepCtx is runSweep under ctx, whose cancellation stands for the signal.
func runSweepCtx(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	specPath := fs.String("spec", "", "sweep spec `FILE` (YAML); without it, the embedded default study")
	out := fs.StringP("out", "o", "out", "output folder `DIR` (the default study writes one subfolder per sweep)")
	workers := fs.Int("workers", runtime.NumCPU(), "run `K` runs in parallel; results do not depend on it")
	resume := fs.Bool("resume", false, "continue an interrupted sweep in the output folder (checking what it keeps), or start it")
	verify := fs.Bool("verify", false, "with --resume, re-run every kept run and refuse the folder unless each gives its row byte for byte (without it, resume checks each row's sum and re-runs a sample)")
	overwrite := fs.Bool("overwrite", false, "replace results already in the output folder")
	shard := fs.String("shard", "", "run only shard `i/n|auto` (1-based; auto takes the index from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)")
	shards := fs.Int("shards", 0, "the number of shards `N`, for --shard auto")
	quiet := fs.BoolP("quiet", "q", false, "no progress output")
	sets := fs.StringArray("set", nil, "set a base knob for every point, `name=value` (repeatable)")
	dryRun := fs.Bool("dry-run", false, "check everything and print what would run, without running or writing anything")
	noPlots := fs.Bool("no-plots", false, "do not draw the figures when a sweep ends")
	untilCI := finiteFloat64(fs, "until-ci", 0, "adaptive replication: double the replicates until every proportion's 95% interval, at every point, is at most `WIDTH` wide (e.g. 0.1), or --max-replicates is reached; the result is the plain sweep with the replicates it stopped at")
	maxReplicates := fs.Int("max-replicates", 1000, "with --until-ci, the most replicates per point, `N`")
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: sweep takes no arguments, got %q (a spec goes after --spec)", errUsage, fs.Args())
	}
	var sh sweep.Shard // the whole sweep
	if *shard != "" {
		var err error
		if sh, err = sweep.ParseShard("--shard", *shard, "--shards", *shards, os.Getenv); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
	}
	if *verify && !*resume {
		return fmt.Errorf("%w: --verify re-runs the runs that --resume keeps, to check them: add --resume", errUsage)
	}
	plans, err := planSweeps(*specPath, *out, *sets)
	if err != nil {
		return err
	}
	if *untilCI != 0 {
		switch {
		case !(*untilCI > 0 && *untilCI <= 1): // written so that NaN fails it too
			return fmt.Errorf("%w: --until-ci %g: an interval's width, allowed (0, 1], e.g. 0.1", errUsage, *untilCI)
		case *resume || sh.Count > 1:
			return fmt.Errorf("%w: --until-ci cannot be combined with --resume or --shard: it runs whole sweeps of growing size", errUsage)
		case *maxReplicates < 1 || *maxReplicates > sweep.MaxRuns:
			return fmt.Errorf("%w: --max-replicates %d: allowed 1 to %d", errUsage, *maxReplicates, sweep.MaxRuns)
		}
	}
	var locks folderLocks // taken after the dry run, which writes nothing
	options := func(p sweepPlan) sweep.Options {
		return sweep.Options{Dir: p.dir, Workers: *workers, Shard: sh, Resume: *resume, Verify: *verify,
			Overwrite: *overwrite, Tool: "redlock-sim " + version(), Progress: sweep.ProgressFor(os.Stderr, *quiet),
			Lock: locks[p.dir]}
	}
	// Every option is checked before the dry run prints, so that it refuses what a real
	// run would refuse.
	for _, p := range plans {
		if err := options(p).Validate(); err != nil {
			return usageIf(err)
		}
	}
	if *dryRun {
		for _, p := range plans {
			fmt.Fprintf(stdout, "%s: %d points × %d replicates = %d runs; shard %v: %d runs → %s\n",
				orDefault(p.name, "sweep"), p.spec.Points(), p.spec.Replicates, p.spec.Runs(), sh,
				sh.Runs(p.spec.Runs()), p.dir)
		}
		return nil
	}
	// Checked before any run, so a bad folder leaves nothing half-written.
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("%w: output folder: %v", errUsage, err)
	}
	// Every folder this command writes stays locked until its last file (the figures, the
	// study's index.html drawn from all of them) is written, so that no other sweep can
	// replace the data between the runs and the figures; all are taken before the first
	// run, so a busy folder is refused before anything runs.
	dirs := make([]string, 0, len(plans)+1)
	if *specPath == "" {
		dirs = append(dirs, *out) // the study's own folder: index.html
	}
	for _, p := range plans {
		dirs = append(dirs, p.dir)
	}
	if locks, err = lockFolders(dirs, "sweep"); err != nil {
		return err
	}
	defer locks.unlock()

	for _, p := range plans {
		if !*quiet {
			fmt.Fprintf(stderr, "sweep %s: %d points × %d replicates = %d runs → %s\n",
				orDefault(p.name, filepath.Base(*specPath)), p.spec.Points(), p.spec.Replicates, p.spec.Runs(), p.dir)
		}
		st, err := sweep.Run(ctx, experiments.SweepRunner(), p.spec, options(p))
		// Adaptive replication: while an interval is wider than asked, run the sweep again
		// with twice the replicates. Run seeds do not depend on the replicate count, so each
		// round keeps the previous one's runs and the last is exactly the plain sweep with
		// its replicates, whatever the workers.
		for *untilCI > 0 && err == nil {
			w, werr := sweep.WidestInterval(p.dir)
			if werr != nil {
				return werr
			}
			if w.Width <= *untilCI || p.spec.Replicates >= *maxReplicates {
				fmt.Fprintf(stdout, "%s: %d replicates: widest interval %.3g (%s at point %s), asked %g\n",
					orDefault(p.name, "sweep"), p.spec.Replicates, w.Width, w.Column, w.Point, *untilCI)
				break
			}
			p.spec.Replicates = min(2*p.spec.Replicates, *maxReplicates)
			if !*quiet {
				fmt.Fprintf(stderr, "%s: widest interval %.3g (%s at point %s) > %g: again with %d replicates\n",
					orDefault(p.name, "sweep"), w.Width, w.Column, w.Point, *untilCI, p.spec.Replicates)
			}
			o := options(p)
			o.Overwrite = true // this sweep's own results of the round before
			st, err = sweep.Run(ctx, experiments.SweepRunner(), p.spec, o)
		}
		switch {
		case errors.Is(err, context.Canceled):
			return fmt.Errorf("%w: sweep stopped after %d runs; %s is resumable, continue with:\n  %s",
				errInterrupted, st.Resumed+st.Ran, p.dir, resumeCommand(args))
		case sweep.IsUsage(err):
			return fmt.Errorf("%w: %w", errUsage, err)
		case err != nil:
			return err
		}
		if st.Afresh {
			fmt.Fprintf(stderr, "nothing to resume in %s: starting afresh\n", p.dir)
		}
		fmt.Fprintf(stdout, "%s: %d runs (%d resumed, %d run now) in %s\n",
			orDefault(p.name, "sweep"), st.Runs, st.Resumed, st.Ran, p.dir)
		switch {
		case *verify && st.Resumed > 0:
			fmt.Fprintf(stdout, "%s: verified the %d kept runs: each re-run gives its row byte for byte\n",
				orDefault(p.name, "sweep"), st.Resumed)
		case st.Rederived > 0:
			fmt.Fprintf(stdout, "%s: checked the %d kept runs (%d re-run to re-derive them)\n",
				orDefault(p.name, "sweep"), st.Resumed, st.Rederived)
		}
		if st.SummaryRewritten {
			fmt.Fprintf(stdout, "%s: %s was missing or did not match %s: rewritten\n",
				orDefault(p.name, "sweep"), sweep.SummaryFile, sweep.RunsFile)
		}
		// A shard holds only part of each point: its figures are drawn after merge.
		if *noPlots || sh.Count > 1 {
			continue
		}
		if err := drawSweep(ctx, p.dir, stdout, orDefault(p.name, "sweep")+": "); err != nil {
			return err
		}
	}
	// A study (the default one: several sweeps, one folder each) gets an index.html:
	// each sweep's headline and figures on one self-contained page.
	if *specPath == "" && !*noPlots && sh.Count <= 1 {
		path, err := writeStudyIndex(ctx, *out, plans)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "study index: %s\n", path)
	}
	return nil
}

// writeStudyIndex writes dir/index.html for the sweeps of plans: for each, its name, its
// size, its headline finding (plots.Headline) and its figures, embedded. The caller holds
// the locks of dir and of every sweep folder.
func writeStudyIndex(ctx context.Context, dir string, plans []sweepPlan) (string, error) {
	drawing(ctx, dir)
	secs := []htmlpage.Section{{Markdown: "# Study\n\nEach sweep below is a folder of its own here (runs.csv, summary.csv, manifest.json and its figures); `redlock-sim plot --in DIR` redraws one.\n"}}
	for _, p := range plans {
		var md strings.Builder
		var figs []htmlpage.Figure
		sw, err := plots.ReadSweep(p.dir)
		if err != nil {
			return "", fmt.Errorf("%s: %w", p.dir, err)
		}
		fmt.Fprintf(&md, "\n## %s\n\n%d points × %d replicates, in `%s/`.\n\n%s.\n",
			orDefault(p.name, "sweep"), p.spec.Points(), p.spec.Replicates, filepath.Base(p.dir), plots.Headline(sw))
		for _, n := range sw.Notes {
			fmt.Fprintf(&md, "\n> %s\n", n)
		}
		pngs, err := filepath.Glob(filepath.Join(p.dir, "*.png"))
		if err != nil {
			return "", err
		}
		slices.Sort(pngs)
		if len(pngs) > 0 {
			fmt.Fprintf(&md, "\nFigures: %s.\n", strings.Join(baseNames(pngs), ", "))
		}
		for _, f := range pngs {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			figs = append(figs, htmlpage.Figure{Name: f, PNG: b, Caption: orDefault(p.name, "sweep") + ": " + filepath.Base(f)})
		}
		secs = append(secs, htmlpage.Section{Markdown: md.String(), Figures: figs})
	}
	page, err := htmlpage.RenderSections("Study", secs)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	return path, writeFileAtomic(path, page)
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// drawSweep draws the figures of the sweep folder dir, or says why there are none when
// no knob varies (results without figures are a success, not a failure). The caller holds
// dir's lock.
func drawSweep(ctx context.Context, dir string, stdout io.Writer, prefix string) error {
	drawing(ctx, dir)
	if m, err := sweep.ReadManifest(dir); err == nil && m.Points <= 1 {
		fmt.Fprintf(stdout, "%snothing to plot against: every knob has one value; the results are in %s\n", prefix, dir)
		return nil
	}
	figs, err := plots.SweepFigures(dir, dir)
	if err != nil {
		return fmt.Errorf("%s: figures: %w", dir, err)
	}
	fmt.Fprintf(stdout, "%s%s in %s\n", prefix, plural(len(figs), "figure"), dir)
	return nil
}

// folderLocks are the folder locks a command holds, by folder.
type folderLocks map[string]*sweep.Lock

// lockFolders locks every folder of dirs for the command by, or none: a folder in use is
// a usage error naming it and its holder, and the locks taken before it are released.
func lockFolders(dirs []string, by string) (folderLocks, error) {
	locks := folderLocks{}
	for _, d := range dirs {
		l, err := sweep.LockFolder(d, by)
		if err != nil {
			locks.unlock()
			return nil, usageIf(err)
		}
		locks[d] = l
	}
	return locks, nil
}

// unlock releases every lock, in no particular order: each is on a folder of its own.
func (ls folderLocks) unlock() {
	for _, l := range ls {
		l.Unlock()
	}
}

// drawHookKey is the context key of a function called with a folder's path as its
// figures or index page start being drawn: tests use it to hold a command there, with
// the folder locked, and try another command against it.
type drawHookKey struct{}

// drawing calls ctx's draw hook, if it has one, with dir.
func drawing(ctx context.Context, dir string) {
	if hook, ok := ctx.Value(drawHookKey{}).(func(string)); ok {
		hook(dir)
	}
}

// resumeCommand is the command line that continues the sweep run with args: the same
// flags, without --overwrite (the folder now holds the partial sweep to keep), with
// --resume.
func resumeCommand(args []string) string {
	parts := []string{"redlock-sim", "sweep"}
	hasResume := false
	for _, a := range args {
		switch {
		case a == "--overwrite" || strings.HasPrefix(a, "--overwrite="):
			continue
		case a == "--resume" || a == "--resume=true":
			hasResume = true
		}
		parts = append(parts, shell.Quote(a))
	}
	if !hasResume {
		parts = append(parts, "--resume")
	}
	return strings.Join(parts, " ")
}

// planSweeps parses every spec and applies every --set before anything runs, so a typo in
// the last one is reported before the first one has written a byte.
func planSweeps(specPath, out string, sets []string) ([]sweepPlan, error) {
	var plans []sweepPlan
	if specPath != "" {
		spec, err := sweep.LoadSpec(specPath, experiments.SweepRunner())
		if err != nil {
			return nil, usageIf(err)
		}
		plans = []sweepPlan{{dir: out, spec: spec}}
	} else {
		studies, err := experiments.DefaultStudy()
		if err != nil {
			return nil, err
		}
		for _, s := range studies {
			plans = append(plans, sweepPlan{name: s.Name, dir: filepath.Join(out, s.Name), spec: s.Spec})
		}
	}
	kvs, err := parseSets(sets) // the one --set parser, shared with run
	if err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		for _, p := range plans {
			if err := p.spec.Set(experiments.SweepRunner(), kv.Name, kv.Value); err != nil {
				return nil, usageIf(err)
			}
		}
	}
	for _, p := range plans {
		if err := experiments.CheckSpec(p.spec); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errUsage, orDefault(p.name, specPath), err)
		}
	}
	return plans, nil
}

func runMerge(args []string, stdout, stderr io.Writer) error {
	return runMergeCtx(context.Background(), args, stdout, stderr)
}

// runMergeCtx is runMerge with ctx, which carries the tests' draw hook.
func runMergeCtx(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.StringP("out", "o", "out", "output folder `DIR` for the merged results")
	overwrite := fs.Bool("overwrite", false, "replace results already in the output folder")
	setUsage(fs, stderr, "SHARD_DIR...")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	dirs := fs.Args()
	if len(dirs) == 0 {
		return fmt.Errorf("%w: merge needs the shard folders to join, e.g. redlock-sim merge --out out shard1 shard2", errUsage)
	}
	pairs, err := mergePairs(*out, dirs)
	if err != nil {
		return err
	}
	outs := make([]string, len(pairs))
	for i, p := range pairs {
		outs[i] = p.out
	}
	// Each output folder stays locked until its figures are drawn (see runSweepCtx).
	locks, err := lockFolders(outs, "merge")
	if err != nil {
		return err
	}
	defer locks.unlock()
	for _, p := range pairs {
		if err := sweep.Merge(p.out, p.dirs, sweep.MergeOptions{Overwrite: *overwrite, Lock: locks[p.out]}); err != nil {
			return usageIf(err)
		}
		fmt.Fprintf(stdout, "merged %d shards into %s\n", len(p.dirs), p.out)
		if err := drawSweep(ctx, p.out, stdout, ""); err != nil {
			return err
		}
	}
	return nil
}

type mergePair struct {
	out  string
	dirs []string
}

// mergePairs says what to merge: shard folders of one sweep (each holds a manifest), or
// shard folders of the default study (each holds one subfolder per sweep), merged sweep by
// sweep.
func mergePairs(out string, dirs []string) ([]mergePair, error) {
	if hasManifest(dirs[0]) {
		return []mergePair{{out, dirs}}, nil
	}
	studies, err := experiments.DefaultStudy()
	if err != nil {
		return nil, err
	}
	var pairs []mergePair
	for _, s := range studies {
		p := mergePair{out: filepath.Join(out, s.Name)}
		for _, d := range dirs {
			p.dirs = append(p.dirs, filepath.Join(d, s.Name))
		}
		if hasManifest(p.dirs[0]) {
			pairs = append(pairs, p)
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%w: %s holds no sweep results (no %s, nor a default-study subfolder with one)",
			errUsage, dirs[0], sweep.ManifestFile)
	}
	return pairs, nil
}

func hasManifest(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, sweep.ManifestFile))
	return err == nil
}

// usageIf marks the sweep engine's usage errors (bad spec, bad folder) for exit status 2.
func usageIf(err error) error {
	if sweep.IsUsage(err) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// plural returns "1 figure" or "3 figures".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
