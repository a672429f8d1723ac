package plots

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// synth builds a sweep over ttl with one point per value, holding the given cells.
func synth(values []string, cells ...Cell) *Sweep {
	sw := &Sweep{Axes: []Axis{{Knob: "ttl", Values: values}}, Replicates: cells[0].Runs, Complete: true}
	for i := range cells {
		sw.Points = append(sw.Points, &SweepPoint{Point: i, Values: []string{values[i]}, Cell: cells[i]})
		sw.runs += cells[i].Runs
	}
	return sw
}

func titles(f KnobFigure) []string {
	var out []string
	for _, p := range f.Panels {
		out = append(out, p.Title)
	}
	return out
}

// TestKnobFigureDropsWhatNeverVaries: in the split-brain fixture no run had any safety
// failure and every acquire that finished got the lock, so those panels are not drawn as
// flat lines; the caption says so instead.
func TestKnobFigureDropsWhatNeverVaries(t *testing.T) {
	figs := KnobFigures(readFixture(t, "sweep-one"))
	require.Len(t, figs, 1)
	f := figs[0]
	assert.Equal(t, []string{"Time to acquire: median (p50)", "Time to acquire: p99", "Split-brain rounds"}, titles(f))
	assert.Equal(t, []string{"No validity overlap, usage overlap, stale write accepted or write rejected by fencing in any run",
		"Every acquire that finished got the lock (success rate 1 at every point)"}, f.Notes)
	assert.Contains(t, f.Caption, "No validity overlap, usage overlap, stale write accepted or write rejected by fencing in any run.")
}

// TestSafetyKindsApart: each kind has its own panel, in the lock's and the resource's
// groups; none is a sum of others.
func TestSafetyKindsApart(t *testing.T) {
	c := func(v, u, st, fe int64) Cell {
		return Cell{Runs: 10, Validity: v, Usage: u, Stale: st, Fenced: fe, Acquired: 1000, ValidityRuns: int(min(v, 10)), UsageRuns: int(min(u, 10)),
			P50Ms: []float64{1, 2}, P99Ms: []float64{5, 6}}
	}
	sw := synth([]string{"1s", "2s"}, c(1, 2, 3, 4), c(0, 0, 0, 0))
	f := KnobFigures(sw)[0]
	assert.Equal(t, []string{"Lock: runs with two holders", "Lock: validity overlaps", "Lock: usage overlaps",
		"Resource: stale writes accepted", "Resource: writes rejected by fencing"}, titles(f), "times the same at both points: not drawn")
	for i, want := range []float64{10, 20, 30, 40} { // per 10,000 of the 1,000 acquisitions
		assert.Equal(t, want, f.Panels[1+i].Series[0].Points[0].Y, f.Panels[1+i].Title)
		assert.Equal(t, "per 10,000 acquisitions", f.Panels[1+i].YLabel)
	}
	keys := keyEntries(&f)
	require.Len(t, keys, 2, "the two-kind panel's dashes are in the key")
	assert.Equal(t, "usage overlap (dashed, ■) in “Lock: runs with two holders”", keys[1].label)
}

// TestSplitBrainNoiseIsCountedNotPlotted: two rounds in fifty runs at one point and none at
// the others is not a curve; the caption gives the counts. Rounds in most runs are.
func TestSplitBrainNoiseIsCountedNotPlotted(t *testing.T) {
	c := func(rounds int64, runs int) Cell {
		return Cell{Runs: 50, Acquired: 100, SplitBrain: rounds, SplitBrainRuns: runs, P50Ms: []float64{1, 2}, P99Ms: []float64{5, 6}}
	}
	f := KnobFigures(synth([]string{"1s", "2s", "5s"}, c(2, 2), c(0, 0), c(1, 1)))[0]
	assert.NotContains(t, titles(f), "Split-brain rounds")
	assert.Contains(t, f.Notes, "Split-brain rounds not drawn: 3 in all 150 runs, in at most 2 runs of any point: too few to tell apart from chance")

	f = KnobFigures(synth([]string{"1s", "2s", "5s"}, c(400, 50), c(40, 30), c(2, 2)))[0]
	assert.Contains(t, titles(f), "Split-brain rounds")

	f = KnobFigures(synth([]string{"1s", "2s"}, c(0, 0), c(0, 0)))[0]
	assert.NotContains(t, titles(f), "Split-brain rounds")
	assert.Contains(t, f.Notes[0], "split-brain round in any run")
}

