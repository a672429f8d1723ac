package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/metric"
)

// Check is a scenario's expected outcome as something a test can verify: over Seeds
// seeds (1..Seeds), each rule must hold. It is what the prose in Expect promises.
type Check struct {
	Seeds int
	Rules []Rule
}

// DefaultCheckSeeds is how many seeds a check runs when the file does not say.
const DefaultCheckSeeds = 20

// MaxCheckSeeds bounds a check's seeds.
const MaxCheckSeeds = 10000

// Rule is one expectation about one figure of a run. A verdict (a safety figure) is
// "seen" in a run when it is above zero, and the rule bounds the share of seeds in which
// it is seen: always (every seed), never (no seed), or at least / at most a share. A
// liveness figure gets bounds (Min, Max) that must hold in at least Share of the seeds
// (every seed unless the file says otherwise).
type Rule struct {
	Figure   string
	Min, Max float64 // bounds on the figure in a run (liveness) or on the share of seeds (verdicts)
	Share    float64 // liveness: the share of seeds in which the bounds must hold
	Text     string  // the rule as written, for reports
	Line     int
}

// Figures are a run's outcome, by the names rules use: every metric package metric lets a
// check use (metric.Verdict and metric.Bound), NaN for a value the run had nothing to
// measure for.
type Figures map[string]float64

// isVerdict reports whether a rule on name bounds the share of seeds that see it (a safety
// count) rather than its value in each run.
func isVerdict(name string) bool {
	d, err := metric.Lookup(name)
	return err == nil && d.Check == metric.Verdict
}

// parseCheck reads the check: mapping.
//
//	check:
//	  seeds: 20
//	  validity_overlaps: always        # always | never | at least 80% | at most 10%
//	  acquired: {min: 1, max: 2}       # in every seed
//	  split_brain_rounds: {min: 5, in: 70%}
func (p *fileParser) parseCheck(sc *Scenario, n *yaml.Node) error {
	verdicts, bounds := metric.Names(metric.Verdict), metric.Names(metric.Bound)
	allowed := append(append([]string{"seeds"}, verdicts...), bounds...)
	if n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if now, ok := metric.Renamed(n.Content[i].Value); ok {
				return p.errf(n.Content[i].Line, "check: %s is called %s now", n.Content[i].Value, now)
			}
		}
	}
	es, err := p.entries(n, allowed, "check")
	if err != nil {
		return err
	}
	c := &Check{Seeds: DefaultCheckSeeds}
	for _, e := range es {
		what := "check: " + e.Key
		if e.Key == "seeds" {
			text, err := p.scalar(e.Val, what)
			if err != nil {
				return err
			}
			k, err := strconv.Atoi(text)
			if err != nil || k < 1 || k > MaxCheckSeeds {
				return p.errf(e.Val.Line, "%s = %s: want a whole number of seeds from 1 to %d", what, text, MaxCheckSeeds)
			}
			c.Seeds = k
			continue
		}
		r := Rule{Figure: e.Key, Line: e.KeyLine, Min: math.Inf(-1), Max: math.Inf(1), Share: 1}
		if isVerdict(e.Key) {
			text, err := p.scalar(e.Val, what)
			if err != nil {
				return err
			}
			r.Text = e.Key + ": " + text
			switch {
			case text == "always":
				r.Min, r.Max = 1, 1
			case text == "never":
				r.Min, r.Max = 0, 0
			case strings.HasPrefix(text, "at least "), strings.HasPrefix(text, "at most "):
				share, ok := percent(strings.TrimPrefix(strings.TrimPrefix(text, "at least "), "at most "))
				if !ok {
					return p.errf(e.Val.Line, "%s = %q: want a share such as 80%%", what, text)
				}
				if strings.HasPrefix(text, "at least ") {
					r.Min, r.Max = share, 1
				} else {
					r.Min, r.Max = 0, share
				}
			default:
				return p.errf(e.Val.Line, "%s = %q: want always, never, at least P%% or at most P%% (of the seeds that see it)", what, text)
			}
			c.Rules = append(c.Rules, r)
			continue
		}
		fields, err := p.entries(e.Val, []string{"min", "max", "in"}, what)
		if err != nil {
			return err
		}
		if len(fields) == 0 {
			return p.errf(e.Val.Line, "%s: give min, max or both", what)
		}
		var parts []string
		for _, f := range fields {
			text, err := p.scalar(f.Val, what+": "+f.Key)
			if err != nil {
				return err
			}
			parts = append(parts, f.Key+" "+text)
			if f.Key == "in" {
				share, ok := percent(text)
				if !ok || share == 0 {
					return p.errf(f.Val.Line, "%s: in = %s: want the share of seeds in which the bounds hold, such as 70%%", what, text)
				}
				r.Share = share
				continue
			}
			x, perr := knobs.Number(f.Key, text, "")
			if perr != nil {
				return p.errf(f.Val.Line, "%s: %s = %s: want a number", what, f.Key, text)
			}
			if f.Key == "min" {
				r.Min = x
			} else {
				r.Max = x
			}
		}
		if r.Min > r.Max {
			return p.errf(e.Val.Line, "%s: min is above max", what)
		}
		r.Text = e.Key + ": " + strings.Join(parts, ", ")
		c.Rules = append(c.Rules, r)
	}
	if len(c.Rules) == 0 {
		return p.errf(n.Line, "check: no rule; name a verdict (%s) or a figure (%s)", strings.Join(verdicts, ", "), strings.Join(bounds, ", "))
	}
	sc.Check = c
	return nil
}

