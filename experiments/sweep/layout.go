package sweep

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// layout is the shape of a sweep's files: what Run writes and what resume and Merge
// read back and check, in one place so the three cannot drift apart.
type layout struct {
	spec       *Spec
	cols       []Column
	ratios     []Ratio
	ratioCols  [][]int // indexes in cols of each ratio's Num, then of the counts its Den adds up
	runsHeader []string
	sumHeader  []string
}

// The names of the columns the engine itself writes: runs.csv begins with PointColumn,
// ReplicateColumn and SeedColumn, then the swept knobs; summary.csv with PointColumn, the
// swept knobs and RunsColumn. Readers (plots) find them by these names.
const (
	PointColumn     = "point"
	ReplicateColumn = "replicate"
	SeedColumn      = "seed"
	RunsColumn      = "runs" // summary.csv: the point's number of runs
)

// Fixed leading columns of runs.csv, by index.
const (
	colPoint = iota
	colReplicate
	colSeed
	nFixed
)

func newLayout(spec *Spec, cols []Column, ratios []Ratio) (*layout, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("the runner reports no columns")
	}
	l := &layout{spec: spec, cols: cols, ratios: ratios}
	l.runsHeader = []string{PointColumn, ReplicateColumn, SeedColumn}
	l.sumHeader = []string{PointColumn}
	for _, a := range spec.Axes {
		l.runsHeader = append(l.runsHeader, a.Knob)
		l.sumHeader = append(l.sumHeader, a.Knob)
	}
	l.sumHeader = append(l.sumHeader, RunsColumn)
	for _, c := range cols {
		if err := checkName(c.Name); err != nil {
			return nil, fmt.Errorf("runner column: %w", err)
		}
		if !c.Kind.valid() {
			return nil, fmt.Errorf("runner column %s: invalid kind %d", c.Name, c.Kind)
		}
		l.runsHeader = append(l.runsHeader, c.Name)
		l.sumHeader = append(l.sumHeader, StatColumns(c)...)
	}
	for _, r := range ratios {
		idx, err := l.ratioIndexes(r)
		if err != nil {
			return nil, err
		}
		l.ratioCols = append(l.ratioCols, idx)
		l.sumHeader = append(l.sumHeader, RatioColumns(r)...)
	}
	for _, h := range [][]string{l.runsHeader, l.sumHeader} {
		seen := map[string]bool{}
		for _, name := range h {
			if seen[name] {
				return nil, fmt.Errorf("column %s appears twice in a CSV header (a knob, a runner column or a statistic share the name)", name)
			}
			seen[name] = true
		}
	}
	return l, nil
}

// ratioIndexes checks ratio r against the columns and returns where its counts are: its
// Num, then each count its Den adds up.
func (l *layout) ratioIndexes(r Ratio) ([]int, error) {
	var idx []int
	if err := checkName(r.Name); err != nil {
		return idx, fmt.Errorf("runner ratio: %w", err)
	}
	if r.Scale < 0 || math.IsNaN(r.Scale) || math.IsInf(r.Scale, 0) {
		return idx, fmt.Errorf("runner ratio %s: scale %v: want a positive number", r.Name, r.Scale)
	}
	for _, name := range append([]string{r.Num}, strings.Split(r.Den, "+")...) {
		c := slices.IndexFunc(l.cols, func(c Column) bool { return c.Name == name })
		if c < 0 || l.cols[c].Kind != KindCount {
			return idx, fmt.Errorf("runner ratio %s: %q is not a count column of the runner", r.Name, name)
		}
		idx = append(idx, c)
	}
	return idx, nil
}

// RatioColumns returns the summary.csv columns of ratio r: r.Name, then r.Name_lo and
// r.Name_hi (its 95% Wilson interval) when r is a proportion.
func RatioColumns(r Ratio) []string {
	if r.Proportion {
		return []string{r.Name, r.Name + "_lo", r.Name + "_hi"}
	}
	return []string{r.Name}
}

