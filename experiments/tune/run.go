package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// Inputs is everything `tune` is told, as the user gave it: the environment, the load,
// the targets and the confirmation's size. Distributions are percentiles as typed
// (p50=1ms,p99=5ms); an empty Pauses or Think means none given. Errors name the flag.
type Inputs struct {
	Nodes          int
	Persistence    string
	Latency        string
	ClientDriftPPM float64
	NodeDriftPPM   float64
	Pauses         string
	PauseRate      float64 // pauses per client per second
	Work           string
	Think          string
	Clients        int
	NodeCrashRate  float64 // per node per second
	RestartDelay   time.Duration
	// RestartDelayGiven says --restart-delay was given, not defaulted.
	RestartDelayGiven bool
	ClientCrashRate   float64 // per client per second
	JumpRate          float64 // forward wall-clock steps per node per second
	Jump              string  // their size, a duration or distribution knob value
	StallRate         float64 // stalls of each master per second (SIGSTOP, a long fork, swapping)
	Stall             string  // their length, a duration or distribution knob value
	Client            string  // the client profile

	MaxViolationsPer10k  float64
	MaxViolationsPerYear float64
	// MaxValidity, MaxUsage and MaxStale are each kind's limit per 10,000; -1: as
	// MaxViolationsPer10k.
	MaxValidity, MaxUsage, MaxStale float64
	MinSuccess                      float64 // 0: DefaultMinSuccess
	MaxAcquireP99                   time.Duration
	MaxUnavailability               time.Duration
	PerSecond                       float64 // the load on this lock, acquisitions a second

	Duration        time.Duration
	Seeds, MaxSeeds int
	Seed            uint64
}

// DefaultInputs returns the inputs `tune` assumes for everything not given.
func DefaultInputs() Inputs {
	return Inputs{Nodes: 5, Persistence: "none", Latency: "p50=500us,p99=800us", PauseRate: 0.1,
		Work: "p50=50ms,p99=100ms", Clients: 3, RestartDelay: time.Second, Jump: "1s", Stall: "10s", Client: "spec",
		MaxViolationsPer10k: 1, MaxValidity: -1, MaxUsage: -1, MaxStale: -1,
		Duration: 10 * time.Minute, Seeds: 10, MaxSeeds: 200, Seed: 1}
}

// Plan is a validated tune: the fitted environment, the recommendation and the
// confirmation it will run. Prepare makes one without touching the disk.
type Plan struct {
	In   Inputs
	Env  Env
	Fits []string // each fitted distribution, with its percentiles
	Rec  Recommendation
	// Lib is the library's rules (--client): what it fixes, its option names, the
	// snippet; Effective is Rec as the library will run it, what the confirmation
	// simulates.
	Lib       Library
	Effective Recommendation
	Limits    Limits
	Conf      Confirmation

	stall dist.Dist // --node-stall, parsed
}

// Limits are the targets the confirmation is held to: each violation kind's limit per
// 10,000 acquisitions (ViolationKinds order), the least acquire success share (with
// whether the user stated it) and the longest p99 time to acquire (0: none).
type Limits struct {
	Kinds          []float64
	Success        float64
	SuccessStated  bool
	P99            time.Duration
	Unavailability time.Duration
}

// Prepare validates in, fits its distributions and works out the recommendation and the
// confirmation. Bad input is an *InputError naming the flag.
func Prepare(in Inputs) (*Plan, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	p := &Plan{In: in}
	fit := func(flag, text string) (dist.Dist, string, error) {
		rest, capAt, err := CutCap("--"+flag, text)
		if err != nil {
			return dist.Dist{}, "", err
		}
		pts, err := ParsePercentiles("--"+flag, rest)
		if err != nil {
			return dist.Dist{}, "", err
		}
		f, err := FitPercentiles("--"+flag, pts)
		if err != nil {
			return dist.Dist{}, "", err
		}
		if capAt > 0 {
			top := f.Asked[len(f.Asked)-1]
			if capAt < top.V {
				return dist.Dist{}, "", &InputError{"--" + flag, text, fmt.Sprintf("max=%v is below %s: a cap is the worst case, above every percentile", capAt, top)}
			}
			if f.Dist.Kind == dist.KindLognormal || f.Dist.Kind == dist.KindExponential {
				f.Dist.Cap = capAt
			}
		}
		var rows []string
		for _, r := range f.Percentiles() {
			rows = append(rows, r.String())
		}
		p.Fits = append(p.Fits, fmt.Sprintf("--%s %s → %s (%s)", flag, text, f.Knob(), strings.Join(rows, "; ")))
		return f.Dist, f.Knob(), nil
	}
	e := Env{Nodes: in.Nodes, ClientDriftPPM: in.ClientDriftPPM, NodeDriftPPM: in.NodeDriftPPM, Clients: in.Clients,
		NodeRestartDelay: in.RestartDelay, Pause: dist.Constant(0), Load: Load{PerSecond: in.PerSecond}}
	if in.Pauses != "" {
		e.PauseRate = in.PauseRate
	}
	e.NodeCrashRate, e.RestartDelayGiven = in.NodeCrashRate, in.RestartDelayGiven
	var err error
	if e.Persistence, err = redis.ParsePersistence(in.Persistence); err != nil {
		return nil, &InputError{"--persistence", in.Persistence, "allowed none, aof-everysec or aof-always"}
	}
	var latKnob, workKnob, pauseKnob string
	if e.Latency, latKnob, err = fit("latency", in.Latency); err != nil {
		return nil, err
	}
	if e.Work, workKnob, err = fit("work", in.Work); err != nil {
		return nil, err
	}
	if in.Pauses != "" {
		if e.Pause, pauseKnob, err = fit("pauses", in.Pauses); err != nil {
			return nil, err
		}
	}
	if in.Think != "" {
		if e.Load.Think, _, err = fit("think", in.Think); err != nil {
			return nil, err
		}
		e.Load.ThinkGiven = true
	}
	if _, err := knobs.LookupProfile(in.Client); err != nil {
		return nil, &InputError{"--client", in.Client, err.Error()}
	}
	if p.Lib, err = LibraryFor(in.Client); err != nil {
		return nil, err
	}
	if _, err := experiments.SweepRunner().Knob("node_clock_jump", in.Jump); err != nil {
		return nil, &InputError{"--node-clock-jump", in.Jump, err.Error()}
	}
	if _, err := experiments.SweepRunner().Knob("node_pause_len", in.Stall); err != nil {
		return nil, &InputError{"--node-stall", in.Stall, err.Error()}
	}
	if p.stall, err = knobs.ParseDist(in.Stall); err != nil {
		return nil, &InputError{"--node-stall", in.Stall, err.Error()}
	}
	p.Env = e
	p.Limits = in.limits()
	t := Targets{AcquireP99: in.MaxAcquireP99, Unavailability: in.MaxUnavailability, MinSuccess: p.Limits.Success,
		MaxIncidents: slices.Min(p.Limits.Kinds) / Per10k}
	if p.Rec, err = RecommendFor(e, t, p.Lib); err != nil {
		return nil, err
	}
	p.Effective = p.Lib.Effective(p.Rec)
	p.Conf = Confirmation{Env: in.envKnobs(latKnob, workKnob, pauseKnob), Duration: in.Duration,
		Replicates: in.Seeds, Seed: in.Seed}
	if _, err := p.Conf.Spec(p.Effective); err != nil {
		return nil, inFlagTerms(err)
	}
	return p, nil
}

