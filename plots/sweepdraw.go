package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SweepOptions controls the figures of a sweep.
type SweepOptions struct {
	Format        Format // PNG when empty
	Width, Height int    // pixels; 0 means 1600×900
	// Notes are added to every figure's caption, after the sweep's own (manifest.json's
	// spec.notes and notes): the place to say why a number that looks alarming is what it
	// is, e.g. "clients hold the lock for an hour, so most acquires give up".
	Notes []string
}

// ErrNothingToPlot is returned (wrapped) by SweepFigures for a sweep in which no knob
// takes more than one value: its results are complete, there is just no axis to draw
// them against.
var ErrNothingToPlot = errors.New("no knob takes more than one value: nothing to plot against")

// SweepFigures draws the figures of the sweep folder inDir into outDir as PNG, creating
// outDir if needed, and returns the files written: per swept knob, its safety and
// liveness panels (knob-KNOB.png); per pair of swept knobs, heatmaps of violations and of
// p99 time to acquire (heatmap-A-B.png). `redlock-sim sweep` calls it when a sweep ends
// and `redlock-sim plot` on any sweep folder.
func SweepFigures(inDir, outDir string) ([]string, error) {
	return SweepFiguresWith(inDir, outDir, SweepOptions{})
}

// SweepFiguresWith is SweepFigures with a format and size.
func SweepFiguresWith(inDir, outDir string, opt SweepOptions) ([]string, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	sw, err := ReadSweep(inDir)
	if err != nil {
		return nil, err
	}
	return DrawSweep(sw, outDir, opt)
}

// check refuses a format other than PNG and SVG.
func (opt SweepOptions) check() error {
	if opt.Format != "" && opt.Format != PNG && opt.Format != SVG {
		return fmt.Errorf("figure format %q: want png or svg", opt.Format)
	}
	return nil
}

// DrawSweep is SweepFiguresWith for a sweep folder already read with ReadSweep, for a
// caller that tells a folder it cannot read (the user's to fix) from figures it cannot
// write.
func DrawSweep(sw *Sweep, outDir string, opt SweepOptions) ([]string, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	if opt.Format == "" {
		opt.Format = PNG
	}
	if opt.Width == 0 && opt.Height == 0 {
		opt.Width, opt.Height = DefaultWidth, DefaultHeight
	}
	sw.Notes = append(sw.Notes, opt.Notes...)
	knobs, maps := KnobFigures(sw), HeatmapFigures(sw)
	if len(knobs) == 0 {
		return nil, fmt.Errorf("sweep folder %s: %w", sw.Dir, ErrNothingToPlot)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("figures folder %s: %w", outDir, unwrapPathErr(err))
	}
	var written []string
	save := func(name string, draw func(dc draw.Canvas)) error {
		f, err := newFigure(opt.Format, opt.Width, opt.Height)
		if err != nil {
			return err
		}
		draw(f.dc)
		path := filepath.Join(outDir, name+"."+string(opt.Format))
		if err := f.save(path); err != nil {
			return err
		}
		written = append(written, path)
		return nil
	}
	var errs []error
	for i := range knobs {
		errs = append(errs, save(knobs[i].Name, func(dc draw.Canvas) { drawKnobFigure(dc, &knobs[i]) }))
	}
	for i := range maps {
		errs = append(errs, save(maps[i].Name, func(dc draw.Canvas) { drawHeatmapFigure(dc, &maps[i]) }))
	}
	return written, errors.Join(errs...)
}

// lineColor is the colour of a line knob's i-th value.
func lineColor(i int) color.NRGBA { return clientColors[i%len(clientColors)] }

// drawFrame writes a figure's title on top and its caption at the bottom, and returns
// the canvas left between them.
func drawFrame(dc draw.Canvas, title, caption string) draw.Canvas {
	pad := vg.Points(10)
	top := drawHeader(dc, title, "", pad)
	cs := textStyle(subtitleSize-1, darkGrey)
	lines := wrap(cs, caption, dc.Max.X-dc.Min.X-2*pad)
	y := dc.Min.Y + pad
	for i := len(lines) - 1; i >= 0; i-- {
		dc.FillText(cs, vg.Point{X: dc.Min.X + pad, Y: y}, lines[i])
		y += cs.Height(lines[i]) * 1.2
	}
	return draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: dc.Min.X + pad, Y: y + pad/2}, Max: vg.Point{X: dc.Max.X - pad, Y: top}}}
}

