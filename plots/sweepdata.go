package plots

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// MaxSweepRuns bounds the rows read from runs.csv: the sweep engine's own limit.
const MaxSweepRuns = sweep.MaxRuns

// Sweep is a sweep folder read for plotting: the swept knobs, the fixed ones, and each
// point's runs pooled into a Cell. runs.csv is streamed: a row is parsed, added to its
// point's cell and dropped, so a sweep of millions of runs costs the memory of its points
// (their counts, and each run's two time percentiles for the spread across runs), not of
// its rows. It is read by column name, so columns added to the files later change nothing
// here.
type Sweep struct {
	Dir        string
	Axes       []Axis   // swept knobs in the spec's order, values in the spec's order
	Base       []KnobKV // fixed knob settings from the manifest, in the spec's order
	Replicates int      // 0 when the manifest is missing
	Seed       uint64
	Complete   bool // the manifest says the sweep finished
	// Notes are the sweep's own words on its figures (the spec's notes, from the
	// manifest): why a number that looks alarming is what it is.
	Notes []string
	// Points are the sweep's points in order of first appearance in runs.csv.
	Points []*SweepPoint
	runs   int
	index  map[int]*SweepPoint
}

// SweepPoint is one point of a sweep: its knob values and its runs pooled.
type SweepPoint struct {
	Point  int
	Values []string // the value of each axis, in Sweep.Axes order
	Cell   Cell
}

// RunCount is the number of rows read from runs.csv.
func (sw *Sweep) RunCount() int { return sw.runs }

// Axis is one swept knob and its values.
type Axis struct {
	Knob   string
	Values []string
}

// KnobKV is one fixed knob setting.
type KnobKV struct {
	Knob  string `json:"knob"`
	Value string `json:"value"`
}

// Run is one row of runs.csv: where it sits in the sweep and the figures the plots use.
// Rows are not kept: each is added to its point's Cell as it is read.
type Run struct {
	Point  int
	Values []string // the value of each axis, in Sweep.Axes order; valid until the next row

	AnyValidity, AnyUsage bool
	// The four kinds the oracle counts, never summed: the lock's failures (validity and
	// usage overlaps) and the resource's (stale writes accepted; writes rejected by
	// fencing are the resource defending itself).
	Validity, Usage, Stale, Fenced int64
	Acquired                       int64
	Failed                         int64 // acquires that gave up after every try
	SplitBrain                     int64
	// P50Ms and P99Ms are the run's time to acquire percentiles; NaN when it acquired
	// nothing.
	P50Ms, P99Ms float64
}

// runColumns are the runs.csv columns the plots read: the sweep engine's point column,
// then metrics of experiments.Columns (TestRunColumnsAreWritten holds the two lists
// together; Record.Metrics names each metric where it computes it).
var runColumns = []string{sweep.PointColumn, experiments.MetricAnyValidityOverlap, experiments.MetricAnyUsageOverlap, experiments.MetricValidityOverlaps,
	experiments.MetricUsageOverlaps, experiments.MetricStaleWritesAccepted, experiments.MetricFencedWritesRejected, experiments.MetricAcquired, experiments.MetricFailed, experiments.MetricSplitBrainRounds,
	experiments.MetricAcquireLatencyP50Ms, experiments.MetricAcquireLatencyP99Ms}

