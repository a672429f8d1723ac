package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	flag "github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFiniteFloatFlagRefusesNaNAndInfinities: the flag takes what a number knob takes and
// refuses NaN, both infinities in every spelling strconv reads, a number beyond float64
// and hexadecimal, with the flag and the value named (by pflag) and what to write; a
// refused value leaves the default in place.
func TestFiniteFloatFlagRefusesNaNAndInfinities(t *testing.T) {
	for _, c := range []struct {
		value string
		want  float64
	}{{"0.1", 0.1}, {"-2.5e3", -2500}, {"7", 7}, {" 1 ", 1}} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		width := finiteFloat64(fs, "width", 0.5, "a `WIDTH`")
		require.NoError(t, fs.Parse([]string{"--width", c.value}), c.value)
		assert.Equal(t, c.want, *width, c.value)
	}
	for value, want := range map[string]string{
		"NaN":       "not a finite number: want a decimal number such as 0.5 or 1e-3",
		"nan":       "not a finite number",
		"Inf":       "not a finite number",
		"+Inf":      "not a finite number",
		"-Inf":      "not a finite number",
		"-infinity": "not a finite number",
		"1e999":     "number too large: want a finite decimal number",
		"0x1p-3":    "not a number: hexadecimal is not accepted",
		"":          "empty value",
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var width float64
		finiteFloatVar(fs, &width, "width", 0.5, "a `WIDTH`")
		err := fs.Parse([]string{"--width=" + value})
		require.Error(t, err, value)
		assert.Contains(t, err.Error(), `invalid argument "`+value+`" for "--width" flag: `+want)
		assert.Equal(t, 0.5, width, "%s: the default stays", value)
	}
}

// TestFiniteFloatFlagReadsAsAFloatInHelp: the help and usage line of a finite float flag
// are those of pflag's Float64, so switching a flag to it changes no documentation.
func TestFiniteFloatFlagReadsAsAFloatInHelp(t *testing.T) {
	help := func(define func(fs *flag.FlagSet)) (string, string) {
		fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
		define(fs)
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		return usageLine(fs, ""), b.String()
	}
	for _, def := range []float64{0, 1, -1, 0.1} {
		lineA, helpA := help(func(fs *flag.FlagSet) { fs.Float64("rate", def, "a rate") })
		lineB, helpB := help(func(fs *flag.FlagSet) { finiteFloat64(fs, "rate", def, "a rate") })
		assert.Equal(t, lineA, lineB)
		assert.Equal(t, helpA, helpB, "default %g", def)
	}
}

// TestUntilCIRefusesNaNAndInfinities: --until-ci NaN used to pass its range check (NaN is
// neither below 0 nor above 1) and then turn adaptive replication off without a word.
func TestUntilCIRefusesNaNAndInfinities(t *testing.T) {
	spec := writeSpec(t, "base:\n  duration: 1s\naxes:\n  ttl: [100ms, 1s]\nreplicates: 1\nseed: 1\n")
	out := filepath.Join(t.TempDir(), "out")
	for _, value := range []string{"NaN", "Inf", "-Inf", "+Infinity", "1e999"} {
		code, stdout, stderr := cli("sweep", "--dry-run", "--spec", spec, "--out", out, "--until-ci", value)
		assert.Equal(t, 2, code, "%s: %s", value, stderr)
		assert.Contains(t, stderr, `redlock-sim: usage: invalid argument "`+value+`" for "--until-ci" flag: `, value)
		assert.Regexp(t, "not a finite number|number too large", stderr, value)
		assert.Empty(t, stdout, "%s: nothing planned", value)
	}
	code, stdout, stderr := cli("sweep", "--dry-run", "--spec", spec, "--out", out, "--until-ci", "0.1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "2 points × 1 replicates")
}

// floatFlagRE matches the names of pflag's methods that define a float flag.
var floatFlagRE = regexp.MustCompile(`^Float(32|64)(Slice)?(Var)?P?$`)

// TestNoRawFloatFlags reads the command's source: every float flag is defined through
// finiteFloat64 or finiteFloatVar, not pflag's Float64 family, which takes NaN and the
// infinities.
func TestNoRawFloatFlags(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			// pflag's float flags: Float64, Float32P, Float64VarP, Float64Slice, ...; each
			// takes a name, a default and a usage at least (rand's Float64 takes nothing).
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && floatFlagRE.MatchString(sel.Sel.Name) && len(call.Args) >= 3 {
				t.Errorf("%s: %s defines a float flag that takes NaN and infinities; use finiteFloat64 or finiteFloatVar",
					fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	assert.Greater(t, checked, 5, "the command's files were read")
}
