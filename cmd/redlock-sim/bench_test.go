package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
)

func TestBenchReportsEveryFigure(t *testing.T) {
	code, out, errOut := cli("bench", "--duration", "2s")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"standard workload", "10 clients sharing one lock", "hold 5ms, think 1ms",
		"simulated        2s", "GOMAXPROCS=1", "cycles", "events", "time compression", "target ≥ 2000×",
		"cycles / wall s", "target ≥ 300000", "events / wall s", "peak heap", "target < 64 MiB",
		"run              lock: SAFE (no overlaps) · resource: SAFE (0 stale writes accepted); trace "} {
		assert.Contains(t, out, want)
	}
}

func TestBenchJSON(t *testing.T) {
	code, out, errOut := cli("bench", "--duration", "2s", "--clients", "4", "--own-locks", "--json")
	require.Equal(t, 0, code, errOut)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	for _, k := range []string{"cycles", "events", "sim_time_s", "wall_time_s", "time_compression",
		"cycles_per_wall_s", "events_per_wall_s", "peak_heap_bytes", "trace_hash", "config"} {
		assert.Contains(t, m, k)
	}
	assert.Equal(t, "own", m["locks"])
	assert.Equal(t, "standard", m["workload"])
	assert.EqualValues(t, 4, m["clients"])
	assert.EqualValues(t, 1, m["gomaxprocs"])
	assert.EqualValues(t, 2, m["sim_time_s"])
	assert.Positive(t, m["cycles"])
	assert.Equal(t, "4", m["config"].(map[string]any)["resources"])
}

func TestBenchRunsReportTheMedianRun(t *testing.T) {
	code, out, errOut := cli("bench", "--duration", "2s", "--runs", "3", "--json")
	require.Equal(t, 0, code, errOut)
	var r struct {
		Runs               int       `json:"runs"`
		CyclesPerWallS     float64   `json:"cycles_per_wall_s"`
		CyclesPerWallSRuns []float64 `json:"cycles_per_wall_s_runs"`
		Cycles             uint64    `json:"cycles"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, 3, r.Runs)
	require.Len(t, r.CyclesPerWallSRuns, 3)
	sorted := slices.Sorted(slices.Values(r.CyclesPerWallSRuns))
	assert.Equal(t, sorted[1], r.CyclesPerWallS, "the figures are the median run's")
	assert.Positive(t, r.Cycles)

	code, out, errOut = cli("bench", "--duration", "2s", "--runs", "3")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "GOMAXPROCS=1, the median of 3 runs")
	assert.Regexp(t, `runs: \d+ to \d+, [0-3] of 3 at or above the target`, out)

	code, out, errOut = cli("bench", "--duration", "2s", "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"runs": 1`)
	assert.NotContains(t, out, "cycles_per_wall_s_runs", "one run lists no runs")
}

func TestBenchIsDeterministicInItsCounts(t *testing.T) {
	counts := func() map[string]any {
		code, out, errOut := cli("bench", "--duration", "1s", "--zero-hold", "--json")
		require.Equal(t, 0, code, errOut)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		return map[string]any{"cycles": m["cycles"], "events": m["events"], "hash": m["trace_hash"]}
	}
	assert.Equal(t, counts(), counts())
}

func TestBenchWritesACPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	code, _, errOut := cli("bench", "--duration", "2s", "--cpuprofile", path)
	require.Equal(t, 0, code, errOut)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Positive(t, st.Size())
}

func TestBenchErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--duration", "0s"},
		{"--duration", "25h"},
		{"--clients", "0"},
		{"--clients", "65"},
		{"--gomaxprocs", "0"},
		{"--real-duration", "0s"},
		{"--runs", "0"},
		{"--runs", "101"},
		{"--no-such-flag"},
		{"extra-argument"},
	} {
		code, _, errOut := cli(append([]string{"bench"}, args...)...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
	}
	code, _, errOut := cli("bench", "--runs", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--runs 0: want [1, 100]")
	code, _, errOut = cli("bench", "--duration", "1s", "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--cpuprofile")
}

func TestBenchRealWithoutRedisSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, _, errOut := cli("bench", "--real", "--real-duration", "1s", "--duration", "1s")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "redis-server not found")
	assert.Contains(t, errOut, "apt-get install -y redis-server")
}

func TestBenchRealComparesWithTheSimulator(t *testing.T) {
	redistest.Path(t) // skips without redis-server, unless REDLOCK_SIM_REQUIRE_REDIS=1
	code, out, errOut := cli("bench", "--real", "--real-duration", "1s", "--duration", "10s", "--json")
	require.Equal(t, 0, code, errOut)
	var r struct {
		Real struct {
			Servers    int     `json:"servers"`
			Cycles     uint64  `json:"cycles"`
			CyclesPerS float64 `json:"cycles_per_s"`
			WallTimeS  float64 `json:"wall_time_s"`
		} `json:"real"`
		Sim struct {
			Workload       string  `json:"workload"`
			Cycles         uint64  `json:"cycles"`
			CyclesPerWallS float64 `json:"cycles_per_wall_s"`
		} `json:"sim"`
		Ratio float64 `json:"ratio"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, 5, r.Real.Servers)
	assert.Positive(t, r.Real.Cycles)
	assert.Less(t, r.Real.WallTimeS, 5.0, "the real phase is bounded by its duration")
	assert.Equal(t, "zero-hold", r.Sim.Workload)
	assert.Positive(t, r.Sim.Cycles)
	assert.InDelta(t, r.Sim.CyclesPerWallS/r.Real.CyclesPerS, r.Ratio, 1e-9)

	code, out, errOut = cli("bench", "--real", "--real-duration", "1s", "--duration", "10s")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"zero-hold workload", "real Redis", "5 redis-server", "simulator", "ratio", "target ≥ 50×"} {
		assert.Contains(t, out, want)
	}
}