// drawKnobFigure draws a knob figure: a key for the lines under the title, then its
// panels on a grid sized to their number.
func drawKnobFigure(dc draw.Canvas, f *KnobFigure) {
	area := drawFrame(dc, f.Title, f.Caption)
	area.Max.Y = drawLineKey(area, f)
	rows, cols := panelGrid(len(f.Panels))
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
		for c := range plots[r] {
			if i := r*cols + c; i < len(f.Panels) {
				plots[r][c] = panelPlot(f, &f.Panels[i])
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(22), PadY: vg.Points(16), PadTop: vg.Points(4)}
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] != nil {
				plots[r][c].Draw(tiles.At(area, c, r))
			}
		}
	}
}

// panelGrid returns the rows and columns for n panels: one row up to three, then rows of
// three, or of four when that saves a row.
func panelGrid(n int) (rows, cols int) {
	switch {
	case n <= 3:
		return 1, max(n, 1)
	case n == 4:
		return 2, 2
	case n <= 6:
		return 2, 3
	case n <= 8:
		return 2, 4
	}
	return (n + 2) / 3, 3
}

// keyEntry is one entry of a knob figure's line key: a line style and its meaning.
type keyEntry struct {
	c      color.Color
	dashed bool
	label  string
}

// keyEntries lists what the colours and dashes of a knob figure's lines mean: one colour
// per value of the line knob, then, for a panel that tells two kinds apart by dashes, what
// each dash is.
func keyEntries(f *KnobFigure) []keyEntry {
	var es []keyEntry
	for i, v := range f.Lines {
		es = append(es, keyEntry{lineColor(i), false, f.LineBy + " = " + v})
	}
	for _, pn := range f.Panels {
		if !twoKinds(pn) {
			continue
		}
		for _, s := range pn.Series {
			if s.Line == 0 && s.Dashed {
				es = append(es, keyEntry{darkGrey, true, s.Kind + " (dashed, ■) in “" + pn.Title + "”"})
			} else if s.Line == 0 {
				es = append(es, keyEntry{darkGrey, false, s.Kind + " (solid, ●) in “" + pn.Title + "”"})
			}
		}
	}
	return es
}

// The line key's geometry: a line segment, the gap to its label, the gap to the next
// entry, and the height of a row.
var (
	keySeg   = vg.Points(26)
	keyGap   = vg.Points(5)
	keySpace = vg.Points(22)
	keyRow   = vg.Points(18)
)

// placeKey places the key's entries left to right from (x0, y), starting a new row when
// the next entry would pass x1, so that no label is ever cut off. It returns each entry's
// left end and the y of its row.
func placeKey(es []keyEntry, sty draw.TextStyle, x0, x1, y vg.Length) []vg.Point {
	var at []vg.Point
	x := x0
	for _, e := range es {
		w := keySeg + keyGap + sty.Width(e.label)
		if x > x0 && x+w > x1 {
			x, y = x0, y-keyRow
		}
		at = append(at, vg.Point{X: x, Y: y})
		x += w + keySpace
	}
	return at
}

