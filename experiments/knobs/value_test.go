package knobs

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
)

// TestKnobValueErrorsSpeakTheUsersWords goes through every kind of knob and every error
// path of the value parser: a value that does not parse says why (and never "out of
// range"), a value that parsed and is outside the range says "out of range" and the
// range, and no message names an internal field (latency.fast.max).
func TestKnobValueErrorsSpeakTheUsersWords(t *testing.T) {
	tests := []struct {
		knob, value string
		want        []string
	}{
		// durations
		{"ttl", "10", []string{"ttl = 10: a duration needs a unit", "did you mean 10s?"}},
		{"duration", "90", []string{"a duration needs a unit", "did you mean 90s?"}},
		{"ttl", "3x", []string{`unknown unit "x"`, "ns, us"}},
		{"ttl", "5 minutes", []string{`unknown unit "minutes"`, "did you mean 5m?"}},
		{"ttl", "10sec", []string{`unknown unit "sec"`, "10s?"}},
		{"ttl", "", []string{`ttl = "": empty value`}},
		{"ttl", "١٠s", []string{"not a duration", "digits 0-9"}},
		{"ttl", "abc", []string{"not a duration", "250ms"}},
		{"ttl", "1.5ms", []string{"out of range", "whole milliseconds in [1ms, 24h0m0s]"}},
		{"duration", "0s", []string{"out of range", "[1ms, 10000h0m0s]"}},
		{"start_spread", "-1s", []string{"out of range", "[0s, 24h0m0s]"}},
		// whole numbers
		{"nodes", "five", []string{"nodes = five: not a number", "whole number"}},
		{"nodes", "١٢٣", []string{`nodes = "١٢٣": not a number`, "digits 0-9"}},
		{"clients", "0x10", []string{"not a number", "hexadecimal"}},
		{"clients", "1.5", []string{"not a whole number"}},
		{"clients", "1e1", []string{"not a whole number", "did you mean 10?"}},
		{"hz", "99999999999999999999", []string{"number too large"}},
		{"nodes", "100", []string{"nodes = 100: out of range", "[1, 99]"}},
		{"tries", "0", []string{"out of range", "[1, 1000000]"}},
		// numbers and probabilities
		{"loss", "0x10", []string{"loss = 0x10: not a number", "hexadecimal", "[0, 1]"}},
		{"loss", "NaN", []string{"loss = NaN: not a finite number", "(allowed: [0, 1])"}},
		{"loss", "inf", []string{"loss = inf: not a finite number"}},
		{"loss", "1_0", []string{"not a number"}},
		{"loss", "2", []string{"loss = 2: out of range", "[0, 1]"}},
		{"drift_factor", "half", []string{"not a number"}},
		{"drift_factor", "0.5", []string{"out of range", "[0, 0.5)"}},
		{"partition_rate", "1e999", []string{"number too large"}},
		// booleans and enums
		{"fifo", "yes", []string{"not true or false"}},
		{"fail_fast", "yes", []string{"not true or false"}},
		{"variant", "redlok", []string{"not a known value", "did you mean redlock?", "one of redlock"}},
		{"mode", "seq", []string{"did you mean sequential?"}},
		{"fencing", "", []string{"empty value", "one of none, one, majority"}},
		{"persistence", "always", []string{"did you mean aof-always?"}},
		// distributions
		{"latency", "5ms,", []string{"a trailing comma", "did you mean 5ms?"}},
		{"latency", "5ms,6ms", []string{"a comma outside parentheses"}},
		{"latency", "uniform(5ms,1ms)", []string{"latency = uniform(5ms,1ms): uniform's lo 5ms > hi 1ms"}},
		{"hold", "uniform(1ms)", []string{"uniform takes 2 arguments, uniform(lo,hi), got 1"}},
		{"hold", "uniform(1ms,)", []string{"uniform: argument 2 is empty"}},
		{"hold", "uniform(1ms,2ms", []string{`a "(" without its ")"`, "uniform(1ms,2ms)?"}},
		{"hold", "uniform(1ms,2ms))", []string{`unexpected ")" after the closing ")"`}},
		{"hold", "1ms)", []string{`a ")" without its "("`}},
		{"hold", "(1ms)", []string{"a distribution name is missing"}},
		{"hold", "gauss(1ms)", []string{`unknown distribution "gauss"`}},
		{"hold", "unifrom(1ms,2ms)", []string{"did you mean uniform?"}},
		{"hold", "uniform(1,2ms)", []string{"uniform's lo 1: a duration needs a unit"}},
		{"hold", "10", []string{"a duration needs a unit", "did you mean 10s?"}},
		{"hold", "exp(0s,-1ms)", []string{"out of range: exp's mean -1ms is negative"}},
		{"hold", "const(25h)", []string{"out of range: const's d 25h0m0s is above 24h0m0s"}},
		{"hold", "lognormal(1ms,x)", []string{"lognormal's sigma x: not a number"}},
		{"hold", "lognormal(1ms,11)", []string{"out of range: lognormal's sigma 11, allowed [0, 10]"}},
		{"hold", "lognormal(1ms)", []string{"lognormal takes 2 or 3 arguments"}},
		{"hold", "tail(1ms,0.1,2ms)", []string{`unknown distribution "tail"`}},
		{"latency", "tail(1ms,2,5ms)", []string{"out of range: tail's p 2, allowed [0, 1]"}},
		{"latency", "tail(1ms,x,5ms)", []string{"tail's p x: not a number"}},
		{"latency", "tail(uniform(2ms,1ms),0.1,5ms)", []string{"tail's FAST uniform(2ms,1ms): uniform's lo 2ms > hi 1ms"}},
		{"latency", "tail(1ms,0.1)", []string{"tail takes 3 arguments"}},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		err := c.Set(tt.knob, tt.value)
		require.Error(t, err, "%s=%s", tt.knob, tt.value)
		var pe *sim.ParamError
		assert.ErrorAs(t, err, &pe, "every bad value is a ParamError to callers that ask")
		for _, w := range tt.want {
			assert.Contains(t, err.Error(), w, "%s=%s", tt.knob, tt.value)
		}
		if !slices.ContainsFunc(tt.want, func(w string) bool { return strings.Contains(w, "out of range") }) {
			assert.NotContains(t, err.Error(), "out of range", "%s=%s did not parse: say why, not out of range", tt.knob, tt.value)
		}
		for _, internal := range []string{".fast", ".max", ".base", ".mean", ".sigma", ".median", ".slow"} {
			assert.NotContains(t, err.Error(), tt.knob+internal, "%s=%s: an internal name", tt.knob, tt.value)
		}
		assert.Equal(t, DefaultConfig(), c, "a failed Set leaves the config alone")
	}
}