// check refuses what no arithmetic can use: NaN and infinities, negative rates and
// counts, sizes out of range.
func (in Inputs) check() error {
	for _, f := range []struct {
		flag string
		v    float64
	}{{"client-drift-ppm", in.ClientDriftPPM}, {"node-drift-ppm", in.NodeDriftPPM}, {"pause-rate", in.PauseRate},
		{"node-crash-rate", in.NodeCrashRate}, {"client-crash-rate", in.ClientCrashRate},
		{"node-clock-jump-rate", in.JumpRate}, {"node-stall-rate", in.StallRate}, {"max-violations-per-10k", in.MaxViolationsPer10k},
		{"max-violations-per-year", in.MaxViolationsPerYear}, {"max-validity-overlaps-per-10k", in.MaxValidity},
		{"max-usage-overlaps-per-10k", in.MaxUsage}, {"max-stale-writes-per-10k", in.MaxStale},
		{"min-success", in.MinSuccess}, {"acquisitions-per-second", in.PerSecond}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return &InputError{"--" + f.flag, strconv.FormatFloat(f.v, 'g', -1, 64), "want a finite number"}
		}
	}
	bad := func(flag string, v any, problem string) error {
		return &InputError{"--" + flag, fmt.Sprint(v), problem}
	}
	switch {
	case in.Seeds < 1 || in.Seeds > 10000:
		return bad("seeds", in.Seeds, "allowed 1 to 10000")
	case in.MaxSeeds < in.Seeds || in.MaxSeeds > 100000:
		return bad("max-seeds", in.MaxSeeds, fmt.Sprintf("allowed --seeds (%d) to 100000", in.Seeds))
	case in.Duration <= 0:
		return bad("duration", in.Duration, "a run must simulate some time, e.g. 10m")
	case in.PerSecond < 0:
		return bad("acquisitions-per-second", in.PerSecond, "a rate cannot be negative")
	case in.MaxViolationsPer10k < 0:
		return bad("max-violations-per-10k", in.MaxViolationsPer10k, "a rate cannot be negative")
	case in.MaxViolationsPerYear < 0:
		return bad("max-violations-per-year", in.MaxViolationsPerYear, "a count cannot be negative")
	case in.MaxViolationsPerYear > 0 && in.PerSecond == 0:
		return bad("max-violations-per-year", in.MaxViolationsPerYear, "needs --acquisitions-per-second, the load that turns a count a year into a rate")
	case in.MinSuccess < 0 || in.MinSuccess > 1:
		return bad("min-success", in.MinSuccess, "a share of acquires, allowed 0 to 1 (0: the default, 0.99), e.g. 0.99")
	case in.MaxAcquireP99 < 0:
		return bad("max-acquire-p99", in.MaxAcquireP99, "a duration cannot be negative (0: no target)")
	case in.MaxUnavailability < 0:
		return bad("max-unavailability", in.MaxUnavailability, "a duration cannot be negative (0: no target)")
	}
	for _, f := range []struct {
		flag string
		v    float64
	}{{"pause-rate", in.PauseRate}, {"node-crash-rate", in.NodeCrashRate}, {"client-crash-rate", in.ClientCrashRate},
		{"node-clock-jump-rate", in.JumpRate}, {"node-stall-rate", in.StallRate}} {
		if f.v < 0 || f.v > knobs.MaxFaultRate {
			return bad(f.flag, f.v, fmt.Sprintf("events a second, allowed 0 to %g", float64(knobs.MaxFaultRate)))
		}
	}
	for _, f := range []struct {
		flag string
		v    float64
	}{{"max-validity-overlaps-per-10k", in.MaxValidity}, {"max-usage-overlaps-per-10k", in.MaxUsage}, {"max-stale-writes-per-10k", in.MaxStale}} {
		if f.v < 0 && f.v != -1 {
			return bad(f.flag, f.v, "a rate cannot be negative (-1 means as --max-violations-per-10k)")
		}
	}
	return nil
}

