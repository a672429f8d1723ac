package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/redlock-sim/redlock-sim/internal/yamltree"

	"github.com/redlock-sim/redlock-sim/sim"
)

// LoadSpec reads the YAML spec at path and checks it as ParseSpec does.
func LoadSpec(path string, k KnobChecker) (*Spec, error) {
	data, err := yamltree.ReadFile(path, MaxSpecBytes)
	if err != nil {
		return nil, &SpecError{File: path, Err: err}
	}
	return ParseSpec(path, data, k)
}

// ParseSpec decodes a YAML sweep spec strictly and checks every value through k before
// anything runs, so that a typo is reported with its line instead of after an hour of
// runs. file names the spec in messages. The keys are
//
//	base:       knob: value, ...             fixed settings (scenario is just a knob)
//	axes:       knob: [v1, v2, ...]          swept knobs, in file order
//	            knob: {from: a, to: b, steps: n, scale: linear|log}
//	replicates: n                            runs per point, at least 1 (required)
//	seed:       n                            the sweep seed, 0 to 2^64-1 (required)
//	combine:    grid|zip                     default grid
//
// A range takes two numbers or two Go durations and spaces steps values between them,
// both ends included: linear values are rounded to 6 significant digits (so 0.1 steps do
// not print as 0.30000000000000004), log values to 3 (so they read like 2.34s), and a range
// between two integers gives integers. The expanded values are what the manifest records.
// Any problem is a *SpecError carrying the line.
func ParseSpec(file string, data []byte, k KnobChecker) (*Spec, error) {
	root, yerr := yamltree.Document(data, "a mapping with base, axes, replicates and seed")
	if yerr != nil {
		return nil, &SpecError{File: file, Line: yerr.Line, Err: yerr.Err}
	}
	p := &specParser{file: file, k: k, lines: map[string]int{}}
	return p.parse(root)
}

// specParser walks the YAML node tree itself rather than decoding into structs with
// KnownFields(true): the tree keeps each key's line and the file order of axes (a Go map
// would lose both), and walking it lets every message name the key and suggest the
// closest allowed one.
type specParser struct {
	file  string
	k     KnobChecker
	lines map[string]int // knob → line where it was set, across base and axes
}

func (p *specParser) errf(line int, format string, args ...any) error {
	return &SpecError{File: p.file, Line: line, Err: fmt.Errorf(format, args...)}
}

func (p *specParser) wrap(line int, err error) error {
	return &SpecError{File: p.file, Line: line, Err: err}
}

var topKeys = []string{"base", "axes", "replicates", "seed", "combine", "notes"}

func (p *specParser) parse(root *yaml.Node) (*Spec, error) {
	root = resolve(root)
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root.Line, "want a mapping with keys %s, got %s", strings.Join(topKeys, ", "), describe(root))
	}
	es, err := p.entries(root, topKeys, "the spec")
	if err != nil {
		return nil, err
	}
	s := &Spec{Base: []KV{}, Axes: []Axis{}, Combine: Grid}
	got := map[string]int{}
	for _, e := range es {
		got[e.Key] = e.KeyLine
		if err := p.field(s, e); err != nil {
			return nil, err
		}
	}
	for _, key := range []string{"replicates", "seed"} {
		if _, ok := got[key]; !ok {
			return nil, p.errf(0, "missing key %q (replicates: runs per point; seed: the sweep seed)", key)
		}
	}
	if err := p.checkCombined(s, got); err != nil {
		return nil, err
	}
	if err := s.validateShape(); err != nil { // the walk above should have caught it all
		return nil, p.wrap(0, err)
	}
	return s, nil
}

func (p *specParser) field(s *Spec, e entry) error {
	var err error
	switch e.Key {
	case "base":
		err = p.base(s, e.Val)
	case "axes":
		err = p.axes(s, e.Val)
	case "replicates":
		text, err := p.scalar(e.Val, "replicates")
		if err != nil {
			return err
		}
		n, perr := strconv.ParseInt(text, 10, 64)
		if perr != nil || n < 1 || n > MaxRuns {
			return p.wrap(e.Val.Line, wholeNumberError("replicates", text, fmt.Sprintf("an integer in [1, %d]", MaxRuns)))
		}
		s.Replicates = int(n)
	case "seed":
		text, err := p.scalar(e.Val, "seed")
		if err != nil {
			return err
		}
		// Parsed from the text, not decoded: yaml.v3 decodes 1.5 into a uint64 as 1 and
		// 2^64 as 2^63, silently running another sweep than the one written.
		n, perr := strconv.ParseUint(text, 10, 64)
		if perr != nil {
			return p.wrap(e.Val.Line, wholeNumberError("seed", text, "an integer in [0, 18446744073709551615]"))
		}
		s.Seed = n
	case "notes":
		err = p.notes(s, e.Val)
	case "combine":
		text, err := p.scalar(e.Val, "combine")
		if err != nil {
			return err
		}
		if text != string(Grid) && text != string(Zip) {
			return p.wrap(e.Val.Line, sim.BadParam("combine", text, "grid or zip"))
		}
		s.Combine = Combine(text)
	}
	return err
}

