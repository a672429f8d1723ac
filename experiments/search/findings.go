package search

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
)

// findingsHeader is findings.csv's header: one row per kind looked for.
var findingsHeader = []string{"kind", "runs", "count", "first_run", "first_seed", "rate_per_10k_acq_upper95",
	"file", "shrunk_seed", "faults_before", "faults_after", "shrink_runs"}

// rows returns findings.csv's rows, the header first.
func (r *Result) rows() [][]string {
	out := [][]string{findingsHeader}
	for _, k := range r.Checked {
		row := []string{k, "0", "0", "", "", "", "", "", "", "", ""}
		if _, ok := safetyIncidents[k]; ok {
			row[5] = fmtRate(r.UpperPer10k(k))
		}
		if f := r.Finding(k); f != nil {
			row[1], row[2] = strconv.Itoa(f.Runs), strconv.FormatInt(f.Count, 10)
			row[3], row[4] = strconv.Itoa(f.FirstRun), strconv.FormatUint(f.FirstSeed, 10)
			if f.Case != nil {
				after, _ := f.Case.Size()
				row[6], row[7] = filepath.Base(f.File), strconv.FormatUint(f.Case.Seed, 10)
				row[8], row[9], row[10] = strconv.Itoa(f.FaultsBefore), strconv.Itoa(after), strconv.Itoa(f.ShrinkRuns)
			}
		}
		out = append(out, row)
	}
	return out
}

func fmtRate(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(roundSig(v, 3), 'g', -1, 64)
}

// writeFindings writes findings.csv into dir, atomically.
func (r *Result) writeFindings(dir string) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(r.rows()); err != nil {
		return err
	}
	path := filepath.Join(dir, FindingsFile)
	if err := os.WriteFile(path+".tmp", buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// WriteTable prints the findings as a table, then, when no safety violation was seen, what
// that is worth: the runs, the acquisitions and the 95 % upper bound on each rate.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tRUNS\tCOUNT\tFIRST RUN\tUPPER95 /10K ACQ\tSHRUNK TO\t")
	for _, row := range r.rows()[1:] {
		first, shrunk := "-", "-"
		if row[3] != "" {
			first = row[3] + " (seed " + row[4] + ")"
		}
		if row[6] != "" {
			shrunk = fmt.Sprintf("%s: %s → %s faults in %s runs", row[6], row[8], row[9], row[10])
		}
		upper := row[5]
		if upper == "" {
			upper = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", row[0], row[1], row[2], first, upper, shrunk)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	safe := true
	for k := range safetyIncidents {
		safe = safe && r.Finding(k) == nil
	}
	if safe {
		fmt.Fprintf(w, "\nno safety violation in %d runs and %d acquisitions: each violation kind's rate is below %s per 10,000 acquisitions (95 %% upper bound)\n",
			r.Runs, r.Acquired, fmtRate(r.UpperPer10k("validity_overlap")))
	}
	for _, f := range r.Findings {
		if f.Story != "" {
			fmt.Fprintf(w, "\n%s: %s\n  replay: redlock-sim run --scenario-file %s --seed %d\n", f.Kind, f.Story, f.File, f.Case.Seed)
		}
	}
	return nil
}
