package plots

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments"
)

// Scale says how a knob's values are placed along an axis.
type Scale uint8

// The scales.
const (
	// Linear places numeric values at their value.
	Linear Scale = iota
	// Log places positive values spanning more than a decade on a log axis.
	Log
	// Categorical places values evenly, in the sweep's order: for names (persistence,
	// variant), and for numbers that span decades but include zero (retry_jitter 0s, 1ms,
	// 100ms), which no log axis can show.
	Categorical
)

// maxLines bounds the lines of one panel: past it the second knob is pooled instead.
const maxLines = 8

// decade is the ratio of the largest to the smallest positive value beyond which a knob
// is drawn on a log axis: beyond it, linear spacing crowds the small values into a corner.
const decade = 20

// KnobAxis is how a knob's values are drawn along an axis.
type KnobAxis struct {
	Knob   string
	Label  string    // with its unit and scale: "ttl (s, log scale)"
	Unit   string    // the unit of X: "s", "ms", "ppm", or ""
	Scale  Scale     // linear, log or categorical
	Values []string  // in the sweep's order
	X      []float64 // the position of each value (its index when categorical)
}

// newKnobAxis reads a knob's values as numbers where it can (durations in ms or s, by
// their size) and chooses a scale.
func newKnobAxis(knob string, values []string) KnobAxis {
	ax := KnobAxis{Knob: knob, Label: knob, Values: values, Scale: Categorical}
	nums, unit, ok := numbers(knob, values)
	for i := range values {
		ax.X = append(ax.X, float64(i))
	}
	if !ok {
		return ax
	}
	ax.Unit = unit
	lo, hi, zero := math.Inf(1), math.Inf(-1), false
	for _, v := range nums {
		if v <= 0 {
			zero = true
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	switch {
	case hi/lo >= decade && zero: // values as written, evenly spaced
		ax.Label = knob + " (not to scale)"
		return ax
	case hi/lo >= decade:
		ax.Scale = Log
	default:
		ax.Scale = Linear
	}
	ax.X = nums
	var notes []string
	if unit != "" {
		notes = append(notes, unit)
	}
	if ax.Scale == Log {
		notes = append(notes, "log scale")
	}
	if len(notes) > 0 {
		ax.Label += " (" + strings.Join(notes, ", ") + ")"
	}
	return ax
}

// numbers parses a knob's values: durations (in ms when all are below a second, else in
// s) or plain numbers, with the knob's unit from the registry.
func numbers(knob string, values []string) ([]float64, string, bool) {
	durs := make([]time.Duration, len(values))
	allDur := true
	for i, v := range values {
		d, err := time.ParseDuration(v)
		if err != nil {
			allDur = false
			break
		}
		durs[i] = d
	}
	if allDur && len(values) > 0 {
		unit, scale := "s", float64(time.Second)
		if slices.Max(durs) < time.Second {
			unit, scale = "ms", float64(time.Millisecond)
		}
		out := make([]float64, len(durs))
		for i, d := range durs {
			out[i] = float64(d) / scale
		}
		return out, unit, true
	}
	out := make([]float64, len(values))
	for i, v := range values {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, "", false
		}
		out[i] = f
	}
	return out, knobUnit(knob), true
}

// knobUnit is the unit of a numeric knob as an axis label shows it.
func knobUnit(knob string) string {
	for _, p := range experiments.Params() {
		if p.Name == knob {
			switch p.Unit {
			case "ppm":
				return "ppm"
			case "1/s":
				return "per s"
			case "probability":
				return "probability"
			}
		}
	}
	return ""
}

// Point is one value of a series: at X, Y with an interval or spread [Lo, Hi] (NaN when
// none), from N runs.
type Point struct {
	X  float64
	Y  float64
	Lo float64
	Hi float64
	N  int
}

// Series is one line of a panel.
type Series struct {
	Label  string // the line knob's value ("nodes=5"), or "" for the only line
	Line   int    // index of the line knob's value: the line's colour
	Dashed bool   // the second measure of a two-measure panel (usage overlaps)
	Kind   string // what it measures, for the legend ("validity overlap")
	Points []Point
}

// Panel is one chart of a knob figure.
type Panel struct {
	Title  string
	YLabel string
	Series []Series
	Bars   bool // Lo and Hi are drawn as error bars
	LogY   bool // positive values spanning more than a decade
	Unit01 bool // a fraction: the Y axis runs from 0 to 1
}

// KnobFigure is the safety and liveness of a sweep against one swept knob.
type KnobFigure struct {
	Name    string // the file name without extension: "knob-ttl"
	Title   string
	X       KnobAxis
	LineBy  string   // the knob with one line per value, or ""
	Lines   []string // its values
	Pooled  []string // swept knobs pooled over in this figure
	Caption string
	Panels  []Panel
}

// KnobFigures computes one figure per swept knob with more than one value. A second
// swept knob (the one with the fewest values, up to maxLines) gives one line per value;
// any further swept knob is pooled over and the caption says so.
func KnobFigures(sw *Sweep) []KnobFigure {
	var out []KnobFigure
	swept := sweptAxes(sw)
	for _, a := range swept {
		f := KnobFigure{Name: "knob-" + fileSafe(sw.Axes[a].Knob), X: newKnobAxis(sw.Axes[a].Knob, sw.Axes[a].Values)}
		line := -1
		for _, b := range swept {
			if b != a && len(sw.Axes[b].Values) <= maxLines && (line < 0 || len(sw.Axes[b].Values) < len(sw.Axes[line].Values)) {
				line = b
			}
		}
		keys := []int{a}
		lines := []string{""}
		if line >= 0 {
			f.LineBy, f.Lines = sw.Axes[line].Knob, sw.Axes[line].Values
			keys, lines = append(keys, line), f.Lines
		}
		for _, b := range swept {
			if b != a && b != line {
				f.Pooled = append(f.Pooled, sw.Axes[b].Knob)
			}
		}
		f.Title = "Safety and liveness against " + f.X.Knob
		if f.LineBy != "" {
			f.Title += ", one line per " + f.LineBy
		}
		f.Caption = caption(sw, f.Pooled, "Bars: 95% Wilson intervals for fractions; for times, each run's percentile, median over runs, bars from the 10th to the 90th percentile across runs")
		f.Panels = knobPanels(sw, &f, keys, lines)
		out = append(out, f)
	}
	return out
}

// sweptAxes returns the indices of the axes with more than one value.
func sweptAxes(sw *Sweep) []int {
	var out []int
	for i, a := range sw.Axes {
		if len(a.Values) > 1 {
			out = append(out, i)
		}
	}
	return out
}

// fileSafe keeps a knob name usable in a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// measure is one quantity a panel plots, computed from a cell.
type measure func(c *Cell) Estimate

func knobPanels(sw *Sweep, f *KnobFigure, keys []int, lines []string) []Panel {
	cells := sw.Pool(keys...)
	series := func(kind string, dashed bool, m measure) []Series {
		var out []Series
		for li, lv := range lines {
			s := Series{Line: li, Dashed: dashed, Kind: kind}
			if f.LineBy != "" {
				s.Label = f.LineBy + "=" + lv
			}
			for xi, xv := range f.X.Values {
				vals := []string{xv, lv}
				c := cells[cellKey(vals, []int{0, 1}[:len(keys)])]
				if c == nil {
					continue
				}
				e := m(c)
				s.Points = append(s.Points, Point{X: f.X.X[xi], Y: e.Y, Lo: e.Lo, Hi: e.Hi, N: c.Runs})
			}
			out = append(out, s)
		}
		return out
	}
	flat := func(v func(c *Cell) float64) measure {
		return func(c *Cell) Estimate { return Estimate{v(c), math.NaN(), math.NaN()} }
	}
	overlap := append(series("validity overlap", false, (*Cell).ValidityFrac), series("usage overlap", true, (*Cell).UsageFrac)...)
	panels := []Panel{
		{Title: "Runs with two holders", YLabel: "fraction of runs (95% Wilson CI)", Series: overlap, Bars: true, Unit01: true},
		{Title: "Violations per 10,000 acquisitions", YLabel: "validity + usage overlaps + stale writes", Series: series("violations", false, flat((*Cell).ViolationsPer10k))},
		{Title: "Acquire success rate", YLabel: "acquired / (acquired + gave up), 95% CI", Series: series("success", false, (*Cell).SuccessRate), Bars: true, Unit01: true},
		{Title: "Time to acquire: median (p50)", YLabel: "ms", Series: series("p50", false, (*Cell).P50), Bars: true},
		{Title: "Time to acquire: p99", YLabel: "ms", Series: series("p99", false, (*Cell).P99), Bars: true},
		{Title: "Split-brain rounds", YLabel: "rounds per run (mean)", Series: series("split brain", false, flat((*Cell).SplitBrainMean))},
	}
	for i := range panels {
		panels[i].LogY = spansDecades(panels[i].Series)
	}
	return panels
}

// spansDecades reports whether a panel's values are all positive and spread wide enough
// for a log axis.
func spansDecades(ss []Series) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.Points {
			for _, v := range []float64{p.Y, p.Lo, p.Hi} {
				if math.IsNaN(v) {
					continue
				}
				if v <= 0 {
					return false
				}
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	return hi > lo && hi/lo >= 100
}

// caption states the fixed conditions of a figure: the base knobs, replicates and seed,
// and the swept knobs it pools over.
func caption(sw *Sweep, pooled []string, bars string) string {
	var parts []string
	var fixed []string
	for _, kv := range sw.Base {
		fixed = append(fixed, kv.Knob+"="+kv.Value)
	}
	for _, a := range sw.Axes {
		if len(a.Values) == 1 {
			fixed = append(fixed, a.Knob+"="+a.Values[0])
		}
	}
	switch {
	case len(fixed) > 0:
		rest := "every other knob at its default (redlock-sim params)"
		for _, kv := range sw.Base {
			if kv.Knob == "scenario" {
				rest = "every other knob as the scenario sets it, or at its default"
			}
		}
		parts = append(parts, "Fixed: "+strings.Join(fixed, ", ")+"; "+rest)
	case sw.Replicates == 0:
		parts = append(parts, "Fixed conditions unknown (no manifest.json)")
	default:
		parts = append(parts, "Every knob not swept at its default (redlock-sim params)")
	}
	if sw.Replicates > 0 {
		parts = append(parts, strconv.Itoa(sw.Replicates)+" runs per point, sweep seed "+strconv.FormatUint(sw.Seed, 10))
	}
	if len(pooled) > 0 {
		parts = append(parts, "Pooled over "+strings.Join(pooled, ", "))
	}
	parts = append(parts, bars)
	if !sw.Complete && sw.Replicates > 0 {
		parts = append(parts, "INCOMPLETE sweep: not every run is in")
	}
	return strings.Join(parts, ". ") + "."
}

// Heatmap is one measure over a pair of swept knobs.
type Heatmap struct {
	Title string
	Red   bool        // a safety measure: drawn in reds
	Unit  string      // the colour scale's label
	Z     [][]float64 // Z[y][x]; NaN where nothing was measured
}

// HeatmapFigure is a pair of swept knobs with two heatmaps: violations per 10,000
// acquisitions, and the 99th percentile of time to acquire.
type HeatmapFigure struct {
	Name    string // "heatmap-ttl-nodes"
	Title   string
	X, Y    KnobAxis
	Pooled  []string
	Caption string
	Maps    []Heatmap
}

// HeatmapFigures computes one figure per pair of swept knobs, in the spec's order.
func HeatmapFigures(sw *Sweep) []HeatmapFigure {
	var out []HeatmapFigure
	swept := sweptAxes(sw)
	for i, a := range swept {
		for _, b := range swept[i+1:] {
			f := HeatmapFigure{Name: "heatmap-" + fileSafe(sw.Axes[a].Knob) + "-" + fileSafe(sw.Axes[b].Knob),
				X: newKnobAxis(sw.Axes[a].Knob, sw.Axes[a].Values), Y: newKnobAxis(sw.Axes[b].Knob, sw.Axes[b].Values)}
			for _, c := range swept {
				if c != a && c != b {
					f.Pooled = append(f.Pooled, sw.Axes[c].Knob)
				}
			}
			f.Title = "Violations and p99 time to acquire over " + f.X.Knob + " × " + f.Y.Knob
			f.Caption = caption(sw, f.Pooled, "Violations: all of a cell's violations over all its acquisitions; p99: each run's 99th percentile, median over runs; –: nothing measured")
			cells := sw.Pool(a, b)
			grid := func(v func(c *Cell) float64) [][]float64 {
				z := make([][]float64, len(f.Y.Values))
				for yi, yv := range f.Y.Values {
					z[yi] = make([]float64, len(f.X.Values))
					for xi, xv := range f.X.Values {
						z[yi][xi] = math.NaN()
						if c := cells[cellKey([]string{xv, yv}, []int{0, 1})]; c != nil {
							z[yi][xi] = v(c)
						}
					}
				}
				return z
			}
			f.Maps = []Heatmap{
				{Title: "Violations per 10,000 acquisitions", Red: true, Unit: "violations / 10k acquisitions", Z: grid((*Cell).ViolationsPer10k)},
				{Title: "Time to acquire, 99th percentile", Unit: "p99 time to acquire (ms, median over runs)", Z: grid(func(c *Cell) float64 { return c.P99().Y })},
			}
			out = append(out, f)
		}
	}
	return out
}