// StatColumns returns the summary.csv columns that summarise column c across the
// replicates of a point, so that readers (plots) find them by name:
//
//	KindBool    c_frac, c_lo, c_hi        proportion of runs with 1, 95% Wilson interval
//	KindCount   c_mean                    mean
//	KindMillis  c_median, c_p10, c_p90, c_n   median, 10th and 90th percentiles (type 7
//	                                      interpolation) over the c_n runs that have a value
//	KindFloat   c_mean, c_n               mean over the c_n runs that have a value
//	KindText    (none)
//
// A statistic over no values is an empty field.
func StatColumns(c Column) []string {
	switch c.Kind {
	case KindBool:
		return []string{c.Name + "_frac", c.Name + "_lo", c.Name + "_hi"}
	case KindCount:
		return []string{c.Name + "_mean"}
	case KindMillis:
		return []string{c.Name + "_median", c.Name + "_p10", c.Name + "_p90", c.Name + "_n"}
	case KindFloat:
		return []string{c.Name + "_mean", c.Name + "_n"}
	}
	return nil
}

// runFields returns the leading fields of run k (point, replicate, seed, axis values).
func (l *layout) runFields(k int) []string {
	p, r := k/l.spec.Replicates, k%l.spec.Replicates
	f := make([]string, 0, len(l.runsHeader))
	f = append(f, strconv.Itoa(p), strconv.Itoa(r), strconv.FormatUint(RunSeed(l.spec.Seed, p, r), 10))
	for _, kv := range l.spec.Point(p) {
		f = append(f, kv.Value)
	}
	return f
}

// checkRow verifies that fields are run k's row: the right point, replicate, seed and axis
// values, and metric fields that parse as their kinds. Resume and Merge use it so that a
// damaged or foreign file is refused instead of being summarised.
func (l *layout) checkRow(fields []string, k int) error {
	if len(fields) != len(l.runsHeader) {
		return fmt.Errorf("%d fields, want %d", len(fields), len(l.runsHeader))
	}
	want := l.runFields(k)
	for i, w := range want {
		if fields[i] != w {
			return fmt.Errorf("%s = %q, want %q for run %d", l.runsHeader[i], fields[i], w, k)
		}
	}
	for c, col := range l.cols {
		f := fields[len(want)+c]
		if err := checkField(col.Kind, f); err != nil {
			return fmt.Errorf("%s = %q: %w", col.Name, f, err)
		}
	}
	return nil
}

func checkField(k Kind, f string) error {
	switch k {
	case KindBool:
		if f != "0" && f != "1" {
			return fmt.Errorf("want 0 or 1")
		}
	case KindCount:
		if n, err := strconv.ParseInt(f, 10, 64); err != nil || n < 0 {
			return fmt.Errorf("want a non-negative integer")
		}
	case KindMillis, KindFloat:
		if f == "" {
			return nil
		}
		if _, err := strconv.ParseFloat(f, 64); err != nil {
			return fmt.Errorf("want a number")
		}
	case KindText:
		if strings.IndexByte(f, 0) >= 0 {
			return fmt.Errorf("a NUL byte: text holds none")
		}
	}
	return nil
}

// codec encodes and decodes runs.csv records with encoding/csv's exact rules while reusing
// its buffers: a fresh csv.Writer or csv.Reader allocates a 4 KiB buffer, which per row
// would be most of a sweep's garbage. A codec is not safe for concurrent use; each worker
// has its own.
type codec struct {
	buf  bytes.Buffer
	w    *csv.Writer
	feed feed
	r    *csv.Reader
}

func newCodec() *codec {
	c := &codec{}
	c.w = csv.NewWriter(&c.buf)
	c.r = csv.NewReader(&c.feed)
	c.r.FieldsPerRecord = -1
	return c
}

// encode renders one record, newline included, into a new slice.
func (c *codec) encode(fields []string) []byte {
	c.buf.Reset()
	if err := c.w.Write(fields); err != nil {
		panic("sweep: csv write to memory failed: " + err.Error())
	}
	c.w.Flush()
	return bytes.Clone(c.buf.Bytes())
}

// decode parses one complete line, '\n' included (no field holds a line break, so a record
// is exactly one line, and the reader never needs more than the line it was given).
func (c *codec) decode(line []byte) ([]string, error) {
	c.feed.b = line
	return c.r.Read()
}

// feed hands the codec's reader one line at a time.
type feed struct{ b []byte }

func (f *feed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

// encodeRow renders one CSV record, newline included, for the few rows (headers) that are
// not worth a codec.
func encodeRow(fields []string) []byte { return newCodec().encode(fields) }
