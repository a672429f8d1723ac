package sweep

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Widest is the widest confidence interval in a finished sweep's summary.csv: its width
// (hi − lo), and where it is.
type Widest struct {
	Width  float64
	Column string // the proportion, e.g. any_usage_overlap
	Point  string // the point's number in summary.csv
}

// WidestInterval reads dir's summary.csv and returns its widest interval over every
// proportion (each column pair name_lo, name_hi) and every point: what adaptive
// replication (sweep --until-ci) narrows by adding seeds. A summary without intervals
// gives width 0.
func WidestInterval(dir string) (Widest, error) {
	f, err := os.Open(filepath.Join(dir, SummaryFile))
	if err != nil {
		return Widest{}, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return Widest{}, fmt.Errorf("%s: %w", SummaryFile, err)
	}
	type pair struct {
		name   string
		lo, hi int
	}
	var pairs []pair
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for i, h := range head {
		if name, ok := strings.CutSuffix(h, "_lo"); ok {
			if j, ok := col[name+"_hi"]; ok {
				pairs = append(pairs, pair{name, i, j})
			}
		}
	}
	var w Widest
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return w, nil
		}
		if err != nil {
			return Widest{}, fmt.Errorf("%s: %w", SummaryFile, err)
		}
		for _, p := range pairs {
			lo, err1 := strconv.ParseFloat(row[p.lo], 64)
			hi, err2 := strconv.ParseFloat(row[p.hi], 64)
			if err1 != nil || err2 != nil { // an empty interval: nothing to narrow
				continue
			}
			if d := hi - lo; d > w.Width {
				w = Widest{Width: d, Column: p.name, Point: row[col[PointColumn]]}
			}
		}
	}
}
