package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/experiments/tune"
	"github.com/redlock-sim/redlock-sim/internal/htmlpage"
	"github.com/redlock-sim/redlock-sim/internal/suggest"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/plots"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// tuneReport is what tune learned, in the order report.md tells it.
type tuneReport struct {
	command  string
	inputs   string   // every input flag with the value used, from the command line or --file
	fits     []string // each fitted distribution, with its percentiles
	rec      tune.Recommendation
	spec     *sweep.Spec
	outcomes []tune.Outcome
	rounds   []string // the confirmation sweeps' folders, one per round
	verdicts []string
}

func runTune(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runTuneCtx(ctx, args, stdout, stderr)
}

// runTuneCtx is runTune under ctx, whose cancellation stands for the signal.
func runTuneCtx(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tune", flag.ContinueOnError)
	// The environment.
	nodes := fs.Int("nodes", 5, "the independent Redis masters `N`")
	persistence := fs.String("persistence", "none", "what a node keeps across a crash: `none|aof-everysec|aof-always`")
	latency := fs.String("latency", "p50=500us,p99=800us", "one-way network delay by `PERCENTILES`, e.g. p50=1ms,p99=5ms (a ping's round trip is two of them)")
	clientPPM := fs.Float64("client-drift-ppm", 0, "the worst rate error of a client's clock, in `PPM`, either sign")
	nodePPM := fs.Float64("node-drift-ppm", 0, "the worst rate error of a node's clock, in `PPM`, either sign")
	pauses := fs.String("pauses", "", "stop-the-world pauses (GC) of a client by `PERCENTILES`, e.g. p99=100ms,p99.9=500ms (none by default)")
	pauseRate := fs.Float64("pause-rate", 0.1, "pauses per client per second, `RATE`, when --pauses is given")
	work := fs.String("work", "p50=50ms,p99=100ms", "how long a holder uses the resource, per hold, by `PERCENTILES`")
	clients := fs.Int("clients", 3, "the clients contending for the lock, `K`")
	nodeCrashRate := fs.Float64("node-crash-rate", 0, "power losses of each node per second, `RATE`")
	restartDelay := fs.Duration("restart-delay", time.Second, "how long a crashed node stays down, `DURATION`")
	clientCrashRate := fs.Float64("client-crash-rate", 0, "crashes of each client process per second, `RATE` (a dead holder keeps the lock until its ttl)")
	jumpRate := fs.Float64("node-clock-jump-rate", 0, "forward wall-clock steps of each node per second, `RATE` (an NTP step, an operator's date)")
	jump := fs.String("node-clock-jump", "1s", "the size of each step, a `DURATION` or a distribution (redlock-sim params node_clock_jump)")
	client := fs.String("client", "spec", "the lock library, a client profile `NAME` (redlock-sim params --client NAME)")
	// The targets.
	maxViolations := fs.Float64("max-violations-per-10k", 1, "the largest acceptable rate of each violation kind, per 10,000 acquisitions, `RATE` (its 95% upper bound is held to it)")
	maxPerYear := fs.Float64("max-violations-per-year", 0, "the same limit as a count per year, `N`, at --acquisitions-per-second (0: use the rate per 10,000)")
	maxValidity := fs.Float64("max-validity-overlaps-per-10k", -1, "the limit for two holders believing themselves valid at once, per 10,000, `RATE` (-1: as --max-violations-per-10k)")
	maxUsage := fs.Float64("max-usage-overlaps-per-10k", -1, "the limit for two holders working at once, per 10,000, `RATE` (-1: as --max-violations-per-10k)")
	maxStale := fs.Float64("max-stale-writes-per-10k", -1, "the limit for stale writes the resource accepts, per 10,000, `RATE` (-1: as --max-violations-per-10k)")
	minSuccess := fs.Float64("min-success", 0, "the lowest acceptable share of acquires that succeed, `FRACTION` in [0, 1] (0: no target)")
	maxAcquireP99 := fs.Duration("max-acquire-p99", 0, "the largest acceptable p99 time to acquire, retries included, `DURATION` (0: no target)")
	maxUnavailable := fs.Duration("max-unavailability", 0, "the longest the lock may stay taken by a holder that crashed, `DURATION` (0: no target)")
	perSecond := fs.Float64("acquisitions-per-second", 0, "your service's lock acquisitions per second, `RATE`: the report also gives each violation rate per year at it (0: not shown)")
	file := fs.String("file", "", "read the inputs from a YAML `FILE`: keys are these flags' names (dashes or underscores), values as on the command line; flags given override it")
	// The confirmation.
	duration := fs.Duration("duration", 10*time.Minute, "simulated time of each confirmation run, `DURATION`")
	seeds := fs.Int("seeds", 10, "confirmation runs per ttl in the first round, `N`")
	maxSeeds := fs.Int("max-seeds", 200, "add rounds of runs until every violation bound meets its target or this many runs per ttl, `N`, are spent")
	seed := fs.Uint64("seed", 1, "the confirmation sweep's seed `N`; the same seed gives the same report")
	workers := fs.Int("workers", runtime.NumCPU(), "run `K` confirmation runs in parallel; results do not depend on it")
	out := fs.StringP("out", "o", "tune-out", "output folder `DIR`: report.md and the confirmation sweep")
	overwrite := fs.Bool("overwrite", false, "replace a report already in the output folder")
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

	rep := &tuneReport{command: "redlock-sim tune " + strings.Join(args, " ")}
	var inputs []string
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Name {
		case "out", "quiet", "overwrite", "workers", "file", "help":
			return
		}
		inputs = append(inputs, "--"+f.Name+" "+f.Value.String())
	})
	rep.inputs = strings.Join(inputs, " ")
	fit := func(flagName, text string) (dist.Dist, string, error) {
		pts, err := tune.ParsePercentiles("--"+flagName, text)
		if err != nil {
			return dist.Dist{}, "", err
		}
		f, err := tune.FitPercentiles("--"+flagName, pts)
		if err != nil {
			return dist.Dist{}, "", err
		}
		var rows []string
		for _, r := range f.Percentiles() {
			rows = append(rows, r.String())
		}
		rep.fits = append(rep.fits, fmt.Sprintf("--%s %s → %s (%s)", flagName, text, f.Knob(), strings.Join(rows, "; ")))
		return f.Dist, f.Knob(), nil
	}
	env := tune.Env{Nodes: *nodes, ClientDriftPPM: *clientPPM, NodeDriftPPM: *nodePPM, Clients: *clients,
		NodeRestartDelay: *restartDelay, Pause: dist.Constant(0)}
	var err error
	if env.Persistence, err = model.ParsePersistence(*persistence); err != nil {
		return bad(fmt.Errorf("--persistence %q: allowed none, aof-everysec or aof-always", *persistence))
	}
	var latKnob, workKnob, pauseKnob string
	if env.Latency, latKnob, err = fit("latency", *latency); err != nil {
		return bad(err)
	}
	if env.Work, workKnob, err = fit("work", *work); err != nil {
		return bad(err)
	}
	if *pauses != "" {
		if env.Pause, pauseKnob, err = fit("pauses", *pauses); err != nil {
			return bad(err)
		}
	}
	switch {
	case *seeds < 1 || *seeds > 10000:
		return bad(fmt.Errorf("--seeds %d: allowed 1 to 10000", *seeds))
	case *maxSeeds < *seeds || *maxSeeds > 100000:
		return bad(fmt.Errorf("--max-seeds %d: allowed --seeds (%d) to 100000", *maxSeeds, *seeds))
	case *duration <= 0:
		return bad(fmt.Errorf("--duration %v: a run must simulate some time, e.g. 10m", *duration))
	case *perSecond < 0:
		return bad(fmt.Errorf("--acquisitions-per-second %g: a rate cannot be negative", *perSecond))
	case *maxViolations < 0:
		return bad(fmt.Errorf("--max-violations-per-10k %g: a rate cannot be negative", *maxViolations))
	case *maxPerYear < 0:
		return bad(fmt.Errorf("--max-violations-per-year %g: a count cannot be negative", *maxPerYear))
	case *maxPerYear > 0 && *perSecond == 0:
		return bad(fmt.Errorf("--max-violations-per-year %g needs --acquisitions-per-second, the load that turns a count a year into a rate", *maxPerYear))
	case *minSuccess < 0 || *minSuccess > 1:
		return bad(fmt.Errorf("--min-success %g: a share of acquires, allowed 0 to 1 (e.g. 0.99)", *minSuccess))
	}
	if _, err := knobs.LookupProfile(*client); err != nil {
		return bad(err)
	}
	if *maxPerYear > 0 {
		*maxViolations = *maxPerYear / (*perSecond * tune.SecondsPerYear) * tune.Per10k
	}
	lims := tuneLimits{success: *minSuccess, p99: *maxAcquireP99}
	for _, f := range []struct {
		flag string
		v    float64
	}{{"max-validity-overlaps-per-10k", *maxValidity}, {"max-usage-overlaps-per-10k", *maxUsage}, {"max-stale-writes-per-10k", *maxStale}} {
		switch {
		case f.v == -1:
			lims.kinds = append(lims.kinds, *maxViolations)
		case f.v < 0:
			return bad(fmt.Errorf("--%s %g: a rate cannot be negative (-1 means as --max-violations-per-10k)", f.flag, f.v))
		default:
			lims.kinds = append(lims.kinds, f.v)
		}
	}
	targets := tune.Targets{AcquireP99: *maxAcquireP99, Unavailability: *maxUnavailable}
	if rep.rec, err = tune.Recommend(env, targets); err != nil {
		return bad(err)
	}

	// The environment as knobs: the client profile first, so that what tune recommends
	// overrides the library's defaults.
	envKnobs := []sweep.KV{{Name: "client", Value: *client}, {Name: "scenario", Value: "baseline"},
		{Name: "nodes", Value: strconv.Itoa(*nodes)}, {Name: "persistence", Value: *persistence},
		{Name: "latency", Value: latKnob}, {Name: "client_clock_drift_ppm", Value: fmt.Sprint(*clientPPM)},
		{Name: "node_clock_drift_ppm", Value: fmt.Sprint(*nodePPM)}, {Name: "hold", Value: workKnob},
		{Name: "clients", Value: strconv.Itoa(*clients)}, {Name: "node_crash_rate", Value: fmt.Sprint(*nodeCrashRate)},
		{Name: "node_down", Value: "const(" + restartDelay.String() + ")"},
		{Name: "client_crash_rate", Value: fmt.Sprint(*clientCrashRate)},
		{Name: "node_clock_jump_rate", Value: fmt.Sprint(*jumpRate)}, {Name: "node_clock_jump", Value: *jump},
		// A holder releases only once its last write is acknowledged, as a careful
		// service does: otherwise the workload's own release race (a write still in flight
		// when the next holder writes) shows as stale writes no lock setting can prevent.
		{Name: "release_after_ack", Value: "true"}}
	if *pauses != "" {
		envKnobs = append(envKnobs, sweep.KV{Name: "pause_rate", Value: fmt.Sprint(*pauseRate)},
			sweep.KV{Name: "pause_len", Value: pauseKnob})
	}
	conf := tune.Confirmation{Env: envKnobs, Duration: *duration, Replicates: *seeds, Seed: *seed}
	if _, err = conf.Spec(rep.rec); err != nil {
		return usageIf(err)
	}
	opt := sweep.Options{Dir: filepath.Join(*out, "confirm"), Workers: *workers, Overwrite: *overwrite,
		Tool: "redlock-sim " + version(), Progress: sweep.ProgressFor(os.Stderr, *quiet)}
	if err := opt.Validate(); err != nil {
		return usageIf(err)
	}
	if _, err := os.Stat(filepath.Join(*out, "report.md")); err == nil && !*overwrite {
		return bad(fmt.Errorf("--out %s already holds a report; choose another folder or add --overwrite", *out))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return bad(fmt.Errorf("--out %s: %v", *out, err))
	}
	if *overwrite {
		// Later rounds of an earlier report would otherwise sit beside this one's.
		old, _ := filepath.Glob(filepath.Join(*out, "confirm-*", sweep.ManifestFile))
		for _, m := range old {
			if err := os.RemoveAll(filepath.Dir(m)); err != nil {
				return err
			}
		}
	}

	printRecommendation(stdout, rep)
	// Rounds of runs, each a sweep of its own folder and seed, pooled: the first of
	// --seeds runs per ttl, then as many more as the bounds still need (MoreRuns), until
	// they meet the target or --max-seeds is spent. Every round is a deterministic
	// function of the ones before, so the report is the same for any --workers.
	runs := *seeds
	for round := 1; runs > 0; round++ {
		c := conf
		c.Replicates, c.Seed = runs, *seed+uint64(round-1)
		spec, err := c.Spec(rep.rec)
		if err != nil {
			return usageIf(err)
		}
		if round == 1 {
			rep.spec = spec
		}
		o := opt
		if round > 1 {
			o.Dir = filepath.Join(*out, fmt.Sprintf("confirm-%d", round))
		}
		if !*quiet {
			fmt.Fprintf(stderr, "confirming, round %d: %d ttls × %d seeds of %v each → %s\n", round, spec.Points(), runs, *duration, o.Dir)
		}
		if _, err := sweep.Run(ctx, experiments.SweepRunner(), spec, o); err != nil {
			switch {
			case errors.Is(err, context.Canceled):
				return fmt.Errorf("%w: tune stopped during its confirmation sweep", errInterrupted)
			case sweep.IsUsage(err):
				return bad(err)
			}
			return err
		}
		got, err := tune.ReadOutcomes(o.Dir)
		if err != nil {
			return err
		}
		rep.outcomes = tune.Pool(rep.outcomes, got)
		rep.rounds = append(rep.rounds, o.Dir)
		runs = min(tune.NextRuns(rep.outcomes, recommendedTTL(rep), lims.counted(rep)), *maxSeeds-rep.outcomes[0].Runs)
	}
	rep.verdicts = verdicts(rep, lims, *maxUnavailable, *clientCrashRate, *perSecond)
	if *jumpRate > 0 {
		rep.verdicts = append(rep.verdicts, fmt.Sprintf("wall-clock steps (%g a second per node, of %s): a node whose clock "+
			"steps forward expires its keys that much early, and no ttl or drift_factor covers a step; the rates above "+
			"include them. Slew clocks rather than step them (chrony's makestep only at boot)", *jumpRate, *jump))
	}
	rep.verdicts = append(rep.verdicts, alternative(rep, lims))
	fmt.Fprintln(stdout, "\nConfirmation by simulation (every violation kind per 10,000 acquisitions, with its 95% upper bound):")
	fmt.Fprintln(stdout, tune.Table(rep.outcomes, recommendedTTL(rep)))
	for _, v := range rep.verdicts {
		fmt.Fprintln(stdout, v)
	}
	md := reportMarkdown(rep)
	path := filepath.Join(*out, "report.md")
	if err := writeFileAtomic(path, []byte(md)); err != nil {
		return err
	}
	// The first round's figures (the ttl against each safety and liveness measure),
	// drawn into the folder and embedded in report.html.
	figDir := filepath.Join(*out, "figures")
	if err := os.MkdirAll(figDir, 0o755); err != nil {
		return err
	}
	drawn, err := plots.SweepFigures(rep.rounds[0], figDir)
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
		figs = append(figs, htmlpage.Figure{Name: f, PNG: b, Caption: "confirmation, round 1: " + filepath.Base(f)})
	}
	page, err := htmlpage.Render("Tuning report", md, figs)
	if err != nil {
		return err
	}
	htmlPath := filepath.Join(*out, "report.html")
	if err := writeFileAtomic(htmlPath, page); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nreport written to %s and %s (self-contained, %d figures)\n", path, htmlPath, len(figs))
	return nil
}

