package sweep

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// killDirEnv tells a re-executed test binary to act as the sweep that gets killed;
// killStallEnv says after how many started runs its runs stop finishing.
const (
	killDirEnv   = "SWEEP_TEST_KILL_DIR"
	killStallEnv = "SWEEP_TEST_KILL_STALL"
)

// TestKillChild is the child process of TestKill9ThenResume; on its own it skips. Runs
// started after the first SWEEP_TEST_KILL_STALL never finish, so the child cannot complete
// the sweep before the parent kills it, however slowly the parent is scheduled.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("child process of TestKill9ThenResume")
	}
	stall, err := strconv.ParseInt(os.Getenv(killStallEnv), 10, 64)
	require.NoError(t, err)
	var started atomic.Int64
	r := &fakeRunner{jitter: 10 * time.Millisecond, fail: func([]KV, uint64) error {
		if started.Add(1) > stall {
			time.Sleep(time.Hour) // until the kill (a sleep, not select{}: never taken for a deadlock)
		}
		return nil
	}}
	_, err = Run(context.Background(), r, mustSpec(t, engineSpec), Options{Dir: dir, Workers: 2, Tool: "test"})
	require.NoError(t, err)
}

// TestKill9ThenResume runs a sweep in a child process, kills it with SIGKILL once it has
// written some rows (at the start, the middle, near the end), resumes in this process and
// compares every file with an uninterrupted sweep.
func TestKill9ThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	s := mustSpec(t, engineSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	total := 126
	for _, after := range []int{1, 40, 100} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
		// Runs are handed out in order, so with 2 workers every row before the
		// (after+10-1)th is written eventually; the kill lands while those are still
		// being written, or once they are.
		cmd.Env = append(os.Environ(), killDirEnv+"="+dir, killStallEnv+"="+strconv.Itoa(after+10))
		require.NoError(t, cmd.Start())
		runs := filepath.Join(dir, RunsFile)
		require.Eventually(t, func() bool {
			b, _ := os.ReadFile(runs)
			return bytes.Count(b, []byte("\n"))-1 >= after
		}, 2*time.Minute, time.Millisecond, "the child wrote fewer than %d rows in 2 minutes", after)
		require.NoError(t, cmd.Process.Kill()) // SIGKILL on Unix
		_ = cmd.Wait()
		b, err := os.ReadFile(runs)
		require.NoError(t, err)
		rows := bytes.Count(b, []byte("\n")) - 1
		require.Less(t, rows, total, "the child finished before the kill; the test proves nothing")
		t.Logf("killed after %d rows, %d bytes", rows, len(b))
		m, err := ReadManifest(dir)
		require.NoError(t, err)
		assert.False(t, m.Complete)

		st := runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 3, Resume: true})
		assert.Equal(t, rows, st.Resumed)
		requireSameResults(t, ref, dir)
	}
}
