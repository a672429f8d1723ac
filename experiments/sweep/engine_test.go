package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExampleSweepFiles(t *testing.T) {
	dir := t.TempDir()
	st := runSweep(t, &fakeRunner{}, mustSpec(t, exampleSpec), Options{Dir: dir, Workers: 2, Tool: "redlock-sim v0.1", Commit: "abc123"})
	assert.Equal(t, Stats{Runs: 12, Ran: 12}, st)

	runs := readCSV(t, filepath.Join(dir, RunsFile))
	require.Len(t, runs, 13)
	assert.Equal(t, []string{"point", "replicate", "seed", "ttl", "nodes",
		"validity_overlap", "attempts", "acquire_p99_ms", "acquisitions_per_s", "trace_hash"}, runs[0])
	for k, row := range runs[1:] {
		p, r := k/3, k%3
		assert.Equal(t, fmt.Sprint(p), row[0])
		assert.Equal(t, fmt.Sprint(r), row[1])
		assert.Equal(t, fmt.Sprint(RunSeed(11, p, r)), row[2])
		assert.Equal(t, []string{"200ms", "200ms", "1s", "1s"}[p], row[3])
		assert.Equal(t, []string{"3", "5", "3", "5"}[p], row[4])
	}

	sum := readCSV(t, filepath.Join(dir, SummaryFile))
	require.Len(t, sum, 5)
	assert.Equal(t, []string{"point", "ttl", "nodes", "runs",
		"validity_overlap_frac", "validity_overlap_lo", "validity_overlap_hi",
		"attempts_mean",
		"acquire_p99_ms_median", "acquire_p99_ms_p10", "acquire_p99_ms_p90", "acquire_p99_ms_n",
		"acquisitions_per_s_mean", "acquisitions_per_s_n"}, sum[0])
	assert.Equal(t, []string{"0", "200ms", "3", "3"}, sum[1][:4])

	m, err := ReadManifest(dir)
	require.NoError(t, err)
	assert.True(t, m.Complete)
	assert.Equal(t, "redlock-sim v0.1", m.Tool)
	assert.Equal(t, "abc123", m.Commit)
	assert.Equal(t, "1/1", m.Shard)
	assert.Equal(t, uint64(11), m.Seed)
	assert.Equal(t, [4]int{4, 3, 12, 12}, [4]int{m.Points, m.Replicates, m.Runs, m.ShardRuns})
	assert.Equal(t, *mustSpec(t, exampleSpec), m.Spec)
	assert.Equal(t, (&fakeRunner{}).Columns(), m.Columns)
	assert.Equal(t, sha256Hex(t, filepath.Join(dir, RunsFile)), m.RunsSHA256)
	assert.NoFileExists(t, filepath.Join(dir, SummaryFile+".tmp"))
	assert.NoFileExists(t, filepath.Join(dir, ManifestFile+".tmp"))
}

