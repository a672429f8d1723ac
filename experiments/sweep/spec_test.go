package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
)

func TestExampleSpecDecodesAndExpands(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	assert.Equal(t, []KV{{"scenario", "baseline"}, {"duration", "20s"}}, s.Base)
	assert.Equal(t, []Axis{{"ttl", []string{"200ms", "1s"}}, {"nodes", []string{"3", "5"}}}, s.Axes)
	assert.Equal(t, Grid, s.Combine)
	assert.Equal(t, 3, s.Replicates)
	assert.Equal(t, uint64(11), s.Seed)
	require.Equal(t, 4, s.Points())
	assert.Equal(t, 12, s.Runs())
	// The first axis varies slowest, like nested loops in file order.
	var got [][]KV
	for i := range s.Points() {
		got = append(got, s.Point(i))
	}
	assert.Equal(t, [][]KV{
		{{"ttl", "200ms"}, {"nodes", "3"}},
		{{"ttl", "200ms"}, {"nodes", "5"}},
		{{"ttl", "1s"}, {"nodes", "3"}},
		{{"ttl", "1s"}, {"nodes", "5"}},
	}, got)
	assert.Equal(t, []KV{{"scenario", "baseline"}, {"duration", "20s"}, {"ttl", "1s"}, {"nodes", "5"}}, s.knobs(3))
}

func TestLoadSpecReadsAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "study.yaml")
	require.NoError(t, os.WriteFile(path, []byte(exampleSpec), 0o644))
	s, err := LoadSpec(path, &fakeRunner{})
	require.NoError(t, err)
	assert.Equal(t, 12, s.Runs())

	_, err = LoadSpec(filepath.Join(t.TempDir(), "missing.yaml"), &fakeRunner{})
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "missing.yaml: no such file")
}

func TestAxesKeepFileOrder(t *testing.T) {
	// Reverse alphabetical, so map iteration or sorting would show.
	s := mustSpec(t, `axes:
  ttl: [1s, 2s, 5s, 10s, 30s]
  retry_jitter: [0s, 10ms, 50ms, 100ms, 200ms]
  nodes: [1, 3, 5, 7, 9]
  drift_factor: [0, 0.001, 0.01, 0.05]
replicates: 1
seed: 1
`)
	var names []string
	for _, a := range s.Axes {
		names = append(names, a.Knob)
	}
	assert.Equal(t, []string{"ttl", "retry_jitter", "nodes", "drift_factor"}, names)
	assert.Equal(t, []string{"0s", "10ms", "50ms", "100ms", "200ms"}, s.Axes[1].Values)
	assert.Equal(t, []string{"0", "0.001", "0.01", "0.05"}, s.Axes[3].Values)
	assert.Equal(t, 5*5*5*4, s.Points())
}

func TestValuesAreCanonicalised(t *testing.T) {
	s := mustSpec(t, "base: {duration: 20000ms}\naxes: {ttl: [0.2s, 1000ms]}\nreplicates: 1\nseed: 0\n")
	assert.Equal(t, "20s", s.Base[0].Value)
	assert.Equal(t, []string{"200ms", "1s"}, s.Axes[0].Values)
}