// limits returns the targets in force, the defaults filled in.
func (in Inputs) limits() Limits {
	l := Limits{Success: in.MinSuccess, SuccessStated: in.MinSuccess > 0, P99: in.MaxAcquireP99,
		Unavailability: in.MaxUnavailability}
	if !l.SuccessStated {
		l.Success = DefaultMinSuccess
	}
	all := in.MaxViolationsPer10k
	if in.MaxViolationsPerYear > 0 {
		all = in.MaxViolationsPerYear / (in.PerSecond * SecondsPerYear) * Per10k
	}
	for _, v := range []float64{in.MaxValidity, in.MaxUsage, in.MaxStale} {
		if v == -1 {
			v = all
		}
		l.Kinds = append(l.Kinds, v)
	}
	return l
}

// envKnobs returns the environment as knobs: the client profile first, so that what
// tune recommends overrides the library's defaults.
func (in Inputs) envKnobs(latKnob, workKnob, pauseKnob string) []sweep.KV {
	kv := []sweep.KV{{Name: "client", Value: in.Client}, {Name: "scenario", Value: "baseline"},
		{Name: "nodes", Value: strconv.Itoa(in.Nodes)}, {Name: "persistence", Value: in.Persistence},
		{Name: "latency", Value: latKnob}, {Name: "client_clock_drift_ppm", Value: fmt.Sprint(in.ClientDriftPPM)},
		{Name: "node_clock_drift_ppm", Value: fmt.Sprint(in.NodeDriftPPM)}, {Name: "hold", Value: workKnob},
		{Name: "clients", Value: strconv.Itoa(in.Clients)}, {Name: "node_crash_rate", Value: fmt.Sprint(in.NodeCrashRate)},
		{Name: "client_crash_rate", Value: fmt.Sprint(in.ClientCrashRate)},
		{Name: "node_clock_jump_rate", Value: fmt.Sprint(in.JumpRate)},
		// A holder releases only once its last write is acknowledged, as a careful
		// service does: otherwise the workload's own release race (a write still in flight
		// when the next holder writes) shows as stale writes no lock setting can prevent.
		{Name: "release_after_ack", Value: "true"}}
	// A fault's size only where the fault happens: `run` refuses a knob that cannot
	// change the run.
	if in.NodeCrashRate > 0 {
		kv = append(kv, sweep.KV{Name: "node_down", Value: "const(" + in.RestartDelay.String() + ")"})
	}
	if in.JumpRate > 0 {
		kv = append(kv, sweep.KV{Name: "node_clock_jump", Value: in.Jump})
	}
	if in.StallRate > 0 {
		kv = append(kv, sweep.KV{Name: "node_pause_rate", Value: fmt.Sprint(in.StallRate)},
			sweep.KV{Name: "node_pause_len", Value: in.Stall})
	}
	if pauseKnob != "" {
		kv = append(kv, sweep.KV{Name: "pause_rate", Value: fmt.Sprint(in.PauseRate)},
			sweep.KV{Name: "pause_len", Value: pauseKnob})
	}
	// What the client's algorithm never reads (Redis's persistence, for Curator) is left
	// out: `run` refuses a setting that cannot change the run.
	return slices.DeleteFunc(kv, func(s sweep.KV) bool { return ignoredBy(in.Client, s.Name) })
}

// ignoredBy reports whether the algorithm of the client profile never reads knob
// (knobs.Algorithm.Ignores).
func ignoredBy(client, knob string) bool {
	p, err := knobs.LookupProfile(client)
	if err != nil {
		return false
	}
	name := "redlock"
	for _, s := range p.Sets {
		if s.Name == "algorithm" {
			name = s.Value
		}
	}
	a, err := knobs.LookupAlgorithm(name)
	return err == nil && slices.Contains(a.Ignores, knob)
}

// Options are how a tune runs its confirmation: where, on how many workers, and what it
// may do to a folder that holds an earlier tune.
type Options struct {
	Dir       string
	Workers   int
	Overwrite bool
	// Resume continues the tune recorded in Dir: every round already complete is kept,
	// the one cut short goes on, and the report is the one an uninterrupted tune writes.
	Resume bool
	Tool   string
	// Progress is each round's sweep progress; Log gets one line as each round starts
	// (nil: none).
	Progress sweep.Progress
	Log      io.Writer
}

// Report is what a tune learned: the plan, the confirmation pooled over its rounds, and
// the verdicts.
type Report struct {
	*Plan
	Outcomes []Outcome
	Rounds   []string // the confirmation sweeps' folders, one per round
	Spec     *sweep.Spec
	Verdicts []string
	// Verdict is the last word: whether the recommendation stands, and if another ttl
	// does instead, the recommendation recomputed for it (Alternative).
	Verdict     string
	Met         bool
	Alternative *Recommendation
	// Unresolved is the runs per ttl more the bounds would have needed when they were
	// beyond --max-seeds (0: none were): the analytic estimates answer those targets.
	Unresolved int

	lock *sweep.Lock // the first round's folder, held until Release: figures come from it
}

// Release lets go of the first round's folder, once the figures drawn from it are
// written.
func (r *Report) Release() {
	if r.lock != nil {
		r.lock.Unlock()
	}
}

// ErrInterrupted marks a tune whose context was cancelled during its confirmation; the
// folder can be resumed (Options.Resume).
var ErrInterrupted = errors.New("tune stopped during its confirmation sweep")

