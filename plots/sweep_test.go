package plots

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// The fixtures under testdata/ are real sweep folders, written by the sweep engine and the
// simulated world from the spec.yaml beside them (TestFixturesAreSweepOutput checks that
// they still are; go test ./plots -rewrite regenerates them), kept small (9 to 24 runs):
//
//	sweep-one      retry_jitter (3 values) on split-brain-no-jitter
//	sweep-two      ttl (3, spanning 25×) × nodes (2) with GC pauses
//	sweep-three    ttl × nodes × persistence (2 each) with node crashes
//	sweep-latency  latency (3 tails, too long to write whole as ticks) × client (2)

// summaryRows reads a fixture's summary.csv as one map per point.
func summaryRows(t *testing.T, dir string) []map[string]string {
	t.Helper()
	return csvRows(t, filepath.Join(dir, "summary.csv"))
}

// csvRows reads a CSV file as one map per row, keyed by the header.
func csvRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	if s == "" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return v
}

func readFixture(t *testing.T, name string) *Sweep {
	t.Helper()
	sw, err := ReadSweep(filepath.Join("testdata", name))
	require.NoError(t, err)
	return sw
}

func TestReadSweep(t *testing.T) {
	sw := readFixture(t, "sweep-two")
	assert.Equal(t, []Axis{{"ttl", []string{"200ms", "1s", "5s"}}, {"nodes", []string{"3", "5"}}}, sw.Axes)
	assert.Equal(t, KnobKV{"duration", "5s"}, sw.Base[0])
	assert.Len(t, sw.Base, 5)
	assert.Equal(t, 4, sw.Replicates)
	assert.EqualValues(t, 7, sw.Seed)
	assert.True(t, sw.Complete)
	assert.Equal(t, 24, sw.RunCount())
	require.Len(t, sw.Points, 6)
	pt := sw.Points[0] // the first four rows of runs.csv
	assert.Equal(t, 0, pt.Point)
	assert.Equal(t, []string{"200ms", "3"}, pt.Values)
	c := pt.Cell
	assert.Equal(t, 4, c.Runs)
	assert.Equal(t, 0, c.ValidityRuns)
	rows := runRows(t, "sweep-two")[:4]
	sum := func(col string) (n int64) {
		for _, r := range rows {
			n += int64(num(t, r[col]))
		}
		return n
	}
	assert.Equal(t, sum("any_usage_overlap"), int64(c.UsageRuns))
	assert.Equal(t, sum("usage_overlaps"), c.Usage)
	assert.Equal(t, sum("stale_writes_accepted"), c.Stale)
	assert.Equal(t, sum("fenced_writes_rejected"), c.Fenced)
	assert.Equal(t, sum("acquired"), c.Acquired)
	assert.Equal(t, 1.5, c.P50Ms[0], "the first row's")
	assert.Equal(t, 1270.273, c.P99Ms[0])
}

// runRows reads a fixture's runs.csv as one map per row.
func runRows(t *testing.T, name string) []map[string]string {
	t.Helper()
	return csvRows(t, filepath.Join("testdata", name, "runs.csv"))
}

// panel returns the figure's panel titled title, failing the test when there is none.
func panel(t *testing.T, f KnobFigure, title string) Panel {
	t.Helper()
	for _, p := range f.Panels {
		if p.Title == title {
			return p
		}
	}
	require.Failf(t, "no panel", "%s has no panel %q", f.Name, title)
	return Panel{}
}

