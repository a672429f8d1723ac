package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/plots"
)

// runPlot is `redlock-sim plot`: the figures of a sweep folder.
func runPlot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "the sweep folder `DIR` (holding runs.csv, summary.csv, manifest.json), or a folder of sweep folders (as the default study writes)")
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
	opt := plots.SweepOptions{Format: plots.Format(*format), Width: *width, Height: *height}
	if _, err := os.Stat(filepath.Join(*in, sweep.RunsFile)); err == nil {
		return plotOne(*in, orDefault(*out, *in), opt, stdout, stderr)
	}
	// The folder the default study writes holds one sweep folder per question.
	subs, err := sweepSubfolders(*in)
	if err != nil {
		return fmt.Errorf("%w: --in %s: %v", errUsage, *in, err)
	}
	if len(subs) == 0 {
		return fmt.Errorf("%w: --in %s: no runs.csv, and no subfolder holding one: not a folder written by redlock-sim sweep", errUsage, *in)
	}
	for _, name := range subs {
		fmt.Fprintf(stdout, "drawing %s\n", filepath.Join(*in, name))
		dst := filepath.Join(orDefault(*out, *in), name)
		if err := plotOne(filepath.Join(*in, name), dst, opt, stdout, stderr); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "drew %s in %s: %s\n", plural(len(subs), "sweep folder"), *in, strings.Join(subs, ", "))
	return nil
}

// plotOne draws one sweep folder's figures into dst and lists them, or says why there are
// none when no knob varies. It holds dst's lock while it draws, as sweep and merge do, so
// that no sweep replaces the data there under its figures; the input folder, when it is
// another one, is only read (it may be read-only), and is checked first: a complete
// folder's runs.csv against its manifest's SHA-256, every row of any folder by the sweep's
// own checks (sweep.VerifyFolder), so that figures are never drawn from a damaged file.
func plotOne(in, dst string, opt plots.SweepOptions, stdout, stderr io.Writer) error {
	lock, err := sweep.LockFolder(dst, "plot")
	if err != nil {
		return usageIf(err)
	}
	defer lock.Unlock()
	m, rows, err := sweep.VerifyFolder(in)
	switch {
	case errors.Is(err, fs.ErrNotExist): // runs.csv by hand or from elsewhere: drawn as before
		fmt.Fprintf(stderr, "plot: %s has no %s: its rows are not checked against a sweep, and the captions say the fixed conditions are unknown\n",
			in, sweep.ManifestFile)
	case err != nil:
		return fmt.Errorf("%w: plot refused: %w; restore the folder's files, or run its sweep again into it (redlock-sim sweep --overwrite --out %s, with its spec)",
			errUsage, err, in)
	case m.Points <= 1:
		fmt.Fprintf(stdout, "%s: nothing to plot against: every knob has one value\n", in)
		return nil
	case !m.Complete:
		fmt.Fprintf(stdout, "%s: incomplete sweep (%d of %d runs written): the figures show those runs and their captions say INCOMPLETE; finish it with redlock-sim sweep --resume --out %s (with its spec)\n",
			in, rows, m.ShardRuns, in)
	}
	sw, err := plots.ReadSweep(in)
	if err != nil {
		return fmt.Errorf("%w: plot refused: %w", errUsage, err)
	}
	files, err := plots.DrawSweep(sw, dst, opt)
	if errors.Is(err, plots.ErrNothingToPlot) {
		fmt.Fprintf(stdout, "%s: nothing to plot against: every knob has one value\n", in)
		return nil
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return err
}

// sweepSubfolders lists, sorted, the subfolders of dir (one level down) that hold a sweep.
func sweepSubfolders(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var subs []string
	for _, e := range ents { // os.ReadDir sorts by name
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), sweep.RunsFile)); err == nil {
				subs = append(subs, e.Name())
			}
		}
	}
	return subs, nil
}