// recommendedTTL is the recommended ttl as the confirmation sweep spells it.
func recommendedTTL(rep *tuneReport) string {
	v, err := experiments.SweepRunner().Knob("ttl", rep.rec.TTL.String())
	if err != nil {
		return rep.rec.TTL.String()
	}
	return v
}

// tuneLimits are the targets the confirmation is held to: each violation kind's limit
// per 10,000 acquisitions (ViolationKinds order), the lowest acquire success share, and
// the longest p99 time to acquire (0: none).
type tuneLimits struct {
	kinds   []float64
	success float64
	p99     time.Duration
}

// counted returns the kinds' limits with those that do not count (see counted) lifted.
func (l tuneLimits) counted(rep *tuneReport) []float64 {
	out := slices.Clone(l.kinds)
	for i := range out {
		if !counted(rep, i) {
			out[i] = -1
		}
	}
	return out
}

// success is the share of acquires that succeeded; 1 when none was tried.
func success(o *tune.Outcome) float64 {
	if o.Acquired+o.Failed == 0 {
		return 1
	}
	return float64(o.Acquired) / float64(o.Acquired+o.Failed)
}

// meets reports whether o meets every target the confirmation can check.
func (l tuneLimits) meets(rep *tuneReport, o *tune.Outcome) bool { return l.safe(rep, o) && l.live(o) }

