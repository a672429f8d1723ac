package scenarios

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/sim"
)

// configure parses text, binds sets and runs Configure on a world of duration: the point
// where the run's duration is final.
func configure(t *testing.T, text, duration string, sets ...knobs.KV) error {
	t.Helper()
	sc, err := ParseFile("f.yaml", []byte(text))
	require.NoError(t, err)
	v, rest, err := sc.Bind(sets)
	if err != nil {
		return err
	}
	require.Empty(t, rest)
	cfg := knobs.DefaultConfig()
	require.NoError(t, cfg.Set("duration", duration))
	w, err := world.Plan(cfg, 1)
	require.NoError(t, err)
	return sc.Configure(w, v)
}

// requireLine asserts err is a FileError at line of f.yaml, a usage error (it unwraps to a
// *sim.ParamError, so the command line exits 2), and says want.
func requireLine(t *testing.T, err error, line int, want string) {
	t.Helper()
	var fe *FileError
	require.True(t, errors.As(err, &fe), "%T %v", err, err)
	assert.Equal(t, "f.yaml", fe.File)
	assert.Equal(t, line, fe.Line, "%v", err)
	var pe *sim.ParamError
	assert.ErrorAs(t, err, &pe, "a usage error")
	assert.ErrorContains(t, err, want)
}

// TestStepsPastTheRunAreRefusedAtTheirLine: a step at a true time after the run's end, a
// delay after an event longer than the run and a client's start after the end would
// never happen; the run's duration is known only once the knobs are applied (the file's
// own, --set's), so Configure refuses them, with the line, and the end itself is allowed.
func TestStepsPastTheRunAreRefusedAtTheirLine(t *testing.T) {
	const head = "name: x\nstory: y\n"
	step := head + "schedule:\n  - at: 9000h\n    crash_node: {node: redis1}\n"
	requireLine(t, configure(t, step, "3s"), 4,
		"at = 9000h: after the end of the run, which lasts 3s, so the step would never act (allowed: a true time from 0s to the run's duration)")
	assert.NoError(t, configure(t, step, "9000h"), "a step at the run's last instant acts")

	// The file's duration knob, then the one a user sets: the last one counts.
	knobbed := head + "knobs: {duration: 10s}\nschedule:\n  - at: 5s\n    crash_node: {node: redis1}\n"
	sc, err := ParseFile("f.yaml", []byte(knobbed))
	require.NoError(t, err)
	cfg := knobs.DefaultConfig()
	require.NoError(t, cfg.Apply(sc.Knobs))
	require.NoError(t, cfg.Apply([]knobs.KV{{Name: "duration", Value: "2s"}}))
	w, err := world.Plan(cfg, 1)
	require.NoError(t, err)
	requireLine(t, sc.Configure(w, sc.defaults()), 5, "at = 5s: after the end of the run, which lasts 2s")

	// A parameter's value, as a user sets it, is checked at the step that uses it.
	param := head + "params:\n  t: {default: 1s, help: h}\nschedule:\n  - at: $t\n    crash_node: {node: redis1}\n"
	assert.NoError(t, configure(t, param, "3s"))
	requireLine(t, configure(t, param, "3s", knobs.KV{Name: "t", Value: "3001ms"}), 6, "at $t = 3.001s: after the end of the run, which lasts 3s")

	after := head + "schedule:\n  - on: {event: acquired, client: client1}\n    after: 4s\n    crash_node: {node: redis1}\n"
	requireLine(t, configure(t, after, "3s"), 5, "after = 4s: longer than the run, which lasts 3s, so the step would never act")
	assert.NoError(t, configure(t, after, "4s"))

	start := head + "start:\n  client1: 0s\n  client2: 3001ms\n"
	requireLine(t, configure(t, start, "3s"), 5, "start of client2 = 3001ms: after the end of the run, which lasts 3s, so the client would never start")
	assert.NoError(t, configure(t, start, "3001ms"))

	// Every duration field of an action, through a parameter set past what its actor takes.
	pause := head + "params:\n  p: {default: 1s, help: h}\nschedule:\n  - at: 1s\n    pause_client: {client: client1, for: $p}\n"
	requireLine(t, configure(t, pause, "3s", knobs.KV{Name: "p", Value: "9000h"}), 7,
		"pause_client: for $p = 9000h0m0s: out of range (allowed: a duration above 0s, at most 24h0m0s)")
	requireLine(t, configure(t, pause, "3s", knobs.KV{Name: "p", Value: "0s"}), 7, "pause_client: for $p = 0s: out of range")
	clock := head + "params:\n  j: {default: 1s, help: h}\nschedule:\n  - at: 1s\n    clock_step: {node: redis1, by: $j}\n"
	requireLine(t, configure(t, clock, "3s", knobs.KV{Name: "j", Value: "900000h"}), 7, "clock_step: by $j = 900000h0m0s: out of range")
	ttl := head + "params:\n  l: {default: 1s, help: h}\nschedule:\n  - at: 1s\n    outside_lock: {node: redis1, ttl: $l}\n"
	requireLine(t, configure(t, ttl, "3s", knobs.KV{Name: "l", Value: "1500us"}), 7, "outside_lock: ttl $l = 1.5ms: out of range (allowed: whole milliseconds from 1ms")
}

