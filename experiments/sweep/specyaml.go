package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/redlock-sim/redlock-sim/sim"
)

// LoadSpec reads the YAML spec at path and checks it as ParseSpec does.
func LoadSpec(path string, k KnobChecker) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &SpecError{File: path, Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return nil, &SpecError{File: path, Err: err}
	}
	if len(data) > MaxSpecBytes {
		return nil, &SpecError{File: path, Err: fmt.Errorf("larger than %d bytes", MaxSpecBytes)}
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
	root, err := parseYAML(file, data)
	if err != nil {
		return nil, err
	}
	p := &specParser{file: file, k: k, lines: map[string]int{}}
	return p.parse(root)
}

// yamlLine picks the line out of a yaml.v3 syntax error, which carries it only as text.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func parseYAML(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, &SpecError{File: file, Err: errors.New("empty: want a mapping with base, axes, replicates and seed")}
		}
		return nil, yamlError(file, data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, yamlError(file, data, err)
	default:
		return nil, &SpecError{File: file, Line: extra.Line, Err: errors.New("a second YAML document: a spec is one document")}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &SpecError{File: file, Line: doc.Line, Err: errors.New("want one YAML document")}
	}
	return doc.Content[0], nil
}

func yamlError(file string, data []byte, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg := m[2]
		// yaml.v3 reports an unclosed flow list or mapping at the 0-based line of its
		// opening bracket (its parser errors skip the +1 its scanner errors get); a test
		// pins this, so a fixed library shows up as a failing test, not a wrong line.
		if strings.HasPrefix(msg, "did not find expected ',' or ") {
			line++
			msg += " (a [list] or {mapping} opened on this line is not closed)"
		}
		if strings.HasPrefix(msg, "found character that cannot start any token") && tabAt(data, line) {
			msg += " (YAML does not allow tabs for indentation; use spaces)"
		}
		return &SpecError{File: file, Line: line, Err: errors.New(msg)}
	}
	return &SpecError{File: file, Err: errors.New(strings.TrimPrefix(err.Error(), "yaml: "))}
}

