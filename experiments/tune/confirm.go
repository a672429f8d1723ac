package tune

import (
	"encoding/csv"
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

// ConfirmTTLs returns the ttls (or session timeouts) a confirmation sweeps: half the
// recommendation, the recommendation, and double it, in whole milliseconds within the ttl
// knob's range.
func ConfirmTTLs(ttl time.Duration) []time.Duration {
	half := max((ttl / 2).Truncate(time.Millisecond), time.Millisecond)
	out := []time.Duration{half, ttl}
	if double := 2 * ttl; double <= 24*time.Hour {
		out = append(out, double)
	}
	return slices.Compact(out)
}

// Spec returns the confirmation sweep for rec: the environment, then rec's knobs (and
// fencing tokens from one counter when rec says only fencing helps), with the ttl as the
// one axis; for a lock held by a ZooKeeper session the session timeout is the axis, and
// the ensemble's session limits are widened where they would not grant a neighbour.
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
	axis := rec.LeaseKnob()
	for _, s := range rec.Knobs() {
		if s.Name == axis {
			continue
		}
		if err := set(s.Name, s.Value); err != nil {
			return nil, err
		}
	}
	// The load: the rest between holds that makes the clients want the lock as often as
	// the user said (or never rest, when no load was given).
	if err := set("think", knobs.FormatDist(rec.Contention.Think)); err != nil {
		return nil, err
	}
	if rec.Fencing && rec.Session == nil {
		// Only fencing makes such an environment safe: confirm with tokens from one
		// counter, which the storage checks on every write. (A session lock's token is
		// its fence_token knob, among rec's knobs.)
		if err := set("fencing", "one"); err != nil {
			return nil, err
		}
	}
	leases := ConfirmTTLs(rec.Lease())
	if err := widenSessionLimits(rec, leases, set); err != nil {
		return nil, err
	}
	var ttls []string
	for _, t := range leases {
		v, err := check.Knob(axis, t.String())
		if err != nil {
			return nil, err
		}
		ttls = append(ttls, v)
	}
	spec.Axes = []sweep.Axis{{Knob: axis, Values: ttls}}
	if err := spec.Validate(check); err != nil {
		return nil, err
	}
	return spec, nil
}

// widenSessionLimits sets the ensemble's minimum and maximum session timeouts so that it
// grants every session a confirmation of a session lock sweeps: the neighbours of the
// recommendation are asked what they would cost, not cut to the recommended ensemble's
// limits (which change nothing else a run does).
func widenSessionLimits(rec Recommendation, leases []time.Duration, set func(name, value string) error) error {
	if rec.Session == nil {
		return nil
	}
	lo, hi := 2*rec.Session.TickTime, 20*rec.Session.TickTime
	if rec.Session.MaxSessionTimeout > 0 {
		hi = rec.Session.MaxSessionTimeout
	}
	if least := slices.Min(leases); least < lo {
		if err := set("zk_min_session_timeout", max(least, rec.Session.TickTime).String()); err != nil {
			return err
		}
	}
	if most := slices.Max(leases); most > hi {
		if err := set("zk_max_session_timeout", most.String()); err != nil {
			return err
		}
	}
	return nil
}

// Outcome is one ttl's confirmation: the runs' pooled counts, each violation kind's
// incidents per 10,000 acquisitions with their honest upper bound, and the liveness
// figures.
type Outcome struct {
	TTL      string // as the ttl knob (or, for a session lock, session_timeout) spells it
	Runs     int
	Acquired int64
	Attempts int64
	Failed   int64 // acquires that gave up
	// Violations holds each kind's incidents (IncidentKinds), the rate the targets are
	// held to: a pause that lets two others in is one incident. Pairs holds the
	// overlapping pairs behind them (ViolationKinds), which grow with how many got in.
	Violations []Rate
	Pairs      []int64
	// UsageEstimate is the analytic estimate of usage overlap incidents per acquisition
	// at this ttl (usageTail and nodesStep), beside what the simulation counted; -1: none.
	UsageEstimate float64
	// AcquireP99Ms is the median over runs of each run's p99 time to acquire; -1 when no
	// run acquired anything.
	AcquireP99Ms float64
	// ReacquireAfterCrashMaxMs is the longest a crashed holder kept the lock from the
	// others over all runs; -1 when no holder crashed and was followed.
	ReacquireAfterCrashMaxMs float64

	counts []int64   // each violation kind's incidents, for pooling
	p99s   []float64 // each run's p99 time to acquire, sorted, for pooling
}

