//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// TestSweepIntoALockedFolderExitsTwo holds the folder's lock on another open file (flock
// locks belong to open files, so this conflicts as another process would; the engine's
// tests prove the cross-process case and kill -9) and checks that sweep, --resume,
// --overwrite and merge refuse with exit 2, naming the folder and the PID.
func TestSweepIntoALockedFolderExitsTwo(t *testing.T) {
	spec, dir := writeSpec(t, smallSpec), filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	f, err := os.OpenFile(filepath.Join(dir, sweep.LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB))
	_, err = f.WriteString("4242\n")
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
	assert.Contains(t, stderr, "output folder "+dir+" is in use by another sweep or merge (PID 4242)")
	assert.NoFileExists(t, filepath.Join(dir, sweep.ManifestFile))
}