// checkCombined checks what needs the whole spec: zip lengths and the run limit.
func (p *specParser) checkCombined(s *Spec, got map[string]int) error {
	if s.Combine == Zip {
		for _, a := range s.Axes {
			if len(a.Values) != len(s.Axes[0].Values) {
				return p.errf(p.lines[a.Knob], "combine: zip needs axes of equal length: %s has %d values, %s has %d",
					s.Axes[0].Knob, len(s.Axes[0].Values), a.Knob, len(a.Values))
			}
		}
	}
	if pts := s.Points(); pts == 0 || pts > MaxRuns/s.Replicates {
		return p.errf(got["replicates"], "%s runs (points × replicates): too many, at most %d allowed",
			s.runsText(), MaxRuns)
	}
	return nil
}

// notes reads the figures' caption notes: a list of sentences.
func (p *specParser) notes(s *Spec, n *yaml.Node) error {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return p.errf(n.Line, "notes: want a list of sentences, got %s", describe(n))
	}
	for _, item := range n.Content {
		text, err := p.scalar(resolve(item), "notes")
		if err != nil {
			return err
		}
		s.Notes = append(s.Notes, text)
	}
	return nil
}

func (p *specParser) base(s *Spec, n *yaml.Node) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errf(n.Line, "base: want a mapping of knob: value, got %s", describe(n))
	}
	es, err := p.entries(n, nil, "base")
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := p.knobName(e); err != nil {
			return err
		}
		text, err := p.scalar(e.Val, "knob "+e.Key)
		if err != nil {
			return err
		}
		canon, err := p.knob(e.Key, text, e.Val.Line)
		if err != nil {
			return err
		}
		s.Base = append(s.Base, KV{e.Key, canon})
	}
	return nil
}

func (p *specParser) axes(s *Spec, n *yaml.Node) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return p.errf(n.Line, "axes: want a mapping of knob: [values] or knob: {from, to, steps, scale}, got %s", describe(n))
	}
	es, err := p.entries(n, nil, "axes")
	if err != nil {
		return err
	}
	if len(es) > MaxAxes {
		return p.errf(n.Line, "axes: %d knobs, at most %d allowed", len(es), MaxAxes)
	}
	for _, e := range es {
		if err := p.knobName(e); err != nil {
			return err
		}
		a, err := p.axis(e)
		if err != nil {
			return err
		}
		s.Axes = append(s.Axes, a)
	}
	return nil
}

func (p *specParser) axis(e entry) (Axis, error) {
	var texts []string
	var lines []int
	isRange := false
	switch {
	case isNull(e.Val) || (e.Val.Kind == yaml.SequenceNode && len(e.Val.Content) == 0):
		return Axis{}, p.errf(e.Val.Line, "axis %s is empty: give at least one value", e.Key)
	case e.Val.Kind == yaml.SequenceNode:
		if len(e.Val.Content) > MaxAxisValues {
			return Axis{}, p.errf(e.Val.Line, "axis %s: %d values, at most %d allowed", e.Key, len(e.Val.Content), MaxAxisValues)
		}
		for _, item := range e.Val.Content {
			item = resolve(item)
			t, err := p.scalar(item, "a value of axis "+e.Key)
			if err != nil {
				return Axis{}, err
			}
			texts, lines = append(texts, t), append(lines, item.Line)
		}
	case e.Val.Kind == yaml.MappingNode:
		isRange = true
		var err error
		if texts, err = p.rangeValues(e); err != nil {
			return Axis{}, err
		}
		for range texts {
			lines = append(lines, e.Val.Line)
		}
	default:
		return Axis{}, p.errf(e.Val.Line, "axis %s: want a list [a, b, ...] or a range {from: a, to: b, steps: n, scale: linear|log}, got %s",
			e.Key, describe(e.Val))
	}
	a := Axis{Knob: e.Key, Values: make([]string, 0, len(texts))}
	first := map[string]int{}
	for i, t := range texts {
		canon, err := p.knob(e.Key, t, lines[i])
		if err != nil {
			return Axis{}, err
		}
		if l, dup := first[canon]; dup {
			if isRange {
				return Axis{}, p.errf(lines[i], "axis %s: the range gives %s twice after rounding; use fewer steps", e.Key, canon)
			}
			return Axis{}, p.errf(lines[i], "axis %s: value %s given twice (first at line %d)", e.Key, canon, l)
		}
		first[canon] = lines[i]
		a.Values = append(a.Values, canon)
	}
	return a, nil
}

