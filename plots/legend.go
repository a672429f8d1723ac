package plots

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// swatch is a legend thumbnail: a filled box (optionally outlined, hatched, or only a
// part of the height), a line, or a glyph.
type swatch struct {
	fill, stroke color.Color
	hatch        color.Color
	frac         float64 // height of the box as a fraction of the entry; 0 means 0.7
	line         *draw.LineStyle
	glyph        *draw.GlyphStyle
	under        *draw.GlyphStyle // drawn before glyph, for outlines
	vertical     bool             // the line is a vertical rule
}

// Thumbnail draws the swatch in c.
func (s swatch) Thumbnail(c *draw.Canvas) {
	mid := (c.Min.Y + c.Max.Y) / 2
	if s.fill != nil {
		f := s.frac
		if f == 0 {
			f = 0.7
		}
		h := (c.Max.Y - c.Min.Y) * vg.Length(f) / 2
		r := vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: mid - h}, Max: vg.Point{X: c.Max.X, Y: mid + h}}
		d := &drawer{c: *c}
		d.fill(r, s.fill)
		if s.hatch != nil {
			d.hatch(r, s.hatch, vg.Points(5))
		}
		if s.stroke != nil {
			d.outline(r, s.stroke, vg.Points(1))
		}
	}
	if s.line != nil {
		if s.vertical {
			x := (c.Min.X + c.Max.X) / 2
			c.StrokeLine2(*s.line, x, c.Min.Y, x, c.Max.Y)
		} else {
			c.StrokeLine2(*s.line, c.Min.X, mid, c.Max.X, mid)
		}
	}
	pt := vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: mid}
	if s.under != nil {
		c.DrawGlyph(*s.under, pt)
	}
	if s.glyph != nil {
		c.DrawGlyph(*s.glyph, pt)
	}
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = sans(legendSize)
	l.ThumbnailWidth = vg.Points(26)
	l.Padding = vg.Points(4.5)
	return l
}

// legendWidth returns how wide l is drawn.
func legendWidth(l *plot.Legend) vg.Length {
	var c draw.Canvas
	r := l.Rectangle(c)
	return r.Max.X - r.Min.X
}

// timelineLegend lists what the diagram shows: one entry per client colour, then one per
// kind of shape present, in a fixed order.
func timelineLegend(L *tlLayout) plot.Legend {
	l := newLegend()
	present := map[shapeKind]bool{}
	for _, s := range L.Shapes {
		present[s.Kind] = true
	}
	holds, attempts := ": its key on a node, its lock", "acquire attempt: won / lost (OKs/N)"
	switch {
	case L.Service != "" && L.Redis: // the hybrid lock: Redis first, then ZooKeeper
		attempts = "acquire attempt: won / lost (OKs/N, or its lock node and the nodes it waited on)"
	case L.Service != "": // a ZooKeeper lock has no keys and takes no votes
		holds, attempts = ": its lock", "acquire attempt: won / lost (its lock node, the nodes it waited on)"
	}
	for j, name := range L.Clients {
		l.Add(name+holds, swatch{fill: clientColor(j), stroke: darker(clientColor(j))})
	}
	g := func(shape draw.GlyphDrawer, c color.Color, r float64) *draw.GlyphStyle {
		return &draw.GlyphStyle{Color: c, Radius: vg.Points(r), Shape: shape}
	}
	ls := func(c color.Color, w float64, dashes ...vg.Length) *draw.LineStyle {
		return &draw.LineStyle{Color: c, Width: vg.Points(w), Dashes: dashes}
	}
	c0 := clientColor(0)
	entries := []struct {
		kinds []shapeKind
		text  string
		sw    swatch
	}{
		{[]shapeKind{shKeyUnknown}, "key whose value is no client's", swatch{fill: unknownGrey, stroke: darkGrey}},
		{[]shapeKind{shDown}, "node down (crashed)", swatch{fill: downGrey, hatch: hatchGrey, frac: 0.9}},
		{[]shapeKind{shNodePaused}, "node paused", swatch{fill: withAlpha(downGrey, 160), frac: 0.9}},
		{[]shapeKind{shLeader}, "ZooKeeper leader (its epoch)", swatch{fill: leaderGold, stroke: darker(leaderGold), frac: 0.35}},
		{[]shapeKind{shElection}, "ZooKeeper election (looking)", swatch{fill: withAlpha(jumpPurple, 40), hatch: withAlpha(jumpPurple, 120), frac: 0.35}},
		{[]shapeKind{shExpire}, "session expired by the leader", swatch{line: ls(expireBrown, 2), vertical: true}},
		{[]shapeKind{shValidity}, "client believes it holds the lock", swatch{fill: withAlpha(c0, 70), stroke: c0, frac: 0.45}},
		{[]shapeKind{shWork}, "client working on the resource", swatch{fill: c0, frac: 0.45}},
		{[]shapeKind{shAttemptWon, shAttemptLost}, attempts,
			swatch{fill: attemptGrey, stroke: hatchGrey, frac: 0.35}},
		{[]shapeKind{shExtend}, "lock extended", swatch{line: ls(darkGrey, 1.5), vertical: true}},
		{[]shapeKind{shExtendFailed}, "extension failed", swatch{line: ls(black, 2, vg.Points(2), vg.Points(2)), vertical: true}},
		{[]shapeKind{shPause}, "stop-the-world (GC) pause", swatch{fill: color.NRGBA{0, 0, 0, 45}, hatch: color.NRGBA{0, 0, 0, 90}, stroke: darkGrey, frac: 0.9}},
		{[]shapeKind{shWriteOK}, "storage write accepted", swatch{under: g(draw.CircleGlyph{}, white, 5), glyph: g(draw.CircleGlyph{}, darkGrey, 3.8)}},
		{[]shapeKind{shWriteStale}, "stale write accepted", swatch{under: g(draw.PyramidGlyph{}, black, 8), glyph: g(draw.PyramidGlyph{}, violationRed, 6.2)}},
		{[]shapeKind{shWriteRejected}, "write rejected (older fencing token)", swatch{glyph: g(thickCross{width: 2.4}, black, 6)}},
		{[]shapeKind{shWriteLost}, "write never arrived", swatch{glyph: g(draw.RingGlyph{}, darkGrey, 4)}},
		{[]shapeKind{shWriteDelay}, "write in the network", swatch{line: ls(darkGrey, 1.2, vg.Points(2), vg.Points(2))}},
		{[]shapeKind{shCut}, "network fault (cut, clog)", swatch{fill: cutTint, stroke: hatchGrey, frac: 0.9}},
		{[]shapeKind{shClockJump}, "wall-clock jump", swatch{line: ls(jumpPurple, 3), vertical: true}},
		{[]shapeKind{shRestart, shFailover, shCrash}, "restart / failover / crash", swatch{line: ls(darkGrey, 2), vertical: true}},
		{[]shapeKind{shViolation}, "violation: two holders", swatch{fill: withAlpha(violationRed, 60), stroke: violationRed, frac: 0.9}},
	}
	for _, e := range entries {
		for _, k := range e.kinds {
			if present[k] {
				l.Add(e.text, e.sw)
				break
			}
		}
	}
	return l
}
