package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/metric"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// Spec is one search: the assumptions that bound its worlds, the fault kinds it may draw,
// the client library, and the liveness the user asks for.
type Spec struct {
	Assume []Assumption
	Faults []string // scenario actions, in the scenario language's order (ParseFaults)
	Client string   // a client profile, or "" for the spec's
	// MaxUnavailable, when above 0, makes a lock that a crashed holder kept from the others
	// longer (from the crash to the next acquisition) a finding, as tune's
	// --max-unavailability; waiting for a live holder is contention, not unavailability.
	MaxUnavailable time.Duration
	// MinSuccess, when above 0, makes a run whose share of acquires that succeeded is below
	// it a finding.
	MinSuccess float64
	// MaxSplitBrain, when 0 or more, makes a run with more split-brain rounds (attempts in
	// which no client won a majority) a finding; -1 leaves them unbounded.
	MaxSplitBrain int
	Seed          uint64
}

// Check checks the spec as a whole: the fault kinds are ones search can draw, and the world
// with every fixed assumption is one the simulator accepts.
func (s *Spec) Check() error {
	for _, k := range s.Faults {
		if !slices.Contains(generators, k) {
			return &InputError{Flag: "--faults", Value: k, Msg: "search cannot draw this fault kind yet"}
		}
	}
	if s.MinSuccess < 0 || s.MinSuccess > 1 {
		return &InputError{Flag: "--min-success", Value: fmt.Sprint(s.MinSuccess), Msg: "want a share of acquires in [0, 1], e.g. 0.99"}
	}
	if s.MaxUnavailable < 0 {
		return &InputError{Flag: "--max-unavailable", Value: s.MaxUnavailable.String(), Msg: "want a duration above 0s, e.g. 30s"}
	}
	cfg := knobs.DefaultConfig()
	if s.Client != "" {
		if err := cfg.Set("client", s.Client); err != nil {
			return &InputError{Flag: "--client", Value: s.Client, Msg: "not a client profile", Err: err}
		}
	}
	for _, a := range s.Assume {
		if _, isLength := lengthKnobs[a.Knob]; a.Op != OpEq || isLength {
			continue
		}
		if err := cfg.Set(a.Knob, a.Value); err != nil {
			return &InputError{Flag: "--assume", Value: a.Text, Msg: "the knob refuses the value", Err: err}
		}
	}
	if err := cfg.Validate(); err != nil {
		return &InputError{Flag: "--assume", Value: "(the fixed assumptions together)", Msg: "the simulator refuses this world", Err: err}
	}
	// Draw one world, to catch a combination no single assumption shows.
	c := s.generate(&chooser{}, 1)
	if _, err := c.scenario("search-check", "", "", ""); err != nil {
		return &InputError{Flag: "--assume", Value: "(all)", Msg: "the simplest world these assumptions allow does not read as a scenario", Err: err}
	}
	return nil
}

// Kind is a kind of finding: a safety violation the oracle judges, or a liveness bound the
// user set that a run broke.
type Kind struct {
	Name string
	Help string
	// Metric is the runs.csv column whose sum over runs is the finding's count.
	Metric string
}

// Kinds returns the kinds of finding, in findings.csv's order.
func Kinds() []Kind { return slices.Clone(kindTable) }

// kindTable is every kind of finding; read-only.
var kindTable = []Kind{
	{"validity_overlap", "two clients believed they held the lock at once: the algorithm broke its promise", metric.ValidityOverlaps},
	{"usage_overlap", "two clients worked on the resource at once", metric.UsageOverlaps},
	{"stale_write", "the resource accepted a write from a client that no longer held the lock", metric.StaleWritesAccepted},
	{"unavailable", "a crashed holder kept the lock from the others longer than --max-unavailable", metric.ReacquireAfterCrashMax},
	{"low_success", "fewer acquires succeeded than --min-success", metric.Failed},
	{"split_brain", "more split-brain rounds than --max-split-brain", metric.SplitBrainRounds},
}

// figures is one run's metrics by name.
type figures map[string]float64

// classify returns the kinds of finding a run shows, in Kinds' order.
func (s *Spec) classify(f figures) []string {
	var out []string
	if f[metric.ValidityOverlaps] > 0 {
		out = append(out, "validity_overlap")
	}
	if f[metric.UsageOverlaps] > 0 {
		out = append(out, "usage_overlap")
	}
	if f[metric.StaleWritesAccepted] > 0 {
		out = append(out, "stale_write")
	}
	if lim := float64(s.MaxUnavailable.Milliseconds()); lim > 0 && f[metric.ReacquireAfterCrashMax] > lim {
		out = append(out, "unavailable")
	}
	if ended := f[metric.Acquired] + f[metric.Failed]; s.MinSuccess > 0 && ended > 0 && f[metric.Acquired]/ended < s.MinSuccess {
		out = append(out, "low_success")
	}
	if s.MaxSplitBrain >= 0 && f[metric.SplitBrainRounds] > float64(s.MaxSplitBrain) {
		out = append(out, "split_brain")
	}
	return out
}