// TestSummaryMatchesRuns recomputes summary.csv from runs.csv independently of the
// summarizer, point by point.
func TestSummaryMatchesRuns(t *testing.T) {
	dir := t.TempDir()
	runSweep(t, &fakeRunner{}, mustSpec(t, engineSpec), Options{Dir: dir, Workers: 3})
	runs := readCSV(t, filepath.Join(dir, RunsFile))[1:]
	sum := readCSV(t, filepath.Join(dir, SummaryFile))
	head := sum[0]
	col := func(row []string, name string) string {
		for i, h := range head {
			if h == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	require.Len(t, sum, 1+18)
	for p, row := range sum[1:] {
		reps := runs[p*7 : p*7+7]
		ones, attempts := 0, 0
		var p99s []float64
		for _, r := range reps {
			ones += int(r[6][0] - '0')
			attempts += atoi(t, r[7])
			if r[8] != "" {
				p99s = append(p99s, atof(t, r[8]))
			}
		}
		lo, hi := Wilson(ones, 7)
		assert.Equal(t, fmt.Sprint(p), row[0])
		assert.Equal(t, "7", col(row, "runs"))
		assert.Equal(t, FormatStat(float64(ones)/7), col(row, "validity_overlap_frac"))
		assert.Equal(t, FormatStat(lo), col(row, "validity_overlap_lo"))
		assert.Equal(t, FormatStat(hi), col(row, "validity_overlap_hi"))
		assert.Equal(t, FormatStat(float64(attempts)/7), col(row, "attempts_mean"))
		assert.Equal(t, fmt.Sprint(len(p99s)), col(row, "acquire_p99_ms_n"))
		if len(p99s) > 0 {
			sortFloats(p99s)
			assert.Equal(t, FormatStat(Quantile(p99s, 0.5)), col(row, "acquire_p99_ms_median"))
			assert.LessOrEqual(t, atof(t, col(row, "acquire_p99_ms_p10")), atof(t, col(row, "acquire_p99_ms_median")))
		}
	}
}

func TestWorkersGiveIdenticalFiles(t *testing.T) {
	s := mustSpec(t, engineSpec)
	one, four := t.TempDir(), t.TempDir()
	runSweep(t, &fakeRunner{jitter: time.Millisecond}, s, Options{Dir: one, Workers: 1})
	runSweep(t, &fakeRunner{jitter: time.Millisecond}, s, Options{Dir: four, Workers: 4})
	requireSameResults(t, one, four)
	// The manifest records no worker count or time, so it matches too; and there is
	// something to compare: 126 rows.
	assert.Len(t, readCSV(t, filepath.Join(one, RunsFile)), 127)
}

func TestSeedsDependOnlyOnSweepSeedPointAndReplicate(t *testing.T) {
	// Pinned values: a change of the seed function would change every published result.
	// The first output of Vigna's reference splitmix64.c seeded with 0.
	assert.Equal(t, uint64(0xe220a8397b1dcdaf), splitmix64(0))
	assert.Equal(t, RunSeed(11, 2, 1), RunSeed(11, 2, 1))
	pinned := RunSeed(11, 0, 0)
	assert.Equal(t, splitmix64(splitmix64(splitmix64(11))), pinned)

	seen := map[uint64]bool{}
	for p := range 1000 {
		for r := range 20 {
			s := RunSeed(11, p, r)
			require.False(t, seen[s], "seed collision at point %d replicate %d", p, r)
			seen[s] = true
		}
	}
	assert.NotEqual(t, RunSeed(11, 0, 1), RunSeed(12, 0, 1))

	// More replicates keep the seeds of the first ones; workers change nothing.
	small := mustSpec(t, exampleSpec)
	big := mustSpec(t, strings.Replace(exampleSpec, "replicates: 3", "replicates: 5", 1))
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	runSweep(t, &fakeRunner{}, small, Options{Dir: a, Workers: 1})
	runSweep(t, &fakeRunner{}, small, Options{Dir: b, Workers: 7})
	runSweep(t, &fakeRunner{}, big, Options{Dir: c, Workers: 3})
	seeds := func(dir string, reps int) map[[2]string]string {
		out := map[[2]string]string{}
		for _, row := range readCSV(t, filepath.Join(dir, RunsFile))[1:] {
			if atoi(t, row[1]) < reps {
				out[[2]string{row[0], row[1]}] = row[2] + " " + row[len(row)-1]
			}
		}
		return out
	}
	assert.Equal(t, seeds(a, 3), seeds(b, 3))
	assert.Equal(t, seeds(a, 3), seeds(c, 3))
}

func TestShardsMergeToTheUnshardedSweep(t *testing.T) {
	s := mustSpec(t, engineSpec)
	whole := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: whole, Workers: 2, Tool: "t", Commit: "c"})
	root := t.TempDir()
	var dirs []string
	for i := 3; i >= 1; i-- { // any order
		dir := filepath.Join(root, fmt.Sprintf("shard%d", i))
		st := runSweep(t, &fakeRunner{jitter: 500 * time.Microsecond}, s,
			Options{Dir: dir, Workers: 4, Shard: Shard{i, 3}, Tool: "t", Commit: "c"})
		assert.Equal(t, Shard{i, 3}.size(126), st.Runs)
		assert.NoFileExists(t, filepath.Join(dir, SummaryFile), "a shard's points are partial")
		dirs = append(dirs, dir)
	}
	out := filepath.Join(root, "merged")
	require.NoError(t, Merge(out, dirs, MergeOptions{}))
	requireSameResults(t, whole, out)
}

