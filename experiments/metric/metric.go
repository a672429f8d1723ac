// Package metric names, once, the figures of one run that redlock-sim reports: each
// metric's name (the runs.csv column, the stem of its summary.csv columns, the name a
// scenario check uses), its kind, where `run --json` reports it, and whether a check may
// bound it. experiments.Record.Metrics computes the values in the table's order, the sweep
// takes its columns and the scenario checks their vocabulary from the table, and a test in
// package experiments ties the table to the record's JSON, the sweep's files and both
// check evaluators.
package metric

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redlock-sim/redlock-sim/internal/suggest"
)

// Kind says what a metric holds, for CSV columns and their summaries.
type Kind uint8

// The metric kinds.
const (
	Bool  Kind = iota + 1 // 0 or 1 per run
	Count                 // a non-negative integer
	Ms                    // milliseconds; may be missing
	Float                 // any other number; may be missing
	Text                  // opaque text (the trace hash)
)

var kindNames = [...]string{Bool: "bool", Count: "count", Ms: "ms", Float: "float", Text: "text"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "metric(" + strconv.Itoa(int(k)) + ")"
}

// Check says how a scenario's check may use a metric.
type Check uint8

// The uses.
const (
	// Reported only: the trace hash, the any_* flags that repeat a count, the run's length
	// and its kernel events, which say nothing about the lock.
	Reported Check = iota
	// Verdict: a safety count; a rule bounds the share of seeds in which it is above zero
	// ("always", "never", "at least 80%").
	Verdict
	// Bound: a figure a rule bounds in each run ({min, max}, in a share of the seeds).
	Bound
)

// Desc describes one metric.
type Desc struct {
	Name string // the runs.csv column and the name a check uses
	Kind Kind
	// JSON is where `run --json` reports it, as a dot-separated path of object keys; a Bool
	// is the count at JSON being above zero.
	JSON  string
	Check Check
}

// The metric names. Consumers use these constants, never spelled-out strings.
const (
	TraceHash               = "trace_hash"
	AnyValidityOverlap      = "any_validity_overlap"
	AnyUsageOverlap         = "any_usage_overlap"
	AnyStaleWrite           = "any_stale_write"
	ValidityOverlaps        = "validity_overlaps"
	UsageOverlaps           = "usage_overlaps"
	StaleWritesAccepted     = "stale_writes_accepted"
	FencedWritesRejected    = "fenced_writes_rejected"
	ValidityIncidents       = "validity_overlap_incidents"
	UsageIncidents          = "usage_overlap_incidents"
	StaleIncidents          = "stale_write_incidents"
	Attempts                = "attempts"
	Acquired                = "acquired"
	Failed                  = "failed"
	FailuresNoQuorum        = "failures_no_quorum"
	FailuresTimeout         = "failures_timeout"
	FailuresValidityExpired = "failures_validity_expired"
	FailuresFenceFailed     = "failures_fence_failed"
	FailuresAborted         = "failures_aborted"
	FailuresServerError     = "failures_server_error"
	AcquireLatencyP50Ms     = "acquire_latency_p50_ms"
	AcquireLatencyP90Ms     = "acquire_latency_p90_ms"
	AcquireLatencyP99Ms     = "acquire_latency_p99_ms"
	AcquireLatencyMaxMs     = "acquire_latency_max_ms"
	SplitBrainRounds        = "split_brain_rounds"
	UnheldWhileWaitingMs    = "unheld_while_waiting_ms"
	ExtensionsTried         = "extensions_tried"
	ExtensionsSucceeded     = "extensions_succeeded"
	HolderCrashes           = "holder_crashes"
	ReacquireAfterCrashP50  = "reacquire_after_crash_p50_ms"
	ReacquireAfterCrashMax  = "reacquire_after_crash_max_ms"
	AcquisitionsPerS        = "acquisitions_per_s"
	SimTimeS                = "sim_time_s"
	Events                  = "events"
)

