package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/plots"
)

// runPlot is `redlock-sim plot`: the figures of a sweep folder.
func runPlot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "the sweep folder `DIR` (holding runs.csv, summary.csv, manifest.json)")
	out := fs.String("out", "", "the folder `DIR` to write the figures to (default: the sweep folder)")
	format := fs.String("format", "png", "`FORMAT` of the figures: png or svg")
	width := fs.Int("width", plots.DefaultWidth, "figure width, `PX` pixels")
	height := fs.Int("height", plots.DefaultHeight, "figure height, `PX` pixels")
	_ = fs.SetAnnotation("in", requiredFlag, nil)
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: plot takes no arguments, got %q (the folder goes after --in)", errUsage, fs.Args())
	case *in == "":
		return fmt.Errorf("%w: plot: --in DIR is required (a folder written by redlock-sim sweep)", errUsage)
	case *format != string(plots.PNG) && *format != string(plots.SVG):
		return fmt.Errorf("%w: --format %q: want png or svg", errUsage, *format)
	case *width <= 0 || *height <= 0 || *width > plots.MaxPixels || *height > plots.MaxPixels:
		return fmt.Errorf("%w: --width/--height %d×%d: want each in [1, %d]", errUsage, *width, *height, plots.MaxPixels)
	}
	if st, err := os.Stat(*in); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: --in %s: not a folder", errUsage, *in)
	}
	if _, err := os.Stat(filepath.Join(*in, "runs.csv")); err != nil {
		return fmt.Errorf("%w: --in %s: no runs.csv: not a folder written by redlock-sim sweep", errUsage, *in)
	}
	dst := *out
	if dst == "" {
		dst = *in
	}
	files, err := plots.SweepFiguresWith(*in, dst, plots.SweepOptions{Format: plots.Format(*format), Width: *width, Height: *height})
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return err
}
