package plots

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The latency values of examples/libraries-slow-links.yaml, as the sweep writes them back:
// 43 characters each, four side by side.
var slowLinks = []string{
	"tail(uniform(200µs,800µs),0.02,const(5ms))",
	"tail(uniform(200µs,800µs),0.02,const(300ms))",
	"tail(uniform(200µs,800µs),0.02,const(700ms))",
	"tail(uniform(200µs,800µs),0.02,const(1.5s))",
}

func TestShortLabelsKeepWhatDiffers(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []string
		labels []string
		common string
		wide   bool // still too wide at the values' deepest shared call: the shortest there are
	}{
		// Four times "const(300ms)" is 48 characters, past the budget: one call deeper.
		{"a tail's slow part, down to the durations", slowLinks,
			[]string{"5ms", "300ms", "700ms", "1.5s"}, "tail(uniform(200µs,800µs),0.02,const(·))", false},
		// Three times it is 36: no deeper than it takes.
		{"three fit one call in", slowLinks[1:],
			[]string{"const(300ms)", "const(700ms)", "const(1.5s)"}, "tail(uniform(200µs,800µs),0.02,·)", false},
		{"two arguments of a call differ", []string{
			"tail(uniform(200µs,800µs),0.02,uniform(2ms,5ms))",
			"tail(uniform(200µs,800µs),0.02,uniform(50ms,200ms))",
			"tail(uniform(200µs,800µs),0.02,uniform(300ms,600ms))",
			"tail(uniform(200µs,800µs),0.02,uniform(1s,2s))",
		}, []string{"2ms,5ms", "50ms,200ms", "300ms,600ms", "1s,2s"}, "tail(uniform(200µs,800µs),0.02,uniform(·,·))", true},
		{"the tail's share and its slow part", []string{
			"tail(uniform(1ms,2ms),0.01,const(50ms))",
			"tail(uniform(1ms,2ms),0.05,const(50ms))",
			"tail(uniform(1ms,2ms),0.05,const(500ms))",
		}, []string{"0.01,50ms", "0.05,50ms", "0.05,500ms"}, "tail(uniform(1ms,2ms),·,const(·))", false},
		{"spaces as a user writes them", []string{
			"lognormal(5ms, 0.5, 1ms)", "lognormal(5ms, 1.5, 1ms)", "lognormal(5ms, 2.5, 1ms)", "lognormal(5ms, 3.5, 1ms)",
		}, []string{"0.5", "1.5", "2.5", "3.5"}, "lognormal(5ms,·,1ms)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			labels, common := shortLabels(c.values)
			assert.Equal(t, c.labels, labels)
			assert.Equal(t, c.common, common)
			assert.Equal(t, c.wide, tooLong(labels))
		})
	}
}

func TestShortLabelsLeaveShortValues(t *testing.T) {
	for _, values := range [][]string{
		{"none", "aof-everysec", "aof-always"},
		{"0s", "100us", "500us", "1ms", "5ms", "10ms", "50ms", "100ms", "200ms"},
		{"spec", "redsync", "node-redlock"},
		{"uniform(1s,3s)", "uniform(1s,10s)"},
		{"const(1s)", "const(5s)", "const(9s)", "const(12s)"}, // 40 characters: just fits
		{"tail(uniform(200µs,800µs),0.02,const(5ms))"},
	} {
		labels, common := shortLabels(values)
		assert.Equal(t, values, labels)
		assert.Empty(t, common)
	}
}