func (l tuneLimits) safe(rep *tuneReport, o *tune.Outcome) bool {
	return tune.Meets(*o, l.counted(rep))
}

func (l tuneLimits) live(o *tune.Outcome) bool {
	fast := l.p99 == 0 || (o.AcquireP99Ms >= 0 && o.AcquireP99Ms <= float64(l.p99)/float64(time.Millisecond))
	return fast && success(o) >= l.success
}

// verdicts holds the recommended ttl's confirmation to each target.
func verdicts(rep *tuneReport, lims tuneLimits, maxUnavail time.Duration, clientCrashRate, perSecond float64) []string {
	want := recommendedTTL(rep)
	var o *tune.Outcome
	for i := range rep.outcomes {
		if rep.outcomes[i].TTL == want {
			o = &rep.outcomes[i]
		}
	}
	if o == nil {
		return nil
	}
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	var out []string
	for i, r := range o.Violations {
		if !counted(rep, i) {
			out = append(out, fmt.Sprintf("with fencing, %s is expected and harmless to the resource: the storage rejects "+
				"the stale holder's writes (%s)", tune.ViolationKinds[i], r))
			continue
		}
		limit := lims.kinds[i]
		_, up := r.Per10k()
		verdict := mark(up <= limit)
		if r.Count == 0 && up > limit {
			verdict = fmt.Sprintf("not shown: none seen, but %d acquisitions bound it only to %.3g; %d would (raise --max-seeds)",
				r.Acquisitions, up, tune.AcquisitionsFor(limit, tune.Conf))
		}
		line := fmt.Sprintf("target %s ≤ %.3g per 10,000: %s (%s)", tune.ViolationKinds[i], limit, verdict, r)
		if perSecond > 0 {
			est, upYear := r.PerYear(perSecond)
			line += fmt.Sprintf("; at %g acquisitions a second, %s a year, at most %s", perSecond, yearly(est), yearly(upYear))
		}
		out = append(out, line)
	}
	if lims.success > 0 {
		out = append(out, fmt.Sprintf("target acquire success ≥ %g: %s (%d acquired, %d given up after every try: %.4f)",
			lims.success, mark(success(o) >= lims.success), o.Acquired, o.Failed, success(o)))
	}
	if lims.p99 > 0 {
		ms := float64(lims.p99) / float64(time.Millisecond)
		out = append(out, fmt.Sprintf("target acquire p99 ≤ %v: %s (median over runs %.1f ms)", lims.p99,
			mark(o.AcquireP99Ms >= 0 && o.AcquireP99Ms <= ms), o.AcquireP99Ms))
	}
	if maxUnavail > 0 {
		switch {
		case clientCrashRate == 0:
			out = append(out, fmt.Sprintf("target unavailability after a holder crash ≤ %v: bounded by the ttl (%v) in the arithmetic; not simulated (--client-crash-rate is 0)", maxUnavail, rep.rec.TTL))
		case o.ReacquireAfterCrashMaxMs < 0:
			out = append(out, fmt.Sprintf("target unavailability after a holder crash ≤ %v: no holder crashed in the runs; raise --client-crash-rate or --seeds to see it", maxUnavail))
		default:
			ms := float64(maxUnavail) / float64(time.Millisecond)
			out = append(out, fmt.Sprintf("target unavailability after a holder crash ≤ %v: %s (longest seen %.0f ms)", maxUnavail,
				mark(o.ReacquireAfterCrashMaxMs <= ms), o.ReacquireAfterCrashMaxMs))
		}
	}
	return out
}

