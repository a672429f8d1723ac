package plots

import (
	"cmp"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Colours. Clients take the Okabe–Ito colour-blind-safe palette in order, leaving out its
// vermillion: red is kept for violations, so that a red thing on a figure is always a
// broken promise.
var (
	clientColors = []color.NRGBA{
		{0, 114, 178, 255},   // blue
		{230, 159, 0, 255},   // orange
		{0, 158, 115, 255},   // bluish green
		{204, 121, 167, 255}, // reddish purple
		{86, 180, 233, 255},  // sky blue
		{140, 86, 75, 255},   // brown
		{240, 228, 66, 255},  // yellow
		{110, 110, 110, 255}, // grey
	}
	violationRed = color.NRGBA{214, 39, 40, 255}
	unknownGrey  = color.NRGBA{150, 150, 150, 255}
	downGrey     = color.NRGBA{205, 205, 205, 255}
	hatchGrey    = color.NRGBA{120, 120, 120, 255}
	attemptGrey  = color.NRGBA{200, 200, 200, 255}
	darkGrey     = color.NRGBA{60, 60, 60, 255}
	jumpPurple   = color.NRGBA{142, 36, 170, 255}
	leaderGold   = color.NRGBA{240, 215, 140, 255}
	expireBrown  = color.NRGBA{140, 70, 20, 255}
	cutTint      = color.NRGBA{232, 234, 243, 255}
	black        = color.NRGBA{0, 0, 0, 255}
	white        = color.NRGBA{255, 255, 255, 255}
)

// clientColor returns client j's colour; -1 (no client) is grey.
func clientColor(j int) color.NRGBA {
	if j < 0 {
		return unknownGrey
	}
	return clientColors[j%len(clientColors)]
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

// ink returns black or white, whichever reads better on c.
func ink(c color.NRGBA) color.NRGBA {
	if 0.299*float64(c.R)+0.587*float64(c.G)+0.114*float64(c.B) > 150 {
		return black
	}
	return white
}

// Text sizes in points (at 96 dpi a point is 4/3 of a pixel).
const (
	titleSize    = 17
	subtitleSize = 12.5
	laneSize     = 14
	labelSize    = 11
	smallSize    = 9.5
	legendSize   = 11.5
)

// drawTimeline draws a laid-out diagram on dc: title and story on top, the lanes on the
// left, the legend on the right.
func drawTimeline(dc draw.Canvas, L *tlLayout) {
	pad := vg.Points(10)
	top := drawHeader(dc, L.Title, L.Subtitle, pad)
	leg := timelineLegend(L)
	legW := legendWidth(&leg) + 2*pad
	area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: dc.Min.X + pad, Y: dc.Min.Y + pad},
		Max: vg.Point{X: dc.Max.X - legW, Y: top},
	}}
	p := plot.New()
	styleAxes(p, laneSize, 12)
	p.X.Label.Text = "true time (s) — only the simulator knows it"
	p.X.Min, p.X.Max = L.From, L.To
	var ticks []plot.Tick
	minY, maxY := 0.0, 0.0
	for i, l := range L.Lanes {
		ticks = append(ticks, plot.Tick{Value: l.Y, Label: l.Label})
		if i == 0 || l.Y-l.H/2 < minY {
			minY = l.Y - l.H/2
		}
		if i == 0 || l.Y+l.H/2 > maxY {
			maxY = l.Y + l.H/2
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = minY-0.05, maxY+0.05
	p.Y.Tick.Length = 0
	p.X.Tick.Marker = niceTicks{n: 10}
	p.Add(&plotGridX{}, &timelineArtist{L: L})
	p.Draw(area)
	legCanvas := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: dc.Max.X - legW + pad, Y: dc.Min.Y + pad},
		Max: vg.Point{X: dc.Max.X - pad, Y: top - pad},
	}}
	leg.Top, leg.Left = true, true
	leg.Draw(legCanvas)
}