// Run runs the plan's confirmation into opt.Dir, round after round, and returns the
// report. Each round is a sweep of its own folder and seed, pooled: the first of
// --seeds runs per ttl, then as many more as the bounds still need (NextRuns), until they
// meet the targets or --max-seeds is spent. Every round is a deterministic function of
// the ones before, so the report is the same for any number of workers, and a resumed
// tune ends where an uninterrupted one does.
func (p *Plan) Run(ctx context.Context, opt Options) (*Report, error) {
	rep := &Report{Plan: p}
	base := sweep.Options{Dir: filepath.Join(opt.Dir, "confirm"), Workers: opt.Workers, Overwrite: opt.Overwrite,
		Resume: opt.Resume, Tool: opt.Tool, Progress: opt.Progress}
	if err := base.Validate(); err != nil {
		return nil, err
	}
	want := p.RecommendedTTL()
	counted := p.countedLimits()
	runs := p.In.Seeds
	lock, err := sweep.LockFolder(base.Dir, "tune")
	if err != nil {
		return nil, err
	}
	rep.lock = lock
	ok := false
	defer func() {
		if !ok {
			rep.Release()
		}
	}()
	for round := 1; runs > 0; round++ {
		c := p.Conf
		c.Replicates, c.Seed = runs, p.In.Seed+uint64(round-1)
		spec, err := c.Spec(p.Effective)
		if err != nil {
			return nil, err
		}
		if round == 1 {
			rep.Spec = spec
		}
		o := base
		if round == 1 {
			o.Lock = lock
		} else {
			o.Dir = filepath.Join(opt.Dir, fmt.Sprintf("confirm-%d", round))
		}
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "confirming, round %d: %d %ss × %d seeds of %v each → %s\n", round, spec.Points(), p.Axis(), runs, p.In.Duration, o.Dir)
		}
		if _, err := sweep.Run(ctx, experiments.SweepRunner(), spec, o); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil, fmt.Errorf("%w (round %d, %s)", ErrInterrupted, round, o.Dir)
			}
			return nil, err
		}
		got, err := ReadOutcomesOf(o.Dir, p.Axis())
		if err != nil {
			return nil, err
		}
		rep.Outcomes = Pool(rep.Outcomes, got)
		rep.Rounds = append(rep.Rounds, o.Dir)
		need, left := NextRuns(rep.Outcomes, want, counted), p.In.MaxSeeds-rep.Outcomes[0].Runs
		if need > left {
			// The bounds cannot reach the target within --max-seeds: more runs only cost
			// time, and the analytic estimates answer (beyondSimulation).
			rep.Unresolved, need = need, 0
		}
		runs = need
	}
	if err := removeLaterRounds(opt.Dir, len(rep.Rounds)); err != nil {
		return nil, err
	}
	rep.judge()
	ok = true
	return rep, nil
}

// removeLaterRounds removes the confirm-N folders past the rounds this tune ran: an
// earlier tune's, which --overwrite replaces, or a resumed tune's that now ends sooner.
func removeLaterRounds(dir string, rounds int) error {
	old, _ := filepath.Glob(filepath.Join(dir, "confirm-*"))
	for _, d := range old {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "confirm-"))
		if err != nil || n <= rounds {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	return nil
}

// RecommendedTTL is the recommended ttl (for a session lock, session timeout) as the
// confirmation sweep spells it.
func (p *Plan) RecommendedTTL() string {
	return leaseKnob(p.Effective.LeaseKnob(), p.Effective.Lease())
}

// Axis is the knob the confirmation sweeps: ttl, or session_timeout for a session lock.
func (p *Plan) Axis() string { return p.Effective.LeaseKnob() }

func leaseKnob(knob string, d time.Duration) string {
	v, err := experiments.SweepRunner().Knob(knob, d.String())
	if err != nil {
		return d.String()
	}
	return v
}

// counted reports whether violation kind i counts against the target: all do, except
// that with fencing only the stale writes the resource accepted do, since fencing lets two
// holders believe and work at once but keeps the resource safe.
func (p *Plan) counted(i int) bool {
	return !p.Rec.Fencing || ViolationKinds[i] == experiments.MetricStaleWritesAccepted
}

// countedLimits returns the kinds' limits with those that do not count lifted (-1).
func (p *Plan) countedLimits() []float64 {
	out := slices.Clone(p.Limits.Kinds)
	for i := range out {
		if !p.counted(i) {
			out[i] = -1
		}
	}
	return out
}

// Success is the share of acquires that succeeded; 1 when none was tried.
func (o *Outcome) Success() float64 {
	if o.Acquired+o.Failed == 0 {
		return 1
	}
	return float64(o.Acquired) / float64(o.Acquired+o.Failed)
}

// SuccessBound is the 95 % lower bound of the success share: a target is met only when
// the evidence says so, as for the violations.
func (o *Outcome) SuccessBound() float64 {
	n := int(o.Acquired + o.Failed)
	if n == 0 {
		return 1
	}
	return 1 - UpperBound(int(o.Failed), n, Conf)
}

// Refusal is the share of tries the simulation saw refused: the per-try probability the
// arithmetic estimated (Contention.Refusal).
func (o *Outcome) Refusal() float64 {
	if o.Attempts == 0 {
		return 0
	}
	return float64(o.Attempts-o.Acquired) / float64(o.Attempts)
}

// safe reports whether o meets every violation target: by its bound, or, where nothing
// was seen and no number of runs --max-seeds allows could show the target, by the
// analytic estimate (beyondSimulation).
func (p *Plan) safe(o *Outcome) bool {
	lims := p.countedLimits()
	for i, v := range o.Violations {
		if _, up := v.Per10k(); lims[i] < 0 || up <= lims[i] {
			continue
		}
		if est, ok := p.beyondSimulation(o, i); !ok || est*Per10k > lims[i] {
			return false
		}
	}
	return true
}