// ReadSweep reads the sweep folder dir: runs.csv (required), manifest.json (for the axes'
// order and the fixed conditions; without it the axes are the columns between seed and
// the metrics, in order of appearance) and summary.csv (when present, its run counts and
// overlap fractions are checked against runs.csv, so that figures never silently mix two
// sweeps).
func ReadSweep(dir string) (*Sweep, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("sweep folder %s: %w", dir, unwrapPathErr(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("sweep folder %s: not a folder", dir)
	}
	sw := &Sweep{Dir: dir}
	man, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	if err := sw.readRuns(man); err != nil {
		return nil, err
	}
	if err := sw.checkSummary(); err != nil {
		return nil, err
	}
	return sw, nil
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// manifest is manifest.json as package sweep writes it, plus notes added to it by hand.
type manifest struct {
	sweep.Manifest
	// Notes are added to the figures' captions, as the spec's notes are.
	Notes []string `json:"notes"`
}

func readManifest(dir string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, sweep.ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep folder %s: %w", dir, err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, sweep.ManifestFile), err)
	}
	return &m, nil
}

// readRuns reads runs.csv by column name.
func (sw *Sweep) readRuns(man *manifest) error {
	path := filepath.Join(sw.Dir, sweep.RunsFile)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sweep folder %s: %s: %w (is it a sweep's output folder?)", sw.Dir, sweep.RunsFile, unwrapPathErr(err))
	}
	defer f.Close()
	var src io.Reader = f
	if man != nil && !man.Complete {
		// A sweep killed (or still running) may have written part of its last row; resume
		// drops that torn line, and so do the figures.
		if src, err = wholeLines(f); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	r := csv.NewReader(bufio.NewReaderSize(src, 1<<16))
	r.ReuseRecord = true // a row is dropped once added to its point
	header, col, err := readHeader(r, path, append([]string{sweep.SeedColumn}, runColumns...),
		": not a redlock-sim sweep, or an incompatible version")
	if err != nil {
		return err
	}
	axisCols := sw.axes(man, header, col)
	sw.index = map[int]*SweepPoint{}
	var run Run
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if sw.runs >= MaxSweepRuns {
			return fmt.Errorf("%s: more than %d runs", path, MaxSweepRuns)
		}
		if err := parseRun(&run, rec, col, axisCols); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if err := sw.add(&run); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if sw.runs == 0 {
		return fmt.Errorf("%s: no runs", path)
	}
	return nil
}

// wholeLines returns a reader of f up to and including its last line end, leaving out a
// torn last line (a row is at most sweep.MaxRowBytes long, so the last line end is found
// in the file's last that many bytes, or the file holds no whole line past the header).
func wholeLines(f *os.File) (io.Reader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	tail := make([]byte, min(size, sweep.MaxRowBytes+1))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return nil, err
	}
	end := size - int64(len(tail)) + int64(bytes.LastIndexByte(tail, '\n')) + 1
	return io.LimitReader(f, max(end, 0)), nil
}

// add pools a run into its point, creating the point (and noting its axis values) at the
// point's first run. A run whose knob values differ from its point's earlier runs is
// refused: the file mixes two sweeps.
func (sw *Sweep) add(run *Run) error {
	pt := sw.index[run.Point]
	if pt == nil {
		pt = &SweepPoint{Point: run.Point, Values: slices.Clone(run.Values)}
		sw.index[run.Point] = pt
		sw.Points = append(sw.Points, pt)
		sw.noteValues(pt.Values)
	} else if !slices.Equal(pt.Values, run.Values) {
		return fmt.Errorf("point %d has knob values %v here and %v in its first run", run.Point, run.Values, pt.Values)
	}
	pt.Cell.add(run)
	sw.runs++
	return nil
}

// axes sets the sweep's axes from the manifest, or else from the columns between seed
// and the first metric, and returns each axis's column.
func (sw *Sweep) axes(man *manifest, header []string, col map[string]int) []int {
	if man != nil {
		sw.Replicates, sw.Seed, sw.Complete = man.Spec.Replicates, man.Spec.Seed, man.Complete
		for _, kv := range man.Spec.Base {
			sw.Base = append(sw.Base, KnobKV{Knob: kv.Name, Value: kv.Value})
		}
		sw.Notes = append(slices.Clone(man.Spec.Notes), man.Notes...)
	}
	var idx []int
	if man != nil && len(man.Spec.Axes) > 0 {
		for _, a := range man.Spec.Axes {
			if i, ok := col[a.Knob]; ok {
				sw.Axes = append(sw.Axes, Axis{Knob: a.Knob, Values: slices.Clone(a.Values)})
				idx = append(idx, i)
			}
		}
		return idx
	}
	for i := col[sweep.SeedColumn] + 1; i < len(header) && !isMetric(header[i]); i++ {
		sw.Axes = append(sw.Axes, Axis{Knob: header[i]})
		idx = append(idx, i)
	}
	return idx
}

// isMetric says whether a runs.csv column is one of the metrics a run reports, which
// follow the swept knobs.
func isMetric(column string) bool {
	for _, c := range experiments.Columns() {
		if c.Name == column {
			return true
		}
	}
	return false
}

// noteValues adds values not listed by the manifest (or all of them without one), in
// order of appearance.
func (sw *Sweep) noteValues(values []string) {
	for a, v := range values {
		if !slices.Contains(sw.Axes[a].Values, v) {
			sw.Axes[a].Values = append(sw.Axes[a].Values, v)
		}
	}
}

// parseRun parses a row of runs.csv into run, reusing its Values.
func parseRun(run *Run, rec []string, col map[string]int, axisCols []int) error {
	run.Values = run.Values[:0]
	var errs []error
	get := func(name string) string {
		i := col[name]
		if i >= len(rec) {
			errs = append(errs, fmt.Errorf("%d fields, no %s", len(rec), name))
			return ""
		}
		return rec[i]
	}
	integer := func(name string) int64 {
		v, err := strconv.ParseInt(get(name), 10, 64)
		if err != nil || v < 0 {
			errs = append(errs, fmt.Errorf("%s = %q: want a non-negative integer", name, get(name)))
		}
		return v
	}
	millis := func(name string) float64 {
		s := get(name)
		if s == "" {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s = %q: want milliseconds or nothing", name, s))
		}
		return v
	}
	run.Point = int(integer(sweep.PointColumn))
	run.AnyValidity = integer(experiments.MetricAnyValidityOverlap) > 0
	run.AnyUsage = integer(experiments.MetricAnyUsageOverlap) > 0
	run.Validity = integer(experiments.MetricValidityOverlaps)
	run.Usage = integer(experiments.MetricUsageOverlaps)
	run.Stale = integer(experiments.MetricStaleWritesAccepted)
	run.Fenced = integer(experiments.MetricFencedWritesRejected)
	run.Acquired = integer(experiments.MetricAcquired)
	run.Failed = integer(experiments.MetricFailed)
	run.SplitBrain = integer(experiments.MetricSplitBrainRounds)
	run.P50Ms = millis(experiments.MetricAcquireLatencyP50Ms)
	run.P99Ms = millis(experiments.MetricAcquireLatencyP99Ms)
	for _, i := range axisCols {
		if i >= len(rec) {
			errs = append(errs, fmt.Errorf("%d fields, no axis column %d", len(rec), i+1))
			continue
		}
		run.Values = append(run.Values, rec[i])
	}
	return errors.Join(errs...)
}

// readHeader reads a CSV header and indexes its columns by name, refusing a file that
// lacks any of the required ones (hint ends that message).
func readHeader(r *csv.Reader, path string, required []string, hint string) ([]string, map[string]int, error) {
	header, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: header: %w", path, err)
	}
	col := make(map[string]int, len(header))
	for i, h := range header {
		col[h] = i
	}
	for _, c := range required {
		if _, ok := col[c]; !ok {
			return nil, nil, fmt.Errorf("%s: no column %q%s", path, c, hint)
		}
	}
	return header, col, nil
}