// TestKnobSeriesMatchSummary: each point of a figure without pooling is one point of the
// sweep, so its numbers are summary.csv's.
func TestKnobSeriesMatchSummary(t *testing.T) {
	dir := filepath.Join("testdata", "sweep-two")
	sw := readFixture(t, "sweep-two")
	figs := KnobFigures(sw)
	require.Len(t, figs, 2)
	f := figs[0]
	assert.Equal(t, "knob-ttl", f.Name)
	assert.Equal(t, "nodes", f.LineBy)
	assert.Empty(t, f.Pooled)
	assert.Equal(t, Log, f.X.Scale)
	assert.Equal(t, "ttl (s, log scale)", f.X.Label)
	assert.Equal(t, []float64{0.2, 1, 5}, f.X.X)
	overlap := panel(t, f, "Lock: runs with two holders").Series
	require.Len(t, overlap, 2, "usage only: no validity overlap in any run, one line per N")
	assert.Equal(t, "nodes=3", overlap[0].Label)
	assert.True(t, overlap[0].Dashed)
	assert.Contains(t, f.Notes, "No validity overlap, write rejected by fencing or split-brain round in any run")
	assert.Contains(t, f.Caption, "No validity overlap, write rejected by fencing or split-brain round in any run.")

	rows := summaryRows(t, dir)
	require.Len(t, rows, 6)
	xi := map[string]int{"200ms": 0, "1s": 1, "5s": 2}
	li := map[string]int{"3": 0, "5": 1}
	for _, row := range rows {
		x, l := xi[row["ttl"]], li[row["nodes"]]
		at := func(title string, series int) Point { return panel(t, f, title).Series[series].Points[x] }
		check := func(p Point, y, lo, hi string) {
			t.Helper()
			assert.Equal(t, row[y], sweep.FormatStat(p.Y), "%s at ttl=%s nodes=%s", y, row["ttl"], row["nodes"])
			if lo != "" {
				assert.Equal(t, row[lo], sweep.FormatStat(p.Lo), lo)
				assert.Equal(t, row[hi], sweep.FormatStat(p.Hi), hi)
			}
		}
		check(at("Lock: runs with two holders", l), "any_usage_overlap_frac", "any_usage_overlap_lo", "any_usage_overlap_hi")
		check(at("Time to acquire: median (p50)", l), "acquire_latency_p50_ms_median", "acquire_latency_p50_ms_p10", "acquire_latency_p50_ms_p90")
		check(at("Time to acquire: p99", l), "acquire_latency_p99_ms_median", "acquire_latency_p99_ms_p10", "acquire_latency_p99_ms_p90")
		check(at("Lock: usage overlaps", l), "usage_overlaps_per_10k_acq", "", "")
		check(at("Resource: stale writes accepted", l), "stale_writes_accepted_per_10k_acq", "", "")
		check(at("Acquire success rate", l), "acquire_success_frac", "acquire_success_frac_lo", "acquire_success_frac_hi")
		assert.Equal(t, 4, at("Lock: runs with two holders", l).N)
	}
	// Hand-checked: at ttl=1s, N=3, two of the four runs had a usage overlap.
	p := panel(t, f, "Lock: runs with two holders").Series[0].Points[1]
	assert.Equal(t, 0.5, p.Y)
	assert.InDelta(t, 0.15003898915214947, p.Lo, 1e-9)
	assert.InDelta(t, 0.8499610108478506, p.Hi, 1e-9)
}

// TestKnobSeriesPool: with three swept knobs, the third is pooled over; the pooled
// fraction is the share of all the cell's runs, counted here from runs.csv by hand.
func TestKnobSeriesPool(t *testing.T) {
	sw := readFixture(t, "sweep-three")
	figs := KnobFigures(sw)
	require.Len(t, figs, 3)
	f := figs[2]
	assert.Equal(t, "knob-persistence", f.Name)
	assert.Equal(t, Categorical, f.X.Scale)
	assert.Equal(t, "ttl", f.LineBy, "the first of the knobs with fewest values")
	assert.Equal(t, []string{"nodes"}, f.Pooled)
	assert.Contains(t, f.Caption, "Pooled over nodes")
	var k, n int
	for _, r := range runRows(t, "sweep-three") {
		if r["ttl"] == "1s" && r["persistence"] == "none" {
			n++
			if r["any_validity_overlap"] == "1" {
				k++
			}
		}
	}
	require.Equal(t, 4, n)
	p := f.Panels[0].Series[0].Points[0] // ttl=1s, persistence=none, validity
	assert.Equal(t, float64(k)/float64(n), p.Y)
	assert.Equal(t, 4, p.N)
	assert.Contains(t, f.Caption, "duration=5s")
	assert.Contains(t, f.Caption, "2 runs per point, sweep seed 3")
}

