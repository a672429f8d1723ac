package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

const smallSpec = `base:
  scenario: baseline
  duration: 20s
axes:
  ttl: [200ms, 1s]
  nodes: [3, 5]
replicates: 3
seed: 11
`

func writeSpec(t *testing.T, text string) string {
	f := filepath.Join(t.TempDir(), "spec.yaml")
	require.NoError(t, os.WriteFile(f, []byte(text), 0o644))
	return f
}

func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func read(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestSweepWritesResultsAndRefusesToClobber(t *testing.T) {
	spec, dir := writeSpec(t, smallSpec), filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--workers", "2")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "12 runs")
	for _, f := range []string{"runs.csv", "summary.csv", "manifest.json", "knob-ttl.png", "knob-nodes.png", "heatmap-ttl-nodes.png"} {
		assert.FileExists(t, filepath.Join(dir, f), "results and figures")
	}
	runs := read(t, filepath.Join(dir, "runs.csv"))

	code, _, stderr = runCLI("sweep", "--spec", spec, "--out", dir, "-q")
	assert.Equal(t, 2, code, "a second sweep into a results folder is refused")
	assert.Contains(t, stderr, "already holds a complete sweep (12 runs)")
	for _, way := range []string{"--resume", "--out", "--overwrite"} {
		assert.Contains(t, stderr, way, "the refusal names the ways on")
	}
	code, stdout, _ = runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--resume")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "12 resumed")
	assert.Equal(t, runs, read(t, filepath.Join(dir, "runs.csv")), "resuming a finished sweep changes nothing")
}

func TestShardsMergeIntoTheUnshardedSweep(t *testing.T) {
	spec, tmp := writeSpec(t, smallSpec), t.TempDir()
	whole := filepath.Join(tmp, "whole")
	require.Equal(t, 0, first(runCLI("sweep", "--spec", spec, "--out", whole, "-q")))
	var shards []string
	for _, s := range []string{"1/3", "2/3", "3/3"} {
		d := filepath.Join(tmp, "shard"+s[:1])
		code, _, stderr := runCLI("sweep", "--spec", spec, "--out", d, "-q", "--shard", s)
		require.Equal(t, 0, code, stderr)
		shards = append(shards, d)
	}
	merged := filepath.Join(tmp, "merged")
	code, stdout, stderr := runCLI(append([]string{"merge", "--out", merged}, shards...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "merged 3 shards")
	for _, f := range []string{"runs.csv", "summary.csv"} {
		assert.Equal(t, read(t, filepath.Join(whole, f)), read(t, filepath.Join(merged, f)), f)
	}
}

func first(code int, _, _ string) int { return code }

func TestSweepBadInputExitsTwoAndWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown knob", []string{"--spec", writeSpec(t, "base:\n  ttll: 1s\nreplicates: 1\nseed: 1\n")}, `spec.yaml:2`},
		{"bad value", []string{"--spec", writeSpec(t, "base:\n  ttl: -1s\nreplicates: 1\nseed: 1\n")}, "ttl"},
		{"empty axis", []string{"--spec", writeSpec(t, "axes:\n  ttl: []\nreplicates: 1\nseed: 1\n")}, "spec.yaml:2"},
		{"malformed yaml", []string{"--spec", writeSpec(t, "base: [\nreplicates: 1\n")}, "spec.yaml"},
		{"missing spec", []string{"--spec", filepath.Join(tmp, "nope.yaml")}, "nope.yaml"},
		{"shard out of range", []string{"--shard", "3/2"}, "--shard"},
		{"bad --set", []string{"--set", "ttl"}, "name=value"},
		{"unknown --set knob", []string{"--set", "tll=1s"}, "did you mean ttl"},
		{"negative workers in a dry run", []string{"--workers", "-3", "--dry-run"}, "workers = -3"},
		{"resume and overwrite in a dry run", []string{"--resume", "--overwrite", "--dry-run"}, "exclude each other"},
		{"seed 1.5", []string{"--spec", writeSpec(t, "replicates: 1\nseed: 1.5\n")}, "spec.yaml:2: seed = 1.5"},
		{"tab", []string{"--spec", writeSpec(t, "axes:\n\tttl: [1s]\nreplicates: 1\nseed: 1\n")}, "spec.yaml:2: found character that cannot start any token (YAML does not allow tabs for indentation; use spaces)"},
		{"unwritable folder", []string{"--spec", writeSpec(t, smallSpec), "--out", "/proc/redlock-sim-out"}, "output folder"},
	}
	for _, c := range cases {
		out := filepath.Join(tmp, "out-"+c.name)
		args := append([]string{"sweep", "-q", "--out", out}, c.args...)
		if c.name == "unwritable folder" {
			args = append([]string{"sweep", "-q"}, c.args...)
		}
		code, _, stderr := runCLI(args...)
		assert.Equal(t, 2, code, "%s: %s", c.name, stderr)
		assert.Contains(t, stderr, c.want, c.name)
		assert.NoDirExists(t, out, "%s: nothing written", c.name)
	}
}