// TestTimesPast10sInSeconds: a p99 of 150,000 ms is drawn as 150 s.
func TestTimesPast10sInSeconds(t *testing.T) {
	c := func(p50, p99 float64) Cell {
		return Cell{Runs: 2, Acquired: 10, P50Ms: []float64{p50, p50 + 0.1}, P99Ms: []float64{p99, p99}}
	}
	f := KnobFigures(synth([]string{"1s", "10s"}, c(1.5, 90_000), c(1.7, 150_000)))[0]
	p99 := panel(t, f, "Time to acquire: p99")
	assert.Equal(t, "s", p99.YLabel)
	assert.Equal(t, 150.0, p99.Series[0].Points[1].Y)
	p50 := panel(t, f, "Time to acquire: median (p50)")
	assert.Equal(t, "ms", p50.YLabel, "short times stay in ms")
	assert.InDelta(t, 1.55, p50.Series[0].Points[0].Y, 1e-9)
}

// TestBimodalMedianIsExplained: runs whose median time to acquire is either 1.5 ms or
// 10 s (acquires that found the lock free, and acquires that waited out a holder) give
// a median over runs that jumps; the panel is on a log axis labelled with units and the
// caption says why it jumps.
func TestBimodalMedianIsExplained(t *testing.T) {
	c := func(p50s ...float64) Cell {
		return Cell{Runs: len(p50s), Acquired: 30, P50Ms: p50s, P99Ms: []float64{20_000}}
	}
	f := KnobFigures(synth([]string{"5s", "10s"}, c(1.5, 1.5, 10_000, 1.4), c(10_000, 9_900, 1.5, 10_100)))[0]
	p50 := panel(t, f, "Time to acquire: median (p50)")
	assert.True(t, p50.LogY)
	assert.Equal(t, "ms", p50.YLabel, "kept in ms: the log axis's ticks carry their units")
	var labels []string
	for _, tk := range (msTicks{}).Ticks(1, 100_000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	assert.Equal(t, []string{"1 ms", "10 ms", "100 ms", "1 s", "10 s", "100 s"}, labels)
	assert.Contains(t, strings.Join(f.Notes, ". "), "Time to acquire is bimodal")
	assert.Contains(t, f.Caption, "the p50 points jump")
	assert.True(t, p50.Unjoined, "no line drawn between the two modes")

	f = KnobFigures(synth([]string{"5s", "10s"}, c(1.5, 1.6, 1.4), c(1.5, 1.7, 1.6)))[0]
	assert.NotContains(t, strings.Join(f.Notes, ". "), "bimodal", "no note where runs agree")
	assert.False(t, panel(t, f, "Time to acquire: median (p50)").Unjoined)
}

// TestLineKeyWraps: the jitter study's key (six jitter values and the two overlap kinds)
// is wider than the figure; it wraps onto a second row instead of being cut ("usag").
func TestLineKeyWraps(t *testing.T) {
	f := KnobFigure{LineBy: "retry_jitter", Lines: []string{"0s", "1ms", "10ms", "50ms", "100ms", "200ms"},
		Panels: []Panel{{Title: "Lock: runs with two holders", Series: []Series{{Kind: kindValidity}, {Kind: kindUsage, Dashed: true}}}}}
	es := keyEntries(&f)
	require.Len(t, es, 8)
	sty := keyStyle()
	x0, x1 := px(10), px(DefaultWidth-10)
	at := placeKey(es, sty, x0, x1, 500)
	rows := map[float64]bool{}
	for i, e := range es {
		assert.LessOrEqual(t, float64(at[i].X+keySeg+keyGap+sty.Width(e.label)), float64(x1), "%q fits", e.label)
		rows[float64(at[i].Y)] = true
	}
	assert.Len(t, rows, 2)
}

// TestSweepNotesInCaptions: a sweep's notes (manifest.json's spec.notes or notes, and
// the caller's) end every figure's caption: the place to say why a liveness number that
// looks alarming is what it is.
func TestSweepNotesInCaptions(t *testing.T) {
	dir := copyFixture(t, "sweep-two")
	path := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	m["spec"].(map[string]any)["notes"] = []string{"Clients hold the lock for an hour, so most acquires give up"}
	m["notes"] = []string{"Drawn for a test"}
	data, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	sw, err := ReadSweep(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"Clients hold the lock for an hour, so most acquires give up", "Drawn for a test"}, sw.Notes)
	for _, f := range KnobFigures(sw) {
		assert.Contains(t, f.Caption, ". Clients hold the lock for an hour, so most acquires give up. Drawn for a test.")
	}
	for _, f := range HeatmapFigures(sw) {
		assert.Contains(t, f.Caption, "Clients hold the lock for an hour")
	}
	_, err = SweepFiguresWith(dir, t.TempDir(), SweepOptions{Notes: []string{"A caller's note"}})
	require.NoError(t, err)
}

