package sweep

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// The same columns in engineSpec's runs.csv, which has drift_factor after nodes.
const (
	engOverlap   = colOverlap + 1
	engTraceHash = colTraceHash + 1
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

// TestResumeRederivesKeptRows edits one kept row of an incomplete folder in three ways (a
// count one higher, a flipped bool, another trace hash) and checks that resume refuses,
// naming the line, the column and both values, with or without the sums file (with it the
// sum catches the edit; without it the re-run does): a kept row is trusted only as far as
// it can be derived again.
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
				assert.Contains(t, err.Error(), path+fmt.Sprintf(" line 4 (point 0, replicate 2, seed %d) is not what its run gives: column ", RunSeed(11, 0, 2))+
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

// editRowAndSum edits field col of data row row (0-based) of dir's runs.csv and writes
// that row's line of runs.csv.sums to match, as someone editing both files would: the
// sums check then passes.
func editRowAndSum(t *testing.T, dir string, row, col int, edit func(string) string) {
	t.Helper()
	path := filepath.Join(dir, RunsFile)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b = editField(t, b, row, col, edit)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	sums, err := os.ReadFile(filepath.Join(dir, SumsFile))
	require.NoError(t, err)
	line := bytes.SplitAfter(b, []byte("\n"))[row+1]
	copy(sums[row*rowSumLen:], rowSum(line))
	require.NoError(t, os.WriteFile(filepath.Join(dir, SumsFile), sums, 0o644))
}

// TestResumeVerifyCatchesARowEditedWithItsSum: a kept row edited together with its line
// of runs.csv.sums passes the sums check. Plain resume re-runs a deterministic sample
// (rows 0, 6, …, 96 and the last of 100), so an edit of row 3 goes through and ends up
// in a folder marked complete; resume with Verify re-runs every kept row and refuses,
// naming the line, the seed and the column, with nothing written.
func TestResumeVerifyCatchesARowEditedWithItsSum(t *testing.T) {
	s := mustSpec(t, engineSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})

	dir := partial(t, s, ref, 100, true)
	editRowAndSum(t, dir, 3, engOverlap, flipBool)
	st := runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2, Resume: true})
	assert.Equal(t, 18, st.Rederived, "the sample, which leaves row 3 out")
	assert.NotEqual(t, string(resultBytes(t, ref)[RunsFile]), string(resultBytes(t, dir)[RunsFile]),
		"plain resume kept the edited row")

	dir = partial(t, s, ref, 100, true)
	editRowAndSum(t, dir, 3, engOverlap, flipBool)
	before := snapshot(t, dir)
	r := &fakeRunner{}
	_, err := Run(context.Background(), r, s, Options{Dir: dir, Workers: 3, Resume: true, Verify: true, Tool: "test"})
	require.Error(t, err)
	assert.True(t, IsUsage(err))
	orig := strings.Split(strings.SplitAfter(string(resultBytes(t, ref)[RunsFile]), "\n")[4], ",")[engOverlap]
	assert.Contains(t, err.Error(), fmt.Sprintf("%s line 5 (point 0, replicate 3, seed %d) is not what its run gives: column validity_overlap: recorded %q, re-derived %q",
		filepath.Join(dir, RunsFile), RunSeed(11, 0, 3), flipBool(orig), orig))
	assert.Equal(t, before, snapshot(t, dir), "nothing written")

	dir = partial(t, s, ref, 100, true)
	r = &fakeRunner{}
	st = runSweep(t, r, s, Options{Dir: dir, Workers: 3, Resume: true, Verify: true})
	assert.Equal(t, 100, st.Rederived, "every kept row")
	assert.Equal(t, int64(126), r.calls.Load(), "100 re-run, 26 run")
	requireSameResults(t, ref, dir)
}

// TestResumeVerifyNamesTheFirstBadRow: with rows edited at several places and several
// workers re-running them, the refusal names the first edited row, every time.
func TestResumeVerifyNamesTheFirstBadRow(t *testing.T) {
	s := mustSpec(t, engineSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	for range 3 {
		dir := partial(t, s, ref, 120, true)
		for _, row := range []int{90, 41, 77} {
			editRowAndSum(t, dir, row, engTraceHash, otherHash)
		}
		_, err := Run(context.Background(), &fakeRunner{jitter: time.Millisecond}, s,
			Options{Dir: dir, Workers: 4, Resume: true, Verify: true, Tool: "test"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), fmt.Sprintf("line 43 (point 5, replicate 6, seed %d)", RunSeed(11, 5, 6)))
	}
}

// TestResumeVerifyOfACompleteSweep: a complete folder whose row was edited together with
// the manifest's SHA-256 passes plain resume (the hash matches, nothing is re-run) but not
// resume with Verify, which re-runs every row.
func TestResumeVerifyOfACompleteSweep(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	dir := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2})
	st := runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2, Resume: true, Verify: true})
	assert.Equal(t, 12, st.Rederived)

	path := filepath.Join(dir, RunsFile)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b = editField(t, b, 7, colAttempts, plusOne)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	m, err := ReadManifest(dir)
	require.NoError(t, err)
	m.RunsSHA256 = sha256Hex(t, path)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), m.encode(), 0o644))

	st = runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2, Resume: true})
	assert.Zero(t, st.Rederived, "plain resume trusts the SHA-256")
	before := snapshot(t, dir)
	_, err = Run(context.Background(), &fakeRunner{}, s, Options{Dir: dir, Workers: 2, Resume: true, Verify: true, Tool: "test"})
	require.Error(t, err)
	assert.True(t, IsUsage(err))
	assert.Contains(t, err.Error(), fmt.Sprintf("line 9 (point 2, replicate 1, seed %d) is not what its run gives: column attempts", RunSeed(11, 2, 1)))
	assert.Equal(t, before, snapshot(t, dir), "nothing written")
}