// drawLineKey writes, under the title, what the colours and dashes of the lines mean,
// on as many rows as it takes, and returns the height left below it.
func drawLineKey(area draw.Canvas, f *KnobFigure) vg.Length {
	es := keyEntries(f)
	if len(es) == 0 {
		return area.Max.Y
	}
	sty := keyStyle()
	at := placeKey(es, sty, area.Min.X+vg.Points(4), area.Max.X, area.Max.Y-vg.Points(8))
	for i, e := range es {
		ls := draw.LineStyle{Color: e.c, Width: vg.Points(2.5)}
		if e.dashed {
			ls.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		x, y := at[i].X, at[i].Y
		area.StrokeLine2(ls, x, y, x+keySeg, y)
		area.FillText(sty, vg.Point{X: x + keySeg + keyGap, Y: y}, e.label)
	}
	return at[len(at)-1].Y - vg.Points(12)
}

func keyStyle() draw.TextStyle {
	sty := textStyle(legendSize+0.5, black)
	sty.YAlign = draw.YCenter
	return sty
}

// twoKinds reports whether a panel draws more than one kind, told apart by dashes.
func twoKinds(pn Panel) bool {
	for _, s := range pn.Series {
		if s.Kind != pn.Series[0].Kind {
			return true
		}
	}
	return false
}

// panelPlot builds the gonum plot of one panel.
func panelPlot(f *KnobFigure, pn *Panel) *plot.Plot {
	p := plot.New()
	styleAxes(p, 12.5, 11)
	p.Title.Text = pn.Title
	p.Title.TextStyle.Font.Size = 13.5
	p.X.Label.Text = f.X.Label
	p.Y.Label.Text = pn.YLabel
	p.Y.Label.TextStyle.Font.Size = 11
	p.Add(plotter.NewGrid())
	switch f.X.Scale {
	case Log:
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = valueTicks(f.X)
	default:
		p.X.Tick.Marker = valueTicks(f.X)
	}
	if pn.LogY {
		// Keep this label short: gonum centres it on the mean of the range's ends, which
		// on a log axis sits near the top, and a long one would squash the plot.
		p.Y.Label.Text += " (log scale)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = inRange{plot.LogTicks{Prec: -1}}
		if pn.Ms {
			p.Y.Label.Text = "time (log scale)"
			p.Y.Tick.Marker = msTicks{}
		}
	}
	if !pn.LogY {
		p.Y.Tick.Marker = niceTicks{n: 5}
	}
	for i, s := range pn.Series {
		addSeries(p, pn, s, dodge(f.X, i, len(pn.Series)))
	}
	padX(p, f.X)
	switch {
	case pn.Unit01:
		p.Y.Min, p.Y.Max = 0, 1.02
	case pn.LogY: // whole decades, so both ends carry a labelled tick
		p.Y.Min = math.Pow(10, math.Floor(math.Log10(p.Y.Min)))
		p.Y.Max = math.Pow(10, math.Ceil(math.Log10(p.Y.Max)))
	default:
		p.Y.Min = math.Min(p.Y.Min, 0)
		p.Y.Max *= 1.04 // room over the highest bar's cap
		if p.Y.Max <= p.Y.Min {
			p.Y.Max = p.Y.Min + 1
		}
	}
	return p
}

// msTicks marks a log axis of milliseconds at each power of ten, labelled with its unit
// ("1 ms", "100 ms", "10 s"), so that a reader never counts zeros.
type msTicks struct{}

// Ticks returns the powers of ten within [lo, hi], with 2× and 5× as unlabelled minor
// ticks.
func (msTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi*(1+1e-9); e++ {
		v := math.Pow(10, e)
		if v >= lo*(1-1e-9) {
			ticks = append(ticks, plot.Tick{Value: v, Label: msLabel(v)})
		}
		for _, m := range []float64{2, 5} {
			if w := m * v; w >= lo && w <= hi {
				ticks = append(ticks, plot.Tick{Value: w})
			}
		}
	}
	return ticks
}

// msLabel renders a time in milliseconds in its natural unit: "10 µs", "1 ms", "10 s",
// "1000 s".
func msLabel(ms float64) string {
	switch {
	case ms >= 1000:
		return number(ms/1000) + " s"
	case ms >= 1:
		return number(ms) + " ms"
	}
	return number(ms*1000) + " µs"
}

// inRange keeps only the ticks of its Ticker that fall inside the axis: gonum's LogTicks
// also returns the powers of ten around the range, whose labels then push the plot
// into a corner.
type inRange struct{ plot.Ticker }

// Ticks returns the ticks within [lo, hi].
func (t inRange) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, tk := range t.Ticker.Ticks(lo, hi) {
		if tk.Value >= lo && tk.Value <= hi {
			out = append(out, tk)
		}
	}
	return out
}

// padX leaves room around the first and last values so their markers and bars show.
func padX(p *plot.Plot, ax KnobAxis) {
	lo, hi := slicesMinMax(ax.X)
	switch ax.Scale {
	case Log:
		p.X.Min, p.X.Max = lo/1.25, hi*1.25
	default:
		d := (hi - lo) * 0.06
		if d == 0 {
			d = 0.5
		}
		p.X.Min, p.X.Max = lo-d, hi+d
	}
}

