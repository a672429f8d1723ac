package experiments

import (
	"context"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// SweepRunner returns the simulated world as a sweep.Runner: knobs are checked by the
// world's knob registry (plus the scenario pseudo-knob), and each run's metrics become the
// CSV columns of the sweep. It is the only place the generic engine meets the world.
func SweepRunner() sweep.Runner { return sweepRunner{} }

type sweepRunner struct{}

func (sweepRunner) Knob(name, value string) (string, error) { return Knob(name, value) }

func (sweepRunner) Columns() []sweep.Column {
	cols := Columns()
	out := make([]sweep.Column, len(cols))
	for i, c := range cols {
		out[i] = sweep.Column{Name: c.Name, Kind: sweepKind(c.Kind)}
	}
	return out
}

// acqPer10k is the scale of the violation rates: per 10,000 acquisitions, so that a rate
// reads as a whole number in the regimes worth studying and compares across sweeps whose
// runs acquire more or less often.
const acqPer10k = 10_000

// Ratios declares summary.csv's derived columns: the acquire success rate (of the
// acquires that ended, the share that got the lock), acquisitions per attempt (a round of
// SETs, retries included), both with Wilson intervals, and each violation kind per 10,000
// acquisitions, each a ratio of sums over the point's runs. The kinds stay
// separate: an overlap is the lock's failure, a stale write the workload's.
func (sweepRunner) Ratios() []sweep.Ratio {
	r := []sweep.Ratio{
		// The acquire success rate, as the figures draw it: of the acquires that ended, the
		// share that got the lock rather than giving up after every try.
		{Name: "acquire_success_frac", Num: MetricAcquired, Den: MetricAcquired + "+" + MetricFailed, Proportion: true},
		// Of the attempts (rounds of SETs, retries included), the share that won: low
		// under contention by design, since waiters retry while the holder holds.
		{Name: "acquired_per_attempt", Num: MetricAcquired, Den: MetricAttempts, Proportion: true},
	}
	for _, kind := range []string{MetricValidityOverlaps, MetricUsageOverlaps, MetricStaleWritesAccepted, MetricFencedWritesRejected,
		MetricValidityIncidents, MetricUsageIncidents, MetricStaleIncidents} {
		r = append(r, sweep.Ratio{Name: kind + "_per_10k_acq", Num: kind, Den: MetricAcquired, Scale: acqPer10k})
	}
	return r
}

func (sweepRunner) Run(ctx context.Context, settings []sweep.KV, seed uint64) ([]sweep.Value, error) {
	kvs := make([]knobs.KV, len(settings))
	for i, kv := range settings {
		kvs[i] = knobs.KV{Name: kv.Name, Value: kv.Value}
	}
	rec, err := RunKnobs(ctx, kvs, seed)
	if err != nil {
		return nil, err
	}
	ms := rec.Metrics()
	out := make([]sweep.Value, len(ms))
	for i, m := range ms {
		out[i] = sweepValue(m)
	}
	return out, nil
}

func sweepKind(k MetricKind) sweep.Kind {
	switch k {
	case MetricBool:
		return sweep.KindBool
	case MetricCount:
		return sweep.KindCount
	case MetricMs:
		return sweep.KindMillis
	case MetricFloat:
		return sweep.KindFloat
	default:
		return sweep.KindText
	}
}

// sweepValue converts one metric; the zero sweep.Value is the engine's "missing".
func sweepValue(m Metric) sweep.Value {
	switch {
	case m.Missing:
		return sweep.Value{}
	case m.Kind == MetricBool:
		return sweep.BoolValue(m.Value != 0)
	case m.Kind == MetricCount:
		return sweep.IntValue(int64(m.Value))
	case m.Kind == MetricText:
		return sweep.StringValue(m.Text)
	default:
		return sweep.FloatValue(m.Value)
	}
}
