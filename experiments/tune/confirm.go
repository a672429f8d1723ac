package tune

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// Confirmation checks a recommendation by simulation: the environment as knobs, the
// recommended settings on top, and the ttl swept over the recommendation and its two
// neighbours (half and double), so that the report can say what a shorter or a longer ttl
// would cost. The arithmetic bounds what it can see; the simulation counts what happens,
// including what the arithmetic leaves out (contention, retries, the workload's own
// release race).
type Confirmation struct {
	// Env holds the environment's knobs (the scenario, topology, latency, drift, pauses,
	// crashes, work, clients, the client profile), in the order they are applied.
	Env []sweep.KV
	// Duration is each run's simulated time, Replicates the seeds per ttl.
	Duration   time.Duration
	Replicates int
	Seed       uint64
}

// ConfirmTTLs returns the ttls a confirmation sweeps: half the recommendation, the
// recommendation, and double it, in whole milliseconds within the ttl knob's range.
func ConfirmTTLs(ttl time.Duration) []time.Duration {
	half := max((ttl / 2).Truncate(time.Millisecond), time.Millisecond)
	out := []time.Duration{half, ttl}
	if double := 2 * ttl; double <= 24*time.Hour {
		out = append(out, double)
	}
	return slices.Compact(out)
}

// Spec returns the confirmation sweep for rec: the environment, then rec's knobs, with
// the ttl as the one axis.
func (c Confirmation) Spec(rec Recommendation) (*sweep.Spec, error) {
	spec := &sweep.Spec{Combine: sweep.Grid, Replicates: c.Replicates, Seed: c.Seed}
	check := experiments.SweepRunner()
	set := func(name, value string) error { return spec.Set(check, name, value) }
	for _, kv := range c.Env {
		if err := set(kv.Name, kv.Value); err != nil {
			return nil, err
		}
	}
	if err := set("duration", c.Duration.String()); err != nil {
		return nil, err
	}
	for _, s := range rec.Knobs() {
		if s.Name == "ttl" {
			continue
		}
		if err := set(s.Name, s.Value); err != nil {
			return nil, err
		}
	}
	var ttls []string
	for _, t := range ConfirmTTLs(rec.TTL) {
		v, err := check.Knob("ttl", t.String())
		if err != nil {
			return nil, err
		}
		ttls = append(ttls, v)
	}
	spec.Axes = []sweep.Axis{{Knob: "ttl", Values: ttls}}
	if err := spec.Validate(check); err != nil {
		return nil, err
	}
	return spec, nil
}

// Outcome is one ttl's confirmation: the runs' pooled counts, each violation kind's rate
// per 10,000 acquisitions with its honest upper bound, and the liveness figures.
type Outcome struct {
	TTL        string // as the ttl knob spells it
	Runs       int
	Acquired   int64
	Attempts   int64
	Failed     int64 // acquires that gave up
	Violations []Rate
	// AcquireP99Ms is the median over runs of each run's p99 time to acquire; -1 when no
	// run acquired anything.
	AcquireP99Ms float64
	// ReacquireAfterCrashMaxMs is the longest a crashed holder kept the lock from the
	// others over all runs; -1 when no holder crashed and was followed.
	ReacquireAfterCrashMaxMs float64
}

// ViolationKinds are the violation counts a confirmation rates, by their runs.csv column,
// with their names in reports.
var ViolationKinds = []struct{ Column, Name string }{
	{experiments.MetricValidityOverlaps, "two holders believed valid at once (validity overlaps)"},
	{experiments.MetricUsageOverlaps, "two holders working at once (usage overlaps)"},
	{experiments.MetricStaleWritesAccepted, "stale writes the resource accepted"},
}

// Conf is the confidence of every bound a confirmation reports.
const Conf = 0.95

// ReadOutcomes reads a finished confirmation sweep's runs.csv in dir and pools each
// ttl's runs, in the sweep's point order.
func ReadOutcomes(dir string) ([]Outcome, error) {
	f, err := os.Open(filepath.Join(dir, sweep.RunsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sweep.RunsFile, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	need := []string{sweep.PointColumn, "ttl", experiments.MetricAcquired, experiments.MetricAttempts,
		experiments.MetricFailed, experiments.MetricAcquireLatencyP99Ms, experiments.MetricReacquireAfterCrashMax}
	for _, v := range ViolationKinds {
		need = append(need, v.Column)
	}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return nil, fmt.Errorf("%s: no %q column: not a confirmation sweep", sweep.RunsFile, n)
		}
	}
	type pool struct {
		o          Outcome
		violations []int64
		p99        []float64
	}
	var pools []*pool
	byPoint := map[string]*pool{}
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sweep.RunsFile, err)
		}
		p := byPoint[row[col[sweep.PointColumn]]]
		if p == nil {
			p = &pool{o: Outcome{TTL: row[col["ttl"]], ReacquireAfterCrashMaxMs: -1}, violations: make([]int64, len(ViolationKinds))}
			byPoint[row[col[sweep.PointColumn]]] = p
			pools = append(pools, p)
		}
		num := func(name string) (float64, bool) {
			v, err := strconv.ParseFloat(row[col[name]], 64)
			return v, err == nil
		}
		count := func(name string) int64 { v, _ := num(name); return int64(v) }
		p.o.Runs++
		p.o.Acquired += count(experiments.MetricAcquired)
		p.o.Attempts += count(experiments.MetricAttempts)
		p.o.Failed += count(experiments.MetricFailed)
		for i, v := range ViolationKinds {
			p.violations[i] += count(v.Column)
		}
		if v, ok := num(experiments.MetricAcquireLatencyP99Ms); ok {
			p.p99 = append(p.p99, v)
		}
		if v, ok := num(experiments.MetricReacquireAfterCrashMax); ok && v > p.o.ReacquireAfterCrashMaxMs {
			p.o.ReacquireAfterCrashMaxMs = v
		}
	}
	out := make([]Outcome, 0, len(pools))
	for _, p := range pools {
		p.o.AcquireP99Ms = -1
		if len(p.p99) > 0 {
			slices.Sort(p.p99)
			p.o.AcquireP99Ms = sweep.Quantile(p.p99, 0.5)
		}
		for _, k := range p.violations {
			p.o.Violations = append(p.o.Violations, RateOf(int(k), int(p.o.Acquired), Conf))
		}
		out = append(out, p.o)
	}
	return out, nil
}

// Table renders outcomes as a Markdown table: one row per ttl, the recommended one
// marked, with each violation kind's rate and bound per 10,000 acquisitions.
func Table(outcomes []Outcome, recommended string) string {
	var b strings.Builder
	b.WriteString("| ttl | runs | acquisitions | acquires given up |")
	for _, v := range ViolationKinds {
		b.WriteString(" " + v.Column + " per 10k (95% upper bound) |")
	}
	b.WriteString(" acquire p99 (median over runs) |\n|")
	for range 5 + len(ViolationKinds) {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, o := range outcomes {
		mark := ""
		if o.TTL == recommended {
			mark = " (recommended)"
		}
		fmt.Fprintf(&b, "| %s%s | %d | %d | %d |", o.TTL, mark, o.Runs, o.Acquired, o.Failed)
		for _, r := range o.Violations {
			est, up := r.Per10k()
			fmt.Fprintf(&b, " %.3g (≤ %.3g) |", est, up)
		}
		if o.AcquireP99Ms < 0 {
			b.WriteString(" none acquired |\n")
		} else {
			fmt.Fprintf(&b, " %.1f ms |\n", o.AcquireP99Ms)
		}
	}
	return b.String()
}