// analytic returns kind i's incidents per acquisition as the arithmetic estimates them for
// recommendation r, and whether it can: usage overlaps from work and pauses outlasting
// the validity (usageTail) and from two majorities after crash-restarts (nodesStep);
// validity overlaps from the latter alone, since drift_factor covers the stated clocks;
// stale writes no more than usage overlaps (a stale write needs a holder working past its
// lock), none with fencing. Clock steps are not reasoned about: no estimate.
func (p *Plan) analytic(r Recommendation, i int) (float64, bool) {
	if r.Session != nil {
		// A session lock: a pause beyond the session makes both overlaps (the paused
		// holder still believes it holds); stale writes too, unless the czxid fences
		// them (fence_token). Session expiry runs on the leader's monotonic clock, which
		// a wall-clock step does not move.
		if IncidentKinds[i] == experiments.MetricStaleIncidents && r.Fencing {
			return 0, true
		}
		return min(r.UsageTail, 1), true
	}
	if p.In.JumpRate > 0 {
		return 0, false
	}
	switch IncidentKinds[i] {
	case experiments.MetricValidityIncidents:
		return r.CrashTail, true
	case experiments.MetricStaleIncidents:
		if r.Fencing {
			return 0, true
		}
	}
	return min(r.UsageTail+r.CrashTail, 1), true
}

// beyondSimulation returns kind i's analytic estimate for o's ttl when the simulation
// cannot decide the target: none was seen, and even --max-seeds runs would not bring
// the bound down to the limit.
func (p *Plan) beyondSimulation(o *Outcome, i int) (float64, bool) {
	v, limit := o.Violations[i], p.countedLimits()[i]
	if v.Count != 0 || o.Runs == 0 || o.Acquired == 0 {
		return 0, false
	}
	perRun := float64(o.Acquired) / float64(o.Runs)
	if float64(AcquisitionsFor(limit, Conf)) <= perRun*float64(p.In.MaxSeeds) {
		return 0, false
	}
	r, ok := p.rowRec(o.TTL)
	if !ok {
		return 0, false
	}
	return p.analytic(r, i)
}

// rowRec returns the settings a confirmation row ran: the recommendation as the library
// runs it, with the row's ttl (a knob spelling), and its analytic estimates worked out
// for them, so that they describe what was simulated.
func (p *Plan) rowRec(ttl string) (Recommendation, bool) {
	d, err := time.ParseDuration(ttl)
	if err != nil {
		return Recommendation{}, false
	}
	r := p.Effective.withLease(d)
	if r.Session != nil {
		r.UsageTail, _ = sessionTail(p.Env, r)
		return r, true
	}
	r.UsageTail, _ = usageTail(p.Env, r)
	r.CrashTail, _ = nodesStep(p.Env, r)
	return r, true
}

func (p *Plan) successful(o *Outcome) bool { return o.Success() >= p.Limits.Success }

func (p *Plan) fast(o *Outcome) bool {
	return p.Limits.P99 == 0 || (o.AcquireP99Ms >= 0 && o.AcquireP99Ms <= float64(p.Limits.P99)/float64(time.Millisecond))
}

// meets reports whether o meets every target the confirmation can check.
func (p *Plan) meets(o *Outcome) bool { return p.safe(o) && p.successful(o) && p.fast(o) }

// outcome returns the pooled outcome of the ttl spelled ttl, or nil.
func (r *Report) outcome(ttl string) *Outcome {
	for i := range r.Outcomes {
		if r.Outcomes[i].TTL == ttl {
			return &r.Outcomes[i]
		}
	}
	return nil
}

// judge holds the recommended ttl's confirmation to each target and says which ttl to
// use.
func (r *Report) judge() {
	o := r.outcome(r.RecommendedTTL())
	if o == nil {
		return
	}
	for i := range r.Outcomes {
		if rec, ok := r.rowRec(r.Outcomes[i].TTL); ok {
			if est, ok := r.analytic(rec, 1); ok {
				r.Outcomes[i].UsageEstimate = est
			}
		}
	}
	r.Verdicts = r.targetLines(o)
	if r.In.JumpRate > 0 && r.Rec.Session != nil {
		r.Verdicts = append(r.Verdicts, fmt.Sprintf("wall-clock steps (%g a second per node, of %s): ZooKeeper expires sessions on the leader's monotonic clock "+
			"and the client counts silence on its own, so a step of a wall clock changes nothing the lock relies on; the rates above include them", r.In.JumpRate, r.In.Jump))
	} else if r.In.JumpRate > 0 {
		r.Verdicts = append(r.Verdicts, fmt.Sprintf("wall-clock steps (%g a second per node, of %s): a node whose clock "+
			"steps forward expires its keys that much early, and no ttl or drift_factor covers a step; the rates above "+
			"include them. Slew clocks rather than step them (chrony's makestep only at boot)", r.In.JumpRate, r.In.Jump))
	}
	if r.In.StallRate > 0 && r.Rec.Session != nil {
		r.Verdicts = append(r.Verdicts, fmt.Sprintf("server stalls (%.3g a second each, %s on average): a stalled server's clients hear nothing for readTimeout (2/3 of the session) and move to another, a stalled leader is deposed after syncLimit ticks and an election follows; the acquire p99 and give-ups above include them",
			r.In.StallRate, FormatDuration(Mean(r.stall))))
	} else if r.In.StallRate > 0 {
		r.Verdicts = append(r.Verdicts, r.stallLine())
	}
	r.Verdicts = append(r.Verdicts, r.rareFaults(o)...)
	r.Verdict, r.Met = r.alternative()
}