// Shows reports whether rec shows a finding of the safety kind named kind, by its count
// (a record keeps only its first oracle.MaxViolations violations: a run with dozens of
// overlaps may list no stale write it counted).
func Shows(kind string, rec *experiments.Record) bool {
	i := kindIndex(kind)
	return i >= 0 && i < len(kindTable) && recordFigures(rec)[kindTable[i].Metric] > 0
}

// recordFigures reads a record's metrics.
func recordFigures(rec *experiments.Record) figures { return metricFigures(rec.Metrics()) }

// metricFigures reads metrics by name.
func metricFigures(ms []experiments.Metric) figures {
	f := make(figures, len(ms))
	for _, m := range ms {
		if !m.Missing && m.Kind != experiments.MetricText {
			f[m.Name] = m.Value
		}
	}
	return f
}

// Draw returns the world the search draws for the run whose seed is seed: its choices
// come from a stream of that seed alone, so a run is the same whichever worker runs it.
func (s *Spec) Draw(seed uint64) *Case {
	return s.generate(&chooser{rng: streamRand(seed)}, seed)
}

// Replay returns the world choices generate, for seed: what shrinking runs.
func (s *Spec) Replay(choices Choices, seed uint64) *Case {
	return s.generate(&chooser{prefix: choices}, seed)
}

// runner is a search as a sweep.Runner: the sweep engine's workers, order and files, one
// drawn world per run.
type runner struct {
	s     *Spec
	found []atomic.Int64 // runs showing each kind so far, for the progress line
	runs  atomic.Int64
}

// Extra columns a search's runs.csv has before the metrics: the fault kinds a run drew and
// its schedule's length.
const (
	colFaultKinds = "fault_kinds"
	colFaults     = "faults"
)

func (r *runner) Knob(name, value string) (string, error) {
	return "", fmt.Errorf("a search's runs take no knobs (%s = %s): assumptions are its spec", name, value)
}

func (r *runner) Columns() []sweep.Column {
	cols := []sweep.Column{{Name: colFaultKinds, Kind: sweep.KindText}, {Name: colFaults, Kind: sweep.KindCount}}
	return append(cols, experiments.SweepRunner().Columns()...)
}

func (r *runner) Ratios() []sweep.Ratio {
	if rr, ok := experiments.SweepRunner().(sweep.RatioRunner); ok {
		return rr.Ratios()
	}
	return nil
}

func (r *runner) Run(ctx context.Context, _ []sweep.KV, seed uint64) ([]sweep.Value, error) {
	c := r.s.Draw(seed)
	rec, err := c.run(ctx)
	if err != nil {
		return nil, err
	}
	ms := rec.Metrics()
	r.runs.Add(1)
	for _, k := range r.s.classify(metricFigures(ms)) {
		r.found[kindIndex(k)].Add(1)
	}
	var kinds []string
	for _, f := range c.Faults {
		if !slices.Contains(kinds, f.Kind) {
			kinds = append(kinds, f.Kind)
		}
	}
	out := []sweep.Value{sweep.StringValue(joinOr(kinds, "+", "none")), sweep.IntValue(int64(len(c.Faults)))}
	for _, m := range ms {
		out = append(out, sweepValue(m))
	}
	return out, nil
}

// Found returns, for the progress line, how many runs so far showed each kind (Kinds'
// order) and how many ran; the counts are of whatever finished, in no fixed order.
func (r *runner) Found() (runs int64, found []int64) {
	found = make([]int64, len(r.found))
	for i := range r.found {
		found[i] = r.found[i].Load()
	}
	return r.runs.Load(), found
}

func kindIndex(name string) int {
	return slices.IndexFunc(kindTable, func(k Kind) bool { return k.Name == name })
}

// sweepValue converts one metric as the sweep runner does; the zero sweep.Value is
// missing.
func sweepValue(m experiments.Metric) sweep.Value {
	switch {
	case m.Missing:
		return sweep.Value{}
	case m.Kind == experiments.MetricBool:
		return sweep.BoolValue(m.Value != 0)
	case m.Kind == experiments.MetricCount:
		return sweep.IntValue(int64(m.Value))
	case m.Kind == experiments.MetricText:
		return sweep.StringValue(m.Text)
	}
	return sweep.FloatValue(m.Value)
}

func joinOr(s []string, sep, none string) string {
	if len(s) == 0 {
		return none
	}
	out := s[0]
	for _, x := range s[1:] {
		out += sep + x
	}
	return out
}

// ErrInterrupted says the search was stopped (Ctrl-C) before its runs were done: the
// findings of the runs that finished were still written.
var ErrInterrupted = errors.New("search interrupted")
