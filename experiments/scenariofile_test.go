package experiments

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/sim"
)

func runFile(t *testing.T, text string, sets ...knobs.KV) (*Record, error) {
	t.Helper()
	sc, err := scenarios.ParseFile("test.yaml", []byte(text))
	require.NoError(t, err)
	return RunScenario(context.Background(), sc, sets, 1, Options{})
}

// TestParameterIsAWhatIf is the new user's question that used to change nothing:
// gc-pause with a pause shorter than the lock's remaining validity is safe.
func TestParameterIsAWhatIf(t *testing.T) {
	long, err := Run(context.Background(), "gc-pause", nil, 1, Options{})
	require.NoError(t, err)
	short, err := Run(context.Background(), "gc-pause", []knobs.KV{{Name: "pause", Value: "500ms"}}, 1, Options{})
	require.NoError(t, err)
	assert.NotEqual(t, long.TraceHash, short.TraceHash)
	assert.Positive(t, long.Safety.StaleWritesAccepted)
	assert.Zero(t, short.Safety.StaleWritesAccepted+short.Safety.UsageOverlaps)
	_, err = Run(context.Background(), "baseline", []knobs.KV{{Name: "pause", Value: "500ms"}}, 1, Options{})
	var ue *knobs.UnknownError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.ErrorContains(t, err, "pause is a parameter of watchdog-pause, gc-pause, gc-pause-fenced")
}

// TestTriggerOnTheNthEvent crashes the only client as it acquires for the second time.
func TestTriggerOnTheNthEvent(t *testing.T) {
	const base = `name: nth
story: the only client dies as it takes the lock for the second time
knobs: {clients: 1, max_cycles: 5, duration: 5s, hold: 50ms, think: 50ms}
`
	free, err := runFile(t, base)
	require.NoError(t, err)
	assert.EqualValues(t, 5, free.Liveness.Acquired)
	for nth, want := range map[string]int{"1": 1, "2": 2, "4": 4, "9": 5} {
		rec, err := runFile(t, base+"schedule:\n  - on: {event: acquired, client: client1, nth: "+nth+"}\n    crash_client: {client: client1}\n")
		require.NoError(t, err)
		assert.EqualValues(t, want, rec.Liveness.Acquired, "crash on acquisition %s", nth)
	}
}

// TestScheduleNamesAreCheckedAgainstTheWorld refuses, before the run, a step naming a
// client, node or endpoint the knobs did not create, with the file's line.
func TestScheduleNamesAreCheckedAgainstTheWorld(t *testing.T) {
	head := "name: x\nstory: y\nknobs: {clients: 2, nodes: 3}\nschedule:\n"
	for _, c := range []struct{ step, want string }{
		{"  - on: {event: acquired, client: client3}\n    crash_node: {node: redis1}\n", `client = client3: out of range, allowed one of this world's 2 clients: client1, client2`},
		{"  - at: 1s\n    crash_node: {node: redis4}\n", "node = redis4: out of range, allowed one of this world's 3 nodes: redis1, redis2, redis3"},
		{"  - at: 1s\n    isolate: {endpoint: redis9}\n", `isolate: no endpoint "redis9" in this world; it has redis1, redis2, redis3, storage, client1, client2`},
		{"  - at: 1s\n    pause_client: {client: client7, for: 1s}\n", "pause_client: client = client7"},
		{"  - at: 1s\n    clock_step: {node: nosuch, by: 1s}\n", "clock_step: node = nosuch"},
		{"  - at: 1s\n    failover: {node: redis1}\n", "failover: node redis1 has no replica to promote (set the replicas knob)"},
		{"  - at: 1s\n    drop: {from: client1, to: redis7, count: 1}\n", `drop: no endpoint "redis7"`},
		{"  - at: 1s\n    outside_lock: {node: redis1, ttl: 1s, resource: lock9}\n", `outside_lock: no resource "lock9" in this world; it has lock`},
		{"  - at: 1s\n    outside_lock: {node: redis5, ttl: 1s}\n", "node = redis5: out of range"},
	} {
		_, err := runFile(t, head+c.step)
		require.Error(t, err, c.step)
		var fe *scenarios.FileError
		require.True(t, errors.As(err, &fe), "%T %v", err, err)
		assert.Equal(t, 5, fe.Line, c.step)
		assert.ErrorContains(t, err, c.want)
	}
	_, err := runFile(t, head+"  - at: 1s\n    crash_node: {node: redis1}\nworkload:\n  client9: {hold: 1s}\n")
	var fe *scenarios.FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, 8, fe.Line)
	assert.ErrorContains(t, err, "workload: client = client9")
	_, err = runFile(t, "name: x\nstory: y\nparams:\n  d: {default: 1s, help: h}\n", knobs.KV{Name: "d", Value: "fast"})
	var pe *sim.ParamError
	require.True(t, errors.As(err, &pe), "%T %v", err, err)
	assert.ErrorContains(t, err, "d = fast: not a duration")
}