// percent parses "80%" as 0.8.
func percent(s string) (float64, bool) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	if !ok {
		return 0, false
	}
	x, err := knobs.Number("share", num, "")
	if err != nil || x < 0 || x > 100 { // knobs.Number takes no NaN, which these would pass
		return 0, false
	}
	return x / 100, true
}

// Result is one rule's verdict over the seeds.
type Result struct {
	Rule  Rule
	Held  bool
	Share float64  // verdicts: the share of seeds that saw it; liveness: the share in bounds
	Seeds []uint64 // the first seeds (at most 10) that went against the rule: out of bounds, or a verdict seen that should not be, or not seen that should
}

func (r Result) String() string {
	status := "ok  "
	if !r.Held {
		status = "FAIL"
	}
	what := "seeds in bounds"
	if isVerdict(r.Rule.Figure) {
		what = "seeds saw it"
	}
	s := fmt.Sprintf("%s %-45s %5.1f%% of %s", status, r.Rule.Text, 100*r.Share, what)
	if len(r.Seeds) > 0 {
		var xs []string
		for _, seed := range r.Seeds {
			xs = append(xs, strconv.FormatUint(seed, 10))
		}
		s += " (against it: seeds " + strings.Join(xs, ", ") + ")"
	}
	return s
}

// Evaluate judges the rules against the runs' figures, runs[i] being seed i+1. A rule on
// a figure a run lacks is an error naming it and the figures the run has: a rule judged
// on a zero it never measured would pass or fail for nothing. A figure that is NaN (nothing
// to measure in that run) is out of any bounds.
func (c *Check) Evaluate(runs []Figures) ([]Result, error) {
	for _, r := range c.Rules {
		for i, f := range runs {
			if _, ok := f[r.Figure]; !ok {
				known := slices.Sorted(maps.Keys(f))
				return nil, fmt.Errorf("check rule %q (line %d), seed %d: %w", r.Text, r.Line, i+1, metric.Unknown("figure", r.Figure, known))
			}
		}
	}
	out := make([]Result, 0, len(c.Rules))
	for _, r := range c.Rules {
		res := Result{Rule: r}
		hits := 0
		for i, f := range runs {
			x := f[r.Figure]
			var hit bool
			if isVerdict(r.Figure) {
				hit = x > 0
			} else {
				hit = x >= r.Min && x <= r.Max
			}
			if hit {
				hits++
			}
			against := !hit
			if isVerdict(r.Figure) {
				against = (hit && r.Max < 1) || (!hit && r.Min > 0)
			}
			if against && len(res.Seeds) < 10 {
				res.Seeds = append(res.Seeds, uint64(i+1))
			}
		}
		if len(runs) > 0 {
			res.Share = float64(hits) / float64(len(runs))
		}
		if isVerdict(r.Figure) {
			res.Held = res.Share >= r.Min && res.Share <= r.Max
		} else {
			res.Held = res.Share >= r.Share
		}
		out = append(out, res)
	}
	return out, nil
}
