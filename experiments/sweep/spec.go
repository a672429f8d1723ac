package sweep

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Limits. A typo in a spec (one zero too many in replicates, a range with 1e6 steps)
// should stop with an explanation before it fills a disk.
const (
	// MaxRuns bounds points × replicates of one sweep.
	MaxRuns = 1_000_000
	// MaxAxes bounds the number of swept knobs.
	MaxAxes = 16
	// MaxAxisValues bounds the values of one axis, and the steps of a range.
	MaxAxisValues = 10_000
	// MaxSpecBytes bounds the size of a spec file.
	MaxSpecBytes = 1 << 20
	// MaxShards bounds n in --shard i/n. Merge holds every shard's runs.csv open at once,
	// so the bound is also a bound on open files.
	MaxShards = 1000
	// MaxWorkers bounds the number of concurrent runs.
	MaxWorkers = 1024
	// MaxRowBytes bounds one line of runs.csv, so that reading a damaged file back never
	// needs more than this much memory per line.
	MaxRowBytes = 1 << 20
)

// Combine says how axes make points.
type Combine string

// The ways to combine axes.
const (
	// Grid takes every combination of axis values (the Cartesian product).
	Grid Combine = "grid"
	// Zip takes the i-th value of every axis together; all axes have the same length.
	Zip Combine = "zip"
)

// Axis is one swept knob with its canonical values in the order given.
type Axis struct {
	Knob   string   `json:"knob"`
	Values []string `json:"values"`
}

// Spec is a sweep, normalised: every value canonical, ranges expanded, defaults filled in.
// Two specs that run the same worlds compare equal, which is what resume and merge check.
// Build one with ParseSpec or LoadSpec; Run re-checks a hand-built one.
type Spec struct {
	// Base holds fixed knob settings in file order (scenario is one of them).
	Base []KV `json:"base"`
	// Axes holds the swept knobs in file order; the first varies slowest in a grid.
	Axes []Axis `json:"axes"`
	// Combine is Grid or Zip.
	Combine Combine `json:"combine"`
	// Replicates is the number of runs (seeds) per point, at least 1.
	Replicates int `json:"replicates"`
	// Seed is the sweep seed from which every run's seed derives (see RunSeed).
	Seed uint64 `json:"seed"`
	// Notes are the spec author's words for the figures' captions: why a number that looks
	// alarming is what it is. They change no run, so resume and merge do not compare them.
	Notes []string `json:"notes,omitempty"`
}

// Points returns the number of points. An invalid spec gives 0.
func (s *Spec) Points() int {
	if len(s.Axes) == 0 {
		return 1
	}
	if s.Combine == Zip {
		return len(s.Axes[0].Values)
	}
	n := 1
	for _, a := range s.Axes {
		if len(a.Values) == 0 || n > MaxRuns/len(a.Values) {
			return 0
		}
		n *= len(a.Values)
	}
	return n
}

// Runs returns points × replicates.
func (s *Spec) Runs() int { return s.Points() * s.Replicates }

// Point returns the axis settings of point i (0 ≤ i < Points()), in axis order. In a grid
// the last axis varies fastest, like nested loops written in file order.
func (s *Spec) Point(i int) []KV {
	kv := make([]KV, len(s.Axes))
	if s.Combine == Zip {
		for a, ax := range s.Axes {
			kv[a] = KV{ax.Knob, ax.Values[i]}
		}
		return kv
	}
	for a := len(s.Axes) - 1; a >= 0; a-- {
		ax := s.Axes[a]
		kv[a] = KV{ax.Knob, ax.Values[i%len(ax.Values)]}
		i /= len(ax.Values)
	}
	return kv
}

// knobs returns what Runner.Run gets for point i: base settings, then axis settings.
func (s *Spec) knobs(i int) []KV {
	return append(append(make([]KV, 0, len(s.Base)+len(s.Axes)), s.Base...), s.Point(i)...)
}

// Set fixes a base knob to value (validated and canonicalised through k), replacing the
// spec's own setting or adding one at the end. It is how --set name=value reaches a sweep.
// A swept knob cannot be set: the axis would silently stop being swept.
func (s *Spec) Set(k KnobChecker, name, value string) error {
	for _, a := range s.Axes {
		if a.Knob == name {
			return usagef("knob %s is swept by the spec's axes; remove the axis to fix its value", name)
		}
	}
	canon, err := k.Knob(name, value)
	if err != nil {
		return &UsageError{Err: err}
	}
	if err := checkCanonical(name, canon); err != nil {
		return &UsageError{Err: err}
	}
	for i := range s.Base {
		if s.Base[i].Name == name {
			s.Base[i].Value = canon
			return nil
		}
	}
	s.Base = append(s.Base, KV{name, canon})
	return nil
}

