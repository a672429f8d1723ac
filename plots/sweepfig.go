package plots

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
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
	// Ticks label the values where the axis writes them as text (a categorical axis, a
	// heatmap's cells): the values themselves, or, for values too long to sit side by
	// side, only what tells them apart (see shortLabels).
	Ticks []string
	// Common is what the values share when Ticks are cut short, with · where each tick
	// goes ("tail(uniform(200µs,800µs),0.02,const(·))"), and "" when Ticks are the
	// values. The axis's label and the figure's caption say it: a tick alone ("5ms") could
	// pass for a whole value.
	Common string
}

// newKnobAxis reads a knob's values as numbers where it can (durations in ms or s, by
// their size) and chooses a scale.
func newKnobAxis(knob string, values []string) KnobAxis {
	ax := KnobAxis{Knob: knob, Label: knob, Values: values, Ticks: values, Scale: Categorical}
	nums, unit, ok := numbers(knob, values)
	for i := range values {
		ax.X = append(ax.X, float64(i))
	}
	if !ok { // text: ticks as long as whole values could run into each other
		ax.Ticks, ax.Common = shortLabels(values)
		if ax.Common != "" {
			ax.Label = knob + " = " + ax.Common
		}
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
	for _, p := range knobs.Params() {
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
	// Counted marks a panel of events counted (the oracle's kinds, split-brain rounds):
	// one whose kinds are all zero says "none in any run" in the caption instead of
	// drawing a flat line.
	Counted bool
	// Ms marks a time in milliseconds, drawn in seconds when it passes 10 s.
	Ms bool
	// Unjoined draws points and bars without lines between them.
	Unjoined bool
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
	// Notes say what is not drawn and why (a kind that never happened, a measure the same
	// at every point), and what a reader would otherwise misread; the caption ends with
	// them.
	Notes []string
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
		f.Panels = knobPanels(sw, &f, keys, lines)
		f.Caption = caption(sw, f.Pooled, "Bars: 95% Wilson intervals for fractions; for times, each run's percentile, median over runs, bars from the 10th to the 90th percentile across runs; rates per 10,000 acquisitions pool all of a point's runs", f.Notes)
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
	rate := func(title, kind string, v func(c *Cell) float64) Panel {
		return Panel{Title: title, YLabel: "per 10,000 acquisitions", Series: series(kind, false, flat(v)), Counted: true}
	}
	overlap := append(series(kindValidity, false, (*Cell).ValidityFrac), series(kindUsage, true, (*Cell).UsageFrac)...)
	panels := []Panel{
		{Title: "Lock: runs with two holders", YLabel: "fraction of runs (95% Wilson CI)", Series: overlap, Bars: true, Unit01: true, Counted: true},
		rate("Lock: validity overlaps", kindValidity, (*Cell).ValidityPer10k),
		rate("Lock: usage overlaps", kindUsage, (*Cell).UsagePer10k),
		rate("Resource: stale writes accepted", kindStale, (*Cell).StalePer10k),
		rate("Resource: writes rejected by fencing", kindFenced, (*Cell).FencedPer10k),
		{Title: "Acquire success rate", YLabel: "acquired / (acquired + gave up), 95% CI", Series: series("acquire success rate", false, (*Cell).SuccessRate), Bars: true, Unit01: true},
		{Title: "Time to acquire: median (p50)", YLabel: "ms", Series: series("time to acquire (p50)", false, (*Cell).P50), Bars: true, Ms: true},
		{Title: "Time to acquire: p99", YLabel: "ms", Series: series("time to acquire (p99)", false, (*Cell).P99), Bars: true, Ms: true},
		{Title: "Split-brain rounds", YLabel: "rounds per run (mean)", Series: series(kindSplitBrain, false, flat((*Cell).SplitBrainMean)), Counted: true},
	}
	notes := &noteList{}
	var kept []Panel
	for _, pn := range panels {
		pn.Series = dropConstant(pn, notes)
		if len(pn.Series) == 0 {
			continue
		}
		if pn.Title == "Split-brain rounds" && !splitBrainSignal(sw, cells, notes) {
			continue
		}
		pn.LogY = spansDecades(pn.Series)
		if pn.Ms && !pn.LogY { // a log axis labels its ticks with their units instead
			toSeconds(&pn)
		}
		if pn.Title == "Time to acquire: median (p50)" {
			pn.Unjoined = noteBimodal(pn, notes)
		}
		if pn.Title == "Acquire success rate" {
			noteLowSuccess(pn, notes)
		}
		kept = append(kept, pn)
	}
	noteUnacquired(cells, notes)
	notes.add(f.X.ticksNote())
	f.Notes = append(notes.all(), sw.Notes...)
	return kept
}

// ticksNote says, for an axis whose ticks are cut short, what its values are: the axis's
// label says it too, but a label too long for its panel runs past the panel's edge. It is
// "" for an axis whose ticks are its values.
func (ax KnobAxis) ticksNote() string {
	if ax.Common == "" {
		return ""
	}
	return "Ticks of " + ax.Knob + " show only what its values differ in: each value is " + ax.Common + ", with the tick for " + hole
}

// The kinds of the oracle, as the figures name them.
const (
	kindValidity = "validity overlap"
	kindUsage    = "usage overlap"
	kindStale    = "stale write accepted"
	kindFenced   = "write rejected by fencing"
	// kindSplitBrain is not a safety kind: a liveness count, as rare as one.
	kindSplitBrain = "split-brain round"
)

// noteList collects a figure's notes once each, in order, and the kinds that never
// happened, said first in one sentence.
type noteList struct{ none, list []string }

func (n *noteList) add(s string) {
	if s != "" && !slices.Contains(n.list, s) {
		n.list = append(n.list, s)
	}
}

// noneOf notes a kind that never happened.
func (n *noteList) noneOf(kind string) {
	if !slices.Contains(n.none, kind) {
		n.none = append(n.none, kind)
	}
}

// all returns the notes: "No validity overlap, usage overlap or split-brain round in any
// run", then the rest.
func (n *noteList) all() []string {
	if len(n.none) == 0 {
		return n.list
	}
	kinds := n.none[0]
	if k := len(n.none); k > 1 {
		kinds = strings.Join(n.none[:k-1], ", ") + " or " + n.none[k-1]
	}
	return append([]string{"No " + kinds + " in any run"}, n.list...)
}

// dropConstant removes the kinds of a panel whose every value is the same (or missing):
// a flat line says nothing a sentence cannot. A safety kind at zero everywhere becomes
// "none in any run"; any other measure "the same at every point". Kinds that vary stay,
// with all their lines.
func dropConstant(pn Panel, notes *noteList) []Series {
	var kinds []string
	for _, s := range pn.Series {
		if !slices.Contains(kinds, s.Kind) {
			kinds = append(kinds, s.Kind)
		}
	}
	var out []Series
	for _, k := range kinds {
		v, same := math.NaN(), true
		for _, s := range pn.Series {
			for _, p := range s.Points {
				switch {
				case s.Kind != k || math.IsNaN(p.Y):
				case math.IsNaN(v):
					v = p.Y
				case p.Y != v:
					same = false
				}
			}
		}
		switch {
		case !same:
			for _, s := range pn.Series {
				if s.Kind == k {
					out = append(out, s)
				}
			}
		case math.IsNaN(v):
			notes.add(upperFirst(k) + ": nothing measured at any point")
		case pn.Counted && v == 0:
			notes.noneOf(k)
		case pn.Title == "Acquire success rate" && v == 1:
			notes.add("Every acquire that finished got the lock (success rate 1 at every point)")
		case twoKinds(pn):
			notes.add(pn.Title + ", " + k + ": " + short(v) + " at every point")
		default:
			notes.add(pn.Title + ": " + short(v) + " at every point")
		}
	}
	return out
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// splitBrainTiny is the largest mean of split-brain rounds per run below which the panel
// would plot noise: a handful of rounds in hundreds of runs, where a point's mean of 0.04
// is two rounds in fifty runs and its neighbour's 0 is none.
const splitBrainTiny = 0.2

// splitBrainSignal reports whether split-brain rounds are frequent enough to plot; when
// not, it says how many there were.
func splitBrainSignal(sw *Sweep, cells map[string]*Cell, notes *noteList) bool {
	var rounds int64
	var most, runs int
	var maxMean float64
	for _, c := range cells {
		rounds += c.SplitBrain
		runs += c.Runs
		most = max(most, c.SplitBrainRuns)
		maxMean = max(maxMean, c.SplitBrainMean())
	}
	if maxMean >= splitBrainTiny {
		return true
	}
	notes.add(fmt.Sprintf("Split-brain rounds not drawn: %d in all %d runs, in at most %d runs of any point: too few to tell apart from chance",
		rounds, runs, most))
	return false
}

// toSeconds redraws a time panel in seconds when its values pass 10 s: 150,000 ms reads
// worse than 150 s.
func toSeconds(pn *Panel) {
	hi := 0.0
	for _, s := range pn.Series {
		for _, p := range s.Points {
			for _, v := range []float64{p.Y, p.Hi} {
				if !math.IsNaN(v) {
					hi = max(hi, v)
				}
			}
		}
	}
	if hi <= 10_000 {
		return
	}
	pn.YLabel = "s"
	for i := range pn.Series {
		for j := range pn.Series[i].Points {
			p := &pn.Series[i].Points[j]
			p.Y, p.Lo, p.Hi = p.Y/1000, p.Lo/1000, p.Hi/1000
		}
	}
}

// bimodalSpread is the ratio of the 90th to the 10th percentile across runs of a point's
// median time to acquire past which the runs disagree about which of two modes their
// median falls in.
const bimodalSpread = 100

// noteBimodal explains a median time to acquire that jumps by orders of magnitude: the
// acquisitions of a run are of two kinds, and the run's median falls on either side.
// It reports whether it did: the panel then draws its points unjoined, since a line
// between two modes draws a trend that is not there.
func noteBimodal(pn Panel, notes *noteList) bool {
	for _, s := range pn.Series {
		for _, p := range s.Points {
			if p.Lo > 0 && p.Hi/p.Lo >= bimodalSpread {
				notes.add("Time to acquire is bimodal: an acquire that finds the lock free takes milliseconds, one that " +
					"waits out a holder takes up to a TTL; each run's median falls on either side, so the p50 points jump " +
					"(not joined by lines) and their bars span both (hence the log scale); p99 shows the waits")
				return true
			}
		}
	}
	return false
}

// lowSuccess is the acquire success rate below which the caption says what the rate
// counts: readers take 0.14 for "the lock fails 86% of the time".
const lowSuccess = 0.5

// noteLowSuccess explains a low acquire success rate by what it counts: each acquire call
// gives up after its tries, and the client calls again, so clients queueing for a lock
// held for seconds see most calls give up while every one of them gets the lock in the
// end. Time to acquire spans those give-ups.
func noteLowSuccess(pn Panel, notes *noteList) {
	for _, s := range pn.Series {
		for _, p := range s.Points {
			if p.Y < lowSuccess {
				notes.add("Acquire success counts acquire calls: a call gives up after its tries (about tries × retry_delay) " +
					"and the client calls again, so where clients queue for a lock held for seconds most calls give up; " +
					"a low rate is waiting, not failure. Time to acquire runs from a wait's first call to success, across give-ups")
				return
			}
		}
	}
}

// noteUnacquired says when times come from fewer runs than the points hold: runs that
// never acquired have no time to acquire.
func noteUnacquired(cells map[string]*Cell, notes *noteList) {
	fewest, of := -1, 0
	for _, k := range slices.Sorted(maps.Keys(cells)) { // in order: equal shares (1 of 2, 2 of 4) always name the same
		c := cells[k]
		if n := len(c.P50Ms); n < c.Runs && (fewest < 0 || n*of < fewest*c.Runs) {
			fewest, of = n, c.Runs
		}
	}
	if fewest >= 0 {
		notes.add(fmt.Sprintf("Times to acquire are over the runs that acquired at least once: as few as %d of %d at some point", fewest, of))
	}
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
// the swept knobs it pools over, how to read its bars, then its notes (what is not drawn
// and why, and the sweep's own notes).
func caption(sw *Sweep, pooled []string, bars string, notes []string) string {
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
	for _, n := range notes { // a spec's own sentences may end in a full stop already
		parts = append(parts, strings.TrimRight(n, ". "))
	}
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

// HeatmapFigure is a pair of swept knobs with a heatmap per kind of safety failure that
// happened (validity overlaps, usage overlaps, stale writes accepted, writes rejected by
// fencing: each per 10,000 acquisitions, never summed) and one of the 99th percentile of
// time to acquire.
type HeatmapFigure struct {
	Name    string // "heatmap-ttl-nodes"
	Title   string
	X, Y    KnobAxis
	Pooled  []string
	Caption string
	Maps    []Heatmap
	Notes   []string // what is not drawn and why, as KnobFigure.Notes
}

// HeatmapFigures computes one figure per pair of swept knobs, in the spec's order, but
// none for a pair over which nothing varies: a map of one colour says nothing.
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
			f.Title = "Safety by kind and p99 time to acquire over " + f.X.Knob + " × " + f.Y.Knob
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
			notes := &noteList{}
			for _, k := range []struct {
				title, kind string
				v           func(c *Cell) float64
			}{
				{"Lock: validity overlaps", kindValidity, (*Cell).ValidityPer10k},
				{"Lock: usage overlaps", kindUsage, (*Cell).UsagePer10k},
				{"Resource: stale writes accepted", kindStale, (*Cell).StalePer10k},
				{"Resource: writes rejected by fencing", kindFenced, (*Cell).FencedPer10k},
			} {
				z := grid(k.v)
				if v, same := constant(z); same {
					if v == 0 || math.IsNaN(v) {
						notes.noneOf(k.kind)
					} else {
						notes.add(upperFirst(k.kind) + ": " + short(v) + " per 10,000 acquisitions in every cell")
					}
					continue
				}
				f.Maps = append(f.Maps, Heatmap{Title: k.title, Red: true, Unit: "per 10,000 acquisitions", Z: z})
			}
			p99 := Heatmap{Title: "Time to acquire, 99th percentile", Unit: "p99 time to acquire (ms, median over runs)",
				Z: grid(func(c *Cell) float64 { return c.P99().Y })}
			if hi := gridMax(p99.Z); hi > 10_000 {
				p99.Unit = "p99 time to acquire (s, median over runs)"
				for _, row := range p99.Z {
					for x := range row {
						row[x] /= 1000
					}
				}
			}
			switch v, same := constant(p99.Z); {
			case !same:
				f.Maps = append(f.Maps, p99)
			case math.IsNaN(v):
				notes.add("Time to acquire: nothing acquired in any cell")
			default:
				notes.add("Time to acquire, 99th percentile: " + short(v) + " " + strings.TrimSuffix(strings.TrimPrefix(p99.Unit, "p99 time to acquire ("), ", median over runs)") + " in every cell")
			}
			if len(f.Maps) == 0 {
				continue // nothing varies over this pair: the knob figures' captions say what never happened
			}
			if !f.Maps[0].Red {
				f.Title = "p99 time to acquire over " + f.X.Knob + " × " + f.Y.Knob
				if len(notes.none) == 4 {
					f.Title += " (no safety failure of any kind)"
				}
			}
			noteUnacquired(cells, notes)
			notes.add(f.X.ticksNote())
			notes.add(f.Y.ticksNote())
			f.Notes = append(notes.all(), sw.Notes...)
			f.Caption = caption(sw, f.Pooled, "Safety: a cell's count of that kind over all its acquisitions, per 10,000; p99: each run's 99th percentile, median over runs; –: nothing measured", f.Notes)
			out = append(out, f)
		}
	}
	return out
}

// constant reports whether every measured value of z is the same, and which (NaN when
// nothing was measured).
func constant(z [][]float64) (float64, bool) {
	v := math.NaN()
	for _, row := range z {
		for _, x := range row {
			switch {
			case math.IsNaN(x):
			case math.IsNaN(v):
				v = x
			case x != v:
				return 0, false
			}
		}
	}
	return v, true
}

// gridMax is the largest measured value of z, or -Inf.
func gridMax(z [][]float64) float64 {
	hi := math.Inf(-1)
	for _, row := range z {
		for _, x := range row {
			if !math.IsNaN(x) {
				hi = max(hi, x)
			}
		}
	}
	return hi
}