func TestMergeNeedsResults(t *testing.T) {
	code, _, stderr := runCLI("merge", "--out", filepath.Join(t.TempDir(), "m"), t.TempDir())
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "holds no sweep results")
	code, _, _ = runCLI("merge")
	assert.Equal(t, 2, code)
}

func TestDefaultStudyPlanTakesSets(t *testing.T) {
	plans, err := planSweeps("", "out", []string{"duration=1s"})
	require.NoError(t, err)
	require.Len(t, plans, 4)
	for _, p := range plans {
		assert.Equal(t, filepath.Join("out", p.name), p.dir)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI("sweep", "--dry-run", "--out", out, "--shard", "2/4")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "ttl: 5 points × 50 replicates = 250 runs; shard 2/4: 63 runs")
	assert.NoDirExists(t, out)
}

// TestDeploymentCommandsAreAccepted runs the sweep command lines of the Kubernetes Job
// manifest and the Slurm script (as their schedulers would, with the shard variable set)
// with --dry-run, so the deployment files cannot drift away from the CLI.
func TestDeploymentCommandsAreAccepted(t *testing.T) {
	for _, c := range []struct{ file, env, val string }{
		{"../../deploy/k8s/sweep-job.yaml", "JOB_COMPLETION_INDEX", "2"},
		{"../../deploy/slurm/sweep.sbatch", "SLURM_ARRAY_TASK_ID", "3"},
	} {
		text := read(t, c.file)
		i := strings.Index(text, "redlock-sim sweep")
		require.GreaterOrEqual(t, i, 0, c.file)
		line := text[i:]
		line = line[:strings.Index(line, "--out")] // --out comes last in both files
		line = strings.NewReplacer("\\\n", " ", "\n", " ", "/examples/", "../../examples/").Replace(line)
		line = strings.Replace(line, " examples/", " ../../examples/", 1)
		args := append(strings.Fields(line)[1:], "--out", filepath.Join(t.TempDir(), "shard"))
		t.Setenv(c.env, c.val)
		t.Setenv("SLURM_ARRAY_TASK_MIN", "1") // as Slurm sets it for --array=1-4
		code, stdout, stderr := runCLI(append(args, "--dry-run")...)
		require.Equal(t, 0, code, "%s: %v: %s", c.file, args, stderr)
		// Kubernetes counts from 0 and this Slurm array from 1: both name shard 3 of 4.
		assert.Contains(t, stdout, "shard 3/4", c.file)
	}
}