func TestShardSizesCoverEveryRunOnce(t *testing.T) {
	for _, total := range []int{0, 1, 2, 7, 126} {
		for n := 1; n <= 9; n++ {
			seen := make([]int, total)
			sum := 0
			for i := 1; i <= n; i++ {
				sh := Shard{i, n}
				sum += sh.size(total)
				for j := range sh.size(total) {
					seen[sh.run(j)]++
				}
			}
			assert.Equal(t, total, sum)
			for k, c := range seen {
				assert.Equal(t, 1, c, "run %d of %d with %d shards", k, total, n)
			}
		}
	}
}

func TestMergeRefusesBadShards(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	root := t.TempDir()
	shard := func(name string, sh Shard, spec *Spec) string {
		dir := filepath.Join(root, name)
		runSweep(t, &fakeRunner{}, spec, Options{Dir: dir, Workers: 2, Shard: sh})
		return dir
	}
	a, b, c := shard("a", Shard{1, 3}, s), shard("b", Shard{2, 3}, s), shard("c", Shard{3, 3}, s)
	other := shard("other", Shard{3, 3}, mustSpec(t, strings.Replace(exampleSpec, "seed: 11", "seed: 12", 1)))
	two := shard("two", Shard{2, 2}, s)
	incomplete := interrupted(t, s, Shard{3, 3})
	tampered := filepath.Join(root, "tampered")
	require.NoError(t, os.CopyFS(tampered, os.DirFS(c)))
	runs := filepath.Join(tampered, RunsFile)
	b0, _ := os.ReadFile(runs)
	require.NoError(t, os.WriteFile(runs, bytes.Replace(b0, []byte(",3,"), []byte(",5,"), 1), 0o644))
	short := filepath.Join(root, "short")
	require.NoError(t, os.CopyFS(short, os.DirFS(c)))
	lines := bytes.SplitAfter(b0, []byte("\n"))
	require.NoError(t, os.WriteFile(filepath.Join(short, RunsFile), bytes.Join(lines[:len(lines)-2], nil), 0o644))

	for _, tc := range []struct {
		name string
		dirs []string
		says string
	}{
		{"missing shard", []string{a, c}, "missing shard 2/3"},
		{"repeated shard", []string{a, b, c, c}, "shard 3/3 given twice"},
		{"different spec", []string{a, b, other}, "seed: 11 in " + a + ", 12 in " + other},
		{"different counts", []string{a, two}, "different shard counts"},
		{"incomplete", []string{a, b, incomplete}, "shard 3/3 is incomplete; resume it first"},
		{"tampered rows", []string{a, b, tampered}, "want \"3\""},
		{"short file", []string{a, b, short}, "the file ends early"},
		{"not a sweep", []string{a, b, t.TempDir()}, "not a sweep folder"},
		{"nothing", nil, "no shard folders"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			err := Merge(out, tc.dirs, MergeOptions{})
			require.Error(t, err)
			assert.True(t, IsUsage(err), "%v", err)
			assert.Contains(t, err.Error(), tc.says)
			assert.Empty(t, resultFiles(out), "nothing written")
			assert.NoDirExists(t, out, "no folder, no temporary files left")
		})
	}

	t.Run("hash mismatch", func(t *testing.T) {
		// Same rows, a manifest that recorded other bytes: the shard changed after it
		// finished.
		dir := filepath.Join(root, "rehashed")
		require.NoError(t, os.CopyFS(dir, os.DirFS(c)))
		m, err := ReadManifest(dir)
		require.NoError(t, err)
		m.RunsSHA256 = strings.Repeat("0", 64)
		require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), m.encode(), 0o644))
		out := filepath.Join(t.TempDir(), "out")
		err = Merge(out, []string{a, b, dir}, MergeOptions{})
		assert.ErrorContains(t, err, "its manifest recorded 0000")
		assert.Empty(t, resultFiles(out))
	})

	t.Run("output is an input", func(t *testing.T) {
		before := snapshot(t, a)
		err := Merge(a, []string{a, b, c}, MergeOptions{Overwrite: true})
		assert.ErrorContains(t, err, "is also an input")
		assert.Equal(t, before, snapshot(t, a))
	})

	t.Run("output holds results", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		require.NoError(t, Merge(out, []string{a, b, c}, MergeOptions{}))
		before := snapshot(t, out)
		err := Merge(out, []string{a, b, c}, MergeOptions{})
		assert.ErrorContains(t, err, "already holds results")
		assert.Equal(t, before, snapshot(t, out))
		require.NoError(t, Merge(out, []string{c, a, b}, MergeOptions{Overwrite: true}))
		assert.Equal(t, before, snapshot(t, out))
	})
}