// drawHeader writes the title and the wrapped subtitle at the top of dc and returns the
// height below them.
func drawHeader(dc draw.Canvas, title, subtitle string, pad vg.Length) vg.Length {
	y := dc.Max.Y - pad
	ts := boldStyle(titleSize, black)
	ts.YAlign = draw.YTop
	for _, line := range wrap(ts, title, dc.Max.X-dc.Min.X-2*pad) {
		dc.FillText(ts, vg.Point{X: dc.Min.X + pad, Y: y}, line)
		y -= ts.Height(line) * 1.15
	}
	if subtitle != "" {
		ss := textStyle(subtitleSize, darkGrey)
		ss.YAlign = draw.YTop
		for _, line := range wrap(ss, subtitle, dc.Max.X-dc.Min.X-2*pad) {
			dc.FillText(ss, vg.Point{X: dc.Min.X + pad, Y: y}, line)
			y -= ss.Height(line) * 1.15
		}
	}
	return y - pad/2
}

// wrap breaks s into lines no wider than w.
func wrap(sty draw.TextStyle, s string, w vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		next := word
		if line != "" {
			next = line + " " + word
		}
		if line != "" && sty.Width(next) > w {
			lines = append(lines, line)
			next = word
		}
		line = next
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// plotGridX draws light vertical grid lines at the X ticks, so times can be read off
// across lanes.
type plotGridX struct{}

// Plot draws the grid lines.
func (plotGridX) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.NRGBA{225, 225, 225, 255}, Width: vg.Points(0.8)}
	for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if t.IsMinor() {
			continue
		}
		x := trX(t.Value)
		c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	}
}

// timelineArtist draws the shapes of a layout in the plot's data area.
type timelineArtist struct{ L *tlLayout }

// drawOrder lists the shape kinds from bottom to top: bands under everything, pauses over
// the work they interrupt, marks and writes on top.
var drawOrder = []shapeKind{shCut, shViolation, shLeader, shFollower, shElection, shDown, shNodePaused, shKey, shKeyUnknown, shValidity, shWork,
	shPause, shAttemptLost, shAttemptWon, shWriteDelay, shWriteOK, shWriteLost,
	shWriteRejected, shWriteStale, shExtend, shExtendFailed, shStaleMark, shFencedMark}

// isEvent reports whether a shape kind is an instant with a rule and a label, drawn in time
// order so that their labels stack in the order the events happened.
func isEvent(k shapeKind) bool {
	return k == shRestart || k == shFailover || k == shCrash || k == shClockJump || k == shExpire
}

// Plot draws every shape, kind by kind in drawOrder.
func (a *timelineArtist) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	d := &drawer{c: c, trX: trX, trY: trY, rows: map[int][]vg.Length{}}
	for _, k := range drawOrder {
		for i := range a.L.Shapes {
			if s := &a.L.Shapes[i]; s.Kind == k {
				d.shape(a.L, s)
			}
		}
	}
	var events []*shape
	for i := range a.L.Shapes {
		if isEvent(a.L.Shapes[i].Kind) {
			events = append(events, &a.L.Shapes[i])
		}
	}
	slices.SortStableFunc(events, func(x, y *shape) int { return cmp.Compare(x.X0, y.X0) })
	for _, s := range events {
		d.event(s, d.rect(s))
	}
	for i := range a.L.Shapes { // the band's edges and label, over everything else
		if s := &a.L.Shapes[i]; s.Kind == shViolation {
			d.violationEdges(a.L, s)
		}
	}
}

type drawer struct {
	c        draw.Canvas
	trX, trY func(float64) vg.Length
	// markEnd is the right end of the last label written on the oracle lane's lower row,
	// so that labels of marks close in time do not print over each other.
	markEnd vg.Length
	// rows holds, per lane, the right end of the last event label on each text row: an
	// event whose label would run into the previous one goes one row down.
	rows map[int][]vg.Length
}

func (d *drawer) rect(s *shape) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: d.trX(s.X0), Y: d.trY(s.Y0)}, Max: vg.Point{X: d.trX(s.X1), Y: d.trY(s.Y1)}}
}