// TestInterruptedSweepExits130WithTheResumeCommand stops a sweep (the cancelled context
// stands for Ctrl-C or SIGTERM), checks the error maps to exit 130 and names the exact
// command to continue, then runs that command and gets the uninterrupted results.
func TestInterruptedSweepExits130WithTheResumeCommand(t *testing.T) {
	spec, tmp := writeSpec(t, smallSpec), t.TempDir()
	whole, dir := filepath.Join(tmp, "whole"), filepath.Join(tmp, "out")
	require.Equal(t, 0, first(runCLI("sweep", "--spec", spec, "--out", whole, "-q", "--no-plots")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := []string{"--spec", spec, "--out", dir, "-q", "--no-plots", "--overwrite"}
	var stdout, stderr bytes.Buffer
	err := runSweepCtx(ctx, args, &stdout, &stderr)
	require.ErrorIs(t, err, errInterrupted)
	want := "redlock-sim sweep --spec " + spec + " --out " + dir + " -q --no-plots --resume"
	assert.Contains(t, err.Error(), dir+" is resumable, continue with:\n  "+want)

	code, out, errOut := runCLI(strings.Fields(want)[1:]...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "12 runs")
	for _, f := range []string{"runs.csv", "summary.csv"} {
		assert.Equal(t, read(t, filepath.Join(whole, f)), read(t, filepath.Join(dir, f)), f)
	}
}

func TestResumeIntoANewFolderSaysSo(t *testing.T) {
	spec, dir := writeSpec(t, smallSpec), filepath.Join(t.TempDir(), "new")
	code, _, stderr := runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots", "--resume")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "nothing to resume in "+dir+": starting afresh")
}

func TestResumeRefusesAnEditedFolderWithExitTwo(t *testing.T) {
	spec, dir := writeSpec(t, smallSpec), filepath.Join(t.TempDir(), "out")
	require.Equal(t, 0, first(runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots")))
	runs := filepath.Join(dir, "runs.csv")
	b := read(t, runs)
	require.NoError(t, os.WriteFile(runs, []byte(b[:len(b)-500]), 0o644))
	code, _, stderr := runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots", "--resume")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "the file changed after the sweep finished")

	require.NoError(t, os.WriteFile(runs, []byte(b), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "summary.csv")))
	code, stdout, stderr := runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots", "--resume")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "summary.csv was missing or did not match runs.csv: rewritten")
	assert.FileExists(t, filepath.Join(dir, "summary.csv"))
}

func TestSweepWithNothingToPlotExitsZero(t *testing.T) {
	for name, text := range map[string]string{
		"no axes":         "base:\n  scenario: baseline\n  duration: 5s\nreplicates: 2\nseed: 1\n",
		"one-valued axes": "base:\n  duration: 5s\naxes:\n  ttl: [1s]\n  nodes: [3]\nreplicates: 2\nseed: 1\n",
	} {
		dir := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := runCLI("sweep", "--spec", writeSpec(t, text), "--out", dir, "-q")
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		assert.Contains(t, stdout, "nothing to plot against: every knob has one value", name)
		assert.FileExists(t, filepath.Join(dir, "summary.csv"), name)
		code, stdout, stderr = runCLI("plot", "--in", dir)
		require.Equal(t, 0, code, "%s: %s", name, stderr)
		assert.Contains(t, stdout, "nothing to plot against", name)
	}
}

// TestExamplesDoNotWriteIntoTheDefaultStudy checks that the command in each example's
// comment writes to a folder the default study (redlock-sim sweep, --out out) does not
// own, so following the example after the quick start is not refused.
func TestExamplesDoNotWriteIntoTheDefaultStudy(t *testing.T) {
	specs, err := filepath.Glob("../../examples/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, specs)
	plans, err := planSweeps("", "out", nil)
	require.NoError(t, err)
	for _, f := range specs {
		text := read(t, f)
		i := strings.Index(text, "--out ")
		require.GreaterOrEqual(t, i, 0, f)
		dst := filepath.Clean(strings.Fields(text[i+len("--out "):])[0])
		assert.NotEqual(t, "out", dst, f)
		for _, p := range plans {
			assert.False(t, dst == p.dir || strings.HasPrefix(p.dir, dst+"/") || strings.HasPrefix(dst, p.dir+"/"),
				"%s writes to %s, inside the default study's %s", f, dst, p.dir)
		}
	}
}

// TestDryRunRefusesAPointThatWouldHitALimit: a point whose knobs would exceed a simulator
// limit part way through its runs is refused by --dry-run, before any run, naming the point.
func TestDryRunRefusesAPointThatWouldHitALimit(t *testing.T) {
	spec := writeSpec(t, "base:\n  duration: 1h\naxes:\n  partition_rate: [0.01, 20]\nreplicates: 2\nseed: 1\n")
	code, _, errOut := runCLI("sweep", "--spec", spec, "--dry-run")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "sweep point 2 of 2 (partition_rate=20)")
	assert.Contains(t, errOut, "at most 65536")
}

// TestDefaultStudyWritesAnIndex: the default study (a shortened run of it) writes
// index.html beside its sweep folders, with each sweep's headline and figures embedded,
// self-contained; a --spec sweep, one folder, writes none. While it writes the index,
// every one of its folders is still locked: a sweep into one of them, or the study again,
// is refused, so the index shows the data the study wrote.
func TestDefaultStudyWritesAnIndex(t *testing.T) {
	out := filepath.Join(t.TempDir(), "study")
	spec := writeSpec(t, smallSpec)
	var during []string
	hook := func(d string) {
		if d != out {
			return // a sweep folder's figures
		}
		for _, args := range [][]string{
			{"sweep", "--spec", spec, "--out", filepath.Join(out, "nodes"), "-q", "--overwrite"},
			{"sweep", "--out", out, "-q", "--overwrite", "--set", "duration=5s"},
		} {
			code, _, stderr := runCLI(args...)
			during = append(during, fmt.Sprintf("%d: %s", code, stderr))
		}
	}
	var stdoutBuf, stderrBuf bytes.Buffer
	err := runSweepCtx(context.WithValue(context.Background(), drawHookKey{}, hook),
		[]string{"-q", "--out", out, "--set", "duration=5s"}, &stdoutBuf, &stderrBuf)
	require.NoError(t, err, stderrBuf.String())
	stdout := stdoutBuf.String()
	require.Len(t, during, 2, "the index was drawn once")
	assert.Contains(t, during[0], "2: redlock-sim: usage: output folder "+filepath.Join(out, "nodes")+" is in use by another sweep (PID ")
	assert.Contains(t, during[1], "2: redlock-sim: usage: output folder "+out+" is in use by another sweep (PID ")
	assert.NoFileExists(t, filepath.Join(out, sweep.LockFile))
	assert.Contains(t, stdout, "study index: "+filepath.Join(out, "index.html"))
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	require.NoError(t, err)
	for _, name := range []string{"<h2>ttl</h2>", "<h2>drift</h2>", "<h2>nodes</h2>", "<h2>jitter</h2>", "runs over", "data:image/png;base64,"} {
		assert.Contains(t, string(page), name)
	}
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, string(page))
}

// TestUntilCINarrowsAndMatchesThePlainSweep: --until-ci doubles the replicates until the
// widest interval is narrow enough, and what it leaves is byte for byte the plain sweep
// with the replicates it stopped at, for any number of workers.
func TestUntilCINarrowsAndMatchesThePlainSweep(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "small.yaml")
	write := func(replicates int) {
		require.NoError(t, os.WriteFile(spec, []byte(fmt.Sprintf(
			"base:\n  duration: 5s\n  clients: 2\naxes:\n  ttl: [100ms, 1s]\nreplicates: %d\nseed: 3\n", replicates)), 0o644))
	}
	write(2)
	code, stdout, stderr := cli("sweep", "-q", "--no-plots", "--spec", spec, "--until-ci", "0.3", "--workers", "1", "--out", filepath.Join(dir, "adaptive"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "sweep: 16 replicates: widest interval 0.194")
	w, err := sweep.WidestInterval(filepath.Join(dir, "adaptive"))
	require.NoError(t, err)
	assert.LessOrEqual(t, w.Width, 0.3)

	write(16)
	code, _, stderr = cli("sweep", "-q", "--no-plots", "--spec", spec, "--workers", "2", "--out", filepath.Join(dir, "plain"))
	require.Equal(t, 0, code, stderr)
	for _, f := range []string{sweep.RunsFile, sweep.SummaryFile} {
		a, err := os.ReadFile(filepath.Join(dir, "adaptive", f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dir, "plain", f))
		require.NoError(t, err)
		assert.Equal(t, string(b), string(a), f)
	}

	// The budget stops it, and bad input is a usage error.
	write(2)
	code, stdout, stderr = cli("sweep", "-q", "--no-plots", "--spec", spec, "--until-ci", "0.01", "--max-replicates", "4", "--out", filepath.Join(dir, "budget"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "sweep: 4 replicates: widest interval")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--until-ci", "2"}, "--until-ci 2: an interval's width, allowed (0, 1]"},
		{[]string{"--until-ci", "0.1", "--resume"}, "--until-ci cannot be combined with --resume or --shard"},
		{[]string{"--until-ci", "0.1", "--max-replicates", "0"}, "--max-replicates 0: allowed 1 to"},
	} {
		code, _, stderr = cli(append([]string{"sweep", "-q", "--spec", spec, "--out", filepath.Join(dir, "bad")}, tc.args...)...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
}

// TestResumeVerifyRerunsEveryKeptRun: --resume --verify on an intact folder says every
// kept run gave its row again; on a folder whose row was edited together with the
// manifest's SHA-256 (which plain --resume accepts) it exits 2 naming the line, the seed
// and the column; --verify without --resume is a usage error.
func TestResumeVerifyRerunsEveryKeptRun(t *testing.T) {
	spec, dir := writeSpec(t, smallSpec), filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots", "--verify")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--verify re-runs the runs that --resume keeps, to check them: add --resume")
	assert.NoDirExists(t, dir)

	require.Equal(t, 0, first(runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots")))
	code, stdout, stderr := runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots", "--resume", "--verify")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "sweep: verified the 12 kept runs: each re-run gives its row byte for byte")

	runs := filepath.Join(dir, "runs.csv")
	lines := strings.SplitAfter(read(t, runs), "\n")
	fields := strings.Split(lines[5], ",")
	seed := fields[2]
	fields[len(fields)-1] = "1" + fields[len(fields)-1] // events, the last column
	lines[5] = strings.Join(fields, ",")
	require.NoError(t, os.WriteFile(runs, []byte(strings.Join(lines, "")), 0o644))
	m, err := sweep.ReadManifest(dir)
	require.NoError(t, err)
	manifest := strings.Replace(read(t, filepath.Join(dir, "manifest.json")), m.RunsSHA256, sha256File(t, runs), 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644))

	code, _, stderr = runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots", "--resume")
	require.Equal(t, 0, code, "plain --resume trusts the SHA-256: %s", stderr)
	code, _, stderr = runCLI("sweep", "--spec", spec, "--out", dir, "-q", "--no-plots", "--resume", "--verify")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, runs+" line 6 (point 1, replicate 1, seed "+seed+") is not what its run gives: column events: recorded \"1")
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(read(t, path)))
	return hex.EncodeToString(sum[:])
}