// TestOutsideLock: a key taken by a client outside the world on a majority keeps the
// world's clients out until it expires on the nodes' clocks, and nobody's release deletes it.
func TestOutsideLock(t *testing.T) {
	steps := ""
	for _, n := range []string{"redis1", "redis2", "redis3"} {
		steps += "  - at: 0s\n    outside_lock: {node: " + n + ", ttl: 700ms}\n"
	}
	rec, err := runFile(t, "name: x\nstory: y\nknobs: {clients: 1, max_cycles: 1, retry_delay: 100ms, retry_jitter: 0s, tries: 20, duration: 2s}\nstart: {client1: 10ms}\nschedule:\n"+steps)
	require.NoError(t, err)
	assert.Equal(t, int64(1), rec.Liveness.Acquired)
	assert.Equal(t, int64(8), rec.Liveness.Attempts, "seven attempts, from 10ms to about 620ms, are refused; the eighth, past 700ms, wins")
}

// TestAFileOfOnesOwn is a story the catalogue does not tell, written from scratch: with
// AOF everysec, a kill -9 (not a power loss) of three nodes keeps the acknowledged key, so
// the lock stays safe, and the same file with crash_node (a power loss) does not.
func TestAFileOfOnesOwn(t *testing.T) {
	const text = `name: kill-not-power-loss
story: client1 holds all five nodes; three are killed (kill -9) before their everysec fsync and restart at once; the OS kept what they wrote
knobs: {persistence: aof-everysec, clients: 2, ttl: 2s, hold: 1s, think: 100ms, max_cycles: 1, duration: 3s}
start: {client1: 0s, client2: 100ms}
schedule:
  - {on: {event: acquired, client: client1}, after: 5ms, ACTION: {node: redis1, restart_after: 10ms}}
  - {on: {event: acquired, client: client1}, after: 5ms, ACTION: {node: redis2, restart_after: 10ms}}
  - {on: {event: acquired, client: client1}, after: 5ms, ACTION: {node: redis3, restart_after: 10ms}}
`
	killed, err := runFile(t, strings.ReplaceAll(text, "ACTION", "kill_node"))
	require.NoError(t, err)
	assert.Zero(t, killed.Safety.ValidityOverlaps)
	powerLoss, err := runFile(t, strings.ReplaceAll(text, "ACTION", "crash_node"))
	require.NoError(t, err)
	assert.Positive(t, powerLoss.Safety.ValidityOverlaps)
}

// TestNetworkAndClockActions checks that the partition, slow_link and clock_slew steps
// reach the world and do what they say to the verdict.
func TestNetworkAndClockActions(t *testing.T) {
	const base = `name: actions
story: two clients, five nodes
knobs: {clients: 2, ttl: 2s, hold: 1s, think: 100ms, max_cycles: 1, duration: 4s, tries: 100}
start: {client1: 10ms, client2: 60ms}
`
	plain, err := runFile(t, base)
	require.NoError(t, err)
	assert.EqualValues(t, 2, plain.Liveness.Acquired)
	// A partition that leaves no side a majority stops every acquisition while it lasts;
	// once it heals, both clients get the lock.
	cut, err := runFile(t, base+"schedule:\n  - at: 0s\n    partition: {sides: [[client1, redis1, redis2], [client2, redis3, redis4]]}\n")
	require.NoError(t, err)
	assert.Zero(t, cut.Liveness.Acquired, "redis5 sits with the storage, on a side of its own")
	healed, err := runFile(t, base+"schedule:\n  - at: 0s\n    partition: {sides: [[client1, redis1, redis2], [client2, redis3, redis4]], for: 1s}\n")
	require.NoError(t, err)
	assert.EqualValues(t, 2, healed.Liveness.Acquired)
	assert.NotEqual(t, plain.TraceHash, healed.TraceHash)
	// Links slowed past the TTL make every reply arrive too late to count.
	slow, err := runFile(t, base+"schedule:\n  - at: 0s\n    slow_link: {from: [redis1, redis2, redis3, redis4, redis5], to: [client1, client2], latency: const(2500ms), for: 10s}\n")
	require.NoError(t, err)
	assert.Zero(t, slow.Liveness.Acquired)
	assert.Greater(t, slow.Liveness.Attempts, int64(10))
	// The same links slowed for 500ms only delay the lock.
	brief, err := runFile(t, base+"schedule:\n  - at: 0s\n    slow_link: {from: [redis1, redis2, redis3, redis4, redis5], to: [client1, client2], latency: const(2500ms), for: 500ms}\n")
	require.NoError(t, err)
	assert.Positive(t, brief.Liveness.Acquired)
	// A forced failover 20ms after client1's lock, before the key replicated, grants it
	// again.
	failover, err := runFile(t, `name: forced-failover
story: a hand-made failover before the key replicates
knobs: {variant: single-instance-failover, replicas: 1, replication_delay: 50ms, clients: 2, ttl: 5s, hold: 3s, think: 100ms, max_cycles: 1, duration: 4s}
start: {client1: 0s, client2: 100ms}
schedule:
  - on: {event: acquired, client: client1}
    after: 20ms
    failover: {node: redis1}
`)
	require.NoError(t, err)
	assert.Positive(t, failover.Safety.ValidityOverlaps)
	// clock-jump's forward step of redis3's wall clock breaks safety; an NTP slew of the
	// same 2s (at ntpd's 500 ppm it takes 4000s) does not.
	jump, err := scenarios.LookupScenario("clock-jump")
	require.NoError(t, err)
	stepped, err := runFile(t, jump.Text)
	require.NoError(t, err)
	assert.Positive(t, stepped.Safety.ValidityOverlaps)
	slewed, err := runFile(t, strings.Replace(jump.Text, "clock_step:", "clock_slew:", 1))
	require.NoError(t, err)
	assert.Zero(t, slewed.Safety.ValidityOverlaps)
	assert.NotEqual(t, stepped.TraceHash, slewed.TraceHash)
	// A drift change: redis3's clocks run 1.5 times as fast from 150ms on, so its key
	// expires at 1.38s instead of 2s, inside client1's 1.8s of work; at +5000 ppm it lives
	// long enough.
	drift := func(ppm string) *Record {
		text := strings.Replace(jump.Text, "clock_step: {node: redis3, by: $jump}", "clock_drift: {node: redis3, ppm: "+ppm+"}", 1)
		require.NotEqual(t, jump.Text, text)
		rec, err := runFile(t, text, knobs.KV{Name: "hold", Value: "1800ms"})
		require.NoError(t, err)
		return rec
	}
	assert.Positive(t, drift("500000").Safety.ValidityOverlaps)
	assert.Zero(t, drift("5000").Safety.ValidityOverlaps)
}