var rangeKeys = []string{"from", "to", "steps", "scale"}

func (p *specParser) rangeValues(e entry) ([]string, error) {
	what := "range of axis " + e.Key
	es, err := p.entries(e.Val, rangeKeys, what)
	if err != nil {
		return nil, err
	}
	r := rangeSpec{}
	have := map[string]bool{}
	for _, f := range es {
		have[f.Key] = true
		text, err := p.scalar(f.Val, what+": "+f.Key)
		if err != nil {
			return nil, err
		}
		switch f.Key {
		case "from":
			r.from = text
		case "to":
			r.to = text
		case "steps":
			n, err := strconv.Atoi(text)
			if err != nil || n < 2 || n > MaxAxisValues {
				return nil, p.wrap(f.Val.Line, sim.BadParam("steps", text, fmt.Sprintf("an integer in [2, %d]", MaxAxisValues)))
			}
			r.steps = n
		case "scale":
			if text != "linear" && text != "log" {
				return nil, p.wrap(f.Val.Line, sim.BadParam("scale", text, "linear or log"))
			}
			r.log = text == "log"
		}
	}
	for _, key := range rangeKeys[:3] {
		if !have[key] {
			return nil, p.errf(e.Val.Line, "%s: missing %q (a range is {from: a, to: b, steps: n, scale: linear|log})", what, key)
		}
	}
	vals, err := r.values()
	if err != nil {
		return nil, p.errf(e.Val.Line, "%s: %v", what, err)
	}
	return vals, nil
}

// entry is one key of a YAML mapping with the line of the key.
type entry = yamltree.Entry

// entries lists a mapping's keys in file order (yamltree.Entries), as a *SpecError.
func (p *specParser) entries(n *yaml.Node, allowed []string, what string) ([]entry, error) {
	es, err := yamltree.Entries(n, allowed, what)
	if err != nil {
		return nil, p.wrap(err.Line, err.Err)
	}
	return es, nil
}

func (p *specParser) knobName(e entry) error {
	if err := checkName(e.Key); err != nil {
		return p.wrap(e.KeyLine, err)
	}
	if l, dup := p.lines[e.Key]; dup {
		return p.errf(e.KeyLine, "knob %s is already set at line %d; a knob is either fixed in base or swept in axes", e.Key, l)
	}
	p.lines[e.Key] = e.KeyLine
	return nil
}

func (p *specParser) scalar(n *yaml.Node, what string) (string, error) {
	text, err := yamltree.Scalar(n, what)
	if err != nil {
		return "", p.wrap(err.Line, err.Err)
	}
	return text, nil
}

// knob asks the world to validate and canonicalise one value, and pins any complaint to
// the line.
func (p *specParser) knob(name, text string, line int) (string, error) {
	canon, err := p.k.Knob(name, text)
	if err != nil {
		return "", p.wrap(line, err)
	}
	if err := checkCanonical(name, canon); err != nil {
		return "", p.wrap(line, err)
	}
	return canon, nil
}

var (
	resolve  = yamltree.Resolve
	isNull   = yamltree.IsNull
	describe = yamltree.Describe
)

// wholeNumberError says why text is not an allowed whole number, in the user's words: not
// a number at all, a number with a fraction or an exponent, or a whole number outside the
// range (the only case that is "out of range").
func wholeNumberError(field, text, allowed string) error {
	if strings.ContainsAny(text, "0123456789") && strings.Trim(text, "+-0123456789") == "" {
		return sim.BadParam(field, text, allowed)
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return fmt.Errorf("%s = %s: not a whole number (write the digits, without a fraction or exponent); allowed %s", field, text, allowed)
	}
	return fmt.Errorf("%s = %s: not a number; allowed %s", field, text, allowed)
}
