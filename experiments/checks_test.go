package experiments

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimitsAreCheckedBeforeTheRun: knob values each in range that together would stop a
// run part way through (the network's fault limit after 18 simulated hours, the limit on
// messages in flight) are refused by Validate, naming the knobs, their values and the
// limit.
func TestLimitsAreCheckedBeforeTheRun(t *testing.T) {
	tests := []struct {
		knobs []knobs.KV
		want  []string
	}{
		{[]knobs.KV{{Name: "duration", Value: "24h"}, {Name: "partition_rate", Value: "1"}},
			[]string{"partition_rate = 1", "duration = 24h0m0s", "about 86400 random network faults", "at most 65536", "at most 0.379 per second"}},
		{[]knobs.KV{{Name: "duration", Value: "1h"}, {Name: "clog_rate", Value: "20"}},
			[]string{"clog_rate = 20", "duration = 1h0m0s", "random network faults", "65536"}},
		{[]knobs.KV{{Name: "duration", Value: "1h"}, {Name: "clog_rate", Value: "5"}, {Name: "partition_rate", Value: "5"}},
			[]string{"partition_rate = 5, clog_rate = 5", "36000", "together"}},
		{[]knobs.KV{{Name: "duration", Value: "10000h"}, {Name: "node_crash_rate", Value: "1"}},
			[]string{"node_crash_rate = 1", "crashes per node", "4096"}},
		{[]knobs.KV{{Name: "duration", Value: "10000h"}, {Name: "node_pause_rate", Value: "1"}},
			[]string{"node_pause_rate = 1", "stalls per node", "4096"}},
		{[]knobs.KV{{Name: "duration", Value: "10000h"}, {Name: "node_clock_jump_rate", Value: "1"}},
			[]string{"node_clock_jump_rate = 1", "clock jumps per node", "4096"}},
		{[]knobs.KV{{Name: "latency", Value: "10s"}, {Name: "ttl", Value: "100ms"}, {Name: "retry_delay", Value: "0s"}, {Name: "clients", Value: "64"}},
			[]string{"clients = 64", "latency = const(10s)", "timeout = 5ms", "retry_delay = 0s", "messages in flight", "at most 65536"}},
		{[]knobs.KV{{Name: "latency", Value: "1s"}, {Name: "ttl", Value: "10ms"}, {Name: "retry_delay", Value: "0s"}, {Name: "clients", Value: "64"}, {Name: "nodes", Value: "99"}},
			[]string{"nodes = 99", "messages in flight"}},
	}
	for _, tt := range tests {
		err := CheckKnobs(tt.knobs)
		var le *knobs.LimitError
		require.ErrorAs(t, err, &le, "%v", tt.knobs)
		var pe *sim.ParamError
		assert.ErrorAs(t, err, &pe, "a limit is a bad knob value to callers that ask")
		for _, w := range tt.want {
			assert.Contains(t, err.Error(), w, "%v", tt.knobs)
		}
		c := knobs.DefaultConfig()
		require.NoError(t, c.Apply(tt.knobs))
		assert.ErrorAs(t, c.Validate(), &le, "Plan (and so every run) refuses it too")
	}
}

// TestLimitsLeaveRealWorldsAlone: the margin does not refuse what runs to the end, at the
// edges the checks are about.
func TestLimitsLeaveRealWorldsAlone(t *testing.T) {
	for _, kvs := range [][]knobs.KV{
		{{Name: "duration", Value: "1h"}, {Name: "partition_rate", Value: "0.01"}},
		{{Name: "duration", Value: "9h"}, {Name: "partition_rate", Value: "1"}},
		{{Name: "clog_rate", Value: "100"}, {Name: "clog_len", Value: "const(24h)"}},
		{{Name: "clients", Value: "64"}, {Name: "nodes", Value: "99"}},
		{{Name: "latency", Value: "tail(uniform(200us,800us),0.01,1s)"}, {Name: "clients", Value: "64"}},
		{{Name: "latency", Value: "10s"}, {Name: "clients", Value: "64"}},
		{{Name: "latency", Value: "0s"}, {Name: "retry_delay", Value: "0s"}, {Name: "retry_jitter", Value: "0s"}},
	} {
		require.NoError(t, CheckKnobs(kvs), "%v", kvs)
		rec, err := RunKnobs(t.Context(), append(kvs, knobs.KV{Name: "duration", Value: "2s"}), 1)
		require.NoError(t, err, "%v: the world runs", kvs)
		assert.NotNil(t, rec)
	}
}

// TestCheckSpecFindsTheFailingPoint: a sweep whose second point would abort it part way
// through is refused before anything runs, naming the point.
func TestCheckSpecFindsTheFailingPoint(t *testing.T) {
	spec, err := sweep.ParseSpec("s.yaml", []byte("base:\n  duration: 1h\naxes:\n  partition_rate: [0.01, 20]\nreplicates: 2\nseed: 1\n"), SweepRunner())
	require.NoError(t, err, "each value passes its own check")
	err = CheckSpec(spec)
	var le *knobs.LimitError
	require.ErrorAs(t, err, &le)
	assert.Contains(t, err.Error(), "sweep point 2 of 2 (partition_rate=20)")
	assert.Contains(t, err.Error(), "partition_rate = 20")
}

// TestEveryShippedWorldPassesTheLimits: the scenarios, the default study and the examples
// all pass, so the margin never refuses what the project itself runs.
func TestEveryShippedWorldPassesTheLimits(t *testing.T) {
	for _, sc := range scenarios.Scenarios() {
		assert.NoError(t, CheckKnobs([]knobs.KV{{Name: "scenario", Value: sc.Name}}), sc.Name)
	}
	studies, err := DefaultStudy()
	require.NoError(t, err)
	for _, s := range studies {
		assert.NoError(t, CheckSpec(s.Spec), s.Name)
	}
	files, err := filepath.Glob("../examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		spec, err := sweep.ParseSpec(f, data, SweepRunner())
		require.NoError(t, err, f)
		assert.NoError(t, CheckSpec(spec), f)
	}
}
