package experiments

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/metric"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
)

// Record is the result of one run: what was simulated, its trace hash, and the oracle's
// safety and liveness verdicts. Field names carry their units.
type Record struct {
	Scenario   string             `json:"scenario"`
	Seed       uint64             `json:"seed"`
	TraceHash  string             `json:"trace_hash"` // 16 hex digits
	Config     KnobList           `json:"config"`     // every knob, canonical text, registry order
	Safety     Safety             `json:"safety"`
	Liveness   Liveness           `json:"liveness"`
	SimTimeS   float64            `json:"sim_time_s"`
	WallTimeS  float64            `json:"wall_time_s"` // machine time; the only field that varies between replays
	Events     uint64             `json:"events"`      // kernel events run
	Violations []oracle.Violation `json:"violations"`  // the first oracle.MaxViolations, in order of detection
}

// Safety counts the oracle's safety verdicts (definitions on Oracle).
type Safety struct {
	ValidityOverlaps     int64 `json:"validity_overlaps"`
	UsageOverlaps        int64 `json:"usage_overlaps"`
	StaleWritesAccepted  int64 `json:"stale_writes_accepted"`
	FencedWritesRejected int64 `json:"fenced_writes_rejected"`
	// The incidents behind the three violation counts: one per client session that
	// another overlapped (a holder paused past its validity, whose work two others then
	// overlapped, is one usage incident and two usage overlaps), the count a rate per
	// year is about.
	ValidityIncidents int64 `json:"validity_overlap_incidents"`
	UsageIncidents    int64 `json:"usage_overlap_incidents"`
	StaleIncidents    int64 `json:"stale_write_incidents"`
}

// Safe reports whether both verdicts are safe: the lock held (LockSafe) and the protected
// resource took no stale write (ResourceSafe).
func (s Safety) Safe() bool { return s.LockSafe() && s.ResourceSafe() }

// LockSafe is the lock's verdict: no two clients' validity windows and no two clients'
// work on one resource overlapped. A usage overlap counts against the lock although the
// algorithm kept its promise: the lock did not keep two clients apart.
func (s Safety) LockSafe() bool { return s.ValidityOverlaps == 0 && s.UsageOverlaps == 0 }

// ResourceSafe is the protected resource's verdict: the storage accepted no stale write.
// Fenced writes it rejected are not against it: they are fencing doing its job, and are
// how a run with an unsafe lock keeps a safe resource.
func (s Safety) ResourceSafe() bool { return s.StaleWritesAccepted == 0 }

// LockVerdict is the lock's verdict as the run summary shows it: "SAFE (no overlaps)" or
// "UNSAFE (1 usage overlap)", naming each kind that happened.
func (s Safety) LockVerdict() string {
	if s.LockSafe() {
		return "SAFE (no overlaps)"
	}
	var kinds []string
	if s.ValidityOverlaps > 0 {
		kinds = append(kinds, plural(s.ValidityOverlaps, "validity overlap", "validity overlaps"))
	}
	if s.UsageOverlaps > 0 {
		kinds = append(kinds, plural(s.UsageOverlaps, "usage overlap", "usage overlaps"))
	}
	return "UNSAFE (" + strings.Join(kinds, ", ") + ")"
}

// ResourceVerdict is the protected resource's verdict as the run summary shows it:
// "SAFE (0 stale writes accepted)" or "UNSAFE (3 stale writes accepted)", with
// "; fencing rejected 2" when fencing turned writes away.
func (s Safety) ResourceVerdict() string {
	v := "SAFE ("
	if !s.ResourceSafe() {
		v = "UNSAFE ("
	}
	v += plural(s.StaleWritesAccepted, "stale write accepted", "stale writes accepted")
	if s.FencedWritesRejected > 0 {
		v += "; fencing rejected " + strconv.FormatInt(s.FencedWritesRejected, 10)
	}
	return v + ")"
}