func (d *drawer) fill(r vg.Rectangle, c color.Color) {
	if r.Max.X-r.Min.X < vg.Points(1) { // a sliver still shows
		r.Max.X = r.Min.X + vg.Points(1)
	}
	d.c.FillPolygon(c, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

func (d *drawer) outline(r vg.Rectangle, c color.Color, w vg.Length) {
	sty := draw.LineStyle{Color: c, Width: w}
	d.c.StrokeLines(sty, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min})
}

// hatch strokes diagonal lines across r, clipped to it.
func (d *drawer) hatch(r vg.Rectangle, c color.Color, step vg.Length) {
	sty := draw.LineStyle{Color: c, Width: vg.Points(0.8)}
	h := r.Max.Y - r.Min.Y
	for x := r.Min.X - h; x < r.Max.X; x += step {
		x0, y0, x1, y1 := x, r.Min.Y, x+h, r.Max.Y
		if x0 < r.Min.X { // clip the left end
			y0 += r.Min.X - x0
			x0 = r.Min.X
		}
		if x1 > r.Max.X { // and the right end
			y1 -= x1 - r.Max.X
			x1 = r.Max.X
		}
		if x1 > x0 {
			d.c.StrokeLine2(sty, x0, y0, x1, y1)
		}
	}
}

// text writes s at pt if it fits inside the data area, shifting it left to fit.
func (d *drawer) text(sty draw.TextStyle, pt vg.Point, s string) vg.Length {
	w := sty.Width(s)
	left := pt.X + vg.Length(sty.XAlign)*w
	if left+w > d.c.Max.X {
		pt.X -= left + w - d.c.Max.X
		left = d.c.Max.X - w
	}
	if left < d.c.Min.X {
		pt.X += d.c.Min.X - left
		left = d.c.Min.X
	}
	d.c.FillText(sty, pt, s)
	return left + w
}

// centred writes s in the middle of r when it fits there, and reports whether it did.
func (d *drawer) centred(r vg.Rectangle, sty draw.TextStyle, s string) bool {
	if s == "" || sty.Width(s)+vg.Points(4) > r.Max.X-r.Min.X || sty.Height(s) > r.Max.Y-r.Min.Y+vg.Points(2) {
		return false
	}
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	d.c.FillText(sty, vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2}, s)
	return true
}

func (d *drawer) glyph(shape draw.GlyphDrawer, c color.Color, radius vg.Length, x, y float64) {
	d.c.DrawGlyph(draw.GlyphStyle{Color: c, Radius: radius, Shape: shape}, vg.Point{X: d.trX(x), Y: d.trY(y)})
}