// rareFaults says which faults the confirmation drew too few of to measure what they do
// (fewer than a handful in all its runs), so that a verdict is never read as covering
// them: the arithmetic's estimates answer for those.
func (r *Report) rareFaults(o *Outcome) []string {
	const handful = 5
	var out []string
	step := "nodes and crashes"
	if r.Rec.Session != nil {
		step = "session_timeout and ensemble"
	}
	for _, f := range []struct {
		what   string
		rate   float64
		actors int
	}{{"node crashes", r.In.NodeCrashRate, r.In.Nodes}, {"client crashes", r.In.ClientCrashRate, r.In.Clients},
		{"wall-clock steps", r.In.JumpRate, r.In.Nodes}, {"master stalls", r.In.StallRate, r.In.Nodes}} {
		if f.rate == 0 {
			continue
		}
		if n := expectedEvents(f.rate, f.actors, r.In.Duration, o.Runs); n < handful {
			out = append(out, fmt.Sprintf("not exercised: the confirmation's %d runs of %v drew about %.2g %s in all (%.3g a second × %d × %v × %d): too few to measure what they do; the arithmetic (%s) answers for them",
				o.Runs, r.In.Duration, n, f.what, f.rate, f.actors, r.In.Duration, o.Runs, step))
		}
	}
	if exp := r.Rec.UsageTail * float64(o.Acquired); r.Rec.UsageTail > 0 && exp < handful {
		out = append(out, fmt.Sprintf("the analytic estimate expects about %.2g usage overlap incidents in the confirmation's %d acquisitions: too few for the simulation to measure that rate; the estimate answers for it",
			exp, o.Acquired))
	}
	if r.Unresolved > 0 {
		out = append(out, fmt.Sprintf("the bounds would have needed %d more runs per %s to show the targets, beyond --max-seeds %d: no more were run, and the analytic estimates answer where nothing was seen",
			r.Unresolved, r.Axis(), r.In.MaxSeeds))
	}
	return out
}

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// targetLines holds o to each target, one line each.
func (r *Report) targetLines(o *Outcome) []string {
	var out []string
	for i, v := range o.Violations {
		if !r.counted(i) {
			out = append(out, fmt.Sprintf("with fencing, %s is expected and harmless to the resource: the storage rejects "+
				"the stale holder's writes (%s: %s)", ViolationKinds[i], IncidentKinds[i], v))
			continue
		}
		limit := r.Limits.Kinds[i]
		_, up := v.Per10k()
		verdict := mark(up <= limit)
		if est, ok := r.beyondSimulation(o, i); ok {
			verdict = fmt.Sprintf("%s by the analytic estimate, %.3g per 10,000: none seen, and simulation cannot show a rate this small (it would take %d acquisitions, more than --max-seeds allows)",
				mark(est*Per10k <= limit), est*Per10k, AcquisitionsFor(limit, Conf))
		} else if v.Count == 0 && up > limit {
			verdict = fmt.Sprintf("NOT shown: none seen, but %d acquisitions bound it only to %.3g; %d would (raise --max-seeds)",
				v.Acquisitions, up, AcquisitionsFor(limit, Conf))
		}
		if est, ok := r.analytic(r.Rec, i); ok {
			verdict += fmt.Sprintf(" [analytic estimate %.3g per 10,000]", est*Per10k)
		}
		line := fmt.Sprintf("target %s ≤ %.3g per 10,000: %s (%s; %d overlapping pairs behind them)", IncidentKinds[i], limit, verdict, v, o.Pairs[i])
		if r.In.PerSecond > 0 {
			est, upYear := v.PerYear(r.In.PerSecond)
			line += fmt.Sprintf("; at %g acquisitions a second, simulated %s a year (at most %s)", r.In.PerSecond, yearly(est), yearly(upYear))
			if a, ok := r.analytic(r.Rec, i); ok {
				line += fmt.Sprintf(", analytic %s a year", yearly(a*r.In.PerSecond*SecondsPerYear))
			}
		}
		out = append(out, line)
	}
	stated := "the default, stated: a tuning that gives up acquires is not one to ship; --min-success sets another"
	if r.Limits.SuccessStated {
		stated = "--min-success"
	}
	out = append(out, fmt.Sprintf("target acquire success ≥ %g (%s): %s (%d acquired, %d given up after every try: %.4f)",
		r.Limits.Success, stated, mark(r.successful(o)), o.Acquired, o.Failed, o.Success()))
	if r.Limits.P99 > 0 {
		ms := float64(r.Limits.P99) / float64(time.Millisecond)
		out = append(out, fmt.Sprintf("target acquire p99 ≤ %v: %s (median over runs %.1f ms)", r.Limits.P99,
			mark(o.AcquireP99Ms >= 0 && o.AcquireP99Ms <= ms), o.AcquireP99Ms))
	}
	if u := r.Limits.Unavailability; u > 0 {
		switch {
		case r.In.ClientCrashRate == 0 && r.Rec.Session != nil:
			out = append(out, fmt.Sprintf("target unavailability after a holder crash ≤ %v: bounded by the session's expiry (%s: the session timeout, a tick's bucket and the hand-off) in the arithmetic; not simulated (--client-crash-rate is 0)", u, FormatDuration(r.Rec.Session.Unavailability)))
		case r.In.ClientCrashRate == 0:
			out = append(out, fmt.Sprintf("target unavailability after a holder crash ≤ %v: bounded by the ttl (%v) in the arithmetic; not simulated (--client-crash-rate is 0)", u, r.Rec.TTL))
		case o.ReacquireAfterCrashMaxMs < 0:
			out = append(out, fmt.Sprintf("target unavailability after a holder crash ≤ %v: not exercised: no holder crashed in the runs; raise --client-crash-rate or --seeds to see it", u))
		default:
			ms := float64(u) / float64(time.Millisecond)
			out = append(out, fmt.Sprintf("target unavailability after a holder crash ≤ %v: %s (longest seen %.0f ms)", u,
				mark(o.ReacquireAfterCrashMaxMs <= ms), o.ReacquireAfterCrashMaxMs))
		}
	}
	return out
}

