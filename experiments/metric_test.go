package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/metric"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// fullRecord is a record in which every metric has a value of its own: no two counts,
// times or rates are equal, none is zero or missing.
func fullRecord() *Record {
	f := func(x float64) *float64 { return &x }
	return &Record{
		Scenario: "x", Seed: 1, TraceHash: "0123456789abcdef",
		Safety: Safety{ValidityOverlaps: 1, UsageOverlaps: 2, StaleWritesAccepted: 3, FencedWritesRejected: 4,
			ValidityIncidents: 5, UsageIncidents: 6, StaleIncidents: 7},
		Liveness: Liveness{Attempts: 8, Acquired: 9, Failed: 10,
			FailuresByReason: Failures{NoQuorum: 11, Timeout: 12, ValidityExpired: 13, FenceFailed: 14, Aborted: 15, ServerError: 16},
			AcquireLatencyMs: Percentiles{P50: f(17.5), P90: f(18.5), P99: f(19.5), Max: f(20.5)},
			SplitBrainRounds: 21, UnheldWhileWaitingMs: 22.5, Extensions: ExtensionStat{Tried: 23, Succeeded: 24},
			AcquisitionsPerS: 25.5, HolderCrashes: 26, ReacquireAfterCrashMs: Percentiles{P50: f(27.5), P90: f(99), P99: f(99), Max: f(28.5)}},
		SimTimeS: 29.5, WallTimeS: 99, Events: 30, Violations: []oracle.Violation{},
	}
}

// at walks a dot-separated path of object keys in a decoded JSON value.
func at(v any, path string) (any, bool) {
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// TestMetricTableTiesJSONColumnsAndChecks holds package metric's table to everything that
// names a metric: each metric is where the table says in `run --json` (with the value
// Metrics gives it), is a runs.csv column under its name with its summary.csv columns, and
// is accepted by a scenario file's check and by the checks' evaluator exactly when the table
// lets checks use it; a name not in the table is refused by each.
func TestMetricTableTiesJSONColumnsAndChecks(t *testing.T) {
	table := metric.All()
	rec := fullRecord()

	// run --json: the encoder `run --json` uses.
	var buf bytes.Buffer
	require.NoError(t, json.NewEncoder(&buf).Encode(rec))
	var doc any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	ms := rec.Metrics()
	require.Len(t, ms, len(table))
	for i, d := range table {
		m := ms[i]
		require.Equal(t, d.Name, m.Name, "Metrics follows the table's order")
		assert.Equal(t, d.Kind, m.Kind, d.Name)
		v, ok := at(doc, d.JSON)
		require.True(t, ok, "%s: no %s in run --json", d.Name, d.JSON)
		switch d.Kind {
		case metric.Text:
			assert.Equal(t, m.Text, v, d.Name)
		case metric.Bool:
			assert.Equal(t, 1.0, m.Value, d.Name)
			assert.Positive(t, v, "%s is its count above zero", d.Name)
		default:
			assert.False(t, m.Missing, d.Name)
			assert.Equal(t, m.Value, v, "%s is %s", d.Name, d.JSON)
		}
	}

	// runs.csv and summary.csv: a one-run sweep.
	spec, err := sweep.ParseSpec("one.yaml", []byte("base:\n  scenario: gc-pause\naxes:\n  ttl: [1s]\nreplicates: 1\nseed: 1\n"), SweepRunner())
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = sweep.Run(context.Background(), SweepRunner(), spec, sweep.Options{Dir: dir, Workers: 1, Tool: "test"})
	require.NoError(t, err)
	runs, sum := readCSVFile(t, filepath.Join(dir, "runs.csv"))[0], readCSVFile(t, filepath.Join(dir, "summary.csv"))[0]
	for i, c := range Columns() {
		d := table[i]
		assert.Equal(t, Column{d.Name, d.Kind}, c)
		assert.Contains(t, runs, d.Name)
		for _, s := range sweep.StatColumns(sweep.Column{Name: d.Name, Kind: sweepKind(d.Kind)}) {
			assert.Contains(t, sum, s)
		}
	}

	// Checks: a scenario file's, and the evaluator's on a record's figures.
	figures := rec.Figures()
	for _, d := range table {
		rule := "{min: 0}"
		if d.Check == metric.Verdict {
			rule = "always"
		}
		sc, err := scenarios.ParseFile("f.yaml", []byte("name: f\nstory: s\ncheck:\n  "+d.Name+": "+rule+"\n"))
		_, inFigures := figures[d.Name]
		if d.Check == metric.Reported {
			assert.ErrorContains(t, err, `unknown key "`+d.Name+`" in check`, "%s is not for checks", d.Name)
			assert.False(t, inFigures, d.Name)
			continue
		}
		require.NoError(t, err, d.Name)
		require.True(t, inFigures, d.Name)
		res, err := sc.Check.Evaluate([]scenarios.Figures{figures})
		require.NoError(t, err, d.Name)
		require.Len(t, res, 1)
		assert.True(t, res[0].Held, "%s: every figure of the full record is above zero", d.Name)
	}
	assert.Len(t, figures, len(metric.Names(metric.Verdict, metric.Bound)))

	_, err = scenarios.ParseFile("f.yaml", []byte("name: f\nstory: s\ncheck:\n  aquired: {min: 1}\n"))
	assert.ErrorContains(t, err, `unknown key "aquired" in check (did you mean "acquired"?)`)
	_, err = scenarios.ParseFile("f.yaml", []byte("name: f\nstory: s\ncheck:\n  validity_expired_attempts: {min: 1}\n"))
	assert.ErrorContains(t, err, "check: validity_expired_attempts is called failures_validity_expired now")
	c := &scenarios.Check{Seeds: 1, Rules: []scenarios.Rule{{Figure: "aquired", Min: 1, Max: 2, Share: 1, Text: "aquired: min 1", Line: 3}}}
	_, err = c.Evaluate([]scenarios.Figures{figures})
	assert.ErrorContains(t, err, `check rule "aquired: min 1" (line 3), seed 1: unknown figure "aquired"; did you mean acquired?`)
	assert.ErrorContains(t, err, "(the figures are acquire_latency_max_ms, ", "it lists what the run has")
	_, err = metric.Lookup("aquired")
	assert.EqualError(t, err, `unknown metric "aquired"; did you mean acquired? (the metrics are `+strings.Join(metric.Names(metric.Reported, metric.Verdict, metric.Bound), ", ")+`)`)
}

// TestMissingFiguresHoldNoBound: a figure a run had nothing to measure for (no holder
// crashed, so no time to reacquire) is NaN among its figures and fails a bound, never a
// zero that passes "max: 500".
func TestMissingFiguresHoldNoBound(t *testing.T) {
	rec := fullRecord()
	rec.Liveness.ReacquireAfterCrashMs = Percentiles{}
	f := rec.Figures()
	c := &scenarios.Check{Seeds: 1, Rules: []scenarios.Rule{{Figure: metric.ReacquireAfterCrashMax, Min: 0, Max: 500, Share: 1}}}
	res, err := c.Evaluate([]scenarios.Figures{f})
	require.NoError(t, err)
	assert.False(t, res[0].Held)
	assert.Equal(t, []uint64{1}, res[0].Seeds)
}