// TestTimesNoRunCanReachAreRefusedWhenTheFileIsRead: past the longest run the duration knob
// allows (and so near the end of int64 nanoseconds, where a sum would wrap), a time is
// impossible whatever the knobs, so the file is refused as it is read, at the line.
func TestTimesNoRunCanReachAreRefusedWhenTheFileIsRead(t *testing.T) {
	head := "name: x\nstory: y\n"
	for _, c := range []struct {
		body string
		line int
		want string
	}{
		{"start:\n  client1: 9223372036854775807ns\n", 4,
			"start of client1 = 9223372036854775807ns: after the end of any run (the duration knob allows at most 10000h0m0s), so the client would never start"},
		{"start:\n  client1: 10000h1ns\n", 4, "start of client1 = 10000h1ns: after the end of any run"},
		{"schedule:\n  - at: 2562047h\n    crash_node: {node: redis1}\n", 4, "at = 2562047h: after the end of any run"},
		{"schedule:\n  - on: {event: acquired, client: client1}\n    after: 2562047h47m16.854775807s\n    crash_node: {node: redis1}\n", 5, "after = 2562047h47m16.854775807s: longer than any run"},
		{"params:\n  t: {default: 20000h, help: h}\nschedule:\n  - at: $t\n    crash_node: {node: redis1}\n", 6, "at $t = 20000h0m0s: after the end of any run"},
		{"schedule:\n  - at: 1s\n    pause_client: {client: client1, for: 25h}\n", 5, "pause_client: for = 25h: out of range (allowed: a duration above 0s, at most 24h0m0s)"},
		{"schedule:\n  - at: 1s\n    pause_node: {node: redis1, for: 2562047h}\n", 5, "pause_node: for = 2562047h: out of range"},
		{"schedule:\n  - at: 1s\n    isolate: {endpoint: redis1, for: 25h}\n", 5, "isolate: for = 25h: out of range (allowed: a duration above 0s, at most 24h0m0s (leave it out for: to the end of the run))"},
		{"schedule:\n  - at: 1s\n    kill_node: {node: redis1, restart_after: 25h}\n", 5, "kill_node: restart_after = 25h: out of range (allowed: a duration from 0s to 24h0m0s, or never)"},
		{"schedule:\n  - at: 1s\n    clock_step: {node: redis1, by: -2562047h}\n", 5, "clock_step: by = -2562047h: out of range (allowed: a duration from -876000h0m0s to 876000h0m0s)"},
		{"schedule:\n  - at: 1s\n    clock_slew: {node: redis1, by: 900000h}\n", 5, "clock_slew: by = 900000h: out of range"},
	} {
		_, err := ParseFile("f.yaml", []byte(head+c.body))
		require.Error(t, err, c.body)
		requireLine(t, err, c.line, c.want)
	}
	// At the limits themselves, the file reads.
	for _, body := range []string{
		"start:\n  client1: 10000h\n",
		"schedule:\n  - at: 10000h\n    pause_client: {client: client1, for: 24h}\n",
		"schedule:\n  - at: 1s\n    clock_step: {node: redis1, by: -876000h}\n",
		"schedule:\n  - at: 1s\n    crash_client: {client: client1, restart_after: 2562047h}\n",
	} {
		_, err := ParseFile("f.yaml", []byte(head+body))
		assert.NoError(t, err, body)
	}
}