func TestVerifyNeedsResume(t *testing.T) {
	_, err := Run(context.Background(), &fakeRunner{}, mustSpec(t, exampleSpec), Options{Dir: t.TempDir(), Verify: true})
	require.Error(t, err)
	assert.True(t, IsUsage(err))
	assert.Contains(t, err.Error(), "verify re-runs the rows a resume keeps: use it with resume")
}

// TestVerifyFolder: the checks a reader (plot) makes before it draws: a complete folder's
// runs.csv against its manifest's SHA-256, and every row of any folder parsed and checked,
// with the line and the column at fault.
func TestVerifyFolder(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	m, rows, err := VerifyFolder(ref)
	require.NoError(t, err)
	assert.True(t, m.Complete)
	assert.Equal(t, 12, rows)

	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(ref)))
	path := filepath.Join(dir, RunsFile)
	require.NoError(t, os.WriteFile(path, editField(t, resultBytes(t, ref)[RunsFile], 4, colAttempts, plusOne), 0o644))
	_, _, err = VerifyFolder(dir)
	require.Error(t, err)
	assert.True(t, IsUsage(err))
	assert.Contains(t, err.Error(), path+" has SHA-256 "+sha256Hex(t, path)+" but "+filepath.Join(dir, ManifestFile)+
		" recorded "+sha256Hex(t, filepath.Join(ref, RunsFile))+" (12 rows, the sweep has 12): the file changed after the sweep finished")

	runs := resultBytes(t, ref)[RunsFile]
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		says   string
	}{
		{"a NUL byte in a text column", func(b []byte) []byte {
			return editField(t, b, 2, colTraceHash, func(s string) string { return s[:4] + "\x00" + s[5:] })
		}, `line 4: trace_hash = "`},
		{"a NUL byte in a number", func(b []byte) []byte {
			return editField(t, b, 2, colAttempts, func(s string) string { return s + "\x00" })
		}, `line 4: attempts = "`},
		{"a column too few", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			lines[3] = lines[3][bytes.IndexByte(lines[3], ',')+1:]
			return bytes.Join(lines, nil)
		}, "line 4: 9 fields, want 10"},
		{"an unparsable number", func(b []byte) []byte {
			return editField(t, b, 5, colAttempts, func(string) string { return "1e3" })
		}, `line 7: attempts = "1e3": want a non-negative integer`},
		{"a bare quote", func(b []byte) []byte {
			return editField(t, b, 0, 8, func(s string) string { return `4"2` })
		}, `line 2: column acquisitions_per_s (field 9): bare " in non-quoted-field`},
		{"a row out of place", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			lines[2], lines[3] = lines[3], lines[2]
			return bytes.Join(lines, nil)
		}, `line 3: replicate = "2", want "1" for run 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Incomplete: no SHA-256 to compare, so the rows' own check finds it.
			dir := partial(t, s, ref, 9, false)
			path := filepath.Join(dir, RunsFile)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, tc.damage(b), 0o644))
			_, _, err = VerifyFolder(dir)
			require.Error(t, err)
			assert.True(t, IsUsage(err))
			assert.Contains(t, err.Error(), path+" "+tc.says)
			if strings.Contains(tc.name, "NUL") {
				assert.Contains(t, err.Error(), `\x00`)
			}
		})
	}
	t.Run("an incomplete folder with a torn last line", func(t *testing.T) {
		dir := partial(t, s, ref, 9, false)
		f, err := os.OpenFile(filepath.Join(dir, RunsFile), os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.Write(bytes.SplitAfter(runs, []byte("\n"))[10][:7])
		require.NoError(t, err)
		require.NoError(t, f.Close())
		m, rows, err := VerifyFolder(dir)
		require.NoError(t, err)
		assert.False(t, m.Complete)
		assert.Equal(t, 9, rows)
	})
	t.Run("no manifest", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, RunsFile), runs, 0o644))
		_, _, err := VerifyFolder(dir)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.True(t, IsUsage(err))
		assert.Contains(t, err.Error(), "sweep folder "+dir+" has no manifest.json")
	})
}
