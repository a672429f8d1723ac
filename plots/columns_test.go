package plots

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// TestRunColumnsAreWritten: every runs.csv column the figures read is one the sweep
// engine (point) or a run's record (experiments.Columns) writes, of the kind parseRun
// reads it as, so renaming a metric fails here and not on a user's sweep folder.
func TestRunColumnsAreWritten(t *testing.T) {
	written := map[string]experiments.MetricKind{}
	for _, c := range experiments.Columns() {
		written[c.Name] = c.Kind
	}
	require.Equal(t, sweep.PointColumn, runColumns[0])
	for _, name := range runColumns[1:] {
		want := experiments.MetricCount
		switch {
		case strings.HasPrefix(name, "any_"):
			want = experiments.MetricBool
		case strings.HasSuffix(name, "_ms"):
			want = experiments.MetricMs
		}
		kind, ok := written[name]
		if assert.True(t, ok, "plots read %s, which no run writes", name) {
			assert.Equal(t, want, kind, name)
		}
	}
	assert.True(t, isMetric("trace_hash"), "the first metric, which ends the swept knobs")
	assert.False(t, isMetric("ttl"))
}
