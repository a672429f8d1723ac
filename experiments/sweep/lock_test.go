package sweep

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockDirEnv tells a re-executed test binary to hold a folder's lock until killed.
const lockDirEnv = "SWEEP_TEST_LOCK_DIR"

// TestLockChild is the child process of TestSecondProcessIsRefused: it takes the folder's
// lock as a sweep would, says so on stdout, and holds it until it is killed.
func TestLockChild(t *testing.T) {
	dir := os.Getenv(lockDirEnv)
	if dir == "" {
		t.Skip("child process of TestSecondProcessIsRefused")
	}
	l, err := lockFolder(dir, "sweep")
	require.NoError(t, err)
	defer l.unlock()
	os.Stdout.WriteString("locked\n")
	var b [1]byte
	os.Stdin.Read(b[:]) // blocks until the parent kills us or closes stdin
}

// TestSecondProcessIsRefused holds a folder's lock in another process, checks that a
// sweep, a resume, an overwrite and a merge into it are refused with the holder's PID and
// nothing written, then kills the holder with SIGKILL and checks the folder is free again.
func TestSecondProcessIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	s := mustSpec(t, engineSpec)
	tmp := t.TempDir()
	shard := filepath.Join(tmp, "shard")
	runSweep(t, &fakeRunner{}, s, Options{Dir: shard, Workers: 2})
	dir := filepath.Join(tmp, "out")
	runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2})
	before := snapshot(t, dir)

	cmd := exec.Command(os.Args[0], "-test.run=^TestLockChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockDirEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)
	pid := "PID " + strconv.Itoa(cmd.Process.Pid)

	for name, opt := range map[string]Options{
		"resume":    {Dir: dir, Workers: 2, Resume: true},
		"overwrite": {Dir: dir, Workers: 2, Overwrite: true},
		"fresh":     {Dir: dir, Workers: 2},
	} {
		_, err := Run(context.Background(), &fakeRunner{}, s, opt)
		require.Error(t, err, name)
		assert.True(t, IsUsage(err), name)
		assert.Contains(t, err.Error(), "output folder "+dir+" is in use by another sweep ("+pid+")", name)
	}
	err = Merge(dir, []string{shard}, MergeOptions{Overwrite: true})
	require.Error(t, err)
	assert.True(t, IsUsage(err))
	assert.Contains(t, err.Error(), pid)
	after := snapshot(t, dir)
	delete(after, LockFile)
	assert.Equal(t, before, after, "nothing written while another process holds the folder")

	require.NoError(t, cmd.Process.Kill()) // SIGKILL: the kernel releases the lock
	_ = cmd.Wait()
	st := runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2, Resume: true})
	assert.Equal(t, st.Runs, st.Resumed)
}

// TestLockIsPerOpenFile checks that a second open of the lock file in this process
// conflicts too (flock locks belong to open file descriptions), and that unlocking frees it.
func TestLockIsPerOpenFile(t *testing.T) {
	dir := t.TempDir()
	l, err := lockFolder(dir, "sweep")
	require.NoError(t, err)
	_, err = Run(context.Background(), &fakeRunner{}, mustSpec(t, engineSpec), Options{Dir: dir, Workers: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is in use by another sweep (PID "+strconv.Itoa(os.Getpid())+")")
	assert.NoFileExists(t, filepath.Join(dir, ManifestFile))
	l.unlock()
	runSweep(t, &fakeRunner{}, mustSpec(t, engineSpec), Options{Dir: dir, Workers: 1})
	assert.NoFileExists(t, filepath.Join(dir, LockFile), "a finished sweep leaves only its results")
}
