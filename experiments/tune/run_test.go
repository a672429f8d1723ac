package tune

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// small is a tune that runs in a few seconds: short runs, few seeds, a target its rounds
// cannot reach so that it runs a second round.
func small(t *testing.T) *Plan {
	t.Helper()
	in := DefaultInputs()
	in.Duration, in.Seeds, in.MaxSeeds = 20*time.Second, 2, 40
	in.MaxViolationsPer10k = 30 // about 1,000 acquisitions show it: a second round, within --max-seeds
	in.PerSecond = 5
	p, err := Prepare(in)
	require.NoError(t, err)
	return p
}

// cancelAfter is a sweep progress that cancels its context once n runs are written in
// all: an interruption at a run boundary, as Ctrl-C or a kill leaves a folder.
type cancelAfter struct {
	n      int64
	done   atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Begin(int, int) {}
func (c *cancelAfter) Advance(int) {
	if c.done.Add(1) >= c.n {
		c.cancel()
	}
}
func (c *cancelAfter) End() {}

// TestResumeEndsAsAnUninterruptedTune: a tune interrupted in its first round, and one
// interrupted in its second, each resumed, write the report an uninterrupted tune writes
// (folder names aside), and an interrupted tune is not resumed without Resume.
func TestResumeEndsAsAnUninterruptedTune(t *testing.T) {
	whole := t.TempDir()
	rep, err := small(t).Run(context.Background(), Options{Dir: whole, Workers: 2})
	require.NoError(t, err)
	rep.Release()
	require.Len(t, rep.Rounds, 2, "the target needs a second round")
	want := rep.Markdown("tune", "inputs")

	for _, stopAt := range []int64{2, 7} { // in round 1 (3 ttls × 2 seeds), in round 2
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		// One worker: the cancellation is seen at the next run boundary, so the tune
		// stops exactly there.
		_, err := small(t).Run(ctx, Options{Dir: dir, Workers: 1, Progress: &cancelAfter{n: stopAt, cancel: cancel}})
		cancel()
		require.True(t, errors.Is(err, ErrInterrupted), "stop at %d: %v", stopAt, err)
		_, statErr := os.Stat(filepath.Join(dir, "confirm-2"))
		assert.Equal(t, stopAt > 6, statErr == nil, "stop at %d: interrupted in round %d", stopAt, 1+int(stopAt)/7)

		_, err = small(t).Run(context.Background(), Options{Dir: dir, Workers: 2})
		require.Error(t, err, "a folder with a tune in it is not taken over silently")
		assert.True(t, sweep.IsUsage(err), "%v", err)

		got, err := small(t).Run(context.Background(), Options{Dir: dir, Workers: 1, Resume: true})
		require.NoError(t, err, "stop at %d", stopAt)
		got.Release()
		assert.Equal(t, want, strings.ReplaceAll(got.Markdown("tune", "inputs"), dir, whole), "stop at %d", stopAt)
		for _, r := range got.Rounds {
			a, err := os.ReadFile(filepath.Join(r, sweep.RunsFile))
			require.NoError(t, err)
			b, err := os.ReadFile(filepath.Join(strings.Replace(r, dir, whole, 1), sweep.RunsFile))
			require.NoError(t, err)
			assert.Equal(t, string(b), string(a), "%s byte for byte", r)
		}
	}
}

// TestRunRefusesAFolderInUse: while another process (here another lock) holds the tune's
// first round, a tune with Overwrite is refused, naming the holder, and deletes nothing.
func TestRunRefusesAFolderInUse(t *testing.T) {
	dir := t.TempDir()
	held, err := sweep.LockFolder(filepath.Join(dir, "confirm"), "tune")
	require.NoError(t, err)
	defer held.Unlock()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "confirm", "keep"), []byte("x"), 0o644))
	_, err = small(t).Run(context.Background(), Options{Dir: dir, Workers: 1, Overwrite: true})
	require.Error(t, err)
	assert.True(t, sweep.IsUsage(err))
	assert.Contains(t, err.Error(), "in use by another tune")
	assert.FileExists(t, filepath.Join(dir, "confirm", "keep"))
}
