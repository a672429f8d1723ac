package search

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/metric"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// Options says how a search runs and where it writes.
type Options struct {
	Dir string // the output folder: runs/ (the sweep), findings.csv, KIND.yaml
	// Runs is how many worlds to draw; with For, the most.
	Runs int
	// For, when above 0, stops drawing after this much machine time (the findings then
	// depend on the machine's speed; Runs alone gives the same findings everywhere).
	For       time.Duration
	Workers   int
	Overwrite bool
	// ShrinkBudget bounds the runs shrinking may spend on each finding (0: DefaultShrinkBudget).
	ShrinkBudget int
	Tool         string
	// Progress, when set, is given the search's running counts and returns the sweep's
	// progress reporter.
	Progress func(Counts) sweep.Progress
	// Log, when set, receives a line as each finding is shrunk.
	Log io.Writer
}

// Counts reports how many runs have finished and how many of them showed each kind
// (Kinds' order), for a progress line.
type Counts func() (runs int64, found []int64)

// DefaultShrinkBudget is the runs shrinking spends on one finding at most.
const DefaultShrinkBudget = 300

// Files a search writes into its folder.
const (
	FindingsFile = "findings.csv"
	RunsDir      = "runs"
)

// Finding is one kind of finding: how often it was seen, its first run, and the shrunk
// case that still shows it.
type Finding struct {
	Kind      string
	Runs      int   // runs that showed it
	Count     int64 // occurrences: the sum of its metric over those runs
	FirstRun  int   // run index, from 0
	FirstSeed uint64
	// After shrinking (Case nil when not shrunk: interrupted).
	Case         *Case
	File         string // the scenario file, KIND.yaml in the folder
	Story        string
	ShrinkRuns   int
	FaultsBefore int
}

// Result is what a search found.
type Result struct {
	Runs        int
	Acquired    int64
	Incidents   map[string]int64 // safety kind → incidents over all runs
	Findings    []*Finding       // the kinds seen, in Kinds' order
	Checked     []string         // the kinds looked for, in Kinds' order
	Interrupted bool
}

// Run searches: it draws opt.Runs worlds from spec (through the sweep engine, on
// opt.Workers goroutines, in run order whatever their number), writes findings.csv, then
// shrinks the first run of each kind to a scenario file. Interrupted (ctx cancelled), it
// writes the findings of the runs that finished, shrinks nothing and returns
// ErrInterrupted with the result.
func Run(ctx context.Context, s *Spec, opt Options) (*Result, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if opt.Runs < 1 || opt.Runs > sweep.MaxRuns {
		return nil, &InputError{Flag: "--runs", Value: strconv.Itoa(opt.Runs), Msg: fmt.Sprintf("want a number of runs in [1, %d]", sweep.MaxRuns)}
	}
	r := &runner{s: s, found: make([]atomic.Int64, len(kindTable))}
	spec := &sweep.Spec{Combine: sweep.Grid, Replicates: opt.Runs, Seed: s.Seed,
		Notes: []string{"redlock-sim search: one drawn world per run (findings.csv beside this folder)"}}
	so := sweep.Options{Dir: filepath.Join(opt.Dir, RunsDir), Workers: opt.Workers, Overwrite: opt.Overwrite, Tool: opt.Tool}
	if opt.Progress != nil {
		so.Progress = opt.Progress(r.Found)
	}
	sctx := ctx
	if opt.For > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, opt.For)
		defer cancel()
	}
	_, err := sweep.Run(sctx, r, spec, so)
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted && !(opt.For > 0 && errors.Is(err, context.DeadlineExceeded)) {
		return nil, err
	}
	res, err := s.collect(filepath.Join(so.Dir, sweep.RunsFile))
	if err != nil {
		return nil, err
	}
	res.Interrupted = interrupted
	if err := res.writeFindings(opt.Dir); err != nil {
		return res, err
	}
	if interrupted {
		return res, ErrInterrupted
	}
	budget := opt.ShrinkBudget
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	for _, f := range res.Findings {
		if err := s.shrinkFinding(ctx, f, budget, opt.Dir); err != nil {
			if ctx.Err() != nil {
				res.Interrupted = true
				_ = res.writeFindings(opt.Dir)
				return res, ErrInterrupted
			}
			return res, err
		}
		if opt.Log != nil {
			after, _ := f.Case.Size()
			fmt.Fprintf(opt.Log, "search: %s shrunk in %d runs, %d faults → %d: %s\n", f.Kind, f.ShrinkRuns, f.FaultsBefore, after, f.File)
		}
		if err := res.writeFindings(opt.Dir); err != nil {
			return res, err
		}
	}
	return res, nil
}

// checked returns the kinds the spec looks for: the safety kinds always, each liveness
// kind when its bound is set.
func (s *Spec) checked() []string {
	out := []string{"validity_overlap", "usage_overlap", "stale_write"}
	if s.MaxUnavailable > 0 {
		out = append(out, "unavailable")
	}
	if s.MinSuccess > 0 {
		out = append(out, "low_success")
	}
	if s.MaxSplitBrain >= 0 {
		out = append(out, "split_brain")
	}
	return out
}

// safetyIncidents names, for each safety kind, its incidents column: the count its rate
// is about (a pause that lets two others in is one incident).
var safetyIncidents = map[string]string{
	"validity_overlap": metric.ValidityIncidents,
	"usage_overlap":    metric.UsageIncidents,
	"stale_write":      metric.StaleIncidents,
}

// collect reads the sweep's runs.csv, in run order, into the findings.
func (s *Spec) collect(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	res := &Result{Incidents: map[string]int64{}, Checked: s.checked()}
	byKind := map[string]*Finding{}
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		fig := figures{}
		for name, i := range col {
			if v, err := strconv.ParseFloat(row[i], 64); err == nil {
				fig[name] = v
			}
		}
		run, seed := int(fig["replicate"]), uint64(0)
		if seed, err = strconv.ParseUint(row[col["seed"]], 10, 64); err != nil {
			return nil, fmt.Errorf("%s: seed %q: %w", path, row[col["seed"]], err)
		}
		res.Runs++
		res.Acquired += int64(fig[metric.Acquired])
		for k, c := range safetyIncidents {
			res.Incidents[k] += int64(fig[c])
		}
		for _, k := range s.classify(fig) {
			fd := byKind[k]
			if fd == nil {
				fd = &Finding{Kind: k, FirstRun: run, FirstSeed: seed}
				byKind[k] = fd
			}
			fd.Runs++
			if k == "unavailable" || k == "low_success" {
				fd.Count++
			} else {
				fd.Count += int64(fig[kindTable[kindIndex(k)].Metric])
			}
		}
	}
	for _, k := range kindTable {
		if fd := byKind[k.Name]; fd != nil {
			res.Findings = append(res.Findings, fd)
		}
	}
	return res, nil
}

// Finding returns the finding of kind, or nil.
func (r *Result) Finding(kind string) *Finding {
	for _, f := range r.Findings {
		if f.Kind == kind {
			return f
		}
	}
	return nil
}

// UpperPer10k is the 95 % upper bound on the rate of a safety kind's incidents per 10,000
// acquisitions: one-sided exact (1 − 0.05^(1/n)) when none was seen, else Wilson's.
func (r *Result) UpperPer10k(kind string) float64 {
	n := r.Acquired
	if n == 0 {
		return math.NaN()
	}
	k := r.Incidents[kind]
	if k == 0 {
		return 1e4 * (1 - math.Pow(0.05, 1/float64(n)))
	}
	_, hi := sweep.Wilson(int(min(k, n)), int(n))
	return 1e4 * hi
}