// Pool joins the outcomes of two confirmation sweeps of the same ttls (more seeds of
// the same environment): counts add, and the p99 median is taken over all the runs.
func Pool(a, b []Outcome) []Outcome {
	if len(a) == 0 {
		return b
	}
	out := make([]Outcome, len(a))
	for i := range a {
		o := a[i]
		for j := range b {
			if b[j].TTL != o.TTL {
				continue
			}
			o.Runs += b[j].Runs
			o.Acquired += b[j].Acquired
			o.Attempts += b[j].Attempts
			o.Failed += b[j].Failed
			o.ReacquireAfterCrashMaxMs = max(o.ReacquireAfterCrashMaxMs, b[j].ReacquireAfterCrashMaxMs)
			o.counts, o.Pairs = slices.Clone(o.counts), slices.Clone(o.Pairs)
			for k := range o.counts {
				o.counts[k] += b[j].counts[k]
				o.Pairs[k] += b[j].Pairs[k]
			}
			o.p99s = append(slices.Clone(o.p99s), b[j].p99s...)
		}
		o.finish()
		out[i] = o
	}
	return out
}

// finish derives the rates and the p99 median from the pooled counts.
func (o *Outcome) finish() {
	slices.Sort(o.p99s)
	o.AcquireP99Ms = -1
	if len(o.p99s) > 0 {
		o.AcquireP99Ms = sweep.Quantile(o.p99s, 0.5)
	}
	o.Violations = o.Violations[:0:0]
	for _, k := range o.counts {
		o.Violations = append(o.Violations, RateOf(int(k), int(o.Acquired), Conf))
	}
}

// NextRuns returns how many more runs per ttl the next round of a confirmation needs:
// those that the first candidate still in question needs (MoreRuns), the candidates
// being the recommended ttl and then the longer ones in order. A candidate whose bounds
// all meet their limits ends the search (0: enough), and one whose violations exceed a
// limit however many runs are added is passed over for the next. limits holds each
// violation kind's limit per 10,000 acquisitions, in ViolationKinds order; a negative
// limit is no limit.
func NextRuns(outcomes []Outcome, recommended string, limits []float64) int {
	from := slices.IndexFunc(outcomes, func(o Outcome) bool { return o.TTL == recommended })
	if from < 0 {
		return 0
	}
	for _, o := range outcomes[from:] {
		if Meets(o, limits) {
			return 0
		}
		if n := MoreRuns(o, limits); n > 0 {
			return n
		}
	}
	return 0
}

// Meets reports whether every violation kind's upper bound is within its limit.
func Meets(o Outcome, limits []float64) bool {
	for i, r := range o.Violations {
		if _, up := r.Per10k(); limits[i] >= 0 && up > limits[i] {
			return false
		}
	}
	return true
}

// MoreRuns returns how many more runs of o's ttl would let each violation kind's bound
// fall to its limit, or 0 when none would help: every bound is there already, or a kind
// was seen often enough that its estimate exceeds its limit (more runs only confirm it).
// It assumes the runs to come acquire as often as those done.
func MoreRuns(o Outcome, limits []float64) int {
	if o.Runs == 0 || o.Acquired == 0 {
		return 0
	}
	perRun := float64(o.Acquired) / float64(o.Runs)
	need := 0
	for i, r := range o.Violations {
		limit := limits[i]
		if _, up := r.Per10k(); limit < 0 || up <= limit {
			continue
		}
		est, _ := r.Per10k()
		var n int
		switch {
		case r.Count == 0:
			n = AcquisitionsFor(limit, Conf)
		case est <= limit/2:
			n = 4 * r.Acquisitions // a rate well under the limit: four times the evidence
		default:
			return 0
		}
		need = max(need, int(math.Ceil(float64(n-r.Acquisitions)/perRun)))
	}
	return need
}

