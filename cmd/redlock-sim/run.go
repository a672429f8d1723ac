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
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/plots"
	"github.com/redlock-sim/redlock-sim/sim"
)

// runRun is `redlock-sim run`: one scenario, one seed, a summary, the narrated trace or
// the JSON record.
func runRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	scenario := fs.String("scenario", "baseline", "run the scenario called `NAME` (redlock-sim scenarios lists them)")
	scenarioFile := fs.String("scenario-file", "", "run the scenario written in `FILE` (YAML; docs/scenarios.md; redlock-sim scenarios --show NAME prints a built-in one to start from)")
	seed := fs.Uint64("seed", 1, "the run seed `N`; the same seed gives the same run")
	sets := fs.StringArray("set", nil, "set a knob, `name=value` (repeatable; redlock-sim params lists the knobs)")
	trace := fs.Bool("trace", false, "print the narrated trace, one line per event (to stderr with --json)")
	asJSON := fs.Bool("json", false, "print the run record as one JSON object")
	window := fs.String("window", "", "limit --trace and --timeline to a true-time window `FROM:TO`, e.g. 1s:2.5s (either side may be empty)")
	timeline := fs.String("timeline", "", "draw the run as a space-time diagram into `FILE`, a .png or .svg")
	var narrate report.TraceOptions
	fs.StringSliceVar(&narrate.Actors, "actor", nil, "trace only the lines by or about these `ACTORS`, e.g. client1,redis3 (the clients, the nodes, storage, net, oracle; implies --trace)")
	fs.StringSliceVar(&narrate.Only, "only", nil, "trace only these `KINDS` of line, e.g. faults,violations (implies --trace):\n"+traceKindsHelp())
	fs.BoolVar(&narrate.HideCleanup, "hide-cleanup", false, "leave cleanup traffic out of the trace: the release round a client sends after an attempt\nended without the lock, and replies that arrive after the attempt, extension or release\nthey answer has ended (implies --trace)")
	fs.BoolVar(&narrate.Precise, "precise", false, "trace times and durations to the nanosecond (default: times to the millisecond,\ndurations to the microsecond; implies --trace)")
	setUsage(fs, stderr, "")
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
	if fs.Changed("scenario") && fs.Changed("scenario-file") {
		return fmt.Errorf("%w: give --scenario or --scenario-file, not both", errUsage)
	}
	sc, err := scenarios.LookupScenario(*scenario)
	if *scenarioFile != "" {
		sc, err = scenarios.LoadFile(*scenarioFile)
	}
	if err != nil {
		return userError(err)
	}
	if err := experiments.CheckInert(sc, knobs); err != nil {
		return userError(err)
	}
	opts := experiments.Options{}
	if opts.From, opts.To, err = parseWindow(*window); err != nil {
		return err
	}
	for _, name := range []string{"actor", "only", "hide-cleanup", "precise"} {
		*trace = *trace || fs.Changed(name)
	}
	opts.Narrate = narrate
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
		opts.Timeline = &report.Timeline{}
	}
	rec, err := experiments.RunScenario(context.Background(), sc, knobs, *seed, opts)
	if err != nil {
		return userError(err)
	}
	if *timeline != "" {
		if err := drawTimeline(*timeline, *window != "", opts, sc.Story, rec.Safety, *sets, stderr); err != nil {
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
func drawTimeline(path string, windowed bool, opts experiments.Options, story string, counts experiments.Safety, sets []string, stderr io.Writer) error {
	var win *report.Span
	if windowed {
		win = &report.Span{From: opts.From, To: opts.To}
	}
	span, err := plots.ResolveWindow(opts.Timeline, win)
	if err != nil {
		return fmt.Errorf("%w: --window: %v", errUsage, err)
	}
	subtitle := story
	if len(sets) > 0 {
		subtitle += "  [with --set " + strings.Join(sets, " --set ") + "]"
	}
	if err := plots.Timeline(opts.Timeline, path, plots.TimelineOptions{Window: &span, Subtitle: subtitle, Counts: &counts}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "timeline of %s to %s written to %s\n", span.From, span.To, path)
	return nil
}

// traceKindsHelp lists the kinds --only selects, one a line, for the flag's help.
func traceKindsHelp() string {
	var b strings.Builder
	for i, k := range report.TraceKinds {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %-10s %s", k.Name, k.Help)
	}
	return b.String()
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

// parseSets turns --set name=value flags into knob settings. It is the one parser of
// --set, for run and sweep alike, so that both say the same thing about the same slip;
// the values themselves are checked by the knobs.
func parseSets(sets []string) ([]knobs.KV, error) {
	var out []knobs.KV
	for _, s := range sets {
		name, value, ok := strings.Cut(s, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: --set %q: no \"=\": want name=value, e.g. --set ttl=250ms (redlock-sim params lists the knobs)", errUsage, s)
		case name == "":
			return nil, fmt.Errorf("%w: --set %q: the knob name before \"=\" is missing: want name=value, e.g. --set ttl=250ms", errUsage, s)
		}
		out = append(out, knobs.KV{Name: name, Value: strings.TrimSpace(value)})
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
	var ue *knobs.UnknownError
	var pe *sim.ParamError
	var fe *scenarios.FileError
	if errors.As(err, &ue) || errors.As(err, &pe) || errors.As(err, &fe) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}

// runScenarios is `redlock-sim scenarios`: the catalogue, each scenario's parameters
// with -v, or one built-in scenario's file with --show.
func runScenarios(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("scenarios", flag.ContinueOnError)
	verbose := fs.BoolP("verbose", "v", false, "also show each scenario's source, expected outcome, knobs and parameters")
	show := fs.String("show", "", "print the file of the built-in scenario `NAME`, a starting point for one of your own (run it with run --scenario-file)")
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: scenarios takes no arguments, got %q", errUsage, fs.Args())
	}
	if fs.Changed("show") {
		sc, err := scenarios.LookupScenario(*show)
		if err != nil || *show == "" {
			if err == nil {
				err = fmt.Errorf("--show needs a scenario name")
			}
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		_, err = io.WriteString(stdout, sc.Text)
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, sc := range scenarios.Scenarios() {
		fmt.Fprintf(tw, "%s\t%s\n", sc.Name, sc.Story)
		if *verbose {
			fmt.Fprintf(tw, "\tsource: %s\n\texpect: %s\n", sc.Source, sc.Expect)
			var kv []string
			for _, k := range sc.Knobs {
				kv = append(kv, k.Name+"="+k.Value)
			}
			fmt.Fprintf(tw, "\tknobs: %s\n", strings.Join(kv, " "))
			for _, p := range sc.Params {
				fmt.Fprintf(tw, "\tparameter %s = %s: %s (--set %s=...)\n", p.Name, p.Default, p.Help, p.Name)
			}
		}
	}
	return tw.Flush()
}

// maxAllowedWidth keeps the ALLOWED column of `params` narrow enough that HELP stays on a
// terminal's screen; longer sets are listed under the table.
const maxAllowedWidth = 40

// distNote explains the distribution syntax under the table and under one dist knob.
const distNote = "distributions: " + knobs.DistSyntax + "; latency also takes tail(FAST,p,SLOW):\n" +
	"FAST, except with probability p SLOW. Durations are Go durations (250ms, 1.5s, 800µs or 800us)."

// runParams is `redlock-sim params`: every knob as a table, the knobs named on the command
// line in full, or with --json the registry as JSON.
func runParams(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("params", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the knobs as a JSON array of {name, group, unit, default, allowed, help}")
	client := fs.String("client", "", "show the knobs a client profile sets (redsync, ...), beside the defaults")
	setUsage(fs, stderr, "[KNOB ...]")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if *client != "" {
		p, err := knobs.LookupProfile(*client)
		if err != nil {
			return fmt.Errorf("%w: --client: %w", errUsage, err)
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(p)
		}
		return writeProfile(stdout, p)
	}
	params := knobs.Params()
	if fs.NArg() > 0 {
		params = params[:0:0]
		for _, name := range fs.Args() {
			p, err := knobs.LookupParam(name)
			if err != nil {
				return fmt.Errorf("%w: %w", errUsage, err)
			}
			params = append(params, p)
		}
	}
	switch {
	case *asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(params)
	case fs.NArg() > 0:
		return writeParamsInFull(stdout, params)
	}
	return writeParamsTable(stdout, params)
}

// writeProfile writes what a client profile models and every knob it sets, beside the
// knob's default (the spec profile's value), marking those that differ.
func writeProfile(w io.Writer, p knobs.Profile) error {
	fmt.Fprintf(w, "client %s: %s\n  %s\n\n", p.Name, p.Library, p.Help)
	def := knobs.DefaultConfig()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KNOB	VALUE	DEFAULT	")
	for _, kv := range p.Sets {
		canon, err := knobs.Canonical(kv.Name, kv.Value)
		if err != nil {
			return err
		}
		mark := ""
		if d := def.Get(kv.Name); d != canon {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", kv.Name, canon, def.Get(kv.Name), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n* differs from the default. Other knobs given with client=... (in any order) override its values; docs/clients.md says where each value comes from.")
	return err
}

// writeParamsInFull writes each knob with nothing cut: its unit, default, allowed values
// and help, and for a distribution the syntax.
func writeParamsInFull(w io.Writer, params []knobs.Param) error {
	for i, p := range params {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s (%s)\n  %s\n  unit:    %s\n  default: %s\n  allowed: %s\n",
			p.Name, p.Group, p.Help, p.Unit, p.Default, p.Allowed)
		if p.Unit == "dist" {
			fmt.Fprintln(w, "\n"+distNote)
		}
	}
	return nil
}

func writeParamsTable(w io.Writer, params []knobs.Param) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tUNIT\tDEFAULT\tALLOWED\tHELP")
	group := ""
	var notes []string // allowed sets too long for a column, e.g. every variant
	for _, p := range params {
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
		fmt.Fprintln(w, "\n"+n)
	}
	_, err := fmt.Fprintln(w, "\n"+distNote+"\n`redlock-sim params NAME` shows one knob in full.")
	return err
}