// alternative says which confirmed ttl to use: the recommended one when the simulation
// bears it out, else the shortest ttl that meets the violation and time-to-acquire
// targets, else that none does (and what would help).
func alternative(rep *tuneReport, lims tuneLimits) string {
	want := recommendedTTL(rep)
	for i := range rep.outcomes {
		if o := &rep.outcomes[i]; o.TTL == want && lims.meets(rep, o) {
			return "verdict: the simulation bears the recommendation out: ttl " + want + " meets every target it could check"
		}
	}
	for i := range rep.outcomes {
		if o := &rep.outcomes[i]; lims.meets(rep, o) {
			return fmt.Sprintf("verdict: the arithmetic's ttl %s does not meet the targets in simulation (its design percentile, p%g, "+
				"leaves the rarest holds and pauses uncovered); ttl %s does: use --set ttl=%s", want, tune.DesignPercentile, o.TTL, o.TTL)
		}
	}
	for i := range rep.outcomes {
		if o := &rep.outcomes[i]; lims.safe(rep, o) {
			return fmt.Sprintf("verdict: ttl %s meets the violation targets, but no ttl meets the liveness targets "+
				"(time to acquire p99 %.0f ms or more at every ttl; acquire success %.4f at this one): the clients wait "+
				"for one another's work; fewer clients per lock, shorter holds, more tries, or a looser target",
				o.TTL, minP99(rep.outcomes), success(o))
		}
	}
	return "verdict: no ttl tried meets the violation targets: where none was seen, more runs (--max-seeds) " +
		"tighten the bounds; where violations were seen, only fencing tokens checked by the resource protect it"
}

