package experiments

import (
	"context"
	"strings"
	"testing"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func run(t *testing.T, scenario string, settings ...knobs.KV) *Record {
	t.Helper()
	rec, err := Run(context.Background(), scenario, settings, 1, Options{})
	require.NoError(t, err)
	return rec
}

// twoHolders asserts the outcome of the stories where the algorithm hands out the lock
// twice: overlapping validity windows (and so overlapping work).
func twoHolders(t *testing.T, r *Record) {
	t.Helper()
	assert.GreaterOrEqual(t, r.Safety.ValidityOverlaps, int64(1), "validity overlaps")
	assert.GreaterOrEqual(t, r.Safety.UsageOverlaps, int64(1), "usage overlaps")
	require.NotEmpty(t, r.Violations)
	assert.NotEmpty(t, r.Violations[0].Faults, "a violation names the faults in effect")
}

// safeAndDone asserts a safe run in which every client acquired.
func safeAndDone(t *testing.T, r *Record, clients int64) {
	t.Helper()
	assert.True(t, r.Safety.Safe(), "safety %+v", r.Safety)
	assert.Equal(t, clients, r.Liveness.Acquired)
}

func TestScenarioOutcomes(t *testing.T) {
	tests := map[string]func(t *testing.T, r *Record){
		"baseline": func(t *testing.T, r *Record) {
			assert.True(t, r.Safety.Safe(), "safety %+v", r.Safety)
			assert.Zero(t, r.Safety.FencedWritesRejected)
			assert.Greater(t, r.Liveness.Acquired, int64(300))
			assert.Empty(t, r.Violations)
		},
		"failover-race":          twoHolders,
		"restart-no-persistence": twoHolders,
		"restart-delayed": func(t *testing.T, r *Record) {
			assert.Zero(t, r.Safety.ValidityOverlaps, "redis3 returns after client1's validity")
			assert.Positive(t, r.Safety.UsageOverlaps, "client1 works past its validity")
			undelayed := run(t, "restart-no-persistence", knobs.KV{Name: "hold", Value: "3s"}, knobs.KV{Name: "duration", Value: "6s"})
			assert.Positive(t, undelayed.Safety.ValidityOverlaps, "the same hold without the delay")
		},
		"aof-everysec-power-loss": func(t *testing.T, r *Record) {
			twoHolders(t, r)
			assert.Contains(t, r.Violations[0].Faults, "redis3 lost 1 unsynced write(s) in crashes")
		},
		"aof-always": func(t *testing.T, r *Record) { safeAndDone(t, r, 2) },
		"split-brain-no-jitter": func(t *testing.T, r *Record) {
			assert.GreaterOrEqual(t, r.Liveness.SplitBrainRounds, int64(5))
			jit := run(t, "split-brain-jitter")
			assert.LessOrEqual(t, 2*jit.Liveness.SplitBrainRounds, r.Liveness.SplitBrainRounds,
				"jitter desynchronises the contenders")
			assert.Greater(t, jit.Liveness.Acquired, r.Liveness.Acquired, "and gets more of them the lock")
		},
		"split-brain-jitter": func(t *testing.T, r *Record) {
			assert.LessOrEqual(t, r.Liveness.SplitBrainRounds, int64(2))
			safeAndDone(t, r, 5)
		},
		"partition-unavailability": func(t *testing.T, r *Record) {
			safeAndDone(t, r, 2)
			ttl := 2000.0
			assert.InDelta(t, ttl, r.Liveness.UnheldWhileWaitingMs, 0.2*ttl, "unavailable for about one TTL")
			assert.InDelta(t, ttl, *r.Liveness.AcquireLatencyMs.Max, 0.2*ttl)
		},
		"extension": func(t *testing.T, r *Record) {
			safeAndDone(t, r, 2)
			assert.GreaterOrEqual(t, r.Liveness.Extensions.Succeeded, int64(8))
			assert.Equal(t, r.Liveness.Extensions.Tried, r.Liveness.Extensions.Succeeded)
		},
		"unlimited-extension": func(t *testing.T, r *Record) {
			assert.True(t, r.Safety.Safe())
			assert.Equal(t, int64(1), r.Liveness.Acquired, "the other client starves")
			assert.Greater(t, r.Liveness.Extensions.Succeeded, int64(10), "past max_extensions")
			limited := run(t, "unlimited-extension", knobs.KV{Name: "variant", Value: "redlock"})
			assert.Greater(t, limited.Liveness.Extensions.Tried, limited.Liveness.Extensions.Succeeded,
				"with the limit, extensions beyond max_extensions fail")
			assert.Greater(t, limited.Safety.UsageOverlaps, int64(0), "and the holder that keeps working overlaps")
		},
		"gc-pause": func(t *testing.T, r *Record) {
			assert.Zero(t, r.Safety.ValidityOverlaps, "the algorithm kept its promise")
			assert.GreaterOrEqual(t, r.Safety.UsageOverlaps, int64(1))
			assert.GreaterOrEqual(t, r.Safety.StaleWritesAccepted, int64(1))
			assert.Zero(t, r.Safety.FencedWritesRejected)
		},
		"gc-pause-fenced": func(t *testing.T, r *Record) {
			assert.Zero(t, r.Safety.StaleWritesAccepted)
			assert.GreaterOrEqual(t, r.Safety.FencedWritesRejected, int64(1))
		},
		"delayed-packet": func(t *testing.T, r *Record) {
			assert.Zero(t, r.Safety.ValidityOverlaps+r.Safety.UsageOverlaps)
			assert.GreaterOrEqual(t, r.Safety.StaleWritesAccepted, int64(1))
			fenced := run(t, "delayed-packet", knobs.KV{Name: "fencing", Value: "one"})
			assert.Zero(t, fenced.Safety.StaleWritesAccepted)
			assert.GreaterOrEqual(t, fenced.Safety.FencedWritesRejected, int64(1))
		},
		"clock-jump":             twoHolders,
		"crash-restart-no-fsync": twoHolders,
		"replies-in-flight": func(t *testing.T, r *Record) {
			assert.True(t, r.Safety.Safe(), "safety %+v", r.Safety)
			assert.GreaterOrEqual(t, r.Liveness.FailuresByReason.ValidityExpired, int64(1))
			broken := run(t, "replies-in-flight", knobs.KV{Name: "variant", Value: "no-validity-check"})
			assert.GreaterOrEqual(t, broken.Safety.UsageOverlaps, int64(1))
			assert.Zero(t, broken.Liveness.FailuresByReason.ValidityExpired)
		},
		"clock-slew": func(t *testing.T, r *Record) {
			safeAndDone(t, r, 2)
			assert.Positive(t, run(t, "clock-jump").Safety.ValidityOverlaps, "the same correction as a step")
		},
		"careless-client": func(t *testing.T, r *Record) {
			assert.Zero(t, r.Safety.ValidityOverlaps, "the algorithm kept its promise")
			assert.Positive(t, r.Safety.UsageOverlaps, "client1 worked past its short validity")
			careful := run(t, "careless-client", knobs.KV{Name: "hold", Value: "200ms"})
			assert.True(t, careful.Safety.Safe(), "work that fits the validity it was given is safe")
		},
		"holder-crash": func(t *testing.T, r *Record) {
			assert.True(t, r.Safety.LockSafe())
			assert.Equal(t, int64(1), r.Liveness.HolderCrashes)
			require.NotNil(t, r.Liveness.ReacquireAfterCrashMs.Max)
			shortTTL := run(t, "holder-crash", knobs.KV{Name: "ttl", Value: "500ms"})
			require.NotNil(t, shortTTL.Liveness.ReacquireAfterCrashMs.Max)
			assert.Less(t, *shortTTL.Liveness.ReacquireAfterCrashMs.Max+1000, *r.Liveness.ReacquireAfterCrashMs.Max,
				"a TTL shorter by 1.5s brings the lock back over a second sooner")
		},
		"fencing-reset": func(t *testing.T, r *Record) {
			assert.Positive(t, r.Safety.StaleWritesAccepted, "the reset counter's token is no newer")
			assert.Zero(t, r.Safety.FencedWritesRejected)
			intact := run(t, "fencing-reset", knobs.KV{Name: "persistence", Value: "aof-always"})
			assert.Zero(t, intact.Safety.StaleWritesAccepted, "a counter that survives the crash fences client1 off")
			assert.Positive(t, intact.Safety.FencedWritesRejected)
		},
		"slow-replies": func(t *testing.T, r *Record) {
			assert.True(t, r.Safety.Safe(), "safety %+v", r.Safety)
			assert.Positive(t, r.Liveness.FailuresByReason.ValidityExpired, "step 3 caught the late OKs")
			careless := run(t, "slow-replies", knobs.KV{Name: "variant", Value: "no-validity-check"})
			assert.Positive(t, careless.Safety.UsageOverlaps, "without step 3, client1 trusts them")
		},
		"lost-release": func(t *testing.T, r *Record) {
			assert.True(t, r.Safety.Safe(), "safety %+v", r.Safety)
			assert.Greater(t, r.Liveness.UnheldWhileWaitingMs, 1700.0, "the keys block client2 for about one TTL")
			delivered := run(t, "partition-unavailability", knobs.KV{Name: "ttl", Value: "2s"})
			assert.Greater(t, delivered.Liveness.UnheldWhileWaitingMs, 1700.0, "as a partitioned holder's do")
		},
		"watchdog-pause": func(t *testing.T, r *Record) {
			assert.Zero(t, r.Safety.ValidityOverlaps)
			assert.Positive(t, r.Safety.StaleWritesAccepted, "client1 writes as it wakes, before its extension fails")
			assert.Positive(t, r.Liveness.Extensions.Succeeded, "the watchdog ran before the pause")
			often := run(t, "watchdog-pause", knobs.KV{Name: "extend_every", Value: "50ms"})
			assert.Positive(t, often.Safety.StaleWritesAccepted, "extending more often does not help")
			short := run(t, "watchdog-pause", knobs.KV{Name: "pause", Value: "300ms"})
			assert.True(t, short.Safety.Safe(), "a pause the extensions outlast is harmless")
		},
		"release-locked-only": func(t *testing.T, r *Record) {
			assert.True(t, r.Safety.Safe(), "safety %+v", r.Safety)
			assert.Greater(t, r.Liveness.UnheldWhileWaitingMs, 1500.0, "the hidden keys refuse everyone for a TTL")
			fixed := run(t, "release-locked-only", knobs.KV{Name: "variant", Value: "redlock"})
			assert.Less(t, fixed.Liveness.UnheldWhileWaitingMs, 500.0, "cleaning up everywhere deletes them at once")
		},
		"get-then-del": func(t *testing.T, r *Record) {
			assert.Positive(t, r.Safety.ValidityOverlaps, "client1's late DEL deleted the next holder's keys")
			safe := run(t, "get-then-del", knobs.KV{Name: "variant", Value: "redlock"})
			assert.True(t, safe.Safety.Safe(), "the compare-and-delete script checks the value where it deletes")
		},
		"setnx-then-expire": func(t *testing.T, r *Record) {
			assert.Zero(t, r.Liveness.Acquired, "the key never expires")
			assert.Greater(t, r.Liveness.UnheldWhileWaitingMs, 2900.0)
			fixed := run(t, "setnx-then-expire", knobs.KV{Name: "variant", Value: "redlock"})
			assert.Greater(t, fixed.Liveness.Acquired, int64(1), "SET NX PX frees the lock by expiry")
		},
		"unsafe-release": func(t *testing.T, r *Record) {
			assert.GreaterOrEqual(t, r.Safety.ValidityOverlaps, int64(1))
			assert.GreaterOrEqual(t, r.Safety.UsageOverlaps, int64(1))
			safe := run(t, "unsafe-release", knobs.KV{Name: "variant", Value: "redlock"})
			safeAndDone(t, safe, 2)
		},
		"zk-gc-pause": func(t *testing.T, r *Record) {
			twoHolders(t, r)
			assert.Positive(t, r.Safety.StaleWritesAccepted, "no token: client1's late write lands")
			assert.Equal(t, "none", r.Config.Get("fence_token"))
			short := run(t, "zk-gc-pause", knobs.KV{Name: "pause", Value: "1500ms"})
			safeAndDone(t, short, 2)
			seq := run(t, "zk-gc-pause", knobs.KV{Name: "fence_token", Value: "sequence"})
			assert.Zero(t, seq.Safety.StaleWritesAccepted, "the node's sequence fences it too")
			assert.Positive(t, seq.Safety.FencedWritesRejected)
		},
		"zk-gc-pause-fenced": func(t *testing.T, r *Record) {
			twoHolders(t, r)
			assert.Positive(t, r.Safety.FencedWritesRejected, "the czxid fences client1's late write")
			assert.Zero(t, r.Safety.StaleWritesAccepted)
		},
		"zk-partitioned-holder": func(t *testing.T, r *Record) {
			twoHolders(t, r)
			assert.Equal(t, "carry-on", r.Config.Get("on_suspended"))
			stop := run(t, "zk-partitioned-holder", knobs.KV{Name: "on_suspended", Value: "stop"})
			safeAndDone(t, stop, 2)
		},
		"zk-partitioned-holder-stop": func(t *testing.T, r *Record) {
			safeAndDone(t, r, 2)
			carryOn := run(t, "zk-partitioned-holder-stop", knobs.KV{Name: "on_suspended", Value: "carry-on"})
			assert.Positive(t, carryOn.Safety.ValidityOverlaps, "an application that carries on overlaps")
		},
		"zk-leader-crash": func(t *testing.T, r *Record) {
			safeAndDone(t, r, 2)
			require.NotNil(t, r.Liveness.AcquireLatencyMs.Max)
			assert.Greater(t, *r.Liveness.AcquireLatencyMs.Max, 150.0, "client2 waits out the election")
			calm := run(t, "zk-leader-crash", knobs.KV{Name: "crash_after", Value: "5s"})
			safeAndDone(t, calm, 2)
			assert.Greater(t, *r.Liveness.AcquireLatencyMs.Max, *calm.Liveness.AcquireLatencyMs.Max+150,
				"the crash's election adds to the slowest wait, client2's behind client1's 300ms hold")
		},
		"zk-clock-jump": func(t *testing.T, r *Record) {
			twoHolders(t, r)
			assert.Zero(t, r.Safety.StaleWritesAccepted)
			// The same file without the leader's drift: the wall-clock steps alone are harmless.
			sc, err := scenarios.LookupScenario("zk-clock-jump")
			require.NoError(t, err)
			text := sc.Text
			drift := "  - at: 500ms\n    clock_drift: {node: zk3, ppm: 500000}\n"
			require.Contains(t, text, drift)
			steady, err := scenarios.ParseFile("zk-clock-jump-steady.yaml", []byte(strings.Replace(text, drift, "", 1)))
			require.NoError(t, err)
			rec, err := RunScenario(context.Background(), steady, nil, 1, Options{})
			require.NoError(t, err)
			safeAndDone(t, rec, 2)
		},
		"zk-herd": func(t *testing.T, r *Record) { safeAndDone(t, r, 5) },
		"hybrid-split": func(t *testing.T, r *Record) {
			twoHolders(t, r)
			assert.Positive(t, r.Safety.StaleWritesAccepted, "neither lock's holder sends a token")
		},
		"hybrid-arbiter": func(t *testing.T, r *Record) { safeAndDone(t, r, 3) },
	}
	for _, sc := range scenarios.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			check, ok := tests[sc.Name]
			require.True(t, ok, "scenario %s has no test of its expected outcome", sc.Name)
			check(t, run(t, sc.Name))
		})
	}
	assert.Len(t, tests, len(scenarios.Scenarios()), "a test for a scenario that no longer exists")
}

func TestScenarioCatalogueIsComplete(t *testing.T) {
	for _, sc := range scenarios.Scenarios() {
		assert.NotEmpty(t, sc.Story, sc.Name)
		assert.NotEmpty(t, sc.Source, sc.Name)
		assert.NotEmpty(t, sc.Expect, sc.Name)
		c := knobs.DefaultConfig()
		assert.NoError(t, c.Apply(sc.Knobs), sc.Name)
	}
}

func TestUserKnobsOverrideTheScenario(t *testing.T) {
	r := run(t, "gc-pause", knobs.KV{Name: "fencing", Value: "one"})
	assert.Equal(t, "one", r.Config.Get("fencing"))
	assert.Zero(t, r.Safety.StaleWritesAccepted)
	assert.Equal(t, "1s", r.Config.Get("ttl"), "the scenario's own knobs stay")
}

func TestUnknownScenarioSuggests(t *testing.T) {
	_, err := Run(context.Background(), "gc-paus", nil, 1, Options{})
	var ue *knobs.UnknownError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "scenario", ue.What)
	assert.Contains(t, ue.Suggestions, "gc-pause")
}