// TestEveryFloatKnobRefusesNaNAndInfinities sets NaN, both infinities (in each spelling
// strconv.ParseFloat reads) and a number beyond float64 into every knob that takes a
// number, found by its unit in the registry so that a new one is covered too, and into
// the numbers inside distributions (lognormal's sigma, tail's p): each is refused with
// the knob, the value as written and what the knob allows, and leaves the config alone.
func TestEveryFloatKnobRefusesNaNAndInfinities(t *testing.T) {
	notFloat := []string{"duration", "count", "bool", "enum", "dist"}
	var floats []string
	for _, p := range Params() {
		if !slices.Contains(notFloat, p.Unit) {
			floats = append(floats, p.Name)
		}
	}
	for _, name := range []string{"drift_factor", "timeout_factor", "loss", "dup", "client_clock_drift_ppm",
		"node_clock_drift_ppm", "partition_rate", "clog_rate", "pause_rate", "node_crash_rate", "client_crash_rate"} {
		require.Contains(t, floats, name, "a number knob the registry no longer lists as one")
	}
	for _, name := range floats {
		p, err := LookupParam(name)
		require.NoError(t, err)
		for _, value := range []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "inf", "-infinity", "Infinity", ".nan", "-.inf", "1e999", "-1e999"} {
			c := DefaultConfig()
			err := c.Set(name, value)
			require.Error(t, err, "%s=%s", name, value)
			var pe *sim.ParamError
			require.ErrorAs(t, err, &pe, "%s=%s: a usage error", name, value)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, name+" = "+value+": "), "%s=%s: names the knob and the value: %s", name, value, msg)
			assert.Regexp(t, "not a finite number|number too large: want a finite", msg)
			assert.Contains(t, msg, "(allowed: "+p.Allowed+")")
			assert.Equal(t, DefaultConfig(), c, "%s=%s: a failed Set leaves the config alone", name, value)
		}
	}
	for _, c := range []struct{ knob, value, want string }{
		{"hold", "lognormal(1ms,NaN)", "lognormal's sigma NaN: not a finite number"},
		{"latency", "lognormal(1ms,+Inf,2ms)", "lognormal's sigma +Inf: not a finite number"},
		{"node_down", "lognormal(1ms,1e999)", "lognormal's sigma 1e999: number too large"},
		{"latency", "tail(1ms,NaN,5ms)", "tail's p NaN: not a finite number"},
		{"latency", "tail(1ms,-inf,5ms)", "tail's p -inf: not a finite number"},
		{"drift_factor", "NaN%", "drift_factor = NaN%: not a finite number"},
		{"drift_factor", "-Infppm", "drift_factor = -Infppm: not a finite number"},
	} {
		cfg := DefaultConfig()
		err := cfg.Set(c.knob, c.value)
		require.Error(t, err, c.value)
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), "(allowed: ")
	}
}

// TestNumberIsTheKnobsNumberSyntax: Number, which scenario files use for their rates,
// takes what a number knob takes and refuses the same slips in the same words.
func TestNumberIsTheKnobsNumberSyntax(t *testing.T) {
	f, err := Number("ppm", "-2.5e3", "a rate")
	require.NoError(t, err)
	assert.Equal(t, -2500.0, f)
	for value, want := range map[string]string{
		"NaN":   "ppm = NaN: not a finite number",
		"-Inf":  "ppm = -Inf: not a finite number",
		"1e999": "ppm = 1e999: number too large",
		"0x10":  "hexadecimal",
		"":      `ppm = "": empty value`,
	} {
		_, err := Number("ppm", value, "a rate")
		require.Error(t, err, value)
		assert.Contains(t, err.Error(), want)
		assert.Contains(t, err.Error(), "(allowed: a rate)")
	}
}