// alternative says which confirmed ttl to use: the recommended one when the simulation
// bears it out, else the shortest ttl that meets every target (with the recommendation
// recomputed for it), else what fails and what would help. It never says a target is met
// that is not.
func (r *Report) alternative() (string, bool) {
	want := r.RecommendedTTL()
	if o := r.outcome(want); o != nil && r.meets(o) {
		var byEstimate []string
		for i := range o.Violations {
			if _, ok := r.beyondSimulation(o, i); ok && r.countedLimits()[i] >= 0 {
				byEstimate = append(byEstimate, IncidentKinds[i])
			}
		}
		if len(byEstimate) > 0 {
			return fmt.Sprintf("verdict: %s %s meets every target: the simulation bears out what it can see, acquires given up included, and the analytic estimates answer for %s, rates too small for any simulation to show",
				r.Axis(), want, strings.Join(byEstimate, ", ")), true
		}
		return "verdict: the simulation bears the recommendation out: " + r.Axis() + " " + want + " meets every target it could check, acquires given up included", true
	}
	// Only longer ttls: a shorter one is below what the arithmetic needs at its design
	// percentile, and seeing no violation there is luck, not evidence.
	from := slices.IndexFunc(r.Outcomes, func(o Outcome) bool { return o.TTL == want })
	for i := max(from, 0) + 1; from >= 0 && i < len(r.Outcomes); i++ {
		o := &r.Outcomes[i]
		if !r.meets(o) {
			continue
		}
		alt, err := r.recomputeFor(o.TTL)
		if err != nil {
			break
		}
		r.Alternative = &alt
		why := fmt.Sprintf("its design percentile, p%g, leaves the rarest holds and pauses uncovered", DesignPercentile)
		if rec := r.outcome(want); rec != nil && r.safe(rec) {
			why = "it is safe there but not live enough"
		}
		return fmt.Sprintf("verdict: the arithmetic's %s %s does not meet the targets in simulation (%s); %s %s meets every one, acquires given up included. "+
			"The settings recomputed for it: %s", r.Axis(), want, why, r.Axis(), o.TTL, strings.Join(r.Alternative.SetFlags(), " ")), true
	}
	o := r.outcome(want)
	if o == nil {
		return "verdict: no confirmation", false
	}
	var failed []string
	if !r.safe(o) {
		failed = append(failed, "violations")
	}
	if !r.successful(o) {
		// A waiter gave up with probability g after every one of n tries was refused: as
		// if each was refused with probability g^(1/n).
		g := 1 - o.Success()
		perTry := math.Pow(g, 1/float64(r.Rec.Tries))
		need := triesFor(perTry, r.Limits.Success)
		failed = append(failed, fmt.Sprintf("acquire success (%.4f < %g: %d tries gave up %.3g of acquires, as if each try of a waiter were refused %.3g of the time, "+
			"where the arithmetic assumed %.3g; %d tries would meet the target at that rate; a lower load would too)", o.Success(), r.Limits.Success,
			r.Rec.Tries, g, perTry, r.Rec.Contention.Refusal, need))
	}
	if !r.fast(o) {
		failed = append(failed, fmt.Sprintf("acquire p99 (%.0f ms): the clients wait for one another's work; fewer clients per lock, shorter holds or a lower load", o.AcquireP99Ms))
	}
	advice := ""
	if !r.safe(o) {
		advice = "; where no violation was seen, more runs (--max-seeds) tighten the bounds; where violations were seen at every " + r.Axis() + ", only fencing tokens checked by the resource protect it"
		delayed := r.Env
		delayed.NodeRestartDelay = dist.MaxDuration
		if r.Lib.Profile == "hybrid" {
			advice = "; the hybrid lock is two locks: an acquire Redis gives up (its tries run out behind a holder, or a partition) escalates to the free ZooKeeper lock beside Redis's holder, whatever the ttl (docs/zookeeper.md, \"The hybrid lock\"); no setting of Redlock's removes that, only a lock that does not escalate does"
		} else if r.estimatesMeet(r.Effective) {
			advice = "; the analytic estimates meet the targets at this " + r.Axis() + ", so the simulation saw more than they expect, or too little to show it: more runs (--max-seeds) or a longer " + r.Axis() + " from the table"
		} else if alt, ok := r.ttlForEstimates(r.Env); ok {
			r.Alternative = &alt
			advice = fmt.Sprintf("; by the analytic estimates, %s %v would meet the violation targets (usage overlap incidents %.3g per 10,000), beyond what simulation can show: the settings recomputed for it: %s",
				r.Axis(), alt.Lease(), (alt.UsageTail+alt.CrashTail)*Per10k, strings.Join(alt.SetFlags(), " "))
		} else if alt, ok := r.ttlForEstimates(delayed); ok && r.In.NodeCrashRate > 0 {
			r.Alternative = &alt
			advice = fmt.Sprintf("; by the analytic estimates no ttl meets the targets with crashed masters back after %v: a longer ttl covers more of the long holds and pauses but gives a master that restarts early more time to forget it. "+
				"Ttl %v with crashed masters kept down at least that long (delayed restarts) would (usage overlap incidents %.3g per 10,000): the settings recomputed for it: %s",
				r.Env.NodeRestartDelay, alt.TTL, alt.UsageTail*Per10k, strings.Join(alt.SetFlags(), " "))
		}
	}
	return "verdict: NOT met at any ttl tried: " + strings.Join(failed, "; ") + advice, false
}

