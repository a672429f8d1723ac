package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

func cli(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunDefaultsToTheBaselineSummary(t *testing.T) {
	code, out, errOut := cli("run", "--set", "duration=2s")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "scenario baseline, seed 1")
	assert.Contains(t, out, "SAFE")
}

func TestRunJSONHasTheIssueFields(t *testing.T) {
	code, out, errOut := cli("run", "--scenario", "gc-pause", "--seed", "1", "--json")
	require.Equal(t, 0, code, errOut)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	for _, k := range []string{"scenario", "seed", "trace_hash", "config", "safety", "liveness", "sim_time_s", "wall_time_s", "events"} {
		assert.Contains(t, m, k)
	}
	safety := m["safety"].(map[string]any)
	for _, k := range []string{"validity_overlaps", "usage_overlaps", "stale_writes_accepted", "fenced_writes_rejected"} {
		assert.Contains(t, safety, k)
	}
	assert.EqualValues(t, 2, safety["stale_writes_accepted"])
	live := m["liveness"].(map[string]any)
	for _, k := range []string{"attempts", "acquired", "failed", "acquire_latency_ms", "split_brain_rounds", "unheld_while_waiting_ms", "extensions"} {
		assert.Contains(t, live, k)
	}
	for _, k := range []string{"p50", "p90", "p99", "max"} {
		assert.Contains(t, live["acquire_latency_ms"], k)
	}
	cfg := m["config"].(map[string]any)
	assert.Len(t, cfg, len(knobs.Params()), "every knob")
	assert.Equal(t, "1s", cfg["ttl"])
	// The config object keeps registry order.
	assert.Less(t, strings.Index(out, `"duration"`), strings.Index(out, `"pause_len"`))
}

func TestRunTraceNarrates(t *testing.T) {
	code, out, errOut := cli("run", "--scenario", "failover-race", "--trace", "--window", ":1s")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "SET lock")
	assert.Contains(t, out, "!! redis1.0")
	assert.Contains(t, out, "** oracle")
	assert.Contains(t, out, "# summary")
}

func TestSetOverridesAndSameSeedSameHash(t *testing.T) {
	_, a, _ := cli("run", "--set", "duration=2s", "--json")
	_, b, _ := cli("run", "--set", "duration=2s", "--json")
	var ra, rb experiments.Record
	require.NoError(t, json.Unmarshal([]byte(a), &ra))
	require.NoError(t, json.Unmarshal([]byte(b), &rb))
	assert.Equal(t, ra.TraceHash, rb.TraceHash)
	assert.Equal(t, "2s", ra.Config.Get("duration"))
}

func TestUserErrorsExitTwoWithSuggestions(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--scenario", "gc-paus"}, []string{`unknown scenario "gc-paus"`, "gc-pause"}},
		{[]string{"run", "--set", "tll=3s"}, []string{`unknown knob "tll"`, "ttl"}},
		{[]string{"run", "--set", "drift_factr=0.1"}, []string{"drift_factor"}},
		{[]string{"run", "--set", "ttl=3x"}, []string{"ttl", "3x", "[1ms, 24h0m0s]"}},
		{[]string{"run", "--set", "ttl=10"}, []string{"ttl = 10: a duration needs a unit", "did you mean 10s?"}},
		{[]string{"run", "--set", "nodes=five"}, []string{"nodes = five: not a number", "whole number"}},
		{[]string{"run", "--set", "nodes=١٢٣"}, []string{"not a number", "digits 0-9"}},
		{[]string{"run", "--set", "loss=0x10"}, []string{"loss = 0x10: not a number", "[0, 1]"}},
		{[]string{"run", "--set", "latency=5ms,"}, []string{"a trailing comma", "5ms?"}},
		{[]string{"run", "--set", "latency=uniform(5ms,1ms)"}, []string{"latency = uniform(5ms,1ms): uniform's lo 5ms > hi 1ms"}},
		{[]string{"run", "--set", "duration=24h", "--set", "partition_rate=1"},
			[]string{"partition_rate = 1", "duration = 24h0m0s", "random network faults", "at most 65536"}},
		{[]string{"run", "--set", "duration=1h", "--set", "clog_rate=20"}, []string{"clog_rate = 20", "65536"}},
		{[]string{"run", "--set", "latency=10s", "--set", "ttl=100ms", "--set", "retry_delay=0s", "--set", "clients=64"},
			[]string{"messages in flight", "latency = const(10s)", "65536"}},
		{[]string{"params", "NOSUCH"}, []string{`unknown knob "NOSUCH"`}},
		{[]string{"params", "tll"}, []string{"did you mean ttl?"}},
		{[]string{"run", "--set", "nodes=0"}, []string{"nodes", "[1, 99]"}},
		{[]string{"run", "--set", "loss=2"}, []string{"loss", "[0, 1]"}},
		{[]string{"run", "--set", "latency=uniform(1ms)"}, []string{"latency", "uniform"}},
		{[]string{"run", "--set", "hold=uniform(2ms,1ms)"}, []string{"hold"}},
		{[]string{"run", "--set", "ttl"}, []string{"name=value"}},
		{[]string{"run", "--seed", "x"}, []string{"seed"}},
		{[]string{"run", "--window", "2s:1s"}, []string{"window"}},
		{[]string{"run", "extra"}, []string{"no arguments"}},
		{[]string{"params", "--bogus"}, []string{"bogus"}},
		{[]string{"scenarios", "--bogus"}, []string{"bogus"}},
	}
	for _, tt := range tests {
		code, _, errOut := cli(tt.args...)
		assert.Equal(t, 2, code, "%v: %s", tt.args, errOut)
		for _, w := range tt.want {
			assert.Contains(t, errOut, w, "%v", tt.args)
		}
	}
}