func TestHeatmapMatchesSummary(t *testing.T) {
	sw := readFixture(t, "sweep-two")
	hs := HeatmapFigures(sw)
	require.Len(t, hs, 1)
	h := hs[0]
	assert.Equal(t, "heatmap-ttl-nodes", h.Name)
	var titles []string
	for _, m := range h.Maps {
		titles = append(titles, m.Title)
	}
	assert.Equal(t, []string{"Lock: usage overlaps", "Resource: stale writes accepted", "Time to acquire, 99th percentile"}, titles,
		"one map per kind that happened, never summed")
	assert.Contains(t, h.Caption, "No validity overlap or write rejected by fencing in any run.")
	usage, stale, p99 := h.Maps[0].Z, h.Maps[1].Z, h.Maps[2].Z
	require.Len(t, usage, 2)    // nodes
	require.Len(t, usage[0], 3) // ttl
	rows := summaryRows(t, filepath.Join("testdata", "sweep-two"))
	xi := map[string]int{"200ms": 0, "1s": 1, "5s": 2}
	yi := map[string]int{"3": 0, "5": 1}
	for _, row := range rows {
		x, y := xi[row["ttl"]], yi[row["nodes"]]
		assert.Equal(t, row["usage_overlaps_per_10k_acq"], sweep.FormatStat(usage[y][x]))
		assert.Equal(t, row["stale_writes_accepted_per_10k_acq"], sweep.FormatStat(stale[y][x]))
		assert.Equal(t, row["acquire_latency_p99_ms_median"], sweep.FormatStat(p99[y][x]))
	}
	assert.Len(t, HeatmapFigures(readFixture(t, "sweep-three")), 3, "one per pair of three knobs")
	assert.Empty(t, HeatmapFigures(readFixture(t, "sweep-one")))
}

func TestKnobAxisScales(t *testing.T) {
	for _, c := range []struct {
		knob   string
		values []string
		scale  Scale
		label  string
	}{
		{"ttl", []string{"1s", "2s", "5s", "10s", "30s"}, Log, "ttl (s, log scale)"},
		{"ttl", []string{"200ms", "1s"}, Linear, "ttl (s)"},
		{"retry_jitter", []string{"0s", "1ms", "10ms", "50ms", "100ms", "200ms"}, Categorical, "retry_jitter (not to scale)"},
		{"retry_jitter", []string{"0s", "10ms", "100ms"}, Linear, "retry_jitter (ms)"},
		{"nodes", []string{"1", "3", "5", "7", "9"}, Linear, "nodes"},
		{"drift_factor", []string{"0", "0.001", "0.01", "0.02", "0.05"}, Categorical, "drift_factor (not to scale)"},
		{"client_clock_drift_ppm", []string{"100", "20000"}, Log, "client_clock_drift_ppm (ppm, log scale)"},
		{"persistence", []string{"none", "aof-everysec"}, Categorical, "persistence"},
	} {
		ax := newKnobAxis(c.knob, c.values)
		assert.Equal(t, c.scale, ax.Scale, "%s %v", c.knob, c.values)
		assert.Equal(t, c.label, ax.Label)
		assert.Len(t, ax.X, len(c.values))
	}
}

func assertPNG(t *testing.T, data []byte, w, h int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, w, img.Bounds().Dx())
	assert.Equal(t, h, img.Bounds().Dy())
}

func assertSVG(t *testing.T, data []byte) {
	t.Helper()
	require.NotEmpty(t, data)
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "well-formed XML")
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	assert.Equal(t, "svg", root)
}

func TestSweepFiguresRender(t *testing.T) {
	out := t.TempDir()
	files, err := SweepFigures(filepath.Join("testdata", "sweep-two"), out)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(out, "knob-ttl.png"), filepath.Join(out, "knob-nodes.png"),
		filepath.Join(out, "heatmap-ttl-nodes.png")}, files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assertPNG(t, data, DefaultWidth, DefaultHeight)
	}
	files, err = SweepFiguresWith(filepath.Join("testdata", "sweep-one"), out, SweepOptions{Format: SVG, Width: 800, Height: 450})
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(out, "knob-retry_jitter.svg")}, files)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assertSVG(t, data)
	assert.Contains(t, string(data), `width="600pt"`, "800 px at 96 dpi")
}

// TestFigureTempFilesAreTheOnesSweepRemoves: the temporary file each figure is written
// through before its rename is named so that sweep.IsTempFile knows it, and LockFolder
// (the next sweep, merge or plot of the folder) removes one a kill left behind.
func TestFigureTempFilesAreTheOnesSweepRemoves(t *testing.T) {
	out := t.TempDir()
	files, err := SweepFigures(filepath.Join("testdata", "sweep-two"), out)
	require.NoError(t, err)
	for _, f := range files {
		for _, name := range []string{f, strings.TrimSuffix(f, ".png") + ".svg"} { // either format
			tmp, err := os.CreateTemp(out, tempPattern(name))
			require.NoError(t, err)
			require.NoError(t, tmp.Close())
			assert.True(t, sweep.IsTempFile(filepath.Base(tmp.Name())), tmp.Name())
		}
	}
	l, err := sweep.LockFolder(out, "plot")
	require.NoError(t, err)
	l.Unlock()
	left, err := filepath.Glob(filepath.Join(out, ".*"))
	require.NoError(t, err)
	assert.Empty(t, left, "every stray temporary file removed")
	for _, f := range files {
		assert.FileExists(t, f, "the figures stay")
	}
}