// TestResumeAfterCancelIsIdentical interrupts a sweep after k rows (a cancelled context),
// optionally tears the last row as a kill -9 in the middle of a write would, resumes, and
// compares every file with an uninterrupted sweep.
func TestResumeAfterCancelIsIdentical(t *testing.T) {
	s := mustSpec(t, engineSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	refRuns := resultBytes(t, ref)[RunsFile]
	// At most window (64) + workers (4) runs start before the cancellation is seen, so
	// k ≤ 126 - 68 leaves the sweep unfinished for sure; TestResumeFromAnyPrefix covers
	// the ends.
	for _, k := range []int{1, 2, 17, 40, 58} {
		for _, torn := range []bool{false, true} {
			t.Run(fmt.Sprintf("k=%d torn=%v", k, torn), func(t *testing.T) {
				dir := t.TempDir()
				ctx, cancel := context.WithCancel(context.Background())
				p := &countingProgress{cancelAt: k, cancel: cancel}
				st, err := Run(ctx, &fakeRunner{jitter: 200 * time.Microsecond}, s,
					Options{Dir: dir, Workers: 4, Tool: "test", Progress: p})
				require.ErrorIs(t, err, context.Canceled)
				assert.Contains(t, err.Error(), "resume to finish")
				assert.GreaterOrEqual(t, st.Ran, k)
				m, err := ReadManifest(dir)
				require.NoError(t, err)
				assert.False(t, m.Complete)
				assert.NoFileExists(t, filepath.Join(dir, SummaryFile))
				runs := resultBytes(t, dir)[RunsFile]
				require.True(t, bytes.HasPrefix(refRuns, runs), "an interrupted runs.csv is a prefix")
				if torn && len(runs) < len(refRuns) {
					next := refRuns[len(runs):]
					cut := bytes.IndexByte(next, '\n') / 2
					require.NoError(t, os.WriteFile(filepath.Join(dir, RunsFile), append(runs, next[:cut]...), 0o644))
				}
				p2 := &countingProgress{}
				st2 := runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 3, Resume: true, Progress: p2})
				assert.Equal(t, st.Ran, st2.Resumed)
				assert.Equal(t, 126, st2.Resumed+st2.Ran)
				assert.Equal(t, [2]int{126, st.Ran}, p2.begin)
				assert.Equal(t, 126, p2.last)
				requireSameResults(t, ref, dir)
			})
		}
	}
}

// TestResumeFromAnyPrefix builds the folder a kill -9 can leave at any moment (the
// incomplete manifest, runs.csv cut anywhere, even inside a row or the header) and checks
// that resume completes it byte for byte.
func TestResumeFromAnyPrefix(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	runs := resultBytes(t, ref)[RunsFile]
	m := newManifest(s, mustLayout(t, s), Shard{}, "test", "")
	cuts := []int{0}
	for i, b := range runs {
		if b == '\n' {
			cuts = append(cuts, i+1, i+1+7) // after each row, and 7 bytes into the next
		}
	}
	for _, cut := range cuts {
		cut = min(cut, len(runs))
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), m.encode(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, RunsFile), runs[:cut], 0o644))
		r := &fakeRunner{}
		st := runSweep(t, r, s, Options{Dir: dir, Workers: 3, Resume: true})
		assert.Equal(t, int64(st.Ran+st.Rederived), r.calls.Load(), "cut at %d: only missing runs run, and kept rows are re-derived", cut)
		assert.Equal(t, st.Resumed, st.Rederived, "cut at %d: without runs.csv.sums every kept row is re-run", cut)
		requireSameResults(t, ref, dir)
	}
}