func TestScenariosListsEveryStory(t *testing.T) {
	code, out, _ := cli("scenarios")
	require.Equal(t, 0, code)
	for _, sc := range scenarios.Scenarios() {
		assert.Contains(t, out, sc.Name)
		assert.Contains(t, out, sc.Story)
	}
	_, verbose, _ := cli("scenarios", "-v")
	assert.Contains(t, verbose, "expect:")
}

func TestParamsListsEveryKnob(t *testing.T) {
	code, out, _ := cli("params")
	require.Equal(t, 0, code)
	for _, p := range knobs.Params() {
		assert.Contains(t, out, p.Name)
		assert.Contains(t, out, p.Default)
		assert.Contains(t, out, p.Help)
	}
	for _, name := range []string{"nodes", "clients", "ttl", "drift_factor", "drift_pad", "retry_delay", "retry_jitter",
		"tries", "variant", "duration", "hold", "think", "client_clock_drift_ppm", "node_clock_drift_ppm",
		"latency", "loss", "persistence", "fencing"} {
		assert.Contains(t, out, "\n"+name+" ", "params lists knob %s on a line of its own", name)
	}
}

func TestRunTraceFiltersImplyTrace(t *testing.T) {
	code, out, errOut := cli("run", "--scenario", "gc-pause", "--actor", "client1", "--only", "faults,violations")
	require.Equal(t, 0, code, errOut)
	trace, _, ok := strings.Cut(out, "# summary")
	require.True(t, ok, out)
	assert.Contains(t, trace, "!! client1   [mono 0.100s]    pause for=1.5s, until 1.600s")
	assert.Contains(t, trace, "** oracle")
	assert.NotContains(t, trace, "SET lock")
	assert.NotContains(t, trace, "   client2   ")

	code, full, errOut := cli("run", "--scenario", "gc-pause", "--trace")
	require.Equal(t, 0, code, errOut)
	code, short, errOut := cli("run", "--scenario", "gc-pause", "--hide-cleanup")
	require.Equal(t, 0, code, errOut)
	assert.Less(t, strings.Count(short, "\n"), strings.Count(full, "\n")*3/4)
	assert.Contains(t, full, "validity=986.779ms")

	code, out, errOut = cli("run", "--scenario", "gc-pause", "--precise", "--only", "lock")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "validity=986.779293ms")
}

func TestRunTraceFilterErrorsExitTwo(t *testing.T) {
	code, _, errOut := cli("run", "--scenario", "gc-pause", "--only", "fault")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `unknown kind of trace line "fault"; did you mean faults?`)
	code, _, errOut = cli("run", "--scenario", "gc-pause", "--actor", "client9")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `unknown actor "client9"`)
	assert.Contains(t, errOut, "client1, client2")
}

func TestOutOfRangeOnlyForValuesThatParsed(t *testing.T) {
	for _, set := range []string{"ttl=10", "nodes=five", "nodes=١٢٣", "loss=0x10", "latency=5ms,", "latency=uniform(5ms,1ms)"} {
		code, _, errOut := cli("run", "--set", set)
		assert.Equal(t, 2, code, set)
		assert.NotContains(t, errOut, "out of range", set)
		assert.NotContains(t, errOut, "unbalanced", set)
		assert.NotContains(t, errOut, ".fast.", set)
	}
}

