package experiments

import (
	"encoding/json"
	"testing"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSafetyTwoVerdicts: overlaps are the lock's failure, accepted stale writes the
// resource's; fenced writes rejected are fencing doing its job and leave the resource safe.
func TestSafetyTwoVerdicts(t *testing.T) {
	for _, c := range []struct {
		s         Safety
		lock, res bool
		text      string
	}{
		{Safety{}, true, true, "lock: SAFE (no overlaps) · resource: SAFE (0 stale writes accepted)"},
		{Safety{UsageOverlaps: 1, FencedWritesRejected: 2}, false, true,
			"lock: UNSAFE (1 usage overlap) · resource: SAFE (0 stale writes accepted; fencing rejected 2)"},
		{Safety{UsageOverlaps: 1, StaleWritesAccepted: 2}, false, false,
			"lock: UNSAFE (1 usage overlap) · resource: UNSAFE (2 stale writes accepted)"},
		{Safety{ValidityOverlaps: 3, UsageOverlaps: 2}, false, true,
			"lock: UNSAFE (3 validity overlaps, 2 usage overlaps) · resource: SAFE (0 stale writes accepted)"},
		{Safety{StaleWritesAccepted: 1}, true, false,
			"lock: SAFE (no overlaps) · resource: UNSAFE (1 stale write accepted)"},
	} {
		assert.Equal(t, c.lock, c.s.LockSafe(), "%+v", c.s)
		assert.Equal(t, c.res, c.s.ResourceSafe(), "%+v", c.s)
		assert.Equal(t, c.lock && c.res, c.s.Safe(), "%+v", c.s)
		assert.Equal(t, c.text, c.s.String())
	}
}

// TestSafetyJSONCarriesBothVerdicts: --json shows the counts and the two verdicts, and a
// record read back keeps its counts.
func TestSafetyJSONCarriesBothVerdicts(t *testing.T) {
	s := Safety{UsageOverlaps: 3, UsageIncidents: 1, FencedWritesRejected: 2}
	data, err := json.Marshal(Record{Safety: s})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	assert.Equal(t, map[string]any{"validity_overlaps": 0.0, "usage_overlaps": 3.0, "stale_writes_accepted": 0.0,
		"fenced_writes_rejected": 2.0, "validity_overlap_incidents": 0.0, "usage_overlap_incidents": 1.0,
		"stale_write_incidents": 0.0, "lock_safe": false, "resource_safe": true}, m["safety"])
	var back Record
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, s, back.Safety)
}

// TestGCPauseFencedVerdicts is the README's claim made literal: in the gc-pause story the
// lock fails (a usage overlap) and fencing keeps the resource safe.
func TestGCPauseFencedVerdicts(t *testing.T) {
	for _, c := range []struct {
		fencing string
		res     bool
	}{{"none", false}, {"one", true}} {
		r := run(t, "gc-pause", knobs.KV{Name: "fencing", Value: c.fencing})
		assert.False(t, r.Safety.LockSafe(), "fencing=%s: the pause defeats the lock either way", c.fencing)
		assert.Equal(t, c.res, r.Safety.ResourceSafe(), "fencing=%s: %v", c.fencing, r.Safety)
		for _, v := range r.Violations {
			if v.Kind == oracle.KindStaleWrite || v.Kind == oracle.KindFencedRejected {
				assert.Contains(t, v.Faults, "client1 paused 100ms to 1.6s", "the pause just ended when the write landed")
			}
		}
	}
}
