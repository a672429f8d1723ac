package tune

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

func TestConfirmTTLs(t *testing.T) {
	assert.Equal(t, []time.Duration{345 * time.Millisecond, 690 * time.Millisecond, 1380 * time.Millisecond}, ConfirmTTLs(690*time.Millisecond))
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}, ConfirmTTLs(2*time.Millisecond))
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, ConfirmTTLs(time.Millisecond), "no duplicate")
}

// TestConfirmationPoolsEachTTL runs a small confirmation through the sweep engine and
// checks that ReadOutcomes pools each ttl's runs: as many runs as seeds, the counts the
// runs' own records give, and the recommended settings applied on top of the environment.
func TestConfirmationPoolsEachTTL(t *testing.T) {
	rec := Recommendation{TTL: 500 * time.Millisecond, DriftFactor: 0.01, DriftPad: 2 * time.Millisecond,
		Timeout: 20 * time.Millisecond, RetryDelay: 30 * time.Millisecond, RetryJitter: 10 * time.Millisecond, Tries: 5}
	c := Confirmation{Env: []sweep.KV{{Name: "clients", Value: "2"}}, Duration: 20 * time.Second, Replicates: 3, Seed: 7}
	spec, err := c.Spec(rec)
	require.NoError(t, err)
	assert.Equal(t, 3, spec.Points())
	assert.Contains(t, spec.Base, sweep.KV{Name: "timeout", Value: "20ms"})
	dir := t.TempDir()
	_, err = sweep.Run(context.Background(), experiments.SweepRunner(), spec, sweep.Options{Dir: dir, Workers: 2})
	require.NoError(t, err)
	out, err := ReadOutcomes(dir)
	require.NoError(t, err)
	require.Len(t, out, 3)
	assert.Equal(t, []string{"250ms", "500ms", "1s"}, []string{out[0].TTL, out[1].TTL, out[2].TTL})
	for _, o := range out {
		assert.Equal(t, 3, o.Runs)
		assert.Positive(t, o.Acquired)
		assert.Len(t, o.Violations, len(ViolationKinds))
		assert.Equal(t, int(o.Acquired), o.Violations[0].Acquisitions)
	}
	assert.Contains(t, Table(out, "500ms"), "| 500ms (recommended) | 3 |")

	require.NoError(t, os.WriteFile(filepath.Join(dir, sweep.RunsFile), []byte("point,replicate,seed\n"), 0o644))
	_, err = ReadOutcomes(dir)
	assert.ErrorContains(t, err, "not a confirmation sweep")
}
