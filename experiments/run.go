package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Options controls what a run produces besides its record.
type Options struct {
	// Trace receives the narrated trace (one line per event) when non-nil. Without it the
	// run formats no text at all; the trace hash is computed either way.
	Trace io.Writer
	// From and To limit the narrated trace to a window of true time; To = 0 means the end.
	From, To time.Duration
	// Narrate filters the narrated trace and sets its precision.
	Narrate report.TraceOptions
	// Timeline, when non-nil, receives the run's space-time diagram (see Timeline). It is
	// collected only then, and collecting it never changes the run or its trace hash.
	Timeline *report.Timeline
}

// Run runs scenario (the baseline when empty) with knobs set on top of the scenario's
// own, for seed. An unknown scenario or knob is an *UnknownError, a bad value a
// *sim.ParamError. ctx is checked once per simulated second; cancelling it stops the run
// with ctx's error.
func Run(ctx context.Context, scenario string, settings []knobs.KV, seed uint64, opts Options) (*Record, error) {
	sc, err := scenarios.LookupScenario(scenario)
	if err != nil {
		return nil, err
	}
	return RunScenario(ctx, sc, settings, seed, opts)
}

// RunScenario is Run for a scenario already in hand, such as a user's file
// (scenarios.LoadFile); settings may set its parameters as well as knobs.
func RunScenario(ctx context.Context, sc *scenarios.Scenario, settings []knobs.KV, seed uint64, opts Options) (*Record, error) {
	w, err := AssembleScenario(sc, settings, seed)
	if err != nil {
		return nil, err
	}
	return RunWorld(ctx, w, sc.Name, opts)
}

// Assemble plans, shapes and builds the world of a scenario with knobs on top, ready to
// run: Plan, the scenario's Configure, Build, the scenario's Setup.
func Assemble(scenario string, settings []knobs.KV, seed uint64) (*world.World, *scenarios.Scenario, error) {
	sc, err := scenarios.LookupScenario(scenario)
	if err != nil {
		return nil, nil, err
	}
	w, err := AssembleScenario(sc, settings, seed)
	return w, sc, err
}

// AssembleScenario is Assemble for a scenario already in hand (a user's file): settings
// may set its parameters as well as knobs.
func AssembleScenario(sc *scenarios.Scenario, settings []knobs.KV, seed uint64) (*world.World, error) {
	cfg, params, _, err := scenarioConfig(sc, settings)
	if err != nil {
		return nil, err
	}
	w, err := world.Plan(cfg, seed)
	if err != nil {
		return nil, err
	}
	if err := sc.Configure(w, params); err != nil {
		return nil, err
	}
	if err := w.Build(); err != nil {
		return nil, err
	}
	if err := sc.Setup(w, params); err != nil {
		return nil, err
	}
	return w, nil
}