func slicesMinMax(v []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// valueTicks marks exactly the knob's values: as numbers in the axis's unit, or by their
// tick labels on a categorical axis (the values as the sweep wrote them, or what tells
// long ones apart).
func valueTicks(ax KnobAxis) plot.Ticker {
	ticks := make([]plot.Tick, len(ax.Values))
	for i, v := range ax.Ticks {
		if ax.Scale != Categorical {
			v = number(ax.X[i])
		}
		ticks[i] = plot.Tick{Value: ax.X[i], Label: v}
	}
	return plot.ConstantTicks(ticks)
}

// number renders an axis value with up to four significant digits.
func number(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// dodge returns the function that shifts series i of n sideways, a little, so that the
// markers and error bars of lines that agree (all at 0) stay visible side by side.
func dodge(ax KnobAxis, i, n int) func(x float64) float64 {
	off := float64(i) - float64(n-1)/2
	lo, hi := slicesMinMax(ax.X)
	switch {
	case n < 2:
		return func(x float64) float64 { return x }
	case ax.Scale == Log:
		f := math.Pow(hi/lo, 0.012*off)
		return func(x float64) float64 { return x * f }
	}
	d := (hi - lo) * 0.012 * off
	if hi == lo {
		d = 0.02 * off
	}
	return func(x float64) float64 { return x + d }
}

// addSeries draws a series as a line with markers (and error bars), leaving out points
// with nothing measured; shift moves it sideways (see dodge).
func addSeries(p *plot.Plot, pn *Panel, s Series, shift func(float64) float64) {
	var xys plotter.XYs
	var errs plotter.YErrors
	for _, pt := range s.Points {
		if math.IsNaN(pt.Y) || (pn.LogY && pt.Y <= 0) {
			continue
		}
		xys = append(xys, plotter.XY{X: shift(pt.X), Y: pt.Y})
		lo, hi := pt.Y-pt.Lo, pt.Hi-pt.Y
		if math.IsNaN(lo) || math.IsNaN(hi) {
			lo, hi = 0, 0
		}
		errs = append(errs, struct{ Low, High float64 }{lo, hi})
	}
	if len(xys) == 0 {
		return
	}
	col := lineColor(s.Line)
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return
	}
	line.Color, line.Width = col, vg.Points(2.2)
	if s.Dashed {
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	points.Color, points.Radius = col, vg.Points(3.2)
	points.Shape = draw.CircleGlyph{}
	if s.Dashed {
		points.Shape = draw.BoxGlyph{}
	}
	if pn.Unjoined {
		p.Add(points)
	} else {
		p.Add(line, points)
	}
	if pn.Bars {
		eb := &plotter.YErrorBars{XYs: xys, YErrors: errs,
			LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.3)}, CapWidth: vg.Points(6)}
		p.Add(eb)
	}
}

// drawHeatmapFigure draws the heatmaps side by side, three to a row, each with its
// colour scale.
func drawHeatmapFigure(dc draw.Canvas, f *HeatmapFigure) {
	area := drawFrame(dc, f.Title, f.Caption)
	cols := min(len(f.Maps), 3)
	if len(f.Maps) == 4 {
		cols = 2
	}
	rows := (len(f.Maps) + cols - 1) / cols
	// Each heatmap takes most of its tile; its colour bar a narrow strip beside it.
	// One map alone takes half the width: wider, its cells would be strips.
	w := (area.Max.X - area.Min.X) / vg.Length(max(cols, 2))
	h := (area.Max.Y - area.Min.Y) / vg.Length(rows)
	bar := vg.Points(90) // the colour bar with its ticks and label
	for i := range f.Maps {
		x0 := area.Min.X + vg.Length(i%cols)*w
		y1 := area.Max.Y - vg.Length(i/cols)*h
		y0 := y1 - h
		if i/cols < rows-1 {
			y0 += vg.Points(8)
		}
		hmC := draw.Canvas{Canvas: area.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + w - bar - vg.Points(8), Y: y1}}}
		barC := draw.Canvas{Canvas: area.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0 + w - bar, Y: y0 + vg.Points(50)}, Max: vg.Point{X: x0 + w - vg.Points(14), Y: y1 - vg.Points(30)}}}
		hm, cb := heatmapPlots(f, &f.Maps[i])
		hm.Draw(hmC)
		cb.Draw(barC)
	}
}

// heatGrid adapts a Heatmap to gonum's GridXYZ, with cells at integer positions.
type heatGrid struct{ z [][]float64 }

// Dims, Z, X and Y implement plotter.GridXYZ.
func (g heatGrid) Dims() (c, r int)   { return len(g.z[0]), len(g.z) }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

