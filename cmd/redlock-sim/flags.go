package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/internal/suggest"
)

// finiteFloat is a float64 flag's value that takes only finite decimal numbers, as a knob
// does: pflag's own Float64 accepts NaN and the infinities, and NaN slips through every
// range check written as "x < lo || x > hi" (--until-ci NaN once turned adaptive
// replication off without a word). Its error says what is wrong and what to write;
// pflag puts the flag's name and the value before it.
type finiteFloat struct{ p *float64 }

// Set parses s with the knobs' number syntax (decimal digits, an optional sign, fraction
// and exponent): NaN, infinities, hexadecimal and a number beyond float64 are refused.
func (f finiteFloat) Set(s string) error {
	x, err := knobs.Number("", strings.TrimSpace(s), "")
	if err != nil {
		var ve *knobs.ValueError
		if errors.As(err, &ve) {
			return errors.New(ve.Problem)
		}
		return err
	}
	*f.p = x
	return nil
}

// String prints the value as pflag's Float64 does, so defaults read the same in --help.
func (f finiteFloat) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

// Type is float64, so that usage lines show the value as a number (X) as before.
func (f finiteFloat) Type() string { return "float64" }

// finiteFloatVar defines a float64 flag on fs, like fs.Float64Var, that refuses NaN and the
// infinities. Every float flag of the CLI is defined through it or finiteFloat64.
func finiteFloatVar(fs *flag.FlagSet, p *float64, name string, value float64, usage string) {
	*p = value
	fs.Var(finiteFloat{p}, name, usage)
}

// finiteFloat64 defines a float64 flag on fs, like fs.Float64, that refuses NaN and the
// infinities, and returns where its value is kept.
func finiteFloat64(fs *flag.FlagSet, name string, value float64, usage string) *float64 {
	p := new(float64)
	finiteFloatVar(fs, p, name, value, usage)
	return p
}

// flagsFile is how a command reads its flags from a YAML file (tune --file, search --spec):
// the flag that names the file, what the file's map and a key are called in errors,
// whether a key may take a list (a repeatable flag), and what a value may look like, for
// the error that refuses one.
type flagsFile struct {
	flag, of, key, want string
	lists               bool
}

// load sets, from the YAML file path, every flag of fs the command line did not set. Keys
// are flag names, with dashes or underscores; values are scalars spelled as on the
// command line, or lists of them where ff allows.
func (ff flagsFile) load(fs *flag.FlagSet, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--%s %s: %v", ff.flag, path, err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("--%s %s: not a YAML map of %s: %v", ff.flag, path, ff.of, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // errors name the same key whatever the map's order
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	for _, k := range keys {
		name := strings.ReplaceAll(k, "_", "-")
		if f := fs.Lookup(name); f == nil || name == ff.flag || name == "help" {
			msg := fmt.Sprintf("--%s %s: unknown %s %q", ff.flag, path, ff.key, k)
			if s := suggest.Closest(name, names, 1); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", s[0])
			}
			return errors.New(msg)
		}
		if fs.Changed(name) {
			continue
		}
		values := []any{m[k]}
		if x, ok := m[k].([]any); ok && ff.lists {
			values = x
		}
		for _, v := range values {
			switch v.(type) {
			case string, int, int64, uint64, float64, bool:
			default:
				return fmt.Errorf("--%s %s: %s: want %s, got %v", ff.flag, path, k, ff.want, m[k])
			}
			if err := fs.Set(name, fmt.Sprint(v)); err != nil {
				return fmt.Errorf("--%s %s: %s: %v", ff.flag, path, k, err)
			}
		}
	}
	return nil
}