// scenarioConfig is the configuration of a run of sc with settings: the defaults, the
// scenario's knobs, then the user's; it returns the scenario's parameter values and the
// user's knob settings (those that are not parameters), in order.
func scenarioConfig(sc *scenarios.Scenario, settings []knobs.KV) (knobs.Config, scenarios.Values, []knobs.KV, error) {
	params, rest, err := sc.Bind(settings)
	if err != nil {
		return knobs.Config{}, scenarios.Values{}, nil, err
	}
	cfg := knobs.DefaultConfig()
	// A client profile is the base of everything else, the scenario's knobs included: a
	// story keeps its timing (its ttl, its pauses) whichever library it is told with.
	if err := cfg.Apply(clientOnly(sc.Knobs, rest)); err != nil {
		return knobs.Config{}, scenarios.Values{}, nil, err
	}
	if err := cfg.Apply(withoutClient(sc.Knobs)); err != nil {
		return knobs.Config{}, scenarios.Values{}, nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	if err := cfg.Apply(withoutClient(rest)); err != nil {
		return knobs.Config{}, scenarios.Values{}, nil, err
	}
	return cfg, params, rest, nil
}

// clientOnly returns the `client` settings of each list, in order.
func clientOnly(lists ...[]knobs.KV) []knobs.KV {
	var out []knobs.KV
	for _, l := range lists {
		for _, kv := range l {
			if kv.Name == "client" {
				out = append(out, kv)
			}
		}
	}
	return out
}

// withoutClient returns kvs without its `client` settings.
func withoutClient(kvs []knobs.KV) []knobs.KV {
	out := make([]knobs.KV, 0, len(kvs))
	for _, kv := range kvs {
		if kv.Name != "client" {
			out = append(out, kv)
		}
	}
	return out
}

// RunKnobs runs one world for the sweep engine: knobs may include the pseudo-knob
// "scenario" (the scenario whose defaults the other knobs override; baseline when absent),
// applied first wherever it appears.
func RunKnobs(ctx context.Context, settings []knobs.KV, seed uint64) (*Record, error) {
	scenario, rest := splitScenario(settings)
	return Run(ctx, scenario, rest, seed, Options{})
}

// splitScenario takes the pseudo-knob "scenario" out of knob settings as the sweep engine
// passes them ("" when absent: baseline), leaving the rest in order.
func splitScenario(settings []knobs.KV) (scenario string, rest []knobs.KV) {
	rest = make([]knobs.KV, 0, len(settings))
	for _, kv := range settings {
		if kv.Name == "scenario" {
			scenario = kv.Value
			continue
		}
		rest = append(rest, kv)
	}
	return scenario, rest
}

// Knob validates one knob value for a sweep spec and returns its canonical text; it also
// accepts the pseudo-knob "scenario".
func Knob(name, value string) (string, error) {
	if name == "scenario" {
		sc, err := scenarios.LookupScenario(value)
		if err != nil {
			return "", err
		}
		return sc.Name, nil
	}
	canon, err := knobs.Canonical(name, value)
	var ue *knobs.UnknownError
	if errors.As(err, &ue) {
		// A built-in scenario's parameter is a knob of that scenario: checked here by its
		// kind, and against the point's scenario when the sweep checks each point.
		if p := scenarios.ParamNamed(name); p != nil {
			return p.Check(value)
		}
	}
	return canon, err
}

// RunWorld runs the built world w to the end of its duration and returns its record,
// named after scenario.
func RunWorld(ctx context.Context, w *world.World, scenario string, opts Options) (*Record, error) {
	if !w.Built() {
		return nil, fmt.Errorf("world: Run before Build")
	}
	var nar *report.Narrator
	var sinks teeSink
	if opts.Trace != nil {
		var err error
		if nar, err = report.NewNarrator(w, opts.Trace, sim.Time(opts.From), sim.Time(opts.To), opts.Narrate); err != nil {
			return nil, err
		}
		sinks = append(sinks, nar)
	}
	var tc *report.TimelineCollector
	if opts.Timeline != nil {
		tc = report.AttachTimeline(w)
		sinks = append(sinks, tc)
	}
	sinks.install(w.Sim)
	wall := time.Now() // determinism:allow measures wall_time_s only; nothing in the run reads it
	end := sim.Time(w.Config.Duration)
	for t := sim.Time(0); t < end; {
		t = min(end, t.Add(time.Second))
		if err := w.Sim.RunUntil(t); err != nil {
			return nil, fmt.Errorf("run %s seed %d at %v: %w", scenario, w.Seed, w.Sim.Now(), err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	w.Oracle.Finish(end)
	if nar != nil {
		nar.Finish()
	}
	rec := record(w, scenario)
	w.Oracle.ReleaseHistogram()
	rec.WallTimeS = time.Since(wall).Seconds() // determinism:allow
	if tc != nil {
		*opts.Timeline = *tc.Finish(rec.Scenario, rec.Seed)
	}
	if nar != nil && nar.Err() != nil {
		return rec, fmt.Errorf("writing the trace: %w", nar.Err())
	}
	// A record the report cannot read is a bug in the record's decoder or its writer: the
	// narration shows it, and the run says so.
	if nar != nil && nar.Undecoded() != nil {
		return rec, fmt.Errorf("narrating the trace: %w", nar.Undecoded())
	}
	if tc != nil && tc.Undecoded() != nil {
		return rec, fmt.Errorf("drawing the timeline: %w", tc.Undecoded())
	}
	return rec, nil
}

func record(w *world.World, scenario string) *Record {
	o := w.Oracle
	n := o.Counts()
	rec := &Record{
		Scenario:  scenario,
		Seed:      w.Seed,
		TraceHash: fmt.Sprintf("%016x", w.Sim.TraceHash()),
		Config:    KnobList(w.Config.Knobs()),
		Safety: Safety{ValidityOverlaps: n.ValidityOverlaps, UsageOverlaps: n.UsageOverlaps,
			StaleWritesAccepted: n.StaleWritesAccepted, FencedWritesRejected: n.FencedWritesRejected,
			ValidityIncidents: n.ValidityIncidents, UsageIncidents: n.UsageIncidents, StaleIncidents: n.StaleIncidents},
		Liveness: Liveness{
			Attempts: n.Attempts, Acquired: n.Acquired, Failed: n.Failed,
			FailuresByReason: Failures{NoQuorum: n.NoQuorum, Timeout: n.Timeout,
				ValidityExpired: n.ValidityExpired, FenceFailed: n.FenceFailed, Aborted: n.Aborted,
				ServerError: n.ServerError},
			SplitBrainRounds:     n.SplitBrainRounds,
			UnheldWhileWaitingMs: toMs(o.Unheld()),
			Extensions:           ExtensionStat{Tried: n.ExtensionsTried, Succeeded: n.ExtensionsSucceeded},
		},
		SimTimeS:   w.Config.Duration.Seconds(),
		Events:     w.Sim.Executed(),
		Violations: o.Violations(),
	}
	if rec.Violations == nil {
		rec.Violations = []oracle.Violation{}
	}
	if rec.SimTimeS > 0 {
		rec.Liveness.AcquisitionsPerS = float64(n.Acquired) / rec.SimTimeS
	}
	if qs, mx, ok := o.AcquireLatency(50, 90, 99); ok {
		rec.Liveness.AcquireLatencyMs = Percentiles{P50: &qs[0], P90: &qs[1], P99: &qs[2], Max: &mx}
	}
	rec.Liveness.HolderCrashes = n.HolderCrashes
	if qs, mx, ok := o.ReacquireAfterCrash(50, 90, 99); ok {
		rec.Liveness.ReacquireAfterCrashMs = Percentiles{P50: &qs[0], P90: &qs[1], P99: &qs[2], Max: &mx}
	}
	return rec
}

// toMs converts a duration to milliseconds, to the microsecond.
func toMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// teeSink hands each trace record to several sinks in order: the narrated trace and the
// timeline can be asked for together.
type teeSink []sim.Sink

// Record passes r to every sink.
func (t teeSink) Record(r *sim.Record) {
	for _, s := range t {
		s.Record(r)
	}
}

// install attaches the sinks to s: none leaves the run without a sink (no record is even
// built), one is attached directly.
func (t teeSink) install(s *sim.Sim) {
	switch len(t) {
	case 0:
	case 1:
		s.SetSink(t[0])
	default:
		s.SetSink(t)
	}
}