// heatRange returns the colour scale's range for z: from 0 (so that "no violation" is
// always the same colour) to the largest value, or [0, 1] when all are 0 or missing.
func heatRange(z [][]float64) (lo, hi float64) {
	hi = math.Inf(-1)
	for _, row := range z {
		for _, v := range row {
			if !math.IsNaN(v) {
				hi = max(hi, v)
			}
		}
	}
	if math.IsInf(hi, -1) || hi <= 0 {
		hi = 1
	}
	return 0, hi
}

func heatmapPlots(f *HeatmapFigure, h *Heatmap) (*plot.Plot, *plot.Plot) {
	lo, hi := heatRange(h.Z)
	cm := h.colorMap()
	cm.SetMin(lo)
	cm.SetMax(hi)
	pal := cm.Palette(255)
	hm := plotter.NewHeatMap(heatGrid{h.Z}, pal)
	hm.Min, hm.Max = lo, hi
	hm.NaN = color.NRGBA{235, 235, 235, 255}
	p := plot.New()
	styleAxes(p, 12.5, 11.5)
	p.Title.Text = h.Title
	p.X.Label.Text, p.Y.Label.Text = f.X.Label, f.Y.Label
	p.Add(hm, &cellLabels{z: h.Z, cm: cm})
	p.X.Tick.Marker = indexTicks(f.X.Ticks)
	p.Y.Tick.Marker = indexTicks(f.Y.Ticks)
	p.X.Label.Text, p.Y.Label.Text = categoryLabel(f.X), categoryLabel(f.Y)
	p.X.Min, p.X.Max = -0.5, float64(len(f.X.Values))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(f.Y.Values))-0.5

	bar := plot.New()
	styleAxes(bar, 11.5, 11)
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	bar.HideX()
	bar.Y.Label.Text = h.Unit
	bar.Y.Min, bar.Y.Max = lo, hi
	bar.Y.Tick.Marker = niceTicks{n: 6}
	return p, bar
}

// categoryLabel names a knob on a heatmap's axis, where cells are evenly spaced whatever
// the values: the tick labels carry the units, and the label what ticks cut short leave
// out.
func categoryLabel(ax KnobAxis) string {
	if ax.Common != "" {
		return ax.Knob + " = " + ax.Common
	}
	return ax.Knob
}

// colorMap is a sequential scale from near-white at 0 to a dark colour at the maximum:
// red for violations (red means a broken promise everywhere in these figures), blue for
// times. Luminance falls evenly with the value, so the scale reads in grey too.
func (h *Heatmap) colorMap() palette.ColorMap {
	controls := []color.Color{color.NRGBA{8, 48, 107, 255}, color.NRGBA{33, 113, 181, 255},
		color.NRGBA{107, 174, 214, 255}, color.NRGBA{239, 243, 255, 255}}
	if h.Red {
		controls = []color.Color{color.NRGBA{103, 0, 13, 255}, color.NRGBA{203, 24, 29, 255},
			color.NRGBA{252, 146, 114, 255}, color.NRGBA{255, 245, 240, 255}}
	}
	cm, err := moreland.NewLuminance(controls)
	if err != nil {
		panic("plots: colour scale controls out of luminance order: " + err.Error())
	}
	return palette.Reverse(cm)
}

func indexTicks(values []string) plot.Ticker {
	ticks := make([]plot.Tick, len(values))
	for i, v := range values {
		ticks[i] = plot.Tick{Value: float64(i), Label: v}
	}
	return plot.ConstantTicks(ticks)
}

// cellLabels writes each heatmap cell's value in it ("–" where nothing was measured), in
// black or white, whichever reads on the cell's colour.
type cellLabels struct {
	z  [][]float64
	cm palette.ColorMap
}

// Plot writes the labels over the heatmap's cells.
func (cl *cellLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for r, row := range cl.z {
		for col, v := range row {
			text, ink := "–", color.NRGBA{90, 90, 90, 255}
			if !math.IsNaN(v) {
				text = short(v)
				if bg, err := cl.cm.At(v); err == nil {
					ink = inkOn(bg)
				}
			}
			sty := boldStyle(12, ink)
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
			c.FillText(sty, vg.Point{X: trX(float64(col)), Y: trY(float64(r))}, text)
		}
	}
}

func inkOn(c color.Color) color.NRGBA {
	r, g, b, _ := c.RGBA()
	return ink(color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255})
}

// short renders a cell value with three significant digits at most.
func short(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return sig3(math.Abs(v))
}