func (d *drawer) shape(L *tlLayout, s *shape) {
	r := d.rect(s)
	col := clientColor(s.Client)
	switch s.Kind {
	case shViolation:
		d.shapeBand(s)
	case shKey, shKeyUnknown:
		d.fill(r, col)
		d.outline(r, darker(col), vg.Points(0.8))
		d.centred(r, boldStyle(labelSize, ink(col)), s.Label)
	case shDown:
		d.fill(r, downGrey)
		d.hatch(r, hatchGrey, vg.Points(7))
		d.centred(r, boldStyle(labelSize, darkGrey), s.Label)
	case shNodePaused:
		d.fill(r, withAlpha(downGrey, 160))
		d.centred(r, textStyle(labelSize, darkGrey), s.Label)
	case shLeader:
		d.fill(r, leaderGold)
		d.outline(r, darker(leaderGold), vg.Points(0.6))
		d.centred(r, textStyle(smallSize, black), s.Label)
	case shFollower:
		d.outline(r, attemptGrey, vg.Points(0.6))
		d.centred(r, textStyle(smallSize, darkGrey), s.Label)
	case shElection:
		d.fill(r, withAlpha(jumpPurple, 40))
		d.hatch(r, withAlpha(jumpPurple, 120), vg.Points(5))
		d.centred(r, boldStyle(smallSize, jumpPurple), s.Label)
	case shValidity:
		d.fill(r, withAlpha(col, 70))
		d.outline(r, col, vg.Points(1.6))
	case shWork:
		d.fill(r, col)
	case shAttemptLost:
		r = minWidth(r, vg.Points(2.5))
		d.fill(r, attemptGrey)
		d.outline(r, hatchGrey, vg.Points(0.6))
		d.labels(r, textStyle(smallSize, darkGrey), s.Label)
	case shAttemptWon:
		r = minWidth(r, vg.Points(2.5))
		d.fill(r, col)
		d.outline(r, black, vg.Points(0.8))
		d.labels(r, textStyle(smallSize, ink(col)), s.Label)
	case shPause:
		d.fill(r, color.NRGBA{0, 0, 0, 45})
		d.hatch(r, color.NRGBA{0, 0, 0, 90}, vg.Points(9))
		d.outline(r, darkGrey, vg.Points(1))
		sty := boldStyle(labelSize, black)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		if sty.Width(s.Label)+vg.Points(6) < r.Max.X-r.Min.X {
			lbl := vg.Rectangle{Min: vg.Point{X: r.Min.X, Y: r.Max.Y - sty.Height(s.Label) - vg.Points(3)}, Max: r.Max}
			d.fill(vg.Rectangle{Min: vg.Point{X: (r.Min.X+r.Max.X)/2 - sty.Width(s.Label)/2 - vg.Points(3), Y: lbl.Min.Y},
				Max: vg.Point{X: (r.Min.X+r.Max.X)/2 + sty.Width(s.Label)/2 + vg.Points(3), Y: r.Max.Y - vg.Points(1)}}, withAlpha(white, 210))
			d.c.FillText(sty, vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: r.Max.Y - vg.Points(2)}, s.Label)
		}
	case shCut:
		// A tinted lane: the network cuts it off. The label sits in the lane's free strip
		// (under the keys of a node, over the validity window of a client).
		d.fill(r, cutTint)
		sty := draw.LineStyle{Color: hatchGrey, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
		d.c.StrokeLine2(sty, r.Min.X, r.Min.Y, r.Max.X, r.Min.Y)
		d.c.StrokeLine2(sty, r.Min.X, r.Max.Y, r.Max.X, r.Max.Y)
		ts := textStyle(smallSize, darkGrey)
		pt := vg.Point{X: r.Min.X + vg.Points(3), Y: r.Min.Y + vg.Points(2)}
		if L.Lanes[s.Lane].Kind == laneClient {
			ts.YAlign = draw.YTop
			pt.Y = r.Max.Y - vg.Points(1.5)
		}
		d.text(ts, pt, s.Label)
	case shWriteDelay:
		sty := draw.LineStyle{Color: darkGrey, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
		d.c.StrokeLine2(sty, r.Min.X, r.Min.Y, r.Max.X, r.Min.Y)
		d.glyph(draw.CircleGlyph{}, darkGrey, vg.Points(2.2), s.X0, s.Y0)
	case shWriteOK:
		d.glyph(draw.CircleGlyph{}, white, vg.Points(5), s.X0, s.Y0)
		d.glyph(draw.CircleGlyph{}, darkGrey, vg.Points(3.8), s.X0, s.Y0)
		d.token(s)
	case shWriteLost:
		d.glyph(draw.CircleGlyph{}, white, vg.Points(5), s.X0, s.Y0)
		d.glyph(draw.RingGlyph{}, darkGrey, vg.Points(4), s.X0, s.Y0)
	case shWriteRejected:
		d.glyph(thickCross{width: 4.5}, white, vg.Points(7.5), s.X0, s.Y0)
		d.glyph(thickCross{width: 2.4}, black, vg.Points(6.5), s.X0, s.Y0)
		d.token(s)
	case shWriteStale:
		d.glyph(draw.PyramidGlyph{}, black, vg.Points(8), s.X0, s.Y0)
		d.glyph(draw.PyramidGlyph{}, violationRed, vg.Points(6.2), s.X0, s.Y0)
		d.token(s)
	case shExtend:
		d.c.StrokeLine2(draw.LineStyle{Color: darker(col), Width: vg.Points(1.5)}, r.Min.X, r.Min.Y, r.Min.X, r.Max.Y)
	case shExtendFailed:
		d.c.StrokeLine2(draw.LineStyle{Color: black, Width: vg.Points(2), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}},
			r.Min.X, r.Min.Y, r.Min.X, r.Max.Y)
	case shStaleMark, shFencedMark:
		d.oracleMark(s)
	}
}

// event draws an instant on a lane: a vertical rule and its label at the top.
func (d *drawer) event(s *shape, r vg.Rectangle) {
	col, width := darkGrey, vg.Points(2)
	switch s.Kind {
	case shClockJump:
		col, width = jumpPurple, vg.Points(3)
	case shCrash:
		col = black
	case shExpire:
		col = expireBrown
	}
	d.c.StrokeLine2(draw.LineStyle{Color: col, Width: width}, r.Min.X, r.Min.Y, r.Min.X, r.Max.Y)
	sty := boldStyle(labelSize, col)
	sty.YAlign = draw.YTop
	x := r.Min.X + vg.Points(3)
	rows := d.rows[s.Lane]
	row := 0
	for row < len(rows) && x < rows[row]+vg.Points(4) {
		row++
	}
	if row == len(rows) {
		rows = append(rows, 0)
	}
	h := sty.Height(s.Label)
	y := r.Max.Y - vg.Length(row)*h*1.1
	w := sty.Width(s.Label)
	// A light backdrop keeps the label legible where it crosses a key or a band.
	d.fill(vg.Rectangle{Min: vg.Point{X: x - vg.Points(1), Y: y - h}, Max: vg.Point{X: x + w + vg.Points(1), Y: y}}, withAlpha(white, 200))
	rows[row] = d.text(sty, vg.Point{X: x, Y: y}, s.Label)
	d.rows[s.Lane] = rows
}