// TestRunAndSweepParseSetAlike: one --set parser, one message.
func TestRunAndSweepParseSetAlike(t *testing.T) {
	for _, set := range []string{"=x", "ttl", " =5"} {
		rc, _, runErr := cli("run", "--set", set)
		sc, _, sweepErr := cli("sweep", "--dry-run", "--set", set)
		assert.Equal(t, 2, rc, set)
		assert.Equal(t, 2, sc, set)
		assert.Equal(t, runErr, sweepErr, set)
		assert.Contains(t, runErr, "want name=value", set)
		assert.NotContains(t, sweepErr, "unknown knob", set)
	}
	_, _, runErr := cli("run", "--set", "nodes=five")
	_, _, sweepErr := cli("sweep", "--dry-run", "--set", "nodes=five")
	assert.Equal(t, runErr, sweepErr, "a bad value reads the same too")
}

func TestParamsShowsOneKnobInFull(t *testing.T) {
	code, out, errOut := cli("params", "ttl")
	require.Equal(t, 0, code, errOut)
	p, err := knobs.LookupParam("ttl")
	require.NoError(t, err)
	for _, w := range []string{"ttl (algorithm)", p.Help, "unit:    duration", "default: 10s", "allowed: " + p.Allowed} {
		assert.Contains(t, out, w)
	}
	assert.NotContains(t, out, "nodes", "one knob, not the table")

	_, out, _ = cli("params", "retry_delay", "hold")
	assert.Contains(t, out, "retry_delay (algorithm)")
	assert.Contains(t, out, "hold (workload)")
	assert.Contains(t, out, "distributions:", "a distribution knob explains the syntax")
}

func TestParamsJSONIsTheRegistry(t *testing.T) {
	code, out, errOut := cli("params", "--json")
	require.Equal(t, 0, code, errOut)
	var got []map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	want := knobs.Params()
	require.Len(t, got, len(want))
	for i, p := range want {
		assert.Equal(t, map[string]string{"name": p.Name, "group": p.Group, "unit": p.Unit, "default": p.Default,
			"allowed": p.Allowed, "help": p.Help}, got[i])
	}
	_, out, _ = cli("params", "--json", "ttl")
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 1)
	assert.Equal(t, "ttl", got[0]["name"])
}

// TestScenarioFileRoundTrip starts from a built-in's file, as a user would (scenarios
// --show), runs it with run --scenario-file, and gets the built-in's run; a what-if on
// its parameter changes it.
func TestScenarioFileRoundTrip(t *testing.T) {
	code, text, errOut := cli("scenarios", "--show", "gc-pause")
	require.Equal(t, 0, code, errOut)
	path := t.TempDir() + "/mine.yaml"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	hash := func(args ...string) string {
		code, out, errOut := cli(append([]string{"run", "--json"}, args...)...)
		require.Equal(t, 0, code, errOut)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		return m["trace_hash"].(string)
	}
	builtin := hash("--scenario", "gc-pause")
	assert.Equal(t, builtin, hash("--scenario-file", path))
	assert.NotEqual(t, builtin, hash("--scenario-file", path, "--set", "pause=500ms"))

	code, _, errOut = cli("run", "--scenario", "gc-pause", "--scenario-file", path)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "give --scenario or --scenario-file, not both")
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(text, "pause_client:", "pause_clinet:", 1)), 0o644))
	code, _, errOut = cli("run", "--scenario-file", path)
	assert.Equal(t, 2, code)
	line := 1 + strings.Count(text[:strings.Index(text, "pause_client:")], "\n")
	assert.Contains(t, errOut, fmt.Sprintf(`mine.yaml:%d: unknown key "pause_clinet" in a schedule step (did you mean "pause_client"?)`, line))
	code, _, errOut = cli("run", "--scenario-file", path+".missing")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "no such file or directory")
	code, _, errOut = cli("scenarios", "--show", "gc-paus")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "did you mean gc-pause")
}

// TestScenariosVerboseListsParameters shows each parameter with its default.
func TestScenariosVerboseListsParameters(t *testing.T) {
	code, out, errOut := cli("scenarios", "-v")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "parameter pause = 1500ms: how long client1's stop-the-world pause lasts")
	assert.Contains(t, out, "parameter down = 2100ms")
}

// TestCheckCommand runs a scenario's expectations: they hold as shipped, break (exit 1,
// naming the seeds) under a what-if that makes the story safe, and bad input exits 2.
func TestCheckCommand(t *testing.T) {
	code, out, errOut := cli("check", "--scenario", "gc-pause", "--seeds", "3")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "ok   usage_overlaps: always")
	assert.Contains(t, out, "all 3 rules held")
	code, out, errOut = cli("check", "--scenario", "gc-pause", "--seeds", "3", "--set", "pause=300ms")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "FAIL usage_overlaps: always                          0.0% of seeds saw it (against it: seeds 1, 2, 3)")
	assert.Contains(t, errOut, "check: 2 of 3 rules broken")
	for _, args := range [][]string{
		{"check", "--scenario", "gc-paus"},
		{"check", "--seeds", "-1"},
		{"check", "--scenario", "gc-pause", "--set", "pause=300"},
		{"check", "--scenario", "x", "--scenario-file", "y"},
	} {
		code, _, errOut = cli(args...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
	}
}