// Validate checks a spec's structure and limits, and that every value is canonical for k,
// so that a hand-built spec gets the checks a parsed one had. The error is a *UsageError.
func (s *Spec) Validate(k KnobChecker) error {
	if err := s.validateShape(); err != nil {
		return &UsageError{Err: fmt.Errorf("sweep spec: %w", err)}
	}
	check := func(name, v string) error {
		canon, err := k.Knob(name, v)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("sweep spec: %w", err)}
		}
		if canon != v {
			return usagef("sweep spec: knob %s: value %q is not canonical (%q)", name, v, canon)
		}
		return nil
	}
	for _, kv := range s.Base {
		if err := check(kv.Name, kv.Value); err != nil {
			return err
		}
	}
	for _, a := range s.Axes {
		for _, v := range a.Values {
			if err := check(a.Knob, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateShape checks everything that does not need the world.
func (s *Spec) validateShape() error {
	if s.Combine != Grid && s.Combine != Zip {
		return fmt.Errorf("combine = %q: allowed grid or zip", s.Combine)
	}
	if len(s.Axes) > MaxAxes {
		return fmt.Errorf("%d axes: at most %d allowed", len(s.Axes), MaxAxes)
	}
	seen := map[string]bool{}
	for _, kv := range s.Base {
		if err := checkName(kv.Name); err != nil {
			return err
		}
		if seen[kv.Name] {
			return fmt.Errorf("knob %s is set twice", kv.Name)
		}
		seen[kv.Name] = true
		if err := checkCanonical(kv.Name, kv.Value); err != nil {
			return err
		}
	}
	for _, a := range s.Axes {
		if err := a.validate(seen); err != nil {
			return err
		}
	}
	if s.Combine == Zip {
		for _, a := range s.Axes {
			if len(a.Values) != len(s.Axes[0].Values) {
				return fmt.Errorf("combine: zip needs axes of equal length: %s has %d values, %s has %d",
					s.Axes[0].Knob, len(s.Axes[0].Values), a.Knob, len(a.Values))
			}
		}
	}
	if s.Replicates < 1 || s.Replicates > MaxRuns {
		return fmt.Errorf("replicates = %d: out of range, allowed [1, %d]", s.Replicates, MaxRuns)
	}
	if p := s.Points(); p == 0 || p > MaxRuns/s.Replicates {
		return fmt.Errorf("%s runs: out of range, allowed at most %d (points × replicates)",
			s.runsText(), MaxRuns)
	}
	return nil
}

func (a Axis) validate(seen map[string]bool) error {
	if err := checkName(a.Knob); err != nil {
		return err
	}
	if seen[a.Knob] {
		return fmt.Errorf("knob %s is set twice (in base or axes)", a.Knob)
	}
	seen[a.Knob] = true
	if len(a.Values) == 0 {
		return fmt.Errorf("axis %s is empty", a.Knob)
	}
	if len(a.Values) > MaxAxisValues {
		return fmt.Errorf("axis %s has %d values: at most %d allowed", a.Knob, len(a.Values), MaxAxisValues)
	}
	vals := map[string]bool{}
	for _, v := range a.Values {
		if err := checkCanonical(a.Knob, v); err != nil {
			return err
		}
		if vals[v] {
			return fmt.Errorf("axis %s: value %s appears twice", a.Knob, v)
		}
		vals[v] = true
	}
	return nil
}

// runsText describes points × replicates without overflowing, for the limit message.
func (s *Spec) runsText() string {
	parts := make([]string, 0, len(s.Axes)+1)
	for _, a := range s.Axes {
		parts = append(parts, fmt.Sprint(len(a.Values)))
	}
	if s.Combine == Zip && len(s.Axes) > 0 {
		parts = parts[:1]
	}
	parts = append(parts, fmt.Sprint(s.Replicates))
	return strings.Join(parts, " × ")
}

// namePattern is what a knob or column name may look like: it becomes a CSV header field
// and a plot label, so no quoting, no spaces, no capitals (dots are allowed for nested
// knobs such as latency.base).
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_.]{0,63}$`)

func checkName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("name %q: want snake_case, [a-z][a-z0-9_.]*, at most 64 characters", name)
	}
	return nil
}

// checkCanonical refuses values that would break the one-line-per-run layout of runs.csv.
func checkCanonical(name, v string) error {
	if v == "" || strings.ContainsAny(v, "\r\n") || len(v) > 256 {
		return fmt.Errorf("knob %s: value %q: want 1 to 256 characters without line breaks", name, v)
	}
	return nil
}

// normalJSON is the spec as recorded in manifest.json, and the form in which two specs are
// compared: nil and empty lists agree.
func (s *Spec) normalJSON() []byte {
	c := *s
	if c.Base == nil {
		c.Base = []KV{}
	}
	if c.Axes == nil {
		c.Axes = []Axis{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic("sweep: a spec of strings and integers failed to marshal: " + err.Error())
	}
	return b
}

// normalised returns a copy with non-nil lists, for the manifest.
func (s *Spec) normalised() Spec {
	var c Spec
	if err := json.Unmarshal(s.normalJSON(), &c); err != nil {
		panic("sweep: spec JSON did not read back: " + err.Error())
	}
	return c
}
