//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// TestSweepIntoALockedFolderExitsTwo holds the folder's lock on another open file (flock
// locks belong to open files, so this conflicts as another process would; the engine's
// tests prove the cross-process case and kill -9) and checks that sweep, --resume,
// --overwrite, merge and plot refuse with exit 2, naming the folder, the holder's command
// and its PID.
func TestSweepIntoALockedFolderExitsTwo(t *testing.T) {
	spec, dir := writeSpec(t, smallSpec), filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	f, err := os.OpenFile(filepath.Join(dir, sweep.LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB))
	_, err = f.WriteString("4242 sweep\n")
	require.NoError(t, err)
	for _, extra := range [][]string{nil, {"--resume"}, {"--overwrite"}} {
		args := append([]string{"sweep", "--spec", spec, "--out", dir, "-q"}, extra...)
		code, _, stderr := runCLI(args...)
		assert.Equal(t, 2, code, "%v: %s", extra, stderr)
		assert.Contains(t, stderr, "output folder "+dir+" is in use by another sweep (PID 4242)", extra)
	}
	whole := filepath.Join(t.TempDir(), "whole")
	code, _, stderr := runCLI("sweep", "--spec", spec, "--out", whole, "-q", "--no-plots")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runCLI("merge", "--out", dir, "--overwrite", whole)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "output folder "+dir+" is in use by another sweep (PID 4242)")
	assert.NoFileExists(t, filepath.Join(dir, sweep.ManifestFile))
	code, _, stderr = runCLI("plot", "--in", whole, "--out", dir)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "output folder "+dir+" is in use by another sweep (PID 4242)")
	// A lock file without a command (written by an older version) names the commands
	// that take the lock.
	require.NoError(t, f.Truncate(0))
	_, err = f.WriteAt([]byte("4242\n"), 0)
	require.NoError(t, err)
	code, _, stderr = runCLI("sweep", "--spec", spec, "--out", dir, "-q")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "is in use by another sweep, merge or plot (PID 4242)")
}

// TestNoSecondWriterWhileTheFiguresAreDrawn holds a sweep, and then a merge, at the moment
// it starts drawing its figures (through the draw hook, in this goroutine: no timing
// involved) and checks that a second sweep --overwrite, a merge and a plot into the folder
// are refused then with exit 2, and that the first finishes with its own data under its
// own figures. Before the lock was held to the last byte, the second sweep got in there
// and the folder ended with one sweep's runs and the other's figures.
func TestNoSecondWriterWhileTheFiguresAreDrawn(t *testing.T) {
	tmp := t.TempDir()
	spec := writeSpec(t, smallSpec)
	other := writeSpec(t, strings.Replace(smallSpec, "seed: 11", "seed: 12", 1))
	whole := filepath.Join(tmp, "whole")
	require.Equal(t, 0, first(runCLI("sweep", "--spec", spec, "--out", whole, "-q", "--no-plots")))
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, dir string) error
	}{
		{"sweep", func(ctx context.Context, dir string) error {
			return runSweepCtx(ctx, []string{"--spec", spec, "--out", dir, "-q", "--workers", "2"}, io.Discard, io.Discard)
		}},
		{"merge", func(ctx context.Context, dir string) error {
			return runMergeCtx(ctx, []string{"--out", dir, whole}, io.Discard, io.Discard)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tmp, tc.name)
			var during []string // each second command's exit status and stderr, while the first draws
			var runsThen []byte
			hook := func(d string) {
				require.Equal(t, dir, d)
				var err error
				runsThen, err = os.ReadFile(filepath.Join(dir, sweep.RunsFile))
				require.NoError(t, err)
				for _, args := range [][]string{
					{"sweep", "--spec", other, "--out", dir, "-q", "--overwrite", "--workers", "2"},
					{"merge", "--out", dir, "--overwrite", whole},
					{"plot", "--in", dir},
				} {
					code, _, stderr := runCLI(args...)
					during = append(during, fmt.Sprintf("%s: %d: %s", args[0], code, stderr))
				}
			}
			ctx := context.WithValue(context.Background(), drawHookKey{}, hook)
			require.NoError(t, tc.run(ctx, dir))
			require.Len(t, during, 3, "the hook ran once, while the figures were drawn")
			for _, d := range during {
				assert.Contains(t, d, ": 2: redlock-sim: usage: output folder "+dir+" is in use by another "+tc.name+
					" (PID "+strconv.Itoa(os.Getpid())+")")
			}
			assert.Equal(t, string(runsThen), read(t, filepath.Join(dir, sweep.RunsFile)), "the first sweep's data")
			assert.Equal(t, read(t, filepath.Join(whole, sweep.RunsFile)), read(t, filepath.Join(dir, sweep.RunsFile)))
			for _, f := range []string{"knob-ttl.png", "knob-nodes.png", "heatmap-ttl-nodes.png"} {
				assert.FileExists(t, filepath.Join(dir, f))
			}
			assert.NoFileExists(t, filepath.Join(dir, sweep.LockFile), "released once the figures are in")
		})
	}
}

// TestStrayFigureTempFilesAreRemoved: the .heatmap-….png.tmpNNN a kill during drawing
// leaves is removed by the next sweep --resume, merge or plot of the folder; a file of the
// user's that only looks like one stays.
func TestStrayFigureTempFilesAreRemoved(t *testing.T) {
	tmp := t.TempDir()
	spec := writeSpec(t, smallSpec)
	whole := filepath.Join(tmp, "whole")
	require.Equal(t, 0, first(runCLI("sweep", "--spec", spec, "--out", whole, "-q", "--no-plots")))
	const stray, mine = ".heatmap-ttl-nodes.png.tmp3141592653", "heatmap-notes.png.tmp1"
	for _, tc := range []struct {
		name string
		args func(dir string) []string
	}{
		{"resume", func(dir string) []string { return []string{"sweep", "--spec", spec, "--out", dir, "-q", "--resume"} }},
		{"merge", func(dir string) []string { return []string{"merge", "--out", dir, "--overwrite", whole} }},
		{"plot", func(dir string) []string { return []string{"plot", "--in", dir} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(tmp, tc.name)
			require.NoError(t, os.CopyFS(dir, os.DirFS(whole)))
			for _, name := range []string{stray, mine} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("half a png"), 0o644))
			}
			code, _, stderr := runCLI(tc.args(dir)...)
			require.Equal(t, 0, code, stderr)
			assert.NoFileExists(t, filepath.Join(dir, stray))
			assert.FileExists(t, filepath.Join(dir, mine))
			assert.FileExists(t, filepath.Join(dir, "heatmap-ttl-nodes.png"))
		})
	}
}