// estimatesMeet reports whether every counted kind's analytic estimate for rec meets
// its limit (false where there is no estimate).
func (r *Report) estimatesMeet(rec Recommendation) bool {
	for i, l := range r.countedLimits() {
		est, ok := r.analytic(rec, i)
		if !ok || (l >= 0 && est*Per10k > l) {
			return false
		}
	}
	return true
}

// ttlForEstimates returns the recommendation, recomputed for the least ttl (whole
// milliseconds) at which every counted kind's analytic estimate meets its limit, searched
// from the recommended ttl up to what the unavailability target allows; false when the
// estimates do not answer (clock steps) or no such ttl exists. The estimates are not
// monotone in the ttl (a longer one covers longer pauses, but gives a master that
// restarts early more time to forget it), so the search walks up in steps of 5 %, then
// bisects the last step.
func (r *Report) ttlForEstimates(e Env) (Recommendation, bool) {
	lims := r.countedLimits()
	fits := func(ttl time.Duration) (Recommendation, bool) {
		t := Targets{AcquireP99: r.In.MaxAcquireP99, Unavailability: r.In.MaxUnavailability, MinSuccess: r.Limits.Success, TTL: ttl}
		rec, err := RecommendFor(e, t, r.Lib)
		if err != nil {
			return rec, false
		}
		for i, l := range lims {
			est, ok := r.analytic(rec, i)
			if !ok || (l >= 0 && est*Per10k > l) {
				return rec, false
			}
		}
		return rec, true
	}
	hi := redlock.MaxTTL
	if r.Rec.Session != nil {
		hi = knobs.MaxZKWait
	}
	if u := r.In.MaxUnavailability; u > 0 {
		hi = min(hi, u)
	}
	lo := r.Rec.Lease() // fails, or the recommendation would have met the targets
	for next := lo; next <= hi; {
		next = max(next+time.Millisecond, time.Duration(float64(next)*1.05)/time.Millisecond*time.Millisecond)
		if _, ok := fits(min(next, hi)); !ok {
			lo = next
			continue
		}
		up := min(next, hi)
		for up-lo > time.Millisecond {
			mid := (lo + up) / 2 / time.Millisecond * time.Millisecond
			if mid <= lo {
				break
			}
			if _, ok := fits(mid); ok {
				up = mid
			} else {
				lo = mid
			}
		}
		return fits(up)
	}
	return Recommendation{}, false
}

// recomputeFor returns the recommendation for the environment with its ttl pinned to
// ttl (a knob spelling), so that everything that depends on the ttl follows it.
func (r *Report) recomputeFor(ttl string) (Recommendation, error) {
	d, err := time.ParseDuration(ttl)
	if err != nil {
		return Recommendation{}, err
	}
	t := Targets{AcquireP99: r.In.MaxAcquireP99, Unavailability: r.In.MaxUnavailability, MinSuccess: r.Limits.Success, TTL: d}
	rec, err := RecommendFor(r.Env, t, r.Lib)
	return r.Lib.Effective(rec), err
}

// yearly spells a count per year: whole numbers when there are many, three figures when
// there are few.
func yearly(x float64) string {
	if x >= 100 {
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// stallLine is what master stalls cost, in the arithmetic: how often an attempt asks a
// stalled master, and what such an attempt waits for (the per-node timeout as the library
// runs it, or the stall itself where the library has none), so that the confirmation's
// acquire p99 and give-ups can be read against it.
func (r *Report) stallLine() string {
	mean := Mean(r.stall)
	frac := min(float64(r.In.Nodes)*r.In.StallRate*mean.Seconds(), 1)
	wait := min(r.Effective.Timeout, mean)
	return fmt.Sprintf("master stalls (%.3g a second each, %s on average): some master is stalled about N × rate × stall = %d × %.3g × %s = %.3g of the time; an attempt that asks it waits %s (%s), and its vote is lost for the stall; the acquire p99 and give-ups above include them",
		r.In.StallRate, FormatDuration(mean), r.In.Nodes, r.In.StallRate, FormatDuration(mean), frac, FormatDuration(wait),
		map[bool]string{true: "the per-node timeout", false: "the stall: the timeout is longer"}[r.Effective.Timeout <= mean])
}

// flagOfKnob is the tune flag behind each environment knob of the confirmation, so that a
// value the simulator refuses is reported in the words the user typed.
var flagOfKnob = map[string]string{
	"duration": "--duration", "latency": "--latency", "hold": "--work", "pause_len": "--pauses",
	"pause_rate": "--pause-rate", "nodes": "--nodes", "clients": "--clients", "persistence": "--persistence",
	"client_clock_drift_ppm": "--client-drift-ppm", "node_clock_drift_ppm": "--node-drift-ppm",
	"node_crash_rate": "--node-crash-rate", "client_crash_rate": "--client-crash-rate",
	"node_clock_jump_rate": "--node-clock-jump-rate", "node_clock_jump": "--node-clock-jump",
	"node_pause_rate": "--node-stall-rate", "node_pause_len": "--node-stall", "node_down": "--restart-delay",
	"think": "--think or --acquisitions-per-second", "client": "--client",
}

// inFlagTerms rewrites a knob's refusal as an *InputError naming the flag behind the knob;
// a refused recommended setting (no flag of the user's) keeps the knob's name, saying so.
func inFlagTerms(err error) error {
	var ve *knobs.ValueError
	if !errors.As(err, &ve) {
		return err
	}
	problem := ve.Problem
	if ve.Allowed != "" {
		problem += " (allowed: " + ve.Allowed + ")"
	}
	if flag, ok := flagOfKnob[ve.Knob]; ok {
		return &InputError{flag, ve.Value, problem}
	}
	return &InputError{"the recommended " + ve.Knob, ve.Value, problem + "; the inputs ask for a setting the simulator cannot take"}
}