func TestZipVersusGrid(t *testing.T) {
	grid := mustSpec(t, "axes:\n  ttl: [1s, 2s, 5s]\n  nodes: [3, 5, 7]\nreplicates: 2\nseed: 1\n")
	zip := mustSpec(t, "axes:\n  ttl: [1s, 2s, 5s]\n  nodes: [3, 5, 7]\ncombine: zip\nreplicates: 2\nseed: 1\n")
	assert.Equal(t, 9, grid.Points())
	assert.Equal(t, 3, zip.Points())
	assert.Equal(t, 6, zip.Runs())
	assert.Equal(t, []KV{{"ttl", "2s"}, {"nodes", "5"}}, zip.Point(1))
	assert.Equal(t, []KV{{"ttl", "1s"}, {"nodes", "5"}}, grid.Point(1))
}

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		name, axis string
		want       []string
	}{
		{"log durations", "ttl: {from: 1s, to: 30s, steps: 5, scale: log}", []string{"1s", "2.34s", "5.48s", "12.8s", "30s"}},
		{"linear durations", "retry_jitter: {from: 0s, to: 200ms, steps: 5}", []string{"0s", "50ms", "100ms", "150ms", "200ms"}},
		{"linear floats", "drift_factor: {from: 0, to: 0.05, steps: 6, scale: linear}", []string{"0", "0.01", "0.02", "0.03", "0.04", "0.05"}},
		{"linear tenths", "drift_factor: {from: 0.1, to: 0.5, steps: 5}", []string{"0.1", "0.2", "0.3", "0.4", "0.5"}},
		{"linear integers", "nodes: {from: 1, to: 9, steps: 5}", []string{"1", "3", "5", "7", "9"}},
		{"log integers", "nodes: {from: 1, to: 81, steps: 5, scale: log}", []string{"1", "3", "9", "27", "81"}},
		{"log floats", "drift_factor: {from: 0.0001, to: 0.1, steps: 4, scale: log}", []string{"0.0001", "0.001", "0.01", "0.1"}},
		{"descending", "ttl: {from: 30s, to: 10s, steps: 3}", []string{"30s", "20s", "10s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustSpec(t, "axes:\n  "+tc.axis+"\nreplicates: 1\nseed: 1\n")
			assert.Equal(t, tc.want, s.Axes[0].Values)
		})
	}
}

func TestSpecErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		says       string
	}{
		{"unknown top key", exampleSpec + "replicate: 3\n", 9, `unknown key "replicate" in the spec (did you mean "replicates"?)`},
		{"unknown key at top of file", "sed: 1\n" + exampleSpec, 1, `unknown key "sed"`},
		{"unknown knob in base", "base:\n  scenario: baseline\n  ttll: 1s\nreplicates: 1\nseed: 1\n", 3, `unknown knob "ttll" (did you mean "ttl"?)`},
		{"bad base value", "base:\n  duration: 20x\nreplicates: 1\nseed: 1\n", 2, "duration = 20x: out of range, allowed a duration in [1ms, 1h]"},
		{"bad axis value", "axes:\n  ttl:\n    - 200ms\n    - 2h\nreplicates: 1\nseed: 1\n", 4, "ttl = 2h: out of range"},
		{"bad flow axis value", "axes:\n  nodes: [3, 5, 100]\nreplicates: 1\nseed: 1\n", 2, "nodes = 100: out of range, allowed an integer in [1, 99]"},
		{"empty axis", "axes:\n  ttl: []\nreplicates: 1\nseed: 1\n", 2, "axis ttl is empty"},
		{"null axis", "axes:\n  ttl:\nreplicates: 1\nseed: 1\n", 2, "axis ttl is empty"},
		{"scalar axis", "axes:\n  ttl: 1s\nreplicates: 1\nseed: 1\n", 2, "axis ttl: want a list"},
		{"unclosed list", "axes:\n  ttl: [1s, 2s\nreplicates: 1\n", 2, "did not find expected ',' or ']' (a [list] or {mapping} opened on this line is not closed)"},
		{"unclosed mapping", "replicates: 1\nseed: 1\naxes:\n  ttl: {from: 1s, to: 2s\n", 4, "did not find expected ',' or '}'"},
		{"bad indentation", "axes:\n  ttl: [1s]\n nodes: [3]\n", 2, "did not find expected key"},
		{"mapping in a value", "replicates: 1\nseed: 1: 2\n", 2, "mapping values are not allowed in this context"},
		{"unterminated string", "replicates: 1\nseed: \"1\n", 2, "found unexpected end of stream"},
		{"tab indentation", "axes:\n\tttl: [1s]\n", 2, "found character that cannot start any token (YAML does not allow tabs for indentation; use spaces)"},
		{"replicates zero", exampleSpec[:len(exampleSpec)-len("replicates: 3\nseed: 11\n")] + "replicates: 0\nseed: 11\n", 7, "replicates = 0: out of range, allowed an integer in [1, 1000000]"},
		{"notes not a list", "replicates: 1\nseed: 1\nnotes: one sentence\n", 3, `notes: want a list of sentences, got the value "one sentence"`},
		{"replicates text", "replicates: many\nseed: 1\n", 1, "replicates = many: not a number; allowed an integer"},
		{"replicates fraction", "replicates: 2.5\nseed: 1\n", 1, "replicates = 2.5: not a whole number (write the digits, without a fraction or exponent); allowed an integer"},
		{"seed fraction", "replicates: 1\nseed: 1.5\n", 2, "seed = 1.5: not a whole number (write the digits, without a fraction or exponent); allowed an integer in [0, 18446744073709551615]"},
		{"seed above 2^64-1", "replicates: 1\nseed: 18446744073709551616\n", 2, "seed = 18446744073709551616: out of range"},
		{"seed exponent", "replicates: 1\nseed: 1e3\n", 2, "seed = 1e3: not a whole number"},
		{"seed negative", "replicates: 1\nseed: -1\n", 2, "seed = -1: out of range"},
		{"combine", "replicates: 1\nseed: 1\ncombine: mesh\n", 3, "combine = mesh: out of range, allowed grid or zip"},
		{"zip lengths", "axes:\n  ttl: [1s, 2s]\n  nodes: [3, 5, 7]\ncombine: zip\nreplicates: 1\nseed: 1\n", 3, "zip needs axes of equal length: ttl has 2 values, nodes has 3"},
		{"knob in base and axes", "base:\n  ttl: 1s\naxes:\n  ttl: [1s, 2s]\nreplicates: 1\nseed: 1\n", 4, "knob ttl is already set at line 2"},
		{"duplicate value", "axes:\n  ttl: [1s, 1000ms]\nreplicates: 1\nseed: 1\n", 2, "value 1s given twice (first at line 2)"},
		{"duplicate key", "replicates: 1\nseed: 1\nseed: 2\n", 3, `key "seed" given twice (first at line 2)`},
		{"too many runs", "axes:\n  nodes: {from: 1, to: 99, steps: 99}\nreplicates: 20000\nseed: 1\n", 3, "99 × 20000 runs (points × replicates): too many, at most 1000000"},
		{"range unknown key", "axes:\n  ttl:\n    from: 1s\n    to: 2s\n    step: 3\nreplicates: 1\nseed: 1\n", 5, `unknown key "step" in range of axis ttl (did you mean "steps"?)`},
		{"range missing steps", "axes:\n  ttl: {from: 1s, to: 2s}\nreplicates: 1\nseed: 1\n", 2, `missing "steps"`},
		{"range one step", "axes:\n  ttl: {from: 1s, to: 2s, steps: 1}\nreplicates: 1\nseed: 1\n", 2, "steps = 1: out of range, allowed an integer in [2, 10000]"},
		{"range log from zero", "axes:\n  retry_jitter: {from: 0s, to: 2s, steps: 3, scale: log}\nreplicates: 1\nseed: 1\n", 2, "a log range needs two positive ends"},
		{"range mixed types", "axes:\n  ttl: {from: 1, to: 2s, steps: 3}\nreplicates: 1\nseed: 1\n", 2, "want two numbers or two durations"},
		{"range out of knob range", "axes:\n  ttl: {from: 1s, to: 90m, steps: 2}\nreplicates: 1\nseed: 1\n", 2, "ttl = 1h30m0s: out of range"},
		{"range rounds to duplicates", "axes:\n  nodes: {from: 1, to: 3, steps: 5}\nreplicates: 1\nseed: 1\n", 2, "the range gives 2 twice after rounding"},
		{"second document", exampleSpec + "---\nseed: 2\n", 9, "a second YAML document"},
		{"not a mapping", "- 1\n- 2\n", 1, "want a mapping with keys base, axes, replicates, seed, combine, notes, got a list"},
		{"bad knob name", "base:\n  TTL: 1s\nreplicates: 1\nseed: 1\n", 2, `name "TTL": want snake_case`},
		{"value is a list", "base:\n  ttl: [1s]\nreplicates: 1\nseed: 1\n", 2, "knob ttl: want a single value, got a list"},
		{"null base value", "base:\n  ttl:\nreplicates: 1\nseed: 1\n", 2, "knob ttl has no value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec("study.yaml", []byte(tc.text), &fakeRunner{})
			var se *SpecError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.line, se.Line, "%v", err)
			assert.Contains(t, err.Error(), tc.says)
			assert.Contains(t, err.Error(), "spec study.yaml:")
			assert.True(t, IsUsage(err))
		})
	}
}