// AcquisitionsFor returns how many acquisitions without a single violation it takes for
// the one-sided upper bound at conf to fall to perTenK per 10,000: about 3/p at 95 %
// (the rule of three).
func AcquisitionsFor(perTenK, conf float64) int {
	p := perTenK / Per10k
	if p <= 0 || p >= 1 {
		return math.MaxInt32
	}
	return int(math.Ceil(math.Log(1-conf) / math.Log1p(-p)))
}

// ViolationKinds are the violation counts a confirmation rates, by their runs.csv
// column: two holders believing themselves valid at once, two working at once, and stale
// writes the resource accepted; IncidentKinds the incidents behind each, in the same order.
var (
	ViolationKinds = []string{experiments.MetricValidityOverlaps, experiments.MetricUsageOverlaps,
		experiments.MetricStaleWritesAccepted}
	IncidentKinds = []string{experiments.MetricValidityIncidents, experiments.MetricUsageIncidents,
		experiments.MetricStaleIncidents}
)

// Conf is the confidence of every bound a confirmation reports.
const Conf = 0.95

// ReadOutcomes reads a finished confirmation sweep's runs.csv in dir and pools each
// ttl's runs, in the sweep's point order.
func ReadOutcomes(dir string) ([]Outcome, error) { return ReadOutcomesOf(dir, "ttl") }

// ReadOutcomesOf is ReadOutcomes for a confirmation whose axis is the knob axis (ttl, or
// session_timeout for a session lock).
func ReadOutcomesOf(dir, axis string) ([]Outcome, error) {
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
	need := []string{sweep.PointColumn, axis, experiments.MetricAcquired, experiments.MetricAttempts,
		experiments.MetricFailed, experiments.MetricAcquireLatencyP99Ms, experiments.MetricReacquireAfterCrashMax}
	need = append(need, ViolationKinds...)
	need = append(need, IncidentKinds...)
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return nil, fmt.Errorf("%s: no %q column: not a confirmation sweep", sweep.RunsFile, n)
		}
	}
	type pool struct {
		o         Outcome
		incidents []int64
		p99       []float64
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
			p = &pool{o: Outcome{TTL: row[col[axis]], ReacquireAfterCrashMaxMs: -1, Pairs: make([]int64, len(ViolationKinds)), UsageEstimate: -1},
				incidents: make([]int64, len(IncidentKinds))}
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
			p.o.Pairs[i] += count(v)
			p.incidents[i] += count(IncidentKinds[i])
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
		p.o.counts, p.o.p99s = p.incidents, p.p99
		p.o.finish()
		out = append(out, p.o)
	}
	return out, nil
}

// Table renders outcomes as a Markdown table: one row per ttl, the recommended one
// marked, with each violation kind's incidents and their bound per 10,000 acquisitions,
// and the overlapping pairs behind them.
func Table(outcomes []Outcome, recommended string) string {
	return TableOf(outcomes, recommended, "ttl")
}

// TableOf is Table for a confirmation whose axis is the knob axis.
func TableOf(outcomes []Outcome, recommended, axis string) string {
	var b strings.Builder
	b.WriteString("| " + axis + " | runs | acquisitions | acquires given up |")
	for _, v := range IncidentKinds {
		b.WriteString(" " + v + " per 10k (95% upper bound) [pairs] |")
	}
	b.WriteString(" usage overlap incidents per 10k, analytic | acquire p99 (median over runs) |\n|")
	for range 6 + len(ViolationKinds) {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, o := range outcomes {
		mark := ""
		if o.TTL == recommended {
			mark = " (recommended)"
		}
		fmt.Fprintf(&b, "| %s%s | %d | %d | %d |", o.TTL, mark, o.Runs, o.Acquired, o.Failed)
		for i, r := range o.Violations {
			est, up := r.Per10k()
			fmt.Fprintf(&b, " %.3g (≤ %.3g) [%d] |", est, up, o.Pairs[i])
		}
		if o.UsageEstimate < 0 {
			b.WriteString(" — |")
		} else {
			fmt.Fprintf(&b, " %.3g |", o.UsageEstimate*Per10k)
		}
		if o.AcquireP99Ms < 0 {
			b.WriteString(" none acquired |\n")
		} else {
			fmt.Fprintf(&b, " %.1f ms |\n", o.AcquireP99Ms)
		}
	}
	return b.String()
}