func TestResumeFromTornHeaderAndEmptyFile(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	header := resultBytes(t, ref)[RunsFile][:20]
	for name, content := range map[string][]byte{"no runs.csv": nil, "empty": {}, "torn header": header} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			m := newManifest(s, mustLayout(t, s), Shard{}, "test", "")
			require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), m.encode(), 0o644))
			if content != nil {
				require.NoError(t, os.WriteFile(filepath.Join(dir, RunsFile), content, 0o644))
			}
			runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Workers: 2, Resume: true})
			requireSameResults(t, ref, dir)
		})
	}
}

func TestResumeOfACompleteSweepDoesNothing(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	dir := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: dir})
	before := snapshot(t, dir)
	r := &fakeRunner{}
	st := runSweep(t, r, s, Options{Dir: dir, Resume: true})
	assert.Equal(t, Stats{Runs: 12, Resumed: 12}, st)
	assert.Zero(t, r.calls.Load())
	assert.Equal(t, before, snapshot(t, dir))
}

func TestResumeIntoAnEmptyFolderStarts(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	ref, dir := t.TempDir(), filepath.Join(t.TempDir(), "new")
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref})
	runSweep(t, &fakeRunner{}, s, Options{Dir: dir, Resume: true})
	requireSameResults(t, ref, dir)
}

// interrupted returns a folder holding the first 3 rows of shard sh of spec s: later runs wait for
// the cancellation and then fail with it, as a world that watches ctx would.
func interrupted(t *testing.T, s *Spec, sh Shard) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	first := map[uint64]bool{}
	for j := range 3 {
		k := sh.run(j)
		first[RunSeed(s.Seed, k/s.Replicates, k%s.Replicates)] = true
	}
	r := &fakeRunner{fail: func(_ []KV, seed uint64) error {
		if first[seed] {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}}
	st, err := Run(ctx, r, s, Options{Dir: dir, Workers: 2, Shard: sh, Tool: "test",
		Progress: &countingProgress{cancelAt: 3, cancel: cancel}})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 3, st.Ran)
	return dir
}

func TestResumeRefusesAnotherSweep(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	for _, tc := range []struct {
		name string
		spec string
		opt  Options
		says string
	}{
		{"seed", strings.Replace(exampleSpec, "seed: 11", "seed: 12", 1), Options{}, "seed: 11 recorded, 12 now"},
		{"axis values", strings.Replace(exampleSpec, "[200ms, 1s]", "[200ms, 2s]", 1), Options{}, "axes: {ttl=[200ms 1s] nodes=[3 5]} recorded, {ttl=[200ms 2s] nodes=[3 5]} now"},
		{"base", strings.Replace(exampleSpec, "duration: 20s", "duration: 30s", 1), Options{}, "base: {scenario=baseline duration=20s} recorded"},
		{"replicates", strings.Replace(exampleSpec, "replicates: 3", "replicates: 4", 1), Options{}, "replicates: 3 recorded, 4 now"},
		{"shard", exampleSpec, Options{Shard: Shard{1, 2}}, "shard: 1/1 recorded, 1/2 now"},
		{"tool", exampleSpec, Options{Tool: "v2"}, `tool: "test" recorded, "v2" now`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := interrupted(t, s, Shard{})
			before := snapshot(t, dir)
			opt := tc.opt
			opt.Dir, opt.Resume = dir, true
			if opt.Tool == "" {
				opt.Tool = "test"
			}
			r := &fakeRunner{}
			_, err := Run(context.Background(), r, mustSpec(t, tc.spec), opt)
			require.Error(t, err)
			assert.True(t, IsUsage(err))
			assert.Contains(t, err.Error(), "resume refused")
			assert.Contains(t, err.Error(), tc.says)
			assert.Zero(t, r.calls.Load())
			assert.Equal(t, before, snapshot(t, dir), "nothing changed")
		})
	}
}

