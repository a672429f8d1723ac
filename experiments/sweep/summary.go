package sweep

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// summarizer turns runs.csv rows, fed in run order, into summary.csv rows, one per point
// as soon as its last replicate arrives. It reads the rows' text, never the runner's
// values, so a live sweep, a resumed one and a merge summarise the very same bytes. It
// holds one point at a time: memory is the KindMillis values of one point's replicates.
type summarizer struct {
	l     *layout
	w     io.Writer
	n     int      // replicates of the current point seen so far
	axes  []string // axis values of the current point
	point string
	acc   []accum
	codec *codec
}

type accum struct {
	ones    int       // KindBool: runs with 1
	isum    int64     // KindCount: sum
	fsum    float64   // KindFloat: sum, in replicate order
	present int       // KindMillis, KindFloat: runs with a value
	vals    []float64 // KindMillis: the values
}

func newSummarizer(l *layout, w io.Writer) (*summarizer, error) {
	s := &summarizer{l: l, w: w, acc: make([]accum, len(l.cols)), codec: newCodec()}
	_, err := w.Write(encodeRow(l.sumHeader))
	return s, err
}

// add takes the next row of runs.csv; it must already have passed layout.checkRow.
func (s *summarizer) add(fields []string) error {
	nAxes := len(s.l.spec.Axes)
	if s.n == 0 {
		s.point = fields[colPoint]
		s.axes = append(s.axes[:0], fields[nFixed:nFixed+nAxes]...)
	}
	for c, col := range s.l.cols {
		if err := s.acc[c].add(col.Kind, fields[nFixed+nAxes+c]); err != nil {
			return fmt.Errorf("point %s column %s: %w", s.point, col.Name, err)
		}
	}
	s.n++
	if s.n < s.l.spec.Replicates {
		return nil
	}
	row := make([]string, 0, len(s.l.sumHeader))
	row = append(row, s.point)
	row = append(row, s.axes...)
	row = append(row, strconv.Itoa(s.n))
	for c, col := range s.l.cols {
		row = s.acc[c].stats(col.Kind, s.n, row)
	}
	for i, r := range s.l.ratios {
		var den int64
		for _, c := range s.l.ratioCols[i][1:] {
			den += s.acc[c].isum
		}
		row = ratioStats(r, s.acc[s.l.ratioCols[i][0]].isum, den, row)
	}
	for c := range s.l.cols {
		s.acc[c] = accum{vals: s.acc[c].vals[:0]}
	}
	s.n = 0
	_, err := s.w.Write(s.codec.encode(row))
	return err
}

func (a *accum) add(k Kind, f string) error {
	switch k {
	case KindBool:
		if f == "1" {
			a.ones++
		}
	case KindCount:
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return err
		}
		if a.isum > math.MaxInt64-n {
			return fmt.Errorf("sum of counts overflows int64")
		}
		a.isum += n
	case KindMillis, KindFloat:
		if f == "" {
			return nil
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return err
		}
		a.present++
		if k == KindFloat {
			a.fsum += v
		} else {
			a.vals = append(a.vals, v)
		}
	}
	return nil
}

// stats appends the column's statistics (see StatColumns) over n runs to row.
func (a *accum) stats(k Kind, n int, row []string) []string {
	switch k {
	case KindBool:
		lo, hi := Wilson(a.ones, n)
		return append(row, FormatStat(float64(a.ones)/float64(n)), FormatStat(lo), FormatStat(hi))
	case KindCount:
		return append(row, FormatStat(float64(a.isum)/float64(n)))
	case KindMillis:
		if a.present == 0 {
			return append(row, "", "", "", "0")
		}
		slices.Sort(a.vals)
		return append(row, FormatStat(Quantile(a.vals, 0.5)), FormatStat(Quantile(a.vals, 0.1)),
			FormatStat(Quantile(a.vals, 0.9)), strconv.Itoa(a.present))
	case KindFloat:
		if a.present == 0 {
			return append(row, "", "0")
		}
		return append(row, FormatStat(a.fsum/float64(a.present)), strconv.Itoa(a.present))
	}
	return row
}

// ratioStats appends ratio r's columns (see RatioColumns) for the sums num and den.
func ratioStats(r Ratio, num, den int64, row []string) []string {
	scale := r.Scale
	if scale == 0 {
		scale = 1
	}
	if den == 0 {
		if r.Proportion {
			return append(row, "", "", "")
		}
		return append(row, "")
	}
	row = append(row, FormatStat(scale*float64(num)/float64(den)))
	if !r.Proportion {
		return row
	}
	if num > den || den > math.MaxInt32*int64(1<<31) {
		return append(row, "", "") // not a proportion: no interval
	}
	lo, hi := Wilson(int(num), int(den))
	return append(row, FormatStat(scale*lo), FormatStat(scale*hi))
}
