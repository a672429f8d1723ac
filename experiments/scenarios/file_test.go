package scenarios

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
)

// TestBuiltinFilesParseAndReparse checks every embedded scenario: it parses, names
// itself after its file, and its text (what scenarios --show prints) parses back to the
// same scenario, so a user who starts from it starts from exactly the built-in.
func TestBuiltinFilesParseAndReparse(t *testing.T) {
	all := Scenarios()
	require.Len(t, all, len(order))
	for _, sc := range all {
		again, err := ParseFile("copy.yaml", []byte(sc.Text))
		require.NoError(t, err, sc.Name)
		again.File, sc.File = "", ""
		assert.Equal(t, sc, *again, sc.Name)
		assert.NotEmpty(t, sc.Story, sc.Name)
		assert.NotEmpty(t, sc.Expect, sc.Name)
		for _, p := range sc.Params {
			assert.NotEmpty(t, p.Help, "%s: parameter %s has no help", sc.Name, p.Name)
		}
	}
}

// TestScheduleDecodes pins what each kind of step decodes to.
func TestScheduleDecodes(t *testing.T) {
	sc, err := ParseFile("s.yaml", []byte(`name: mine
story: a story
params:
  d: {default: 40ms, help: a delay}
  n: {default: 2, help: which acquisition}
schedule:
  - at: 1.5s
    kill_node: {node: redis2, restart_after: $d}
  - on: {event: acquired, client: client2, nth: $n}
    after: 5ms
    block: {from: [client1, client2], to: storage, both_ways: true, for: 1s}
  - on: {event: released, client: client1}
    shutdown_node: {node: redis1, restart_after: never}
`))
	require.NoError(t, err)
	require.Len(t, sc.Steps, 3)
	s0, s1, s2 := sc.Steps[0], sc.Steps[1], sc.Steps[2]
	assert.Equal(t, 1500*time.Millisecond, s0.At.Dur)
	assert.Equal(t, "kill_node", s0.Action.Kind)
	assert.Equal(t, "d", s0.Action.Restart.Param)
	assert.Equal(t, model.EvAcquired, s1.On.Event)
	assert.Equal(t, "n", s1.On.Nth.Param)
	assert.Equal(t, 5*time.Millisecond, s1.After.Dur)
	assert.Equal(t, []string{"client1", "client2"}, s1.Action.From)
	assert.Equal(t, []string{"storage"}, s1.Action.To)
	assert.True(t, s1.Action.BothWays)
	assert.Equal(t, 1, s2.On.Nth.N, "nth defaults to 1")
	assert.True(t, s2.Action.Restart.Never)
	assert.Equal(t, []Param{{Name: "d", Default: "40ms", Help: "a delay", Kind: ParamDuration, line: 4},
		{Name: "n", Default: "2", Help: "which acquisition", Kind: ParamCount, line: 5}}, sc.Params)
}