// tabAt reports whether the 1-based line of data holds a tab. yaml.v3 reports a tab in
// indentation only as "found character that cannot start any token", which names neither
// the tab nor the fix, so the message gets a hint when the line has one.
func tabAt(data []byte, line int) bool {
	lines := bytes.Split(data, []byte("\n"))
	if line < 1 || line > len(lines) {
		return false
	}
	return bytes.IndexByte(lines[line-1], '\t') >= 0
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
		got[e.key] = e.keyLine
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
	switch e.key {
	case "base":
		err = p.base(s, e.val)
	case "axes":
		err = p.axes(s, e.val)
	case "replicates":
		text, err := p.scalar(e.val, "replicates")
		if err != nil {
			return err
		}
		n, perr := strconv.ParseInt(text, 10, 64)
		if perr != nil || n < 1 || n > MaxRuns {
			return p.wrap(e.val.Line, wholeNumberError("replicates", text, fmt.Sprintf("an integer in [1, %d]", MaxRuns)))
		}
		s.Replicates = int(n)
	case "seed":
		text, err := p.scalar(e.val, "seed")
		if err != nil {
			return err
		}
		// Parsed from the text, not decoded: yaml.v3 decodes 1.5 into a uint64 as 1 and
		// 2^64 as 2^63, silently running another sweep than the one written.
		n, perr := strconv.ParseUint(text, 10, 64)
		if perr != nil {
			return p.wrap(e.val.Line, wholeNumberError("seed", text, "an integer in [0, 18446744073709551615]"))
		}
		s.Seed = n
	case "notes":
		err = p.notes(s, e.val)
	case "combine":
		text, err := p.scalar(e.val, "combine")
		if err != nil {
			return err
		}
		if text != string(Grid) && text != string(Zip) {
			return p.wrap(e.val.Line, sim.BadParam("combine", text, "grid or zip"))
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
		text, err := p.scalar(e.val, "knob "+e.key)
		if err != nil {
			return err
		}
		canon, err := p.knob(e.key, text, e.val.Line)
		if err != nil {
			return err
		}
		s.Base = append(s.Base, KV{e.key, canon})
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
	case isNull(e.val) || (e.val.Kind == yaml.SequenceNode && len(e.val.Content) == 0):
		return Axis{}, p.errf(e.val.Line, "axis %s is empty: give at least one value", e.key)
	case e.val.Kind == yaml.SequenceNode:
		if len(e.val.Content) > MaxAxisValues {
			return Axis{}, p.errf(e.val.Line, "axis %s: %d values, at most %d allowed", e.key, len(e.val.Content), MaxAxisValues)
		}
		for _, item := range e.val.Content {
			item = resolve(item)
			t, err := p.scalar(item, "a value of axis "+e.key)
			if err != nil {
				return Axis{}, err
			}
			texts, lines = append(texts, t), append(lines, item.Line)
		}
	case e.val.Kind == yaml.MappingNode:
		isRange = true
		var err error
		if texts, err = p.rangeValues(e); err != nil {
			return Axis{}, err
		}
		for range texts {
			lines = append(lines, e.val.Line)
		}
	default:
		return Axis{}, p.errf(e.val.Line, "axis %s: want a list [a, b, ...] or a range {from: a, to: b, steps: n, scale: linear|log}, got %s",
			e.key, describe(e.val))
	}
	a := Axis{Knob: e.key, Values: make([]string, 0, len(texts))}
	first := map[string]int{}
	for i, t := range texts {
		canon, err := p.knob(e.key, t, lines[i])
		if err != nil {
			return Axis{}, err
		}
		if l, dup := first[canon]; dup {
			if isRange {
				return Axis{}, p.errf(lines[i], "axis %s: the range gives %s twice after rounding; use fewer steps", e.key, canon)
			}
			return Axis{}, p.errf(lines[i], "axis %s: value %s given twice (first at line %d)", e.key, canon, l)
		}
		first[canon] = lines[i]
		a.Values = append(a.Values, canon)
	}
	return a, nil
}

var rangeKeys = []string{"from", "to", "steps", "scale"}

func (p *specParser) rangeValues(e entry) ([]string, error) {
	what := "range of axis " + e.key
	es, err := p.entries(e.val, rangeKeys, what)
	if err != nil {
		return nil, err
	}
	r := rangeSpec{}
	have := map[string]bool{}
	for _, f := range es {
		have[f.key] = true
		text, err := p.scalar(f.val, what+": "+f.key)
		if err != nil {
			return nil, err
		}
		switch f.key {
		case "from":
			r.from = text
		case "to":
			r.to = text
		case "steps":
			n, err := strconv.Atoi(text)
			if err != nil || n < 2 || n > MaxAxisValues {
				return nil, p.wrap(f.val.Line, sim.BadParam("steps", text, fmt.Sprintf("an integer in [2, %d]", MaxAxisValues)))
			}
			r.steps = n
		case "scale":
			if text != "linear" && text != "log" {
				return nil, p.wrap(f.val.Line, sim.BadParam("scale", text, "linear or log"))
			}
			r.log = text == "log"
		}
	}
	for _, key := range rangeKeys[:3] {
		if !have[key] {
			return nil, p.errf(e.val.Line, "%s: missing %q (a range is {from: a, to: b, steps: n, scale: linear|log})", what, key)
		}
	}
	vals, err := r.values()
	if err != nil {
		return nil, p.errf(e.val.Line, "%s: %v", what, err)
	}
	return vals, nil
}

// entry is one key of a YAML mapping with the line of the key.
type entry struct {
	key     string
	keyLine int
	val     *yaml.Node
}

// entries lists a mapping's keys in file order, refusing duplicates and, when allowed is
// not nil, keys outside it.
func (p *specParser) entries(n *yaml.Node, allowed []string, what string) ([]entry, error) {
	seen := map[string]int{}
	out := make([]entry, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k.Line, "%s: want a plain name as key, got %s", what, describe(k))
		}
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return nil, p.errf(k.Line, "unknown key %q in %s%s; allowed: %s",
				k.Value, what, suggest(k.Value, allowed), strings.Join(allowed, ", "))
		}
		if l, dup := seen[k.Value]; dup {
			return nil, p.errf(k.Line, "%s: key %q given twice (first at line %d)", what, k.Value, l)
		}
		seen[k.Value] = k.Line
		out = append(out, entry{k.Value, k.Line, v})
	}
	return out, nil
}

func (p *specParser) knobName(e entry) error {
	if err := checkName(e.key); err != nil {
		return p.wrap(e.keyLine, err)
	}
	if l, dup := p.lines[e.key]; dup {
		return p.errf(e.keyLine, "knob %s is already set at line %d; a knob is either fixed in base or swept in axes", e.key, l)
	}
	p.lines[e.key] = e.keyLine
	return nil
}

func (p *specParser) scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errf(n.Line, "%s: want a single value, got %s", what, describe(n))
	}
	if isNull(n) {
		return "", p.errf(n.Line, "%s has no value", what)
	}
	return n.Value, nil
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

// resolve follows aliases (*anchor) to the node they name; the bound stops a malicious
// alias chain.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "something else"
}

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