func TestResumeRefusesDamagedRuns(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		says   string
	}{
		{"changed seed", func(b []byte) []byte {
			return bytes.Replace(b, []byte(fmt.Sprint(RunSeed(11, 0, 1))), []byte("7"), 1)
		}, `seed = "7"`},
		{"changed header", func(b []byte) []byte { return bytes.Replace(b, []byte("nodes"), []byte("n0des"), 1) }, "header"},
		{"bad value", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			f := bytes.Split(lines[1], []byte(","))
			f[5] = []byte("2")
			lines[1] = bytes.Join(f, []byte(","))
			return bytes.Join(lines, nil)
		}, "validity_overlap = \"2\": want 0 or 1"},
		{"extra rows", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			return append(b, bytes.Repeat(lines[1], 20)...)
		}, "line 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := interrupted(t, s, Shard{})
			path := filepath.Join(dir, RunsFile)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, tc.damage(b), 0o644))
			before := snapshot(t, dir)
			_, err = Run(context.Background(), &fakeRunner{}, s, Options{Dir: dir, Resume: true, Tool: "test"})
			require.Error(t, err)
			assert.True(t, IsUsage(err))
			assert.Contains(t, err.Error(), "resume refused")
			assert.Contains(t, err.Error(), tc.says)
			assert.Equal(t, before, snapshot(t, dir), "nothing changed")
		})
	}
}

func TestFreshSweepRefusesAFolderWithResults(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	dir := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: dir})
	before := snapshot(t, dir)
	other := mustSpec(t, strings.Replace(exampleSpec, "seed: 11", "seed: 5", 1))
	_, err := Run(context.Background(), &fakeRunner{}, other, Options{Dir: dir, Tool: "test"})
	require.Error(t, err)
	assert.True(t, IsUsage(err))
	assert.Contains(t, err.Error(), "already holds a complete sweep (12 runs); to go on: --resume to keep it (it checks the files and reruns nothing), --out DIR to write this sweep elsewhere, or --overwrite to replace it")
	assert.Equal(t, before, snapshot(t, dir))

	// A stray runs.csv alone is enough to refuse, and resume refuses it too.
	stray := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(stray, RunsFile), []byte("mine\n"), 0o644))
	_, err = Run(context.Background(), &fakeRunner{}, s, Options{Dir: stray, Tool: "test"})
	assert.ErrorContains(t, err, "already holds sweep files (runs.csv) but no readable manifest.json")
	_, err = Run(context.Background(), &fakeRunner{}, s, Options{Dir: stray, Tool: "test", Resume: true})
	assert.ErrorContains(t, err, "no manifest.json")

	// Overwrite replaces it, giving the same files as a sweep into a new folder.
	runSweep(t, &fakeRunner{}, other, Options{Dir: dir, Overwrite: true})
	fresh := t.TempDir()
	runSweep(t, &fakeRunner{}, other, Options{Dir: fresh})
	requireSameResults(t, fresh, dir)
}

func TestUnwritableFolderIsAUsageErrorAndWritesNothing(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		r := &fakeRunner{}
		_, err := Run(context.Background(), r, s, Options{Dir: dir, Tool: "test"})
		require.Error(t, err)
		assert.True(t, IsUsage(err), "%v", err)
		assert.Contains(t, err.Error(), "output folder "+dir)
		assert.Zero(t, r.calls.Load())
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))

	if os.Geteuid() != 0 { // root writes anywhere
		ro := t.TempDir()
		require.NoError(t, os.Chmod(ro, 0o500))
		defer os.Chmod(ro, 0o700)
		_, err := Run(context.Background(), &fakeRunner{}, s, Options{Dir: ro, Tool: "test"})
		assert.True(t, IsUsage(err), "%v", err)
		assert.ErrorContains(t, err, "cannot write")
	}
}