// copyFixture copies a fixture folder so a test can damage it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"runs.csv", "summary.csv", "manifest.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
	}
	return dir
}

func TestSweepBadInput(t *testing.T) {
	_, err := SweepFigures(filepath.Join(t.TempDir(), "nope"), t.TempDir())
	assert.ErrorContains(t, err, "no such file or directory")

	_, err = SweepFigures(t.TempDir(), t.TempDir())
	assert.ErrorContains(t, err, "runs.csv")

	dir := copyFixture(t, "sweep-two")
	runs := filepath.Join(dir, "runs.csv")
	data, _ := os.ReadFile(runs)
	bad := strings.Replace(string(data), ",22,0,", ",x,0,", 1)
	require.NoError(t, os.WriteFile(runs, []byte(bad), 0o644))
	_, err = SweepFigures(dir, t.TempDir())
	assert.ErrorContains(t, err, "runs.csv:2: acquired = \"x\"")

	dir = copyFixture(t, "sweep-two")
	runs = filepath.Join(dir, "runs.csv")
	data, _ = os.ReadFile(runs)
	require.NoError(t, os.WriteFile(runs, []byte(strings.Replace(string(data), "split_brain_rounds", "sbr", 1)), 0o644))
	_, err = SweepFigures(dir, t.TempDir())
	assert.ErrorContains(t, err, `no column "split_brain_rounds"`)

	dir = copyFixture(t, "sweep-two") // a summary from another sweep
	other, _ := os.ReadFile(filepath.Join("testdata", "sweep-three", "summary.csv"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.csv"), other, 0o644))
	_, err = SweepFigures(dir, t.TempDir())
	assert.ErrorContains(t, err, "disagrees with runs.csv")

	_, err = SweepFiguresWith(filepath.Join("testdata", "sweep-two"), t.TempDir(), SweepOptions{Format: "jpg"})
	assert.ErrorContains(t, err, `format "jpg"`)
}

func TestSweepWithoutSummaryOrManifest(t *testing.T) {
	dir := copyFixture(t, "sweep-two")
	require.NoError(t, os.Remove(filepath.Join(dir, "summary.csv")))
	require.NoError(t, os.Remove(filepath.Join(dir, "manifest.json")))
	sw, err := ReadSweep(dir)
	require.NoError(t, err)
	assert.Equal(t, []Axis{{"ttl", []string{"200ms", "1s", "5s"}}, {"nodes", []string{"3", "5"}}}, sw.Axes,
		"the axes are the columns between seed and the metrics")
	assert.Contains(t, caption(sw, nil, "", nil), "no manifest.json")
}

// TestPoolSweepsAddsTheRuns: two runs of one sweep pooled hold every run of both, point by
// point; sweeps of other points are refused.
func TestPoolSweepsAddsTheRuns(t *testing.T) {
	a, err := ReadSweep(filepath.Join("testdata", "sweep-one"))
	require.NoError(t, err)
	b, err := ReadSweep(filepath.Join("testdata", "sweep-one"))
	require.NoError(t, err)
	pooled, err := PoolSweeps([]*Sweep{a, b})
	require.NoError(t, err)
	require.Len(t, pooled.Points, len(a.Points))
	assert.Equal(t, 2*a.RunCount(), pooled.RunCount())
	for i, pt := range pooled.Points {
		assert.Equal(t, 2*a.Points[i].Cell.Runs, pt.Cell.Runs)
		assert.Equal(t, 2*a.Points[i].Cell.Acquired, pt.Cell.Acquired)
		assert.Len(t, pt.Cell.P99Ms, 2*len(a.Points[i].Cell.P99Ms))
	}
	assert.Equal(t, a.Points[0].Cell.Runs, b.Points[0].Cell.Runs, "the inputs are left alone")
	other, err := ReadSweep(filepath.Join("testdata", "sweep-two"))
	require.NoError(t, err)
	_, err = PoolSweeps([]*Sweep{a, other})
	assert.ErrorContains(t, err, "not the same sweep run again")
}
