package sweep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// editField returns runs with field col of data row row (0-based, after the header)
// replaced by what edit makes of it.
func editField(t *testing.T, runs []byte, row, col int, edit func(string) string) []byte {
	t.Helper()
	lines := strings.SplitAfter(string(runs), "\n")
	fields := strings.Split(strings.TrimSuffix(lines[row+1], "\n"), ",")
	fields[col] = edit(fields[col])
	lines[row+1] = strings.Join(fields, ",") + "\n"
	return []byte(strings.Join(lines, ""))
}

// Columns of exampleSpec's runs.csv: point, replicate, seed, ttl, nodes, then the
// fakeRunner's validity_overlap, attempts, acquire_p99_ms, acquisitions_per_s, trace_hash.
const (
	colOverlap   = 5
	colAttempts  = 6
	colTraceHash = 9
)

func plusOne(s string) string { n, _ := strconv.Atoi(s); return strconv.Itoa(n + 1) }
func flipBool(s string) string {
	if s == "0" {
		return "1"
	}
	return "0"
}
func otherHash(string) string { return "0123456789abcdef" }

// TestResumeOfACompleteSweepChecksItsFiles: a truncated or edited runs.csv under a
// complete manifest is refused (the SHA-256 differs), and a missing or edited summary.csv
// is rewritten from runs.csv.
func TestResumeOfACompleteSweepChecksItsFiles(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	want := resultBytes(t, ref)
	runs := want[RunsFile]
	for name, damaged := range map[string][]byte{
		"truncated by 500 bytes": runs[:len(runs)-500],
		"attempts+1":             editField(t, runs, 4, colAttempts, plusOne),
		"a flipped bool":         editField(t, runs, 4, colOverlap, flipBool),
		"a changed trace_hash":   editField(t, runs, 4, colTraceHash, otherHash),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(ref)))
			require.NoError(t, os.WriteFile(filepath.Join(dir, RunsFile), damaged, 0o644))
			before := snapshot(t, dir)
			_, err := Run(context.Background(), &fakeRunner{}, s, Options{Dir: dir, Resume: true, Tool: "test"})
			require.Error(t, err)
			assert.True(t, IsUsage(err))
			assert.Contains(t, err.Error(), "but the manifest recorded "+sha256Hex(t, filepath.Join(ref, RunsFile)))
			assert.Contains(t, err.Error(), "the file changed after the sweep finished")
			assert.Equal(t, before, snapshot(t, dir), "nothing written")
		})
	}
	for name, summary := range map[string][]byte{"missing": nil, "edited": []byte("point\n0\n")} {
		t.Run("summary.csv "+name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(ref)))
			require.NoError(t, os.Remove(filepath.Join(dir, SummaryFile)))
			if summary != nil {
				require.NoError(t, os.WriteFile(filepath.Join(dir, SummaryFile), summary, 0o644))
			}
			r := &fakeRunner{}
			st := runSweep(t, r, s, Options{Dir: dir, Resume: true})
			assert.True(t, st.SummaryRewritten)
			assert.Zero(t, r.calls.Load(), "rewritten from runs.csv, nothing rerun")
			requireSameResults(t, ref, dir)
		})
	}
}

// partial returns a folder holding the first rows rows of the sweep in ref, as a kill -9
// leaves it: the incomplete manifest, runs.csv and runs.csv.sums cut after those rows.
func partial(t *testing.T, s *Spec, ref string, rows int, withSums bool) string {
	t.Helper()
	dir := t.TempDir()
	m := newManifest(s, mustLayout(t, s), Shard{}, "test", "")
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), m.encode(), 0o644))
	lines := bytes.SplitAfter(resultBytes(t, ref)[RunsFile], []byte("\n"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunsFile), bytes.Join(lines[:rows+1], nil), 0o644))
	if withSums {
		var sums []byte
		for _, l := range lines[1 : rows+1] {
			sums = append(sums, rowSum(l)...)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, SumsFile), sums, 0o644))
	}
	return dir
}

// TestResumeRederivesKeptRows edits one kept row of an incomplete folder in each way the
// issue lists and checks that resume refuses, naming the line, the column and both
// values, with or without the sums file (with it the sum catches the edit; without it the
// re-run does).
func TestResumeRederivesKeptRows(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	runs := resultBytes(t, ref)[RunsFile]
	orig := strings.Split(strings.SplitAfter(string(runs), "\n")[3], ",")
	for _, withSums := range []bool{true, false} {
		for _, tc := range []struct {
			name string
			col  int
			edit func(string) string
		}{
			{"attempts+1", colAttempts, plusOne},
			{"a flipped bool", colOverlap, flipBool},
			{"a changed trace_hash", colTraceHash, otherHash},
		} {
			t.Run(tc.name+map[bool]string{true: " with sums", false: " without sums"}[withSums], func(t *testing.T) {
				dir := partial(t, s, ref, 8, withSums)
				path := filepath.Join(dir, RunsFile)
				b, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, editField(t, b, 2, tc.col, tc.edit), 0o644))
				before := snapshot(t, dir)
				_, err = Run(context.Background(), &fakeRunner{}, s, Options{Dir: dir, Resume: true, Tool: "test"})
				require.Error(t, err)
				assert.True(t, IsUsage(err))
				header := strings.Split(strings.SplitN(string(runs), "\n", 2)[0], ",")
				want := strings.TrimSpace(orig[tc.col])
				assert.Contains(t, err.Error(), path+" line 4 (point 0, replicate 2) is not what its run gives: column "+
					header[tc.col]+": recorded \""+tc.edit(want)+"\", re-derived \""+want+"\"")
				assert.Equal(t, before, snapshot(t, dir), "nothing written")
			})
		}
	}
}

// TestResumeChecksSumsAndSamples: with every sum in place only a sample of kept rows is
// re-run (and the results are those of an uninterrupted sweep); a program that gives other
// rows for the same knobs and seeds is caught by that sample even though every sum matches.
func TestResumeChecksSumsAndSamples(t *testing.T) {
	s := mustSpec(t, engineSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})

	dir := partial(t, s, ref, 100, true)
	r := &fakeRunner{}
	st := runSweep(t, r, s, Options{Dir: dir, Workers: 2, Resume: true})
	assert.Equal(t, 100, st.Resumed)
	assert.Equal(t, 18, st.Rederived, "rows 0, 6, ..., 96 and the last, 99: a sample, not every row")
	assert.Equal(t, int64(st.Ran+st.Rederived), r.calls.Load())
	requireSameResults(t, ref, dir)
	assert.NoFileExists(t, filepath.Join(dir, SumsFile), "removed once the manifest records the SHA-256")

	dir = partial(t, s, ref, 100, true)
	_, err := Run(context.Background(), &fakeRunner{spin: 1}, s, Options{Dir: dir, Resume: true, Tool: "test"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not what its run gives")
}

// TestResumeAfterAKillBetweenRowAndSum: a row whose sum was not written yet (or is torn)
// is re-run to check it, and its sum is written, so the folder completes byte for byte.
func TestResumeAfterAKillBetweenRowAndSum(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	dir := partial(t, s, ref, 6, true)
	sums := filepath.Join(dir, SumsFile)
	b, err := os.ReadFile(sums)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(sums, b[:len(b)-rowSumLen-5], 0o644)) // row 6 has no sum, row 5 a torn one
	st := runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2, Resume: true})
	assert.Equal(t, 6, st.Resumed)
	assert.GreaterOrEqual(t, st.Rederived, 2)
	requireSameResults(t, ref, dir)
}
