package experiments

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReleaseAfterAckRemovesTheWorkloadsStaleWrites: in a fault-free world whose links
// (the storage's included) take 1 to 50ms, a client that releases as it sends its last
// write lets the next holder acquire before that write lands: stale writes the workload
// made. Waiting for the storage's acknowledgement removes every one, and the lock's own
// verdict is the same either way: it held.
func TestReleaseAfterAckRemovesTheWorkloadsStaleWrites(t *testing.T) {
	knobs := []KV{{"clients", "5"}, {"hold", "const(0s)"}, {"think", "const(0s)"},
		{"latency", "uniform(1ms,50ms)"}, {"retry_delay", "10ms"}, {"retry_jitter", "5ms"}}
	var stale [2]int64
	for i, wait := range []string{"false", "true"} {
		for _, seed := range []uint64{1, 2, 3} {
			r := runSeed(t, "baseline", seed, append(knobs, KV{"release_after_ack", wait})...)
			assert.True(t, r.Safety.LockSafe(), "release_after_ack=%s seed %d: %v", wait, seed, r.Safety)
			assert.Positive(t, r.Liveness.Acquired)
			stale[i] += r.Safety.StaleWritesAccepted
		}
	}
	t.Logf("stale writes accepted: %v", stale)
	assert.Positive(t, stale[0], "releasing as the write leaves lets it land late")
	assert.Zero(t, stale[1], "waiting for the acknowledgement: no stale write")
}

// TestReleaseAfterAckLeavesTheLocksFailuresAlone: in the stories where the lock fails,
// waiting for the storage changes neither verdict's counts of the lock.
func TestReleaseAfterAckLeavesTheLocksFailuresAlone(t *testing.T) {
	for _, s := range []string{"gc-pause", "clock-jump", "restart-no-persistence"} {
		off, on := run(t, s), run(t, s, KV{"release_after_ack", "true"})
		assert.Equal(t, off.Safety.ValidityOverlaps, on.Safety.ValidityOverlaps, s)
		assert.Equal(t, off.Safety.UsageOverlaps, on.Safety.UsageOverlaps, s)
		assert.False(t, on.Safety.LockSafe(), s)
	}
}

// TestReleaseAfterAckOffByDefault: the knob defaults to off, so every scenario keeps its
// trace (the golden traces check the hashes).
func TestReleaseAfterAckOffByDefault(t *testing.T) {
	c := DefaultConfig()
	assert.Equal(t, "false", c.Get("release_after_ack"))
}

func runSeed(t *testing.T, scenario string, seed uint64, knobs ...KV) *Record {
	t.Helper()
	rec, err := Run(context.Background(), scenario, knobs, seed, Options{})
	require.NoError(t, err)
	return rec
}