// TestInertKnobExitsTwo is the first-hour surprise: a knob that cannot change the run.
func TestInertKnobExitsTwo(t *testing.T) {
	code, _, errOut := cli("run", "--scenario", "gc-pause", "--set", "pause_len=500ms")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "pause_len = 500ms cannot change this run")
	assert.Contains(t, errOut, "set its parameter pause instead")
	code, _, errOut = cli("check", "--scenario", "baseline", "--set", "failover_after=1s")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "there are no replicas")
}

// TestParamsShowsAClientProfile: `params --client` lists every knob the profile sets,
// with its value and the default, and marks the ones that differ.
func TestParamsShowsAClientProfile(t *testing.T) {
	code, out, errOut := cli("params", "--client", "redsync")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "redsync v4.17.0")
	for _, line := range []string{"ttl               8s           10s          *",
		"dialect           redsync      spec         *", "connection        go-redis     queued       *",
		"drift_factor      0.01         0.01         \n"} {
		assert.Contains(t, out, line)
	}
	p, err := knobs.LookupProfile("redsync")
	require.NoError(t, err)
	for _, kv := range p.Sets {
		assert.Contains(t, out, "\n"+kv.Name+" ")
	}

	code, _, errOut = cli("params", "--client", "redsink")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "client = redsink: not a known value; did you mean redsync?")
}

// TestImpossibleTimesExitTwoWithTheirLine holds the command line to refusing times no run
// can honour: a step at 9000h in a 3 s story once ran and said SAFE, and a client's start
// at the last nanosecond int64 can hold was accepted. Each is refused before anything
// runs, with the file and line, exit 2; so is a step that --set duration moves past the
// end (the file alone is fine), a negative parameter default, and a built-in's step that
// a sweep point's duration leaves past the end.
func TestImpossibleTimesExitTwoWithTheirLine(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		path := dir + "/" + name
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	late := file("late.yaml", "name: late\nstory: a step after the end\nknobs:\n  duration: 3s\nschedule:\n  - at: 9000h\n    crash_node: {node: redis1}\n")
	start := file("start.yaml", "name: start\nstory: a start at the end of time\nstart:\n  client1: 9223372036854775807ns\n")
	fits := file("fits.yaml", "name: fits\nstory: a step inside the run\nknobs:\n  duration: 3s\nschedule:\n  - at: 2s\n    crash_node: {node: redis1}\n")
	negative := file("negative.yaml", "name: negative\nstory: a negative default\nparams:\n  wait:\n    default: -5s\n    help: how long\nschedule:\n  - at: $wait\n    crash_node: {node: redis1}\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario-file", late}, late + ":6: at = 9000h: after the end of the run, which lasts 3s, so the step would never act"},
		{[]string{"--scenario-file", start}, start + ":4: start of client1 = 9223372036854775807ns: after the end of any run"},
		{[]string{"--scenario-file", fits, "--set", "duration=1s"}, fits + ":6: at = 2s: after the end of the run, which lasts 1s"},
		{[]string{"--scenario-file", negative}, negative + ":5: wait = -5s: out of range, allowed a duration from 0s"},
		{[]string{"--scenario", "gc-pause", "--set", "pause_at=4s"}, "builtin/gc-pause.yaml:27: at $pause_at = 4s: after the end of the run, which lasts 3s"},
	} {
		code, out, errOut := cli(append([]string{"run"}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, "redlock-sim: usage: scenario "+c.want, "%v", c.args)
		assert.NotContains(t, out, "SAFE", "%v: nothing ran", c.args)
	}
	code, out, errOut := cli("run", "--scenario-file", fits)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "SAFE")

	// A sweep point whose duration leaves a built-in's step past the end is refused
	// before the first run, with the built-in's line.
	spec := file("spec.yaml", "base:\n  scenario: gc-pause\naxes:\n  duration: [3s, 50ms]\nreplicates: 1\nseed: 1\n")
	code, _, errOut = cli("sweep", "--dry-run", "--spec", spec, "--out", dir+"/out")
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "sweep point 2 of 2 (duration=50ms): scenario builtin/gc-pause.yaml:27: at $pause_at = 100ms: after the end of the run, which lasts 50ms")
}
