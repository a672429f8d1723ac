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
	"syscall"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/plots"
)

// sweepPlan is one sweep to run and the folder it writes.
type sweepPlan struct {
	name string // the default study's sweep name, or "" for a --spec sweep
	dir  string
	spec *sweep.Spec
}

func runSweep(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	specPath := fs.String("spec", "", "sweep spec (YAML); without it, the embedded default study")
	out := fs.StringP("out", "o", "out", "output folder (the default study writes one subfolder per sweep)")
	workers := fs.Int("workers", runtime.NumCPU(), "runs in parallel; results do not depend on it")
	resume := fs.Bool("resume", false, "continue an interrupted sweep in the output folder")
	overwrite := fs.Bool("overwrite", false, "replace results already in the output folder")
	shard := fs.String("shard", "", "run only shard i/n (1-based), or auto (index from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)")
	shards := fs.Int("shards", 0, "the number of shards, for --shard auto")
	quiet := fs.BoolP("quiet", "q", false, "no progress output")
	sets := fs.StringArray("set", nil, "set a base knob for every point: name=value (repeatable)")
	dryRun := fs.Bool("dry-run", false, "check everything and print what would run, without running or writing anything")
	noPlots := fs.Bool("no-plots", false, "do not draw the figures when a sweep ends")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redlock-sim sweep [--spec FILE] [--out DIR] [--workers K] [--resume] [--shard i/n|auto] [--set name=value ...] [--dry-run]")
		fs.PrintDefaults()
	}
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
	plans, err := planSweeps(*specPath, *out, *sets)
	if err != nil {
		return err
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

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, p := range plans {
		opts := sweep.Options{Dir: p.dir, Workers: *workers, Shard: sh, Resume: *resume,
			Overwrite: *overwrite, Tool: "redlock-sim " + version(), Progress: sweep.ProgressFor(os.Stderr, *quiet)}
		if !*quiet {
			fmt.Fprintf(stderr, "sweep %s: %d points × %d replicates = %d runs → %s\n",
				orDefault(p.name, filepath.Base(*specPath)), p.spec.Points(), p.spec.Replicates, p.spec.Runs(), p.dir)
		}
		st, err := sweep.Run(ctx, experiments.SweepRunner(), p.spec, opts)
		switch {
		case errors.Is(err, context.Canceled):
			return fmt.Errorf("sweep interrupted after %d runs; the folder %s is resumable: rerun with --resume", st.Resumed+st.Ran, p.dir)
		case sweep.IsUsage(err):
			return fmt.Errorf("%w: %w", errUsage, err)
		case err != nil:
			return err
		}
		fmt.Fprintf(stdout, "%s: %d runs (%d resumed, %d run now) in %s\n",
			orDefault(p.name, "sweep"), st.Runs, st.Resumed, st.Ran, p.dir)
		// A shard holds only part of each point: its figures are drawn after merge.
		if *noPlots || sh.Count > 1 {
			continue
		}
		figs, err := plots.SweepFigures(p.dir, p.dir)
		if err != nil {
			return fmt.Errorf("%s: figures: %w", p.dir, err)
		}
		fmt.Fprintf(stdout, "%s: %s in %s\n", orDefault(p.name, "sweep"), plural(len(figs), "figure"), p.dir)
	}
	return nil
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
	return plans, nil
}

func runMerge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.StringP("out", "o", "out", "output folder for the merged results")
	overwrite := fs.Bool("overwrite", false, "replace results already in the output folder")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redlock-sim merge --out DIR SHARD_DIR...")
		fs.PrintDefaults()
	}
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
	for _, p := range pairs {
		if err := sweep.Merge(p.out, p.dirs, sweep.MergeOptions{Overwrite: *overwrite}); err != nil {
			return usageIf(err)
		}
		fmt.Fprintf(stdout, "merged %d shards into %s\n", len(p.dirs), p.out)
		figs, err := plots.SweepFigures(p.out, p.out)
		if err != nil {
			return fmt.Errorf("%s: figures: %w", p.out, err)
		}
		fmt.Fprintf(stdout, "%s in %s\n", plural(len(figs), "figure"), p.out)
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