// TestNothingToPlot: a sweep whose knobs each take one value has complete results and no
// axis; the error says so and can be told apart.
func TestNothingToPlot(t *testing.T) {
	dir := writeBigRuns(t, 10, 1)
	_, err := SweepFigures(dir, t.TempDir())
	assert.ErrorIs(t, err, ErrNothingToPlot)
}

// TestLowSuccessIsExplained: a success rate of 0.14 reads as a broken lock; the caption
// says what it counts.
func TestLowSuccessIsExplained(t *testing.T) {
	c := func(acq, failed int64) Cell {
		return Cell{Runs: 5, Acquired: acq, Failed: failed, P50Ms: []float64{1, 2}, P99Ms: []float64{5, 6}}
	}
	f := KnobFigures(synth([]string{"1s", "2s"}, c(14, 86), c(20, 80)))[0]
	assert.Contains(t, f.Caption, "a low rate is waiting, not failure")
	f = KnobFigures(synth([]string{"1s", "2s"}, c(90, 10), c(95, 5)))[0]
	assert.NotContains(t, f.Caption, "a low rate is waiting")
}

// TestRoundedSummaryIsAccepted: summary.csv may round its fractions (no float noise); the
// check against runs.csv still tells k/n apart, and still refuses another sweep's summary
// (TestSweepBadInput).
func TestRoundedSummaryIsAccepted(t *testing.T) {
	dir := copyFixture(t, "sweep-two")
	path := filepath.Join(dir, "summary.csv")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	header := strings.Split(lines[0], ",")
	for i := 1; i < len(lines); i++ {
		f := strings.Split(lines[i], ",")
		for j, h := range header {
			if strings.HasSuffix(h, "_frac") || strings.HasSuffix(h, "_lo") || strings.HasSuffix(h, "_hi") {
				if v, err := strconv.ParseFloat(f[j], 64); err == nil {
					// As a summary rounded to three decimals gives 1/3: 0.333, off by up to 0.0005.
					f[j] = strconv.FormatFloat(v+0.0004, 'f', 4, 64)
				}
			}
		}
		lines[i] = strings.Join(f, ",")
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	_, err = ReadSweep(dir)
	assert.NoError(t, err)
}

// TestHeatmapDropsUniformMaps: a map whose every cell is the same is not drawn (the old
// all-zero violation map with a 0–1 colour bar); a pair over which nothing varies gets no
// figure.
func TestHeatmapDropsUniformMaps(t *testing.T) {
	sw := &Sweep{Axes: []Axis{{Knob: "ttl", Values: []string{"1s", "2s"}}, {Knob: "nodes", Values: []string{"3", "5"}}}, Replicates: 1}
	add := func(i int, ttl, nodes string, p99 float64) {
		sw.Points = append(sw.Points, &SweepPoint{Point: i, Values: []string{ttl, nodes},
			Cell: Cell{Runs: 1, Acquired: 10, P50Ms: []float64{1}, P99Ms: []float64{p99}}})
	}
	add(0, "1s", "3", 5)
	add(1, "1s", "5", 5)
	add(2, "2s", "3", 5)
	add(3, "2s", "5", 7)
	hs := HeatmapFigures(sw)
	require.Len(t, hs, 1)
	require.Len(t, hs[0].Maps, 1)
	assert.Equal(t, "Time to acquire, 99th percentile", hs[0].Maps[0].Title)
	assert.Contains(t, hs[0].Caption, "No validity overlap, usage overlap, stale write accepted or write rejected by fencing in any run.")

	sw.Points[3].Cell.P99Ms = []float64{5}
	assert.Empty(t, HeatmapFigures(sw))
}
