package experiments

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// readmeSpec is the sweep spec the README shows (without its comments and notes): it must
// parse and sweep the simulated world exactly as written, so a user's first sweep works.
const readmeSpec = `base:
  scenario: baseline
  duration: 20s
axes:
  ttl: [200ms, 1s]
  nodes: [3, 5]
replicates: 3
seed: 11
`

func TestDefaultStudySweepsTheFourKnobs(t *testing.T) {
	studies, err := DefaultStudy()
	require.NoError(t, err)
	var names []string
	swept := map[string]bool{}
	for _, s := range studies {
		names = append(names, s.Name)
		for _, a := range s.Spec.Axes {
			swept[a.Knob] = true
		}
		assert.GreaterOrEqual(t, s.Spec.Replicates, 10, "%s: enough replicates for a useful Wilson interval", s.Name)
	}
	assert.Equal(t, []string{"ttl", "drift", "nodes", "jitter"}, names)
	for _, k := range []string{"ttl", "drift_factor", "nodes", "retry_jitter"} {
		assert.True(t, swept[k], "the default study sweeps %s", k)
	}
}

func TestExampleSpecsParse(t *testing.T) {
	files, err := filepath.Glob("../examples/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 3)
	for _, f := range files {
		_, err := sweep.LoadSpec(f, SweepRunner())
		assert.NoError(t, err, f)
	}
}

func TestSweepRunnerReportsTheRecordsMetrics(t *testing.T) {
	settings := []sweep.KV{{Name: "scenario", Value: "gc-pause"}}
	vals, err := SweepRunner().Run(context.Background(), settings, 1)
	require.NoError(t, err)
	rec, err := RunKnobs(context.Background(), []knobs.KV{{Name: "scenario", Value: "gc-pause"}}, 1)
	require.NoError(t, err)
	cols := SweepRunner().Columns()
	require.Len(t, vals, len(cols))
	for i, m := range rec.Metrics() {
		assert.Equal(t, m.Name, cols[i].Name)
		assert.Equal(t, m.String(), vals[i].String(), "column %s", m.Name)
	}
	_, err = SweepRunner().Knob("ttll", "1s")
	assert.ErrorContains(t, err, "did you mean ttl")
}

func TestReadmeSpecSweepsTheRealWorld(t *testing.T) {
	spec, err := sweep.ParseSpec("readme.yaml", []byte(readmeSpec), SweepRunner())
	require.NoError(t, err)
	require.Equal(t, 4, spec.Points())
	var outs [][]byte
	for _, workers := range []int{1, 2} {
		dir := t.TempDir()
		st, err := sweep.Run(context.Background(), SweepRunner(), spec, sweep.Options{Dir: dir, Workers: workers, Tool: "test"})
		require.NoError(t, err)
		assert.Equal(t, 12, st.Ran)
		runs, err := os.ReadFile(filepath.Join(dir, "runs.csv"))
		require.NoError(t, err)
		outs = append(outs, runs)
	}
	assert.Equal(t, string(outs[0]), string(outs[1]), "runs.csv is the same for 1 and 2 workers")
	assert.Contains(t, string(outs[0]), "any_validity_overlap")
}

// TestRecycledHistogramsChangeNothing runs a world, then others that reuse its latency
// histogram, then the first again: the records must match exactly.
func TestRecycledHistogramsChangeNothing(t *testing.T) {
	ctx := context.Background()
	first, err := RunKnobs(ctx, []knobs.KV{{Name: "duration", Value: "20s"}}, 7)
	require.NoError(t, err)
	for seed := uint64(1); seed <= 3; seed++ {
		_, err := RunKnobs(ctx, []knobs.KV{{Name: "duration", Value: "20s"}, {Name: "clients", Value: "5"}}, seed)
		require.NoError(t, err)
	}
	again, err := RunKnobs(ctx, []knobs.KV{{Name: "duration", Value: "20s"}}, 7)
	require.NoError(t, err)
	require.NotNil(t, first.Liveness.AcquireLatencyMs.P99)
	first.WallTimeS, again.WallTimeS = 0, 0
	assert.Equal(t, first, again)
}

// TestSummaryHasRatesPerKind checks the derived columns of the world's summary.csv: the
// acquire success rate with its interval and each violation kind per 10,000 acquisitions,
// recomputed here as ratios of sums from runs.csv.
func TestSummaryHasRatesPerKind(t *testing.T) {
	spec, err := sweep.ParseSpec("readme.yaml", []byte(readmeSpec), SweepRunner())
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = sweep.Run(context.Background(), SweepRunner(), spec, sweep.Options{Dir: dir, Workers: 2, Tool: "test"})
	require.NoError(t, err)
	runs, sum := readCSVFile(t, filepath.Join(dir, "runs.csv")), readCSVFile(t, filepath.Join(dir, "summary.csv"))
	idx := func(head []string, name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s in %v", name, head)
		return -1
	}
	for p, row := range sum[1:] {
		sums := map[string]int64{}
		for _, r := range runs[1:] {
			if r[0] != row[0] {
				continue
			}
			for _, c := range []string{"acquired", "failed", "attempts", "validity_overlaps", "usage_overlaps", "stale_writes_accepted", "fenced_writes_rejected"} {
				n, err := strconv.ParseInt(r[idx(runs[0], c)], 10, 64)
				require.NoError(t, err)
				sums[c] += n
			}
		}
		require.Positive(t, sums["acquired"], "point %d", p)
		want := strconv.FormatFloat(float64(sums["acquired"])/float64(sums["attempts"]), 'g', sweep.SummaryDigits, 64)
		assert.Equal(t, want, row[idx(sum[0], "acquired_per_attempt")], "point %d", p)
		lo, hi := sweep.Wilson(int(sums["acquired"]), int(sums["attempts"]))
		assert.Equal(t, strconv.FormatFloat(lo, 'g', 6, 64), row[idx(sum[0], "acquired_per_attempt_lo")])
		assert.Equal(t, strconv.FormatFloat(hi, 'g', 6, 64), row[idx(sum[0], "acquired_per_attempt_hi")])
		ended := sums["acquired"] + sums["failed"]
		want = strconv.FormatFloat(float64(sums["acquired"])/float64(ended), 'g', sweep.SummaryDigits, 64)
		assert.Equal(t, want, row[idx(sum[0], "acquire_success_frac")], "point %d", p)
		lo, hi = sweep.Wilson(int(sums["acquired"]), int(ended))
		assert.Equal(t, strconv.FormatFloat(lo, 'g', 6, 64), row[idx(sum[0], "acquire_success_frac_lo")])
		assert.Equal(t, strconv.FormatFloat(hi, 'g', 6, 64), row[idx(sum[0], "acquire_success_frac_hi")])
		for _, kind := range []string{"validity_overlaps", "usage_overlaps", "stale_writes_accepted", "fenced_writes_rejected"} {
			want := strconv.FormatFloat(10000*float64(sums[kind])/float64(sums["acquired"]), 'g', 6, 64)
			assert.Equal(t, want, row[idx(sum[0], kind+"_per_10k_acq")], "point %d %s", p, kind)
		}
	}
}

func readCSVFile(t *testing.T, path string) [][]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return recs
}