func TestSpecErrorsWithoutALine(t *testing.T) {
	for _, tc := range []struct{ name, text, says string }{
		{"empty", "", "empty"},
		{"comments only", "# nothing\n", "empty"},
		{"missing seed", "replicates: 3\n", `missing key "seed"`},
		{"missing replicates", "seed: 3\n", `missing key "replicates"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec("study.yaml", []byte(tc.text), &fakeRunner{})
			var se *SpecError
			require.ErrorAs(t, err, &se)
			assert.Zero(t, se.Line)
			assert.Contains(t, err.Error(), "spec study.yaml: ")
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}

func TestSpecValueErrorIsTheWorldsParamError(t *testing.T) {
	_, err := ParseSpec("s.yaml", []byte("axes:\n  ttl: [1s, 5x]\nreplicates: 1\nseed: 1\n"), &fakeRunner{})
	var pe *sim.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "ttl", pe.Param)
	assert.Equal(t, "spec s.yaml:2: ttl = 5x: out of range, allowed a duration in [1ms, 1h]", err.Error())
}

func TestAliasesAreFollowed(t *testing.T) {
	s := mustSpec(t, "base:\n  ttl: &t 2s\naxes:\n  duration: [*t, 10s]\nreplicates: 1\nseed: 1\n")
	assert.Equal(t, []string{"2s", "10s"}, s.Axes[0].Values)
}

func TestSpecSet(t *testing.T) {
	s := mustSpec(t, exampleSpec)
	require.NoError(t, s.Set(&fakeRunner{}, "duration", "30000ms"))
	require.NoError(t, s.Set(&fakeRunner{}, "drift_factor", "0.01"))
	assert.Equal(t, []KV{{"scenario", "baseline"}, {"duration", "30s"}, {"drift_factor", "0.01"}}, s.Base)
	err := s.Set(&fakeRunner{}, "ttl", "1s")
	assert.True(t, IsUsage(err))
	assert.Contains(t, err.Error(), "knob ttl is swept")
	err = s.Set(&fakeRunner{}, "duration", "0s")
	assert.True(t, IsUsage(err))
	assert.Contains(t, err.Error(), "duration = 0s: out of range")
}

func TestValidateCatchesHandBuiltSpecs(t *testing.T) {
	r := &fakeRunner{}
	for _, tc := range []struct {
		name string
		s    Spec
		says string
	}{
		{"not canonical", Spec{Combine: Grid, Replicates: 1, Axes: []Axis{{"ttl", []string{"1000ms"}}}}, `"1000ms" is not canonical ("1s")`},
		{"empty axis", Spec{Combine: Grid, Replicates: 1, Axes: []Axis{{"ttl", nil}}}, "axis ttl is empty"},
		{"no combine", Spec{Replicates: 1}, `combine = ""`},
		{"no replicates", Spec{Combine: Grid}, "replicates = 0"},
		{"duplicate", Spec{Combine: Grid, Replicates: 1, Base: []KV{{"ttl", "1s"}}, Axes: []Axis{{"ttl", []string{"2s"}}}}, "knob ttl is set twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate(r)
			require.Error(t, err)
			assert.True(t, IsUsage(err))
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}

// TestNotesAreReadAndChangeNoRun: a spec's notes reach the Spec (and so the manifest and the
// captions) and do not make two specs different sweeps.
func TestNotesAreReadAndChangeNoRun(t *testing.T) {
	s := mustSpec(t, exampleSpec+"notes:\n  - Time to acquire is about one TTL by design.\n  - Second.\n")
	assert.Equal(t, []string{"Time to acquire is about one TTL by design.", "Second."}, s.Notes)
	plain := mustSpec(t, exampleSpec)
	a, b := &Manifest{Spec: *s}, &Manifest{Spec: *plain}
	assert.Empty(t, a.mismatch(b, "recorded", "now", false))
}