func TestBadOptionsAreUsageErrors(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	for _, tc := range []struct {
		opt  Options
		says string
	}{
		{Options{Dir: t.TempDir(), Workers: -1}, "workers = -1: out of range"},
		{Options{Dir: t.TempDir(), Workers: MaxWorkers + 1}, "workers = 1025: out of range"},
		{Options{Dir: t.TempDir(), Shard: Shard{3, 2}}, "shard = 3/2: out of range"},
		{Options{}, "no output folder"},
		{Options{Dir: t.TempDir(), Resume: true, Overwrite: true}, "resume and overwrite exclude each other"},
	} {
		dir := tc.opt.Dir
		_, err := Run(context.Background(), &fakeRunner{}, s, tc.opt)
		require.Error(t, err)
		assert.True(t, IsUsage(err))
		assert.Contains(t, err.Error(), tc.says)
		if dir != "" {
			assert.Empty(t, snapshot(t, dir))
		}
	}
}

func TestRunErrorStopsTheSweepResumably(t *testing.T) {
	s := mustSpec(t, engineSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	bad := RunSeed(11, 9, 4) // run 67
	var broken atomic.Bool
	broken.Store(true)
	r := &fakeRunner{jitter: 100 * time.Microsecond, fail: func(_ []KV, seed uint64) error {
		if seed == bad && broken.Load() {
			return errors.New("world exploded")
		}
		return nil
	}}
	dir := t.TempDir()
	st, err := Run(context.Background(), r, s, Options{Dir: dir, Workers: 4, Tool: "test"})
	require.Error(t, err)
	assert.False(t, IsUsage(err))
	assert.Contains(t, err.Error(), fmt.Sprintf("run 67 (point 9, replicate 4, seed %d): world exploded", bad))
	assert.Equal(t, 67, st.Ran, "every run before the failure is written, none after")
	assert.LessOrEqual(t, r.calls.Load(), int64(67+windowSize(4)), "the window bounds the runs started")
	broken.Store(false)
	runSweep(t, r, s, Options{Dir: dir, Workers: 4, Resume: true})
	requireSameResults(t, ref, dir)
}

// TestARunThatPanicsStopsTheSweepResumably: a world that panics (a model bug) is that
// run's error, with its point, seed and the panic's stack, like any other failed run: the
// runs before it are written and a resume finishes the sweep, where the panic used to take
// the process down with the rows unflushed.
func TestARunThatPanicsStopsTheSweepResumably(t *testing.T) {
	s := mustSpec(t, engineSpec)
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Workers: 2})
	bad := RunSeed(11, 9, 4) // run 67
	var broken atomic.Bool
	broken.Store(true)
	r := &fakeRunner{fail: func(_ []KV, seed uint64) error {
		if seed == bad && broken.Load() {
			var servers []int
			_ = servers[seed%7] // index out of range, as a model's bug would
		}
		return nil
	}}
	dir := t.TempDir()
	st, err := Run(context.Background(), r, s, Options{Dir: dir, Workers: 4, Tool: "test"})
	require.Error(t, err)
	assert.False(t, IsUsage(err), "a bug, not the user's input")
	assert.Contains(t, err.Error(), fmt.Sprintf("run 67 (point 9, replicate 4, seed %d): panicked (a bug in redlock-sim", bad))
	assert.Contains(t, err.Error(), "index out of range")
	assert.Contains(t, err.Error(), "engine_test.go", "where it panicked")
	assert.Equal(t, 67, st.Ran, "every run before the panic is written")
	broken.Store(false)
	runSweep(t, r, s, Options{Dir: dir, Workers: 4, Resume: true})
	requireSameResults(t, ref, dir)
}

// badRunner returns values that do not fit its columns.
type badRunner struct {
	fakeRunner
	vals []Value
	cols []Column
}

func (b *badRunner) Columns() []Column {
	if b.cols != nil {
		return b.cols
	}
	return b.fakeRunner.Columns()
}

func (b *badRunner) Run(context.Context, []KV, uint64) ([]Value, error) { return b.vals, nil }