// table is every metric, in runs.csv's column order. Read it through All and Lookup.
var table = [...]Desc{
	{TraceHash, Text, "trace_hash", Reported},
	{AnyValidityOverlap, Bool, "safety.validity_overlaps", Reported},
	{AnyUsageOverlap, Bool, "safety.usage_overlaps", Reported},
	{AnyStaleWrite, Bool, "safety.stale_writes_accepted", Reported},
	{ValidityOverlaps, Count, "safety.validity_overlaps", Verdict},
	{UsageOverlaps, Count, "safety.usage_overlaps", Verdict},
	{StaleWritesAccepted, Count, "safety.stale_writes_accepted", Verdict},
	{FencedWritesRejected, Count, "safety.fenced_writes_rejected", Verdict},
	{ValidityIncidents, Count, "safety.validity_overlap_incidents", Bound},
	{UsageIncidents, Count, "safety.usage_overlap_incidents", Bound},
	{StaleIncidents, Count, "safety.stale_write_incidents", Bound},
	{Attempts, Count, "liveness.attempts", Bound},
	{Acquired, Count, "liveness.acquired", Bound},
	{Failed, Count, "liveness.failed", Bound},
	{FailuresNoQuorum, Count, "liveness.failures_by_reason.no_quorum", Bound},
	{FailuresTimeout, Count, "liveness.failures_by_reason.timeout", Bound},
	{FailuresValidityExpired, Count, "liveness.failures_by_reason.validity_expired", Bound},
	{FailuresFenceFailed, Count, "liveness.failures_by_reason.fence_failed", Bound},
	{FailuresAborted, Count, "liveness.failures_by_reason.aborted", Bound},
	{FailuresServerError, Count, "liveness.failures_by_reason.server_error", Bound},
	{AcquireLatencyP50Ms, Ms, "liveness.acquire_latency_ms.p50", Bound},
	{AcquireLatencyP90Ms, Ms, "liveness.acquire_latency_ms.p90", Bound},
	{AcquireLatencyP99Ms, Ms, "liveness.acquire_latency_ms.p99", Bound},
	{AcquireLatencyMaxMs, Ms, "liveness.acquire_latency_ms.max", Bound},
	{SplitBrainRounds, Count, "liveness.split_brain_rounds", Bound},
	{UnheldWhileWaitingMs, Ms, "liveness.unheld_while_waiting_ms", Bound},
	{ExtensionsTried, Count, "liveness.extensions.tried", Bound},
	{ExtensionsSucceeded, Count, "liveness.extensions.succeeded", Bound},
	{HolderCrashes, Count, "liveness.holder_crashes", Bound},
	{ReacquireAfterCrashP50, Ms, "liveness.reacquire_after_crash_ms.p50", Bound},
	{ReacquireAfterCrashMax, Ms, "liveness.reacquire_after_crash_ms.max", Bound},
	{AcquisitionsPerS, Float, "liveness.acquisitions_per_s", Bound},
	{SimTimeS, Float, "sim_time_s", Reported},
	{Events, Count, "events", Reported},
}

// All returns every metric, in runs.csv's column order.
func All() []Desc { return slices.Clone(table[:]) }

// Lookup returns the metric called name; an unknown name is an error naming it, with the
// names closest to it and every name there is.
func Lookup(name string) (Desc, error) {
	for _, d := range table {
		if d.Name == name {
			return d, nil
		}
	}
	return Desc{}, Unknown("metric", name, Names(Reported, Verdict, Bound))
}

// Names returns the names of the metrics with one of the uses, in table order.
func Names(uses ...Check) []string {
	var out []string
	for _, d := range table {
		if slices.Contains(uses, d.Check) {
			out = append(out, d.Name)
		}
	}
	return out
}

// Renamed returns the name a metric has now that was once called old, for the error that
// meets a file written then.
func Renamed(old string) (string, bool) {
	switch old {
	case "validity_expired_attempts": // a check's name before the table named every metric once
		return FailuresValidityExpired, true
	}
	return "", false
}

// Unknown is the error of name, which is not among known (what: "metric", "figure"): it
// names the value, the closest known names, and lists them all.
func Unknown(what, name string, known []string) error {
	msg := fmt.Sprintf("unknown %s %q", what, name)
	if now, ok := Renamed(name); ok && slices.Contains(known, now) {
		msg += "; it is called " + now + " now"
	} else if close := suggest.Closest(name, known, 3); len(close) > 0 {
		msg += "; did you mean " + strings.Join(close, ", ") + "?"
	}
	return fmt.Errorf("%s (the %ss are %s)", msg, what, strings.Join(known, ", "))
}