// TestShortLabelsFallBack: where no shorter labels tell every value apart, the ticks are
// the values, whole.
func TestShortLabelsFallBack(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []string
	}{
		{"values of different shapes share nothing to drop", []string{
			"uniform(200µs,800µs)", slowLinks[1], slowLinks[3]}},
		{"two values the same but for spaces: ambiguous labels", []string{
			slowLinks[0], "tail(uniform(200µs,800µs), 0.02, const(5ms))", slowLinks[1]}},
		{"one value with and without spaces: empty labels", []string{
			slowLinks[0], "tail( uniform(200µs,800µs), 0.02, const(5ms) )"}},
		{"calls of different lengths", []string{
			"lognormal(5ms,0.5)", "lognormal(5ms,0.5,1ms)", "lognormal(5ms,1.5,1ms)", "lognormal(5ms,2.5,1ms)"}},
		{"unbalanced parentheses", []string{
			"tail(uniform(200µs,800µs),0.02,const(5ms)", slowLinks[1], slowLinks[2]}},
		{"text after a call", []string{
			"tail(uniform(200µs,800µs),0.02,const(5ms))x", slowLinks[1], slowLinks[2]}},
		{"long names with nothing in common", []string{
			"no-validity-check", "no-drift-allowance", "single-instance"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			labels, common := shortLabels(c.values)
			assert.Equal(t, c.values, labels)
			assert.Empty(t, common)
		})
	}
}

func TestKnobAxisShortTicks(t *testing.T) {
	ax := newKnobAxis("latency", slowLinks)
	assert.Equal(t, Categorical, ax.Scale)
	assert.Equal(t, slowLinks, ax.Values, "the values stay whole: cells are looked up by them")
	assert.Equal(t, []string{"5ms", "300ms", "700ms", "1.5s"}, ax.Ticks)
	assert.Equal(t, "latency = tail(uniform(200µs,800µs),0.02,const(·))", ax.Label)
	var drawn []string
	for _, tk := range valueTicks(ax).Ticks(0, 3) {
		drawn = append(drawn, tk.Label)
	}
	assert.Equal(t, ax.Ticks, drawn)
	assert.Equal(t, "Ticks of latency show only what its values differ in: each value is tail(uniform(200µs,800µs),0.02,const(·)), with the tick for ·",
		ax.ticksNote())

	num := newKnobAxis("ttl", []string{"1s", "2s", "5s", "10s", "30s"})
	assert.Equal(t, num.Values, num.Ticks)
	assert.Empty(t, num.Common)
	assert.Empty(t, num.ticksNote())
	assert.Equal(t, "ttl", categoryLabel(num))
}

// TestSweepFiguresShortTicks: on a real sweep of latency × client, the knob figure and the
// heatmap label latency by what its values differ in and say the rest in the axis's label
// and the caption; the figure with one line per latency keeps the values whole in its key.
func TestSweepFiguresShortTicks(t *testing.T) {
	sw := readFixture(t, "sweep-latency")
	figs := KnobFigures(sw)
	require.Len(t, figs, 2)
	lat, cl := figs[0], figs[1]
	require.Equal(t, "knob-latency", lat.Name)
	assert.Equal(t, []string{"const(5ms)", "const(300ms)", "const(1.5s)"}, lat.X.Ticks)
	assert.Equal(t, "latency = tail(uniform(200µs,800µs),0.02,·)", lat.X.Label)
	assert.Contains(t, lat.Caption, "each value is tail(uniform(200µs,800µs),0.02,·), with the tick for ·.")

	require.Equal(t, "knob-client", cl.Name)
	assert.Equal(t, []string{"spec", "redsync"}, cl.X.Ticks)
	assert.NotContains(t, cl.Caption, "Ticks of")
	require.Equal(t, "latency", cl.LineBy)
	var keys []string
	for _, e := range keyEntries(&cl) {
		keys = append(keys, e.label)
	}
	assert.Equal(t, []string{"latency = " + slowLinks[0], "latency = " + slowLinks[1], "latency = " + slowLinks[3]}, keys)

	hs := HeatmapFigures(sw)
	require.Len(t, hs, 1)
	assert.Equal(t, "latency = tail(uniform(200µs,800µs),0.02,·)", categoryLabel(hs[0].X))
	assert.Equal(t, "client", categoryLabel(hs[0].Y))
	assert.Contains(t, hs[0].Caption, "Ticks of latency show only what its values differ in")

	files, err := SweepFigures(filepath.Join("testdata", "sweep-latency"), t.TempDir())
	require.NoError(t, err)
	assert.Len(t, files, 3)
}