// oracleMark draws a stale write or a fenced rejection on the oracle lane's lower row.
func (d *drawer) oracleMark(s *shape) {
	y := s.Y0 - 0.22
	col := violationRed
	if s.Kind == shStaleMark {
		d.glyph(draw.PyramidGlyph{}, black, vg.Points(7.5), s.X0, y)
		d.glyph(draw.PyramidGlyph{}, violationRed, vg.Points(5.8), s.X0, y)
	} else {
		col = black
		d.glyph(thickCross{width: 2.4}, black, vg.Points(5.5), s.X0, y)
	}
	sty := boldStyle(labelSize, col)
	sty.YAlign = draw.YCenter
	x := d.trX(s.X0) + vg.Points(9)
	if x+sty.Width(s.Label) > d.c.Max.X { // no room on the right: write it on the left
		x = d.trX(s.X0) - vg.Points(9)
		sty.XAlign = draw.XRight
	}
	if x-vg.Length(-sty.XAlign)*sty.Width(s.Label) < d.markEnd+vg.Points(6) {
		return
	}
	d.markEnd = d.text(sty, vg.Point{X: x, Y: d.trY(y)}, s.Label)
}

// violationEdges draws an overlap's band edges and its label bar on the oracle lane.
func (d *drawer) violationEdges(L *tlLayout, s *shape) {
	r := d.rect(s)
	edge := draw.LineStyle{Color: violationRed, Width: vg.Points(1.6), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
	d.c.StrokeLine2(edge, r.Min.X, r.Min.Y, r.Min.X, r.Max.Y)
	d.c.StrokeLine2(edge, r.Max.X, r.Min.Y, r.Max.X, r.Max.Y)
	oy := L.Lanes[0].Y
	bar := vg.Rectangle{Min: vg.Point{X: r.Min.X, Y: d.trY(oy + 0.02)}, Max: vg.Point{X: r.Max.X, Y: d.trY(oy + 0.44)}}
	d.fill(bar, violationRed)
	sty := boldStyle(labelSize, white)
	if d.centred(bar, sty, s.Label) {
		return
	}
	sty.Color = violationRed
	sty.YAlign = draw.YCenter
	d.text(sty, vg.Point{X: bar.Max.X + vg.Points(7), Y: (bar.Min.Y + bar.Max.Y) / 2}, s.Label)
}

func (d *drawer) shapeBand(s *shape) {
	d.fill(d.rect(s), withAlpha(violationRed, 30))
}

// labels writes the first of the |-separated labels that fits in r, if any.
func (d *drawer) labels(r vg.Rectangle, sty draw.TextStyle, labels string) {
	for _, l := range strings.Split(labels, "|") {
		if d.centred(r, sty, l) {
			return
		}
	}
}

// token writes a fenced write's token under its marker.
func (d *drawer) token(s *shape) {
	if s.Label == "" {
		return
	}
	sty := textStyle(smallSize, black)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	d.text(sty, vg.Point{X: d.trX(s.X0), Y: d.trY(s.Y0) - vg.Points(7)}, s.Label)
}

// thickCross is an × drawn with lines width points wide: gonum's CrossGlyph is a
// hairline, invisible on a slide.
type thickCross struct{ width float64 }

// DrawGlyph draws the cross at pt.
func (g thickCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(g.width)}
	r := sty.Radius / vg.Length(1.4142)
	c.StrokeLine2(ls, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(ls, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}

// minWidth widens r around its centre to at least w, so that a millisecond-long attempt
// on a seconds-long axis is still a box, not a hairline.
func minWidth(r vg.Rectangle, w vg.Length) vg.Rectangle {
	if d := w - (r.Max.X - r.Min.X); d > 0 {
		r.Min.X -= d / 2
		r.Max.X += d / 2
	}
	return r
}

func darker(c color.NRGBA) color.NRGBA {
	return color.NRGBA{c.R / 3 * 2, c.G / 3 * 2, c.B / 3 * 2, 255}
}