// TestEveryScenarioKeepsItsCheck runs each built-in scenario over its check's seeds (20
// unless it says otherwise) and requires every rule to hold: the catalogue's promises
// are checked as rates over seeds, not at seed 1 alone.
func TestEveryScenarioKeepsItsCheck(t *testing.T) {
	for _, sc := range scenarios.Scenarios() {
		require.NotNil(t, sc.Check, "%s has no check: its expectation would be prose only", sc.Name)
		assert.GreaterOrEqual(t, sc.Check.Seeds, 20, sc.Name)
		results, err := CheckScenario(context.Background(), &sc, nil, 0)
		require.NoError(t, err, sc.Name)
		for _, r := range results {
			assert.True(t, r.Held, "%s: %s", sc.Name, r)
		}
	}
}

// TestCheckCatchesABrokenPromise turns gc-pause's pause below the lock's validity, which
// makes it safe, so its check (usage overlaps always) must fail, naming seeds.
func TestCheckCatchesABrokenPromise(t *testing.T) {
	sc, err := scenarios.LookupScenario("gc-pause")
	require.NoError(t, err)
	results, err := CheckScenario(context.Background(), sc, []knobs.KV{{Name: "pause", Value: "300ms"}}, 5)
	require.NoError(t, err)
	var failed []string
	for _, r := range results {
		if !r.Held {
			failed = append(failed, r.String())
		}
	}
	require.Len(t, failed, 2, "usage overlaps and stale writes were promised")
	assert.Contains(t, failed[0], "FAIL usage_overlaps: always")
	assert.Contains(t, failed[0], "0.0% of seeds saw it (against it: seeds 1, 2, 3, 4, 5)")
}

