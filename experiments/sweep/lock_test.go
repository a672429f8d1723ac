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
	defer l.Unlock()
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
	l.Unlock()
	runSweep(t, &fakeRunner{}, mustSpec(t, engineSpec), Options{Dir: dir, Workers: 1})
	assert.NoFileExists(t, filepath.Join(dir, LockFile), "a finished sweep leaves only its results")
}

// TestLockHeldByTheCallerOutlivesRun: with Options.Lock (and MergeOptions.Lock) the folder
// stays locked after Run and Merge return, so the caller's figures go in before anyone
// else can write; a sweep, a resume and a merge into it are refused until the caller
// unlocks, and a lock on another folder is refused before anything is written.
func TestLockHeldByTheCallerOutlivesRun(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	tmp := t.TempDir()
	dir, shard := filepath.Join(tmp, "out"), filepath.Join(tmp, "shard")
	runSweep(t, &fakeRunner{}, s, Options{Dir: shard, Workers: 2})
	l, err := LockFolder(dir, "sweep")
	require.NoError(t, err)
	runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2, Lock: l})
	assert.FileExists(t, filepath.Join(dir, LockFile), "still locked when Run returns")
	pid := "sweep (PID " + strconv.Itoa(os.Getpid()) + ")"
	for name, opt := range map[string]Options{
		"resume":    {Dir: dir, Workers: 2, Resume: true},
		"overwrite": {Dir: dir, Workers: 2, Overwrite: true},
	} {
		_, err := Run(context.Background(), &fakeRunner{}, s, opt)
		require.Error(t, err, name)
		assert.True(t, IsUsage(err), name)
		assert.Contains(t, err.Error(), "output folder "+dir+" is in use by another "+pid, name)
	}
	err = Merge(dir, []string{shard}, MergeOptions{Overwrite: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is in use by another "+pid)

	other, err := LockFolder(filepath.Join(tmp, "other"), "sweep")
	require.NoError(t, err)
	defer other.Unlock()
	_, err = Run(context.Background(), &fakeRunner{}, s, Options{Dir: filepath.Join(tmp, "third"), Lock: other, Tool: "test"})
	assert.ErrorContains(t, err, "the lock held is on "+filepath.Join(tmp, "other"))
	assert.NoDirExists(t, filepath.Join(tmp, "third"))

	l.Unlock()
	l.Unlock() // a second Unlock does nothing
	assert.NoFileExists(t, filepath.Join(dir, LockFile))
	_, err = Run(context.Background(), &fakeRunner{}, s, Options{Dir: dir, Lock: l, Tool: "test"})
	assert.ErrorContains(t, err, "released before writing")

	ml, err := LockFolder(filepath.Join(tmp, "merged"), "merge")
	require.NoError(t, err)
	require.NoError(t, Merge(filepath.Join(tmp, "merged"), []string{shard}, MergeOptions{Lock: ml}))
	assert.FileExists(t, filepath.Join(tmp, "merged", LockFile), "still locked when Merge returns")
	_, err = LockFolder(filepath.Join(tmp, "merged"), "plot")
	assert.ErrorContains(t, err, "is in use by another merge (PID ")
	ml.Unlock()
	requireSameResults(t, shard, filepath.Join(tmp, "merged"))
}

// TestLockRefusesAFile: LockFolder on a path that is a file says so and creates nothing.
func TestLockRefusesAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err := LockFolder(f, "plot")
	require.Error(t, err)
	assert.True(t, IsUsage(err))
	assert.Contains(t, err.Error(), "output folder "+f+": exists and is not a folder")
}

// strayTemps are temporary files an interrupted write of the tool leaves in a folder.
var strayTemps = []string{".heatmap-ttl-nodes.png.tmp2718281828", ".knob-ttl.svg.tmp7", ManifestFile + ".tmp",
	SummaryFile + ".tmp", RunsFile + ".tmp", "index.html.tmp"}

// userFiles look like temporary files but are not the tool's: they must survive.
var userFiles = []string{".heatmap-ttl-nodes.png.tmp", ".knob-ttl.png.tmpx", "knob-ttl.png.tmp12", "my.png.tmp3",
	".notes.png.tmp4", "notes.txt", "summary.csv.tmp.bak"}

func TestIsTempFile(t *testing.T) {
	for _, name := range strayTemps {
		assert.True(t, IsTempFile(name), name)
	}
	for _, name := range userFiles {
		assert.False(t, IsTempFile(name), name)
	}
}

// TestStrayTempFilesAreRemovedUnderTheLock: the temporary files a kill leaves (a figure's
// .heatmap-….png.tmpNNN, a NAME.tmp) are removed by the next resume, overwrite or merge
// of the folder, and only they: the user's files stay, and the results are unchanged.
func TestStrayTempFilesAreRemovedUnderTheLock(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	tmp := t.TempDir()
	ref := filepath.Join(tmp, "ref")
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	litter := func(dir string) {
		for _, name := range append(append([]string{}, strayTemps...), userFiles...) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644))
		}
	}
	check := func(dir, what string) {
		for _, name := range strayTemps {
			assert.NoFileExists(t, filepath.Join(dir, name), what)
		}
		for _, name := range userFiles {
			assert.FileExists(t, filepath.Join(dir, name), what)
		}
		requireSameResults(t, ref, dir)
	}
	for name, opt := range map[string]Options{"resume": {Resume: true}, "overwrite": {Overwrite: true}} {
		dir := filepath.Join(tmp, name)
		require.NoError(t, os.CopyFS(dir, os.DirFS(ref)))
		litter(dir)
		opt.Dir, opt.Workers = dir, 2
		runSweep(t, &fakeRunner{}, s, opt)
		check(dir, name)
	}
	dir := filepath.Join(tmp, "merged")
	require.NoError(t, os.Mkdir(dir, 0o755))
	litter(dir)
	require.NoError(t, Merge(dir, []string{ref}, MergeOptions{}))
	check(dir, "merge")
}