// TestBadFilesNameLineValueAndWhatIsAllowed feeds the mistakes a user makes and checks
// each error's line and words.
func TestBadFilesNameLineValueAndWhatIsAllowed(t *testing.T) {
	head := "name: x\nstory: y\n"
	for _, c := range []struct {
		body string
		line int
		want string
	}{
		{"storry: z\n", 3, `unknown key "storry" in the scenario (did you mean "story"?)`},
		{"schedule: {at: 1s}\n", 3, "schedule: want a list of steps"},
		{"schedule:\n  - at: -1s\n    crash_node: {node: redis1}\n", 4, "at = -1s: out of range, allowed a true time from 0s"},
		{"schedule:\n  - at: 100\n    crash_node: {node: redis1}\n", 4, "at = 100: a duration needs a unit"},
		{"schedule:\n  - at: 1s\n    on: {event: acquired, client: client1}\n    crash_node: {node: redis1}\n", 4, "either at a time (at:) or on an event (on:), not both"},
		{"schedule:\n  - crash_node: {node: redis1}\n", 4, "a step needs at:"},
		{"schedule:\n  - at: 1s\n    crash_node: {node: redis1}\n    kill_node: {node: redis2}\n", 6, "a step takes one action; this one has crash_node (line 5) and kill_node"},
		{"schedule:\n  - at: 1s\n    crash_nod: {node: redis1}\n", 5, `unknown key "crash_nod" in a schedule step (did you mean "crash_node"?)`},
		{"schedule:\n  - on: {event: aquired, client: client1}\n    crash_node: {node: redis1}\n", 4, `on: event "aquired" is not a client event (did you mean "acquired"?)`},
		{"schedule:\n  - on: {event: acquired}\n    crash_node: {node: redis1}\n", 4, `on: missing "client"`},
		{"schedule:\n  - at: $late\n    crash_node: {node: redis1}\n", 4, `at: no parameter "late" is declared under params`},
		{"params:\n  n: {default: 3}\nschedule:\n  - at: $n\n    crash_node: {node: redis1}\n", 6, "at: parameter n is a whole number, want a duration"},
		{"schedule:\n  - at: 1s\n    crash_node: {node: redis1, restart_after: soon}\n", 5, "restart_after = soon: not a duration"},
		{"schedule:\n  - at: 1s\n    pause_client: {client: client1}\n", 5, `pause_client: missing "for"`},
		{"schedule:\n  - at: 1s\n    pause_client: {client: client1, for: 0s}\n", 5, "a duration above 0s"},
		{"schedule:\n  - on: {event: acquired, client: client1}\n    clock_step: {node: redis3, by: 1s}\n", 5, "clock_step is planned into the clock before the run: give it at:, not on:"},
		{"schedule:\n  - at: 1s\n    after: 1s\n    crash_node: {node: redis1}\n", 4, "after: goes with on:"},
		{"schedule:\n  - on: {event: acquired, client: client1, nth: 0}\n    crash_node: {node: redis1}\n", 4, "on: nth = 0: out of range"},
		{"knobs:\n  ttl: 5\n", 4, "ttl = 5: a duration needs a unit"},
		{"knobs:\n  tll: 5s\n", 4, `unknown knob "tll"`},
		{"params:\n  ttl: {default: 1s, help: h}\n", 4, "parameter ttl has the name of a knob"},
		{"params:\n  p: {help: h}\n", 4, `parameter p: missing "default"`},
		{"params:\n  p: {default: fast, help: h}\n", 4, `default "fast" is neither a duration`},
		{"params:\n  p: {default: 1s}\nknobs:\n  p: 2s\n", 6, "p is a parameter of this scenario, not a knob"},
		{"schedule:\n\t- at: 1s\n", 4, "YAML does not allow tabs for indentation"},
		{"window: {from: 1s, to: [2s]}\n", 3, "window: to: want a single value, got a list"},
		{"schedule:\n  - at: 1s\n    block: {from: [], to: redis1}\n", 5, "block: from: an empty list names no endpoint"},
		{"schedule:\n  - at: 1s\n    block: {from: client1, to: redis1, both_ways: yes}\n", 5, "both_ways = yes: want true or false"},
		{"schedule:\n  - at: 1s\n    partition: {sides: [client1, redis1]}\n", 5, "partition: sides: each side is a list of endpoints"},
		{"schedule:\n  - at: 1s\n    drop: {from: client1, to: redis1, count: 0}\n", 5, "drop: count = 0: out of range"},
		{"schedule:\n  - at: 1s\n    drop: {from: client1, to: redis1}\n", 5, `drop: missing "count"`},
		{"schedule:\n  - at: 1s\n    clock_drift: {node: redis1, ppm: 0}\n", 5, "clock_drift: ppm = 0: want a rate change in parts per million, not 0"},
		{"schedule:\n  - on: {event: acquired, client: client1}\n    clock_drift: {node: redis1, ppm: 10}\n", 5, "clock_drift is planned into the clock before the run"},
		{"workload:\n  client1: {hold: 5}\n", 4, "workload of client1: hold = 5: a duration needs a unit"},
		{"workload:\n  client1: {holdd: 5s}\n", 4, `unknown key "holdd" in workload of client1 (did you mean "hold"?)`},
		{"check:\n  validity_overlaps: sometimes\n", 4, `check: validity_overlaps = "sometimes": want always, never, at least P% or at most P%`},
		{"check:\n  acquired: {min: 3, max: 1}\n", 4, "check: acquired: min is above max"},
		{"check:\n  acquired: {min: 1, in: 0%}\n", 4, "in = 0%: want the share of seeds"},
		{"check:\n  seeds: 0\n  acquired: {min: 1}\n", 4, "check: seeds = 0: want a whole number of seeds from 1 to 10000"},
		{"check:\n  aquired: {min: 1}\n", 4, `unknown key "aquired" in check (did you mean "acquired"?)`},
		{"check:\n  seeds: 5\n", 4, "check: no rule"},
		{"schedule:\n  - at: 1s\n    clock_slew: {node: redis1, by: 1s, rate_ppm: 0}\n", 5, "clock_slew: rate_ppm = 0: want a rate in parts per million above 0"},
		{"schedule:\n  - at: 1s\n    slow_link: {from: client1, to: redis1, latency: 30, for: 1s}\n", 5, "slow_link: latency = 30"},
		{"schedule:\n  - at: 1s\n    slow_link: {from: client1, to: redis1, latency: $slow, for: 1s}\n", 5, `slow_link: latency: no parameter "slow" is declared`},
		{"schedule:\n  - on: {event: acquired, client: client1}\n    clock_slew: {node: redis1, by: 1s}\n", 5, "clock_slew is planned into the clock before the run"},
		{"schedule:\n  - at: 1s\n    outside_lock: {node: redis1, ttl: 650}\n", 5, "outside_lock: ttl = 650: a duration needs a unit"},
		{"schedule:\n  - at: 1s\n    outside_lock: {node: redis1, ttl: 1500us}\n", 5, "whole milliseconds from 1ms"},
		{"schedule:\n  - at: 1s\n    outside_lock: {node: redis1}\n", 5, `outside_lock: missing "ttl"`},
	} {
		_, err := ParseFile("f.yaml", []byte(head+c.body))
		require.Error(t, err, c.body)
		var fe *FileError
		require.True(t, errors.As(err, &fe), "%s: %T %v", c.body, err, err)
		assert.Equal(t, c.line, fe.Line, "%s: %v", c.body, err)
		assert.Contains(t, err.Error(), c.want, c.body)
		assert.True(t, strings.HasPrefix(err.Error(), "scenario f.yaml:"), err.Error())
	}
	_, err := ParseFile("f.yaml", []byte("story: y\n"))
	require.ErrorContains(t, err, `missing key "name"`)
}

// TestScheduleIsBounded refuses a schedule longer than MaxSteps.
func TestScheduleIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: x\nstory: y\nschedule:\n")
	for range MaxSteps + 1 {
		b.WriteString("  - {at: 1s, crash_node: {node: redis1}}\n")
	}
	_, err := ParseFile("f.yaml", []byte(b.String()))
	require.ErrorContains(t, err, "schedule: 1001 steps, at most 1000 allowed")
}