// TestExampleScenarioFilesKeepTheirChecks runs the scenario files docs/scenarios.md works
// through, so the documentation's examples stay true.
func TestExampleScenarioFilesKeepTheirChecks(t *testing.T) {
	files, err := filepath.Glob("../examples/scenarios/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 2)
	for _, f := range files {
		sc, err := scenarios.LoadFile(f)
		require.NoError(t, err, f)
		require.NotNil(t, sc.Check, f)
		results, err := CheckScenario(context.Background(), sc, nil, 0)
		require.NoError(t, err, f)
		for _, r := range results {
			assert.True(t, r.Held, "%s: %s", f, r)
		}
	}
	// worked example 2: the same file with power losses instead of kills breaks its check
	sc, err := scenarios.LoadFile("../examples/scenarios/kill-not-power-loss.yaml")
	require.NoError(t, err)
	power, err := scenarios.ParseFile("power.yaml", []byte(strings.ReplaceAll(sc.Text, "kill_node:", "crash_node:")))
	require.NoError(t, err)
	results, err := CheckScenario(context.Background(), power, nil, 0)
	require.NoError(t, err)
	assert.False(t, results[0].Held, "power losses lose the key: %s", results[0])
	assert.Equal(t, 1.0, results[0].Share, "in every seed")
}

// TestAKnobThatCannotChangeTheRunIsRefused: the new user's --set pause_len=500ms on
// gc-pause used to give gc-pause's own trace hash, silently. Now it is refused, naming
// the knob that switches it off and the scenario's parameter to set instead; the same
// knob with its switch on is accepted, and a sweep refuses a knob inert at every point
// but not one inert at some (a comparison).
func TestAKnobThatCannotChangeTheRunIsRefused(t *testing.T) {
	gc, err := scenarios.LookupScenario("gc-pause")
	require.NoError(t, err)
	err = CheckInert(gc, []knobs.KV{{Name: "pause_len", Value: "500ms"}})
	var ie *knobs.InertError
	require.ErrorAs(t, err, &ie)
	var pe *sim.ParamError
	require.ErrorAs(t, err, &pe, "exit status 2")
	assert.Contains(t, err.Error(), "pause_rate is 0")
	assert.Contains(t, err.Error(), "set its parameter pause instead")
	assert.NoError(t, CheckInert(gc, []knobs.KV{{Name: "pause_rate", Value: "1"}, {Name: "pause_len", Value: "500ms"}}))
	base, err := scenarios.LookupScenario("baseline")
	require.NoError(t, err)
	for _, kv := range []knobs.KV{{Name: "failover_after", Value: "1s"}, {Name: "retry_jitter", Value: "1ms"},
		{Name: "max_extensions", Value: "3"}, {Name: "timeout_factor", Value: "0.2"}, {Name: "node_down", Value: "5s"}} {
		settings := []knobs.KV{kv}
		if kv.Name == "retry_jitter" {
			settings = append(settings, knobs.KV{Name: "tries", Value: "1"})
		}
		if kv.Name == "timeout_factor" {
			settings = append(settings, knobs.KV{Name: "timeout", Value: "50ms"})
		}
		assert.ErrorAs(t, CheckInert(base, settings), &ie, kv.Name)
	}
	spec := func(text string) *sweep.Spec {
		s, err := sweep.ParseSpec("s.yaml", []byte(text), SweepRunner())
		require.NoError(t, err)
		return s
	}
	err = CheckSpec(spec("base: {scenario: gc-pause}\naxes:\n  pause_len: [100ms, 1s]\nreplicates: 1\nseed: 1\n"))
	assert.ErrorContains(t, err, "axis pause_len: pause_len = const(100ms) cannot change this run")
	assert.NoError(t, CheckSpec(spec("base: {failover_after: 1s}\naxes:\n  replicas: [0, 1]\nreplicates: 1\nseed: 1\n")),
		"failover_after matters at replicas 1")
}

// TestPerClientWorkload gives client1 a long hold and one cycle and client2 a short think,
// on top of the knobs' workload.
func TestPerClientWorkload(t *testing.T) {
	const base = `name: wl
story: client1 works long, client2 short
knobs: {clients: 2, ttl: 2s, hold: 100ms, think: 100ms, max_cycles: 3, duration: 5s}
start: {client1: 0s, client2: 50ms}
`
	same, err := runFile(t, base)
	require.NoError(t, err)
	assert.EqualValues(t, 6, same.Liveness.Acquired)
	own, err := runFile(t, base+"workload:\n  client1: {hold: 1s, max_cycles: 1}\n  client2: {think: 10ms}\n")
	require.NoError(t, err)
	assert.EqualValues(t, 4, own.Liveness.Acquired, "client1 starts one acquire, client2 three")
	assert.NotEqual(t, same.TraceHash, own.TraceHash)
}

// TestSweepChecksTheScheduleAtEveryPoint: a point whose world lacks a node the scenario's
// schedule names is refused before the sweep starts (the default study's jitter sweep ran
// split-brain-no-jitter at nodes=3, where "redis5" did not exist), and the built-ins that
// mean "the last node" say so, so they run at every N.
func TestSweepChecksTheScheduleAtEveryPoint(t *testing.T) {
	for _, n := range []string{"1", "3", "5", "9"} {
		for _, sc := range []string{"split-brain-no-jitter", "split-brain-jitter"} {
			assert.NoError(t, CheckKnobs([]knobs.KV{{Name: "scenario", Value: sc}, {Name: "nodes", Value: n}}), "%s at nodes=%s", sc, n)
		}
	}
	err := CheckKnobs([]knobs.KV{{Name: "scenario", Value: "lost-release"}, {Name: "nodes", Value: "2"}})
	assert.ErrorContains(t, err, "drop: no endpoint \"redis3\"")
}