// String gives both verdicts on one line, as the run summary and the bench report show
// them: "lock: UNSAFE (1 usage overlap) · resource: SAFE (0 stale writes accepted;
// fencing rejected 2)".
func (s Safety) String() string {
	return "lock: " + s.LockVerdict() + " · resource: " + s.ResourceVerdict()
}

// MarshalJSON writes the four counts and the two verdicts as booleans, lock_safe and
// resource_safe, so a script reading --json need not know which counts make which verdict.
// The verdicts are derived, never read back: UnmarshalJSON keeps only the counts.
func (s Safety) MarshalJSON() ([]byte, error) {
	type counts Safety // no methods: no recursion
	return json.Marshal(struct {
		counts
		LockSafe     bool `json:"lock_safe"`
		ResourceSafe bool `json:"resource_safe"`
	}{counts(s), s.LockSafe(), s.ResourceSafe()})
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// Liveness holds the oracle's liveness figures (definitions on Oracle).
type Liveness struct {
	Attempts             int64         `json:"attempts"`
	Acquired             int64         `json:"acquired"`
	Failed               int64         `json:"failed"` // acquires that gave up after every try
	FailuresByReason     Failures      `json:"failures_by_reason"`
	AcquireLatencyMs     Percentiles   `json:"acquire_latency_ms"`
	SplitBrainRounds     int64         `json:"split_brain_rounds"`
	UnheldWhileWaitingMs float64       `json:"unheld_while_waiting_ms"`
	Extensions           ExtensionStat `json:"extensions"`
	AcquisitionsPerS     float64       `json:"acquisitions_per_s"`
	// HolderCrashes counts clients that crashed while their lock was valid, and
	// ReacquireAfterCrashMs the time from such a crash to the resource's next acquisition
	// (nil fields when none was followed by one): what a long TTL costs when holders die.
	HolderCrashes         int64       `json:"holder_crashes"`
	ReacquireAfterCrashMs Percentiles `json:"reacquire_after_crash_ms"`
}

// Failures counts failed attempts by reason.
type Failures struct {
	NoQuorum        int64 `json:"no_quorum"` // refusals decided it
	Timeout         int64 `json:"timeout"`   // silent nodes could have made the quorum
	ValidityExpired int64 `json:"validity_expired"`
	FenceFailed     int64 `json:"fence_failed"`
	Aborted         int64 `json:"aborted"`
	// ServerError: won, but a server errored and the library gave up without releasing
	// (redlock-py). Omitted when zero, as no other library does it.
	ServerError int64 `json:"server_error,omitempty"`
}

// Percentiles of time to acquire in milliseconds; nil when nothing was acquired.
type Percentiles struct {
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P99 *float64 `json:"p99"`
	Max *float64 `json:"max"`
}

// ExtensionStat counts extensions.
type ExtensionStat struct {
	Tried     int64 `json:"tried"`
	Succeeded int64 `json:"succeeded"`
}

// KnobList is knob settings that marshal to a JSON object in their own order (registry
// order for a record's config), not in a map's sorted order.
type KnobList []knobs.KV

// MarshalJSON writes {"name": "value", ...} in list order.
func (l KnobList) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Name)
		v, _ := json.Marshal(kv.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object written by MarshalJSON, keeping its order.
func (l *KnobList) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("knob list: want an object")
	}
	*l = (*l)[:0]
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("knob %v: %w", kt, err)
		}
		*l = append(*l, knobs.KV{Name: kt.(string), Value: v})
	}
	_, err := dec.Token()
	return err
}

// Get returns the value of knob name in the list, or "".
func (l KnobList) Get(name string) string {
	for _, kv := range l {
		if kv.Name == name {
			return kv.Value
		}
	}
	return ""
}

// MetricKind says what a metric holds (metric.Kind, named here for the readers of
// records).
type MetricKind = metric.Kind