// checkSummary compares summary.csv, when there is one, with what runs.csv says of each
// point: its number of runs and its fractions of runs with an overlap.
func (sw *Sweep) checkSummary() error {
	path := filepath.Join(sw.Dir, sweep.SummaryFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a shard's folder, or a sweep still running
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	_, col, err := readHeader(r, path, []string{sweep.PointColumn, sweep.RunsColumn, validityFrac, usageFrac}, "")
	if err != nil {
		return err
	}
	points := make(map[int]*Cell, len(sw.Points))
	for _, pt := range sw.Points {
		points[pt.Point] = &pt.Cell
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := checkPoint(rec, col, points); err != nil {
			return fmt.Errorf("%s:%d disagrees with %s: %w", path, line, sweep.RunsFile, err)
		}
	}
}

// The summary.csv columns checkSummary compares with runs.csv: the fractions of runs
// with an overlap, named as package sweep names a bool column's statistics.
var (
	validityFrac = sweep.StatColumns(sweep.Column{Name: "any_validity_overlap", Kind: sweep.KindBool})[0]
	usageFrac    = sweep.StatColumns(sweep.Column{Name: "any_usage_overlap", Kind: sweep.KindBool})[0]
)

func checkPoint(rec []string, col map[string]int, points map[int]*Cell) error {
	field := func(name string) string {
		if i := col[name]; i < len(rec) {
			return rec[i]
		}
		return ""
	}
	p, err := strconv.Atoi(field(sweep.PointColumn))
	c := points[p]
	if err != nil || c == nil {
		return fmt.Errorf("point %q has no runs", field(sweep.PointColumn))
	}
	if n, err := strconv.Atoi(field(sweep.RunsColumn)); err != nil || n != c.Runs {
		return fmt.Errorf("point %d: %s = %q, %s has %d", p, sweep.RunsColumn, field(sweep.RunsColumn), sweep.RunsFile, c.Runs)
	}
	for _, k := range []struct {
		name string
		ones int
	}{{validityFrac, c.ValidityRuns}, {usageFrac, c.UsageRuns}} {
		// summary.csv rounds its statistics to 6 significant digits (sweep.SummaryDigits), so
		// a fraction may be off by 5e-7; 1e-5 allows that and still refuses a wrong one.
		v, err := strconv.ParseFloat(field(k.name), 64)
		if err != nil || math.Abs(v-float64(k.ones)/float64(c.Runs)) > 1e-5 {
			return fmt.Errorf("point %d: %s = %q, %s gives %d/%d", p, k.name, field(k.name), sweep.RunsFile, k.ones, c.Runs)
		}
	}
	return nil
}

// Cell pools the runs of one place on a figure: one point of the sweep, or several when
// the figure leaves a swept knob out.
type Cell struct {
	Runs         int
	ValidityRuns int // runs with at least one validity overlap
	UsageRuns    int // runs with at least one usage overlap
	// The oracle's four kinds, summed over the runs, each apart.
	Validity, Usage, Stale, Fenced int64
	Acquired                       int64
	Failed                         int64
	SplitBrain                     int64
	SplitBrainRuns                 int       // runs with at least one split-brain round
	P50Ms, P99Ms                   []float64 // the runs' values, where they acquired anything
}

func (c *Cell) add(r *Run) {
	c.Runs++
	if r.AnyValidity {
		c.ValidityRuns++
	}
	if r.AnyUsage {
		c.UsageRuns++
	}
	c.Validity += r.Validity
	c.Usage += r.Usage
	c.Stale += r.Stale
	c.Fenced += r.Fenced
	c.Acquired += r.Acquired
	c.Failed += r.Failed
	c.SplitBrain += r.SplitBrain
	if r.SplitBrain > 0 {
		c.SplitBrainRuns++
	}
	if !math.IsNaN(r.P50Ms) {
		c.P50Ms = append(c.P50Ms, r.P50Ms)
	}
	if !math.IsNaN(r.P99Ms) {
		c.P99Ms = append(c.P99Ms, r.P99Ms)
	}
}

// merge pools o's runs into c.
func (c *Cell) merge(o *Cell) {
	c.Runs += o.Runs
	c.ValidityRuns += o.ValidityRuns
	c.UsageRuns += o.UsageRuns
	c.Validity += o.Validity
	c.Usage += o.Usage
	c.Stale += o.Stale
	c.Fenced += o.Fenced
	c.Acquired += o.Acquired
	c.Failed += o.Failed
	c.SplitBrain += o.SplitBrain
	c.SplitBrainRuns += o.SplitBrainRuns
	c.P50Ms = append(c.P50Ms, o.P50Ms...)
	c.P99Ms = append(c.P99Ms, o.P99Ms...)
}

// Estimate is a value with a low and a high end (an interval, or a spread); NaN when
// there is nothing to estimate from.
type Estimate struct {
	Y, Lo, Hi float64
}

var noEstimate = Estimate{math.NaN(), math.NaN(), math.NaN()}

// proportion is k/n with its 95% Wilson interval, as summary.csv gives it.
func proportion(k, n int64) Estimate {
	if n == 0 {
		return noEstimate
	}
	lo, hi := sweep.Wilson(int(k), int(n))
	return Estimate{float64(k) / float64(n), lo, hi}
}

// ValidityFrac is the fraction of runs with a validity overlap.
func (c *Cell) ValidityFrac() Estimate { return proportion(int64(c.ValidityRuns), int64(c.Runs)) }

// UsageFrac is the fraction of runs with a usage overlap.
func (c *Cell) UsageFrac() Estimate { return proportion(int64(c.UsageRuns), int64(c.Runs)) }

// per10k is n per 10,000 acquisitions, pooled over the cell's runs (the total over all
// their acquisitions); NaN when nothing was acquired.
func (c *Cell) per10k(n int64) float64 {
	if c.Acquired == 0 {
		return math.NaN()
	}
	return 1e4 * float64(n) / float64(c.Acquired) // in summary.csv's order: scale × sum / sum
}

// ValidityPer10k is the validity overlaps per 10,000 acquisitions: the lock broke its
// promise.
func (c *Cell) ValidityPer10k() float64 { return c.per10k(c.Validity) }

// UsagePer10k is the usage overlaps per 10,000 acquisitions: two clients worked at once.
func (c *Cell) UsagePer10k() float64 { return c.per10k(c.Usage) }

// StalePer10k is the stale writes the storage accepted per 10,000 acquisitions: the
// resource's failure.
func (c *Cell) StalePer10k() float64 { return c.per10k(c.Stale) }

// FencedPer10k is the writes fencing rejected per 10,000 acquisitions: the resource
// defending itself, not a failure.
func (c *Cell) FencedPer10k() float64 { return c.per10k(c.Fenced) }

// SuccessRate is the fraction of finished acquires that got the lock, pooled over the
// cell's runs, with the Wilson interval of that pooled count.
func (c *Cell) SuccessRate() Estimate { return proportion(c.Acquired, c.Acquired+c.Failed) }

// P50 is the median over runs of each run's median time to acquire, with the 10th and
// 90th percentiles across runs as its spread (summary.csv's statistics).
func (c *Cell) P50() Estimate { return spread(c.P50Ms) }

// P99 is P50's counterpart for each run's 99th percentile.
func (c *Cell) P99() Estimate { return spread(c.P99Ms) }

// SplitBrainMean is the mean number of split-brain rounds per run.
func (c *Cell) SplitBrainMean() float64 {
	if c.Runs == 0 {
		return math.NaN()
	}
	return float64(c.SplitBrain) / float64(c.Runs)
}

// spread is the median of vals with their 10th and 90th percentiles, by summary.csv's own
// quantile function, so a figure's point and the file's row agree to the bit.
func spread(vals []float64) Estimate {
	if len(vals) == 0 {
		return noEstimate
	}
	s := slices.Sorted(slices.Values(vals))
	return Estimate{sweep.Quantile(s, 0.5), sweep.Quantile(s, 0.1), sweep.Quantile(s, 0.9)}
}

// Pool groups the points by the values of the given axes (indices into Sweep.Axes),
// pooling over the others; the key is the values joined in axis order.
func (sw *Sweep) Pool(axes ...int) map[string]*Cell {
	cells := map[string]*Cell{}
	for _, pt := range sw.Points {
		k := cellKey(pt.Values, axes)
		c := cells[k]
		if c == nil {
			c = &Cell{}
			cells[k] = c
		}
		c.merge(&pt.Cell)
	}
	return cells
}

func cellKey(values []string, axes []int) string {
	k := ""
	for _, a := range axes {
		k += values[a] + "\x00"
	}
	return k
}

// PoolSweeps joins sweeps of the same points run again with other seeds (tune's
// confirmation rounds) into one, each point's runs pooled, so that figures drawn from it
// show the same runs as a table pooled from them. The sweeps must have the same axes and
// points in the same order; the first one's fixed conditions and notes are kept.
func PoolSweeps(sws []*Sweep) (*Sweep, error) {
	if len(sws) == 0 {
		return nil, errors.New("no sweep to pool")
	}
	first := sws[0]
	out := &Sweep{Dir: first.Dir, Axes: first.Axes, Base: first.Base, Seed: first.Seed, Complete: true,
		Notes: slices.Clone(first.Notes), index: map[int]*SweepPoint{}}
	for _, pt := range first.Points {
		cp := &SweepPoint{Point: pt.Point, Values: pt.Values}
		out.Points = append(out.Points, cp)
		out.index[pt.Point] = cp
	}
	for _, sw := range sws {
		if !slices.EqualFunc(sw.Axes, first.Axes, func(a, b Axis) bool { return a.Knob == b.Knob && slices.Equal(a.Values, b.Values) }) ||
			len(sw.Points) != len(first.Points) {
			return nil, fmt.Errorf("sweep %s: other axes or points than %s: not the same sweep run again", sw.Dir, first.Dir)
		}
		for i, pt := range sw.Points {
			if !slices.Equal(pt.Values, first.Points[i].Values) {
				return nil, fmt.Errorf("sweep %s: point %d is %v, not %v", sw.Dir, pt.Point, pt.Values, first.Points[i].Values)
			}
			out.Points[i].Cell.merge(&pt.Cell)
		}
		out.Replicates += sw.Replicates
		out.runs += sw.runs
		out.Complete = out.Complete && sw.Complete
	}
	if len(sws) > 1 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d rounds of runs pooled, %d runs in all", len(sws), out.runs))
	}
	return out, nil
}