// TestBadNumbersInAFileAreRefusedAtTheirLine: a parameter's default that no value of it
// may be (negative, a count below 1), and NaN, infinities or hexadecimal in a step's rate
// or a check's bound, each at its line, with the value and what is allowed.
func TestBadNumbersInAFileAreRefusedAtTheirLine(t *testing.T) {
	head := "name: x\nstory: y\n"
	for _, c := range []struct {
		body string
		line int
		want string
	}{
		{"params:\n  wait: {default: -5s, help: h}\n", 4, "wait = -5s: out of range, allowed a duration from 0s"},
		{"params:\n  wait:\n    help: how long\n    default: -5s\n", 6, "wait = -5s: out of range, allowed a duration from 0s"},
		{"params:\n  n: {default: -2, help: h}\n", 4, "n = -2: out of range, allowed a whole number from 1"},
		{"params:\n  n: {default: 0, help: h}\n", 4, "n = 0: out of range, allowed a whole number from 1"},
		{"schedule:\n  - at: 1s\n    clock_drift: {node: redis1, ppm: NaN}\n", 5,
			"clock_drift: ppm = NaN: not a finite number: want a decimal number such as 0.5 or 1e-3 (allowed: a rate change in parts per million, not 0, between -500000 and 500000)"},
		{"schedule:\n  - at: 1s\n    clock_drift: {node: redis1, ppm: -Inf}\n", 5, "clock_drift: ppm = -Inf: not a finite number"},
		{"schedule:\n  - at: 1s\n    clock_drift: {node: redis1, ppm: 0x10}\n", 5, "clock_drift: ppm = 0x10: not a number: hexadecimal is not accepted"},
		{"schedule:\n  - at: 1s\n    clock_slew: {node: redis1, by: 1s, rate_ppm: NaN}\n", 5, "clock_slew: rate_ppm = NaN: not a finite number"},
		{"schedule:\n  - at: 1s\n    clock_slew: {node: redis1, by: 1s, rate_ppm: +Inf}\n", 5, "clock_slew: rate_ppm = +Inf: not a finite number"},
		{"schedule:\n  - at: 1s\n    clock_slew: {node: redis1, by: 1s, rate_ppm: 1e999}\n", 5, "clock_slew: rate_ppm = 1e999: number too large"},
		{"check:\n  validity_overlaps: at least NaN%\n", 4, `check: validity_overlaps = "at least NaN%": want a share such as 80%`},
		{"check:\n  acquired: {min: 1, in: Inf%}\n", 4, "in = Inf%: want the share of seeds"},
		{"check:\n  acquired: {min: NaN}\n", 4, "check: acquired: min = NaN: want a number"},
		{"check:\n  acquired: {max: -Infinity}\n", 4, "check: acquired: max = -Infinity: want a number"},
	} {
		_, err := ParseFile("f.yaml", []byte(head+c.body))
		require.Error(t, err, c.body)
		var fe *FileError
		require.True(t, errors.As(err, &fe), "%s: %T %v", c.body, err, err)
		assert.Equal(t, c.line, fe.Line, "%s: %v", c.body, err)
		assert.ErrorContains(t, err, c.want, c.body)
	}
}

// FuzzParseFile feeds arbitrary scenario files: reading one never panics, every refusal
// is a *FileError naming the file, and a file that reads holds no time that no run can
// reach, so no sum of its times can wrap.
func FuzzParseFile(f *testing.F) {
	for _, sc := range Scenarios() {
		f.Add(sc.Text)
	}
	for _, s := range []string{
		"name: x\nstory: y\nstart:\n  client1: 9223372036854775807ns\n",
		"name: x\nstory: y\nschedule:\n  - at: 9000h\n    crash_node: {node: redis1}\n",
		"name: x\nstory: y\nparams:\n  t: {default: -1s}\nschedule:\n  - on: {event: acquired, client: client1}\n    after: $t\n    pause_client: {client: client1, for: 1s}\n",
		"name: x\nstory: y\nschedule:\n  - at: 1s\n    clock_drift: {node: redis1, ppm: NaN}\n",
		"name: x\nstory: y\ncheck:\n  acquired: {min: 1, in: NaN%}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sc, err := ParseFile("f.yaml", []byte(text))
		if err != nil {
			var fe *FileError
			require.True(t, errors.As(err, &fe), "%T %v", err, err)
			assert.Equal(t, "f.yaml", fe.File)
			return
		}
		require.NoError(t, sc.checkTimes(anyRun, sc.defaults()))
		for _, st := range sc.Steps {
			require.LessOrEqual(t, st.At.Dur, knobs.MaxDuration)
			require.LessOrEqual(t, st.After.Dur, knobs.MaxDuration)
		}
	})
}