// The metric kinds.
const (
	MetricBool  = metric.Bool
	MetricCount = metric.Count
	MetricMs    = metric.Ms
	MetricFloat = metric.Float
	MetricText  = metric.Text
)

// Metric is one named value of a run, a CSV column of the sweep engine.
type Metric struct {
	Name    string
	Kind    MetricKind
	Value   float64 // bool, count, ms, float
	Text    string  // text
	Missing bool    // ms or float with nothing to measure (no acquisition)
}

// String renders the value as a CSV field: integers without a decimal point, the shortest
// float that reads back exactly, "" when missing.
func (m Metric) String() string {
	switch {
	case m.Missing:
		return ""
	case m.Kind == MetricText:
		return m.Text
	case m.Kind == MetricBool || m.Kind == MetricCount:
		return strconv.FormatInt(int64(m.Value), 10)
	}
	return strconv.FormatFloat(m.Value, 'g', -1, 64)
}

// Column is a metric's name and kind, without a value.
type Column struct {
	Name string
	Kind MetricKind
}

// Columns lists the metrics every record reports, in Metrics order. wall_time_s is not
// one of them: it varies between replays and would break byte-identical results.
func Columns() []Column {
	ms := (&Record{}).Metrics()
	out := make([]Column, len(ms))
	for i, m := range ms {
		out[i] = Column{m.Name, m.Kind}
	}
	return out
}

// The metric names, as package metric defines them (with each metric's kind, its place in
// `run --json` and its use in checks), named here for the readers of records: runs.csv's
// column names, which summary.csv, the figures and user scripts read. Consumers use these
// constants, never spelled-out strings.
const (
	MetricTraceHash               = metric.TraceHash
	MetricAnyValidityOverlap      = metric.AnyValidityOverlap
	MetricAnyUsageOverlap         = metric.AnyUsageOverlap
	MetricAnyStaleWrite           = metric.AnyStaleWrite
	MetricValidityOverlaps        = metric.ValidityOverlaps
	MetricUsageOverlaps           = metric.UsageOverlaps
	MetricStaleWritesAccepted     = metric.StaleWritesAccepted
	MetricFencedWritesRejected    = metric.FencedWritesRejected
	MetricValidityIncidents       = metric.ValidityIncidents
	MetricUsageIncidents          = metric.UsageIncidents
	MetricStaleIncidents          = metric.StaleIncidents
	MetricAttempts                = metric.Attempts
	MetricAcquired                = metric.Acquired
	MetricFailed                  = metric.Failed
	MetricFailuresNoQuorum        = metric.FailuresNoQuorum
	MetricFailuresTimeout         = metric.FailuresTimeout
	MetricFailuresValidityExpired = metric.FailuresValidityExpired
	MetricFailuresFenceFailed     = metric.FailuresFenceFailed
	MetricFailuresAborted         = metric.FailuresAborted
	MetricFailuresServerError     = metric.FailuresServerError
	MetricAcquireLatencyP50Ms     = metric.AcquireLatencyP50Ms
	MetricAcquireLatencyP90Ms     = metric.AcquireLatencyP90Ms
	MetricAcquireLatencyP99Ms     = metric.AcquireLatencyP99Ms
	MetricAcquireLatencyMaxMs     = metric.AcquireLatencyMaxMs
	MetricSplitBrainRounds        = metric.SplitBrainRounds
	MetricUnheldWhileWaitingMs    = metric.UnheldWhileWaitingMs
	MetricExtensionsTried         = metric.ExtensionsTried
	MetricExtensionsSucceeded     = metric.ExtensionsSucceeded
	MetricHolderCrashes           = metric.HolderCrashes
	MetricReacquireAfterCrashP50  = metric.ReacquireAfterCrashP50
	MetricReacquireAfterCrashMax  = metric.ReacquireAfterCrashMax
	MetricAcquisitionsPerS        = metric.AcquisitionsPerS
	MetricSimTimeS                = metric.SimTimeS
	MetricEvents                  = metric.Events
)

