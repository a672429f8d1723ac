package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/plots"
	"github.com/redlock-sim/redlock-sim/sim"
)

// runRun is `redlock-sim run`: one scenario, one seed, a summary, the narrated trace or
// the JSON record.
func runRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenario := fs.String("scenario", "baseline", "the scenario to run (see `redlock-sim scenarios`)")
	seed := fs.Uint64("seed", 1, "the run seed: the same seed gives the same run")
	sets := fs.StringArray("set", nil, "set a knob, name=value (repeatable; see `redlock-sim params`)")
	trace := fs.Bool("trace", false, "print the narrated trace, one line per event (to stderr with --json)")
	asJSON := fs.Bool("json", false, "print the run record as one JSON object")
	window := fs.String("window", "", "limit --trace and --timeline to a true-time window FROM:TO, e.g. 1s:2.5s (either side may be empty)")
	timeline := fs.String("timeline", "", "draw the run as a space-time diagram into FILE.png or FILE.svg")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: redlock-sim run [--scenario NAME] [--seed N] [--set name=value ...] [--trace] [--json] [--timeline FILE.png|FILE.svg [--window FROM:TO]]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: run takes no arguments, got %q", errUsage, fs.Args())
	}
	knobs, err := parseSets(*sets)
	if err != nil {
		return err
	}
	opts := experiments.Options{}
	if opts.From, opts.To, err = parseWindow(*window); err != nil {
		return err
	}
	if *trace {
		opts.Trace = stdout
		if *asJSON {
			opts.Trace = stderr
		}
	}
	if *timeline != "" {
		if _, err := plots.FormatOf(*timeline); err != nil {
			return fmt.Errorf("%w: --timeline: %v", errUsage, err)
		}
		if err := checkFolder(*timeline); err != nil {
			return fmt.Errorf("%w: --timeline %s: %v", errUsage, *timeline, err)
		}
		opts.Timeline = &experiments.Timeline{}
	}
	rec, err := experiments.Run(context.Background(), *scenario, knobs, *seed, opts)
	if err != nil {
		return userError(err)
	}
	if *timeline != "" {
		if err := drawTimeline(*timeline, *window != "", opts, rec.Safety, *sets, stderr); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	}
	if *trace {
		fmt.Fprintln(stdout, "# summary")
	}
	return experiments.WriteSummary(stdout, rec)
}

// drawTimeline draws the run's timeline into path, in the --window when one was given
// (else the default window around the first violation), and says where it went on stderr
// (stdout may be carrying JSON). The figure's subtitle is the scenario's story, followed by
// the --set flags that changed it, so a picture never passes for the plain scenario. The
// title's verdicts use the run's counts (the timeline lists only the first violations).
func drawTimeline(path string, windowed bool, opts experiments.Options, counts experiments.Safety, sets []string, stderr io.Writer) error {
	var win *experiments.Span
	if windowed {
		win = &experiments.Span{From: opts.From, To: opts.To}
	}
	span, err := plots.ResolveWindow(opts.Timeline, win)
	if err != nil {
		return fmt.Errorf("%w: --window: %v", errUsage, err)
	}
	subtitle := ""
	if sc, err := experiments.LookupScenario(opts.Timeline.Scenario); err == nil {
		subtitle = sc.Story
	}
	if len(sets) > 0 {
		subtitle += "  [with --set " + strings.Join(sets, " --set ") + "]"
	}
	if err := plots.Timeline(opts.Timeline, path, plots.TimelineOptions{Window: &span, Subtitle: subtitle, Counts: &counts}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "timeline of %s to %s written to %s\n", span.From, span.To, path)
	return nil
}

// checkFolder refuses a figure path whose folder does not exist or is not a folder, before
// the run, so that a typo costs no simulated time and is a usage error (exit 2), not a
// failure to write after the fact.
func checkFolder(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("folder %s does not exist", dir)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("folder %s: %w", dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s is not a folder", dir)
	}
	return nil
}

// parseSets turns --set name=value flags into knob settings.
func parseSets(sets []string) ([]experiments.KV, error) {
	var out []experiments.KV
	for _, s := range sets {
		name, value, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: --set %q: want name=value, e.g. --set ttl=250ms", errUsage, s)
		}
		out = append(out, experiments.KV{Name: name, Value: strings.TrimSpace(value)})
	}
	return out, nil
}

func parseWindow(w string) (from, to time.Duration, err error) {
	if w == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(w, ":")
	parse := func(s string) (time.Duration, error) {
		if s == "" {
			return 0, nil
		}
		return time.ParseDuration(s)
	}
	if ok {
		from, err = parse(a)
		if err == nil {
			to, err = parse(b)
		}
	}
	if !ok || err != nil || from < 0 || to < 0 || (to != 0 && to <= from) {
		return 0, 0, fmt.Errorf("%w: --window %q: want FROM:TO durations with FROM < TO, e.g. 1s:2.5s", errUsage, w)
	}
	return from, to, nil
}

// userError marks the errors that are the user's to fix (an unknown name, a bad value) as
// usage errors, so they exit with status 2.
func userError(err error) error {
	var ue *experiments.UnknownError
	var pe *sim.ParamError
	if errors.As(err, &ue) || errors.As(err, &pe) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}

// runScenarios is `redlock-sim scenarios`.
func runScenarios(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("scenarios", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.BoolP("verbose", "v", false, "also show each scenario's source, expected outcome and knobs")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, sc := range experiments.Scenarios() {
		fmt.Fprintf(tw, "%s\t%s\n", sc.Name, sc.Story)
		if *verbose {
			fmt.Fprintf(tw, "\tsource: %s\n\texpect: %s\n", sc.Source, sc.Expect)
			var kv []string
			for _, k := range sc.Knobs {
				kv = append(kv, k.Name+"="+k.Value)
			}
			fmt.Fprintf(tw, "\tknobs: %s\n", strings.Join(kv, " "))
		}
	}
	return tw.Flush()
}

// runParams is `redlock-sim params`.
// maxAllowedWidth keeps the ALLOWED column of `params` narrow enough that HELP stays on a
// terminal's screen; longer sets are listed under the table.
const maxAllowedWidth = 40

func runParams(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("params", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tUNIT\tDEFAULT\tALLOWED\tHELP")
	group := ""
	var notes []string // allowed sets too long for a column, e.g. every variant
	for _, p := range experiments.Params() {
		if p.Group != group {
			group = p.Group
			fmt.Fprintf(tw, "# %s\t\t\t\t\n", group)
		}
		allowed := p.Allowed
		switch {
		case p.Unit == "dist":
			allowed = "a distribution (below)"
		case len(allowed) > maxAllowedWidth:
			notes = append(notes, p.Name+": "+allowed)
			allowed = "see below"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Unit, p.Default, allowed, p.Help)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, "\n"+n)
	}
	_, err := fmt.Fprintln(stdout, "\ndistributions: "+experiments.DistSyntax+"; latency also takes tail(FAST,p,SLOW):\n"+
		"FAST, except with probability p SLOW. Durations are Go durations (250ms, 1.5s, 800µs or 800us).")
	return err
}
