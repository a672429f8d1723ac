package sweep

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// killDirEnv tells a re-executed test binary to act as the sweep that gets killed.
const killDirEnv = "SWEEP_TEST_KILL_DIR"

// TestKillChild is the child process of TestKill9ThenResume; on its own it skips.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("child process of TestKill9ThenResume")
	}
	_, err := Run(context.Background(), &fakeRunner{jitter: 10 * time.Millisecond}, mustSpec(t, engineSpec),
		Options{Dir: dir, Workers: 2, Tool: "test"})
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
		cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
		require.NoError(t, cmd.Start())
		runs := filepath.Join(dir, RunsFile)
		require.Eventually(t, func() bool {
			b, _ := os.ReadFile(runs)
			return bytes.Count(b, []byte("\n"))-1 >= after
		}, 60*time.Second, time.Millisecond)
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
