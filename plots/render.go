package plots

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The default figure size in pixels: a 16:9 slide.
const (
	DefaultWidth  = 1600
	DefaultHeight = 900
	// MaxPixels bounds either side of a figure; beyond it a typo would eat memory.
	MaxPixels = 10000
	// dpi maps pixels to the points gonum draws in: at 96 dpi a 12-point font is 16 pixels
	// tall, the size of body text on a slide of 1600 pixels.
	dpi = 96
)

// Format is a figure's file format.
type Format string

// The formats a figure can be written in.
const (
	PNG Format = "png"
	SVG Format = "svg"
)

// FormatOf returns the format named by path's extension (.png or .svg, any case).
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return PNG, nil
	case ".svg":
		return SVG, nil
	}
	return "", fmt.Errorf("figure %s: unknown extension %q: want .png or .svg", path, filepath.Ext(path))
}

// figure is a canvas of a given size in pixels, drawn in points, written as PNG or SVG.
type figure struct {
	format Format
	w, h   vg.Length
	png    *vgimg.Canvas
	svg    *vgsvg.Canvas
	dc     draw.Canvas
}

func newFigure(format Format, wPx, hPx int) (*figure, error) {
	if wPx <= 0 || hPx <= 0 || wPx > MaxPixels || hPx > MaxPixels {
		return nil, fmt.Errorf("figure size %d×%d: want each side in [1, %d] pixels", wPx, hPx, MaxPixels)
	}
	f := &figure{format: format, w: px(wPx), h: px(hPx)}
	switch format {
	case PNG:
		f.png = vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
		f.dc = draw.New(f.png)
	case SVG:
		f.svg = vgsvg.New(f.w, f.h)
		f.dc = draw.New(f.svg)
		f.dc.FillPolygon(color.White, []vg.Point{{X: 0, Y: 0}, {X: f.w, Y: 0}, {X: f.w, Y: f.h}, {X: 0, Y: f.h}})
	default:
		return nil, fmt.Errorf("unknown figure format %q", format)
	}
	return f, nil
}

// px converts pixels to the points gonum draws in.
func px(n int) vg.Length { return vg.Length(n) * vg.Inch / dpi }

func (f *figure) writeTo(w io.Writer) error {
	var err error
	if f.format == PNG {
		_, err = vgimg.PngCanvas{Canvas: f.png}.WriteTo(w)
	} else {
		_, err = f.svg.WriteTo(w)
	}
	return err
}

// save writes the figure to path, whole or not at all: a temporary file renamed into
// place, so a failed write never leaves half an image where a good one was. Its errors
// name path and the cause, never the temporary file, which the user never asked for.
func (f *figure) save(path string) error {
	var buf bytes.Buffer
	if err := f.writeTo(&buf); err != nil {
		return fmt.Errorf("figure %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPattern(path))
	if err != nil {
		return fmt.Errorf("figure %s: %w", path, osCause(err))
	}
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644) // a figure is for everyone to read, as os.Create would make it
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("figure %s: %w", path, osCause(err))
	}
	return nil
}

// tempPattern is the os.CreateTemp pattern of the file a figure bound for path is written
// to before its rename: hidden, ".knob-ttl.png.tmp123", a name sweep.IsTempFile knows, so
// that the next sweep, merge or plot of the folder removes one a kill left behind.
func tempPattern(path string) string { return "." + filepath.Base(path) + ".tmp*" }

// osCause strips the file names an os error carries (a *fs.PathError's or *os.LinkError's),
// keeping its cause ("no such file or directory", "no space left on device").
func osCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// sans returns the sans-serif face of the default typeface at size points: it reads
// better than the serif default at a distance, on a slide.
func sans(size vg.Length) font.Font {
	f := font.From(plot.DefaultFont, size)
	f.Variant = "Sans"
	return f
}

// textStyle returns a text style of the sans-serif font at size points.
func textStyle(size vg.Length, c color.Color) draw.TextStyle {
	return text.Style{Color: c, Font: sans(size), Handler: plot.DefaultTextHandler}
}

// boldStyle is textStyle in bold.
func boldStyle(size vg.Length, c color.Color) draw.TextStyle {
	sty := textStyle(size, c)
	sty.Font.Weight = xfont.WeightBold
	return sty
}

// styleAxes sets the fonts of a plot's axes for a slide.
func styleAxes(p *plot.Plot, label, tick vg.Length) {
	p.X.Label.TextStyle.Font = sans(label)
	p.Y.Label.TextStyle.Font = sans(label)
	p.X.Tick.Label.Font = sans(tick)
	p.Y.Tick.Label.Font = sans(tick)
	p.Title.TextStyle.Font = sans(label + 1)
	p.Title.TextStyle.Font.Weight = xfont.WeightBold
	p.Legend.TextStyle.Font = sans(tick)
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts span into about n
// parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// niceTicks marks an axis every nice step (1, 2 or 5 times a power of ten), about n
// labelled ticks, each labelled with just the decimals it needs.
type niceTicks struct{ n int }

// Ticks returns the ticks between lo and hi.
func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	step := niceStep(hi-lo, t.n)
	var ticks []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if math.Abs(v) < step*1e-9 {
			v = 0 // not -0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals(step), 64)})
	}
	return ticks
}

// decimals is the number of decimals that shows every multiple of step exactly.
func decimals(step float64) int {
	d := 0
	for d < 9 && math.Abs(step*math.Pow(10, float64(d))-math.Round(step*math.Pow(10, float64(d)))) > 1e-6 {
		d++
	}
	return d
}