// counted reports whether violation kind i counts against the target: all do, except
// that with fencing only the stale writes the resource accepted do, since fencing lets two
// holders believe and work at once but keeps the resource safe.
func counted(rep *tuneReport, i int) bool {
	return !rep.rec.Fencing || tune.ViolationKinds[i] == experiments.MetricStaleWritesAccepted
}

func minP99(os []tune.Outcome) float64 {
	m := -1.0
	for _, o := range os {
		if o.AcquireP99Ms >= 0 && (m < 0 || o.AcquireP99Ms < m) {
			m = o.AcquireP99Ms
		}
	}
	return m
}

// yearly spells a count per year: whole numbers when there are many, three figures when
// there are few.
func yearly(x float64) string {
	if x >= 100 {
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// loadTuneFile sets, from the YAML file path, every flag of fs the command line did not
// set. Keys are flag names, with dashes or underscores; values are scalars, spelled as on
// the command line.
func loadTuneFile(fs *flag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--file %s: %v", path, err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("--file %s: not a YAML map of inputs: %v", path, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // errors name the same key whatever the map's order
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	for _, k := range keys {
		name := strings.ReplaceAll(k, "_", "-")
		f := fs.Lookup(name)
		if f == nil || name == "file" || name == "help" {
			msg := fmt.Sprintf("--file %s: unknown input %q", path, k)
			if s := suggest.Closest(name, names, 1); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", s[0])
			}
			return errors.New(msg)
		}
		if fs.Changed(name) {
			continue
		}
		var v string
		switch x := m[k].(type) {
		case string:
			v = x
		case int, int64, uint64, float64, bool:
			v = fmt.Sprint(x)
		default:
			return fmt.Errorf("--file %s: %s: want a single value such as 5, 200 or p50=1ms,p99=5ms, got %v", path, k, m[k])
		}
		if err := fs.Set(name, v); err != nil {
			return fmt.Errorf("--file %s: %s: %v", path, k, err)
		}
	}
	return nil
}

func printRecommendation(w io.Writer, rep *tuneReport) {
	fmt.Fprintln(w, "Inputs fitted:")
	for _, f := range rep.fits {
		fmt.Fprintln(w, "  "+f)
	}
	fmt.Fprintln(w, "\nRecommended settings:")
	var sets []string
	for _, s := range rep.rec.Knobs() {
		sets = append(sets, "--set "+s.Name+"="+s.Value)
		fmt.Fprintf(w, "  %-15s %s\n", s.Name, s.Value)
	}
	if rep.rec.Fencing {
		fmt.Fprintln(w, "  fencing         needed: no ttl protects the resource here (see the conflicts)")
	}
	fmt.Fprintln(w, "  as knobs: "+strings.Join(sets, " "))
	fmt.Fprintln(w, "\nThe arithmetic:")
	for _, st := range rep.rec.Steps {
		fmt.Fprintln(w, "  "+st.Name+":")
		for _, l := range st.Lines {
			fmt.Fprintln(w, "    "+l)
		}
	}
	for _, c := range rep.rec.Conflicts {
		fmt.Fprintln(w, "\nCONFLICT: "+c.String())
	}
}

// reportMarkdown is report.md: the recommendation, the arithmetic, the confirmation and
// the alternatives, self-contained.
func reportMarkdown(rep *tuneReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Tuning report\n\nMade by `%s`.\n\nEvery input, as used (run `redlock-sim tune` with these to repeat it): `%s`\n\n## Inputs, fitted\n\n",
		strings.TrimSpace(rep.command), rep.inputs)
	for _, f := range rep.fits {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	b.WriteString("\n## Recommended settings\n\n| knob | value |\n| --- | --- |\n")
	for _, s := range rep.rec.Knobs() {
		fmt.Fprintf(&b, "| `%s` | %s |\n", s.Name, s.Value)
	}
	if rep.rec.Fencing {
		b.WriteString("| fencing | needed: no ttl protects the resource here |\n")
	}
	b.WriteString("\n## The arithmetic\n\n")
	for _, st := range rep.rec.Steps {
		fmt.Fprintf(&b, "**%s**\n\n", st.Name)
		for _, l := range st.Lines {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		b.WriteString("\n")
	}
	if len(rep.rec.Conflicts) > 0 {
		b.WriteString("## Conflicts\n\n")
		for _, c := range rep.rec.Conflicts {
			fmt.Fprintf(&b, "- %s\n", c.String())
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## Confirmation by simulation\n\n%d runs per ttl in %d round(s) from seed %d, pooled; the sweeps "+
		"are in %s (`redlock-sim plot --in DIR` draws one). Rounds after the first add the runs the bounds still "+
		"needed to meet the target (--max-seeds caps them). Each violation kind per 10,000 acquisitions, with its 95%% "+
		"Clopper–Pearson upper bound, which stays honest when nothing was seen. The rows above and below the "+
		"recommendation are the alternatives: what half and double the ttl would cost. Holders release only "+
		"after their last write is acknowledged (release_after_ack), so stale writes are the lock's, not the "+
		"workload's own release race.\n\n",
		rep.outcomes[0].Runs, len(rep.rounds), rep.spec.Seed, strings.Join(rep.rounds, ", "))
	b.WriteString(tune.Table(rep.outcomes, recommendedTTL(rep)))
	if len(rep.verdicts) > 0 {
		b.WriteString("\n## Targets\n\n")
		for _, v := range rep.verdicts {
			fmt.Fprintf(&b, "- %s\n", v)
		}
	}
	return b.String()
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