func TestRunnerValuesAreChecked(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	ok := []Value{BoolValue(true), IntValue(3), FloatValue(1.5), FloatValue(2), StringValue("ab")}
	with := func(i int, v Value) []Value {
		c := append([]Value(nil), ok...)
		c[i] = v
		return c
	}
	for _, tc := range []struct {
		vals []Value
		says string
	}{
		{ok[:4], "runner returned 4 values for 5 columns"},
		{with(0, IntValue(2)), "column validity_overlap (bool): want 0 or 1 (BoolValue), got integer 2"},
		{with(1, IntValue(-1)), "column attempts (count): want a non-negative integer"},
		{with(1, FloatValue(1)), "column attempts (count): want a non-negative integer (IntValue), got float 1"},
		{with(1, Value{}), "column attempts (count): want a non-negative integer (IntValue), got a missing value"},
		{with(2, FloatValue(nanValue())), "column acquire_p99_ms (millis): want a finite number, got NaN"},
		{with(3, StringValue("x")), "column acquisitions_per_s (float): want a number"},
		{with(4, StringValue("a\nb")), "contains a line break"},
		{with(4, StringValue("a\x00b")), "contains a NUL byte"},
		{with(4, IntValue(1)), "want text"},
	} {
		_, err := Run(context.Background(), &badRunner{vals: tc.vals}, s, Options{Dir: t.TempDir(), Tool: "test"})
		assert.ErrorContains(t, err, tc.says)
	}
	for _, tc := range []struct {
		cols []Column
		says string
	}{
		{[]Column{}, "no columns"},
		{[]Column{{"Bad Name", KindBool}}, `name "Bad Name"`},
		{[]Column{{"x", 0}}, "invalid kind"},
		{[]Column{{"x", KindBool}, {"x", KindCount}}, "column x appears twice"},
		{[]Column{{"ttl", KindCount}}, "column ttl appears twice"},
		{[]Column{{"point", KindCount}}, "column point appears twice"},
	} {
		dir := t.TempDir()
		_, err := Run(context.Background(), &badRunner{cols: tc.cols}, s, Options{Dir: dir, Tool: "test"})
		assert.ErrorContains(t, err, tc.says)
		assert.Empty(t, snapshot(t, dir))
	}
}

// gateRunner blocks the run with seed held until released, and counts the others.
type gateRunner struct {
	fakeRunner
	held    uint64
	release chan struct{}
	others  atomic.Int64
}

func (g *gateRunner) Run(ctx context.Context, knobs []KV, seed uint64) ([]Value, error) {
	if seed == g.held {
		<-g.release
	} else {
		g.others.Add(1)
	}
	return g.fakeRunner.Run(ctx, knobs, seed)
}

// TestReorderWindowBoundsRunsInFlight holds the first run back: the others finish but
// cannot be written, and the engine must stop starting runs once the window is full
// instead of buffering finished rows without limit.
func TestReorderWindowBoundsRunsInFlight(t *testing.T) {
	s := mustSpec(t, engineSpec) // 126 runs, window 64 for 4 workers
	g := &gateRunner{held: RunSeed(11, 0, 0), release: make(chan struct{})}
	done := make(chan error)
	dir := t.TempDir()
	go func() {
		_, err := Run(context.Background(), g, s, Options{Dir: dir, Workers: 4, Tool: "test"})
		done <- err
	}()
	window := windowSize(4)
	require.Eventually(t, func() bool { return g.others.Load() == int64(window-1) }, 2*time.Minute, time.Millisecond,
		"the engine did not fill its window of %d runs in 2 minutes", window)
	time.Sleep(50 * time.Millisecond) // give a leaky engine time to start more
	assert.Equal(t, int64(window-1), g.others.Load())
	close(g.release)
	require.NoError(t, <-done)
	assert.Equal(t, int64(125), g.others.Load())
	ref := t.TempDir()
	runSweep(t, &fakeRunner{}, s, Options{Dir: ref, Tool: "test"})
	requireSameResults(t, ref, dir)
}

func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows
}

func mustLayout(t testing.TB, s *Spec) *layout {
	t.Helper()
	l, err := newLayout(s, (&fakeRunner{}).Columns(), nil)
	require.NoError(t, err)
	return l
}