// Metrics returns the record's metrics as a flat list, in package metric's order.
func (r *Record) Metrics() []Metric {
	ds := metric.All()
	out := make([]Metric, len(ds))
	for i, d := range ds {
		out[i] = r.metric(d)
	}
	return out
}

// metric returns the record's value of metric d. A metric of the table without a value
// here is a programming error, caught by any test that lists a record's metrics.
func (r *Record) metric(d metric.Desc) Metric {
	m := Metric{Name: d.Name, Kind: d.Kind}
	s, l := &r.Safety, &r.Liveness
	n := func(v int64) { m.Value = float64(v) }
	b := func(v bool) {
		if v {
			m.Value = 1
		}
	}
	ms := func(v *float64) {
		if v == nil {
			m.Missing = true
			return
		}
		m.Value = *v
	}
	switch d.Name {
	case metric.TraceHash:
		m.Text = r.TraceHash
	case metric.AnyValidityOverlap:
		b(s.ValidityOverlaps > 0)
	case metric.AnyUsageOverlap:
		b(s.UsageOverlaps > 0)
	case metric.AnyStaleWrite:
		b(s.StaleWritesAccepted > 0)
	case metric.ValidityOverlaps:
		n(s.ValidityOverlaps)
	case metric.UsageOverlaps:
		n(s.UsageOverlaps)
	case metric.StaleWritesAccepted:
		n(s.StaleWritesAccepted)
	case metric.FencedWritesRejected:
		n(s.FencedWritesRejected)
	case metric.ValidityIncidents:
		n(s.ValidityIncidents)
	case metric.UsageIncidents:
		n(s.UsageIncidents)
	case metric.StaleIncidents:
		n(s.StaleIncidents)
	case metric.Attempts:
		n(l.Attempts)
	case metric.Acquired:
		n(l.Acquired)
	case metric.Failed:
		n(l.Failed)
	case metric.FailuresNoQuorum:
		n(l.FailuresByReason.NoQuorum)
	case metric.FailuresTimeout:
		n(l.FailuresByReason.Timeout)
	case metric.FailuresValidityExpired:
		n(l.FailuresByReason.ValidityExpired)
	case metric.FailuresFenceFailed:
		n(l.FailuresByReason.FenceFailed)
	case metric.FailuresAborted:
		n(l.FailuresByReason.Aborted)
	case metric.FailuresServerError:
		n(l.FailuresByReason.ServerError)
	case metric.AcquireLatencyP50Ms:
		ms(l.AcquireLatencyMs.P50)
	case metric.AcquireLatencyP90Ms:
		ms(l.AcquireLatencyMs.P90)
	case metric.AcquireLatencyP99Ms:
		ms(l.AcquireLatencyMs.P99)
	case metric.AcquireLatencyMaxMs:
		ms(l.AcquireLatencyMs.Max)
	case metric.SplitBrainRounds:
		n(l.SplitBrainRounds)
	case metric.UnheldWhileWaitingMs:
		ms(&l.UnheldWhileWaitingMs)
	case metric.ExtensionsTried:
		n(l.Extensions.Tried)
	case metric.ExtensionsSucceeded:
		n(l.Extensions.Succeeded)
	case metric.HolderCrashes:
		n(l.HolderCrashes)
	case metric.ReacquireAfterCrashP50:
		ms(l.ReacquireAfterCrashMs.P50)
	case metric.ReacquireAfterCrashMax:
		ms(l.ReacquireAfterCrashMs.Max)
	case metric.AcquisitionsPerS:
		m.Value = l.AcquisitionsPerS
	case metric.SimTimeS:
		m.Value = r.SimTimeS
	case metric.Events:
		n(int64(r.Events))
	default:
		panic("experiments: no value for metric " + d.Name)
	}
	return m
}
