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
	assert.NotContains(t, spec.Base, sweep.KV{Name: "fencing", Value: "one"})
	fenced := rec
	fenced.Fencing = true
	fspec, err := c.Spec(fenced)
	require.NoError(t, err)
	assert.Contains(t, fspec.Base, sweep.KV{Name: "fencing", Value: "one"}, "confirmed with the fencing it needs")
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

// outcome is a confirmation of ttl with the given incidents of each kind, each behind two
// overlapping pairs.
func outcome(ttl string, runs int, acquired int64, counts ...int64) Outcome {
	pairs := make([]int64, len(counts))
	for i, c := range counts {
		pairs[i] = 2 * c
	}
	o := Outcome{TTL: ttl, Runs: runs, Acquired: acquired, counts: counts, Pairs: pairs, p99s: []float64{float64(runs)}}
	o.finish()
	return o
}

// TestMoreRunsAsksWhatTheBoundsNeed: with nothing seen, enough runs for the rule of three
// to reach the target; with a rate well under it, four times the evidence; with a rate
// over it, none (more runs only confirm it); and rounds pool their counts.
func TestMoreRunsAsksWhatTheBoundsNeed(t *testing.T) {
	assert.Equal(t, 29956, AcquisitionsFor(1, 0.95), "ln(0.05)/ln(1 − 1e-4)")
	assert.InDelta(t, 3/1e-4, float64(AcquisitionsFor(1, 0.95)), 100, "the rule of three")

	o := outcome("1s", 10, 10_000, 0, 0, 0) // 1,000 acquisitions a run
	assert.Equal(t, 20, MoreRuns(o, lim(1)), "⌈(29956 − 10000) / 1000⌉")
	assert.Zero(t, MoreRuns(outcome("1s", 10, 100_000, 0, 0, 0), lim(1)), "bounds already met")
	assert.Zero(t, MoreRuns(outcome("1s", 10, 10_000, 0, 5, 0), lim(1)), "5 per 10,000 seen: over the target")

	// The recommended ttl is hopeless (violations seen); the next longer one needs runs.
	os := []Outcome{outcome("500ms", 10, 10_000, 0, 50, 0), outcome("1s", 10, 10_000, 0, 20, 0), outcome("2s", 10, 10_000, 0, 0, 0)}
	assert.Equal(t, 20, NextRuns(os, "1s", lim(1)))
	assert.Zero(t, NextRuns(os, "3s", lim(1)), "unknown ttl")

	// Limits per kind: with no limit on usage overlaps, the recommended ttl's 20 seen no
	// longer rule it out, and its zero kinds need the runs.
	assert.Equal(t, 20, NextRuns(os, "1s", []float64{1, -1, 1}))
	assert.True(t, Meets(os[1], []float64{5, 40, 100}), "20 in 10,000: at most about 30 per 10,000")
	assert.False(t, Meets(os[1], []float64{5, 15, 100}))

	pooled := Pool(os, []Outcome{outcome("500ms", 5, 5_000, 1, 0, 0), outcome("1s", 5, 5_000, 0, 0, 0), outcome("2s", 5, 5_000, 0, 0, 0)})
	require.Len(t, pooled, 3)
	assert.Equal(t, 15, pooled[0].Runs)
	assert.EqualValues(t, 15_000, pooled[0].Acquired)
	assert.Equal(t, []int{1, 50, 0}, []int{pooled[0].Violations[0].Count, pooled[0].Violations[1].Count, pooled[0].Violations[2].Count})
	assert.Equal(t, []int64{2, 100, 0}, pooled[0].Pairs, "the pairs pool too")
	assert.Equal(t, 7.5, pooled[0].AcquireP99Ms, "median of the runs' p99s (10 and 5)")
	assert.Equal(t, 10, os[0].Runs, "the inputs are left alone")
}

func lim(v float64) []float64 { return []float64{v, v, v} }
