package tune

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

func TestParsePercentiles(t *testing.T) {
	tests := []struct {
		in   string
		want []Point
	}{
		{"p50=1ms,p99=5ms", []Point{{50, time.Millisecond}, {99, 5 * time.Millisecond}}},
		// Spaces are ignored, order does not matter, the output is sorted by percentile.
		{" p99.9 = 40ms , p50=1ms,  P99=5ms ", []Point{{50, time.Millisecond}, {99, 5 * time.Millisecond}, {99.9, 40 * time.Millisecond}}},
		{"median=2ms", []Point{{50, 2 * time.Millisecond}}},
		{"p.5=1us,p99.99=1.5s", []Point{{0.5, time.Microsecond}, {99.99, 1500 * time.Millisecond}}},
	}
	for _, tc := range tests {
		got, err := ParsePercentiles("--latency", tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// TestParsePercentilesErrors checks that every slip is refused with the field, the value
// and what is allowed, and never with a panic.
func TestParsePercentilesErrors(t *testing.T) {
	tests := []struct {
		in, value string
		want      []string
	}{
		{"p99=5", "p99=5", []string{"a duration needs a unit, e.g. 5ms"}},
		{"p99=2.5", "p99=2.5", []string{"a duration needs a unit, e.g. 2.5ms"}},
		{"", "", []string{"empty"}},
		{"   ", "   ", []string{"empty"}},
		{"p50=1ms,", "", []string{"empty entry"}},
		{"p100=5ms", "p100=5ms", []string{"outside (0, 100)"}},
		{"p0=5ms", "p0=5ms", []string{"outside (0, 100)"}},
		{"p150=5ms", "p150=5ms", []string{"outside (0, 100)"}},
		{"p-1=5ms", "p-1=5ms", []string{"not a percentile"}},
		{"q99=5ms", "q99=5ms", []string{"not a percentile", "p99"}},
		{"p99", "p99", []string{"want pNN=DURATION"}},
		{"max=500ms", "max=500ms", []string{"not a percentile", "p99.9=500ms"}},
		{"p99=", "p99=", []string{"duration is missing"}},
		{"p99=fast", "p99=fast", []string{"not a duration", "5ms"}},
		{"p99=0s", "p99=0s", []string{"above 0"}},
		{"p99=-5ms", "p99=-5ms", []string{"above 0"}},
		{"p99=25h", "p99=25h", []string{"above the longest allowed, 24h0m0s"}},
		{"p50=2ms,p99=1ms", "p99=1ms", []string{"not above p50=2ms", "longer duration"}},
		{"p50=1ms,p99=1ms", "p99=1ms", []string{"not above p50=1ms", "one point"}},
		{"p99=5ms,p50=1ms,p99.0=6ms", "p99.0=6ms", []string{"p99 is given twice", "also as p99=5ms"}},
		{strings.Repeat("p50=1ms,", 16) + "p99=2ms", strings.Repeat("p50=1ms,", 16) + "p99=2ms", []string{"17 percentiles", "at most 16"}},
	}
	for _, tc := range tests {
		_, err := ParsePercentiles("--latency", tc.in)
		var ie *InputError
		require.True(t, errors.As(err, &ie), "%q: %v", tc.in, err)
		assert.Equal(t, "--latency", ie.Field, tc.in)
		assert.Equal(t, tc.value, ie.Value, tc.in)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w, tc.in)
		}
	}
	_, err := ParsePercentiles("--latency", "p99=5")
	assert.EqualError(t, err, `--latency: "p99=5": a duration needs a unit, e.g. 5ms`)
}

func TestFitOnePoint(t *testing.T) {
	f := mustFit(t, "p99=500ms")
	assert.Equal(t, dist.Constant(500*time.Millisecond), f.Dist)
	assert.True(t, f.Exact)
	assert.Zero(t, f.Residual)
	assert.Equal(t, "const(500ms)", f.Knob())
	for _, r := range f.Percentiles() {
		assert.Equal(t, 500*time.Millisecond, r.Fit, "p%g", r.P)
	}
}

// TestFitTwoPoints checks the lognormal through two points against the algebra:
// ln v = ln median + σ·z(p), so σ = ln(v2/v1) / (z2 − z1) and median = v1·e^(−σ·z1).
func TestFitTwoPoints(t *testing.T) {
	tests := []struct {
		in     string
		median time.Duration
		sigma  float64
	}{
		// σ = ln(5ms/1ms) / (z99 − 0) = 1.6094379 / 2.3263479 = 0.6918303 → 0.69183;
		// the median is p50 itself.
		{"p50=1ms,p99=5ms", time.Millisecond, 0.69183},
		// σ = ln(5/2) / (z99 − z90) = 0.9162907 / 1.0447963 = 0.8770042 → 0.877;
		// median = 2ms·e^(−0.8770042 × 1.2815516) = 0.6500026ms → 650µs (4 digits).
		{"p90=2ms,p99=5ms", 650 * time.Microsecond, 0.877},
	}
	for _, tc := range tests {
		f := mustFit(t, tc.in)
		assert.Equal(t, dist.KindLognormal, f.Dist.Kind, tc.in)
		assert.Equal(t, tc.median, f.Dist.Median, tc.in)
		assert.InDelta(t, tc.sigma, f.Dist.Sigma, 1e-12, tc.in)
		assert.Zero(t, f.Dist.Base, tc.in)
		assert.True(t, f.Exact, tc.in)
		assert.Less(t, f.Residual, 1e-3, tc.in) // what the rounding to 4–5 digits leaves
		for _, a := range f.Asked {
			assert.InEpsilon(t, float64(a.V), float64(Percentile(f.Dist, a.P)), 1e-3, "%s at p%g", tc.in, a.P)
		}
	}
}

func TestFitRows(t *testing.T) {
	f := mustFit(t, "p50=1ms,p99=5ms")
	var got []string
	for _, r := range f.Percentiles() {
		got = append(got, r.String())
	}
	// p90 = 1ms·e^(0.69183 × 1.2815516) = 2.427ms; p99.9 = 1ms·e^(0.69183 × 3.0902323) = 8.482ms.
	assert.Equal(t, []string{
		"asked p50=1ms, fit p50=1.000ms",
		"fit p90=2.427ms",
		"asked p99=5ms, fit p99=5.000ms",
		"fit p99.9=8.482ms",
	}, got)
	assert.Equal(t, "lognormal(1ms,0.69183) from p50=1ms,p99=5ms", f.String())
}

// TestFitThreeRecoversShiftedLognormal fits the percentiles of a known lognormal with a
// base and expects its parameters back: base 2ms, median 3ms, σ 0.5 has
// p50 = 2 + 3 = 5ms, p99 = 2 + 3·e^(0.5 × 2.3263479) = 11.600222ms and
// p99.9 = 2 + 3·e^(0.5 × 3.0902323) = 16.065549ms.
func TestFitThreeRecoversShiftedLognormal(t *testing.T) {
	f := mustFit(t, "p50=5ms,p99=11.600222ms,p99.9=16.065549ms")
	require.True(t, f.Exact)
	assert.InDelta(t, float64(2*time.Millisecond), float64(f.Dist.Base), 1e3) // within 1µs
	assert.InDelta(t, float64(3*time.Millisecond), float64(f.Dist.Median), 1e3)
	assert.InDelta(t, 0.5, f.Dist.Sigma, 1e-4)
	assert.Less(t, f.Residual, 1e-3)
}

// TestFitThreeHeavyTail is the tail people actually measure: p99.9 far above what the
// two-point lognormal says (8.5ms), so a base is needed to pass through all three points.
func TestFitThreeHeavyTail(t *testing.T) {
	f := mustFit(t, "p50=1ms,p99=5ms,p99.9=40ms")
	require.True(t, f.Exact)
	assert.GreaterOrEqual(t, f.Dist.Base, time.Duration(0))
	assert.Less(t, f.Dist.Base, time.Millisecond)
	for _, a := range f.Asked {
		assert.InEpsilon(t, float64(a.V), float64(Percentile(f.Dist, a.P)), 1e-3, "p%g", a.P)
	}
	assert.Less(t, f.Residual, 1e-3)
}

// TestFitLeastSquares: p99.9 = 6ms is lighter-tailed than any lognormal with a base ≥ 0
// through p50 = 1ms and p99 = 5ms (the base-0 curve already says 8.5ms, and a base only
// raises it), so no curve passes through all three and the fit is the least-squares one.
func TestFitLeastSquares(t *testing.T) {
	pts, err := ParsePercentiles("--pause", "p50=1ms,p99=5ms,p99.9=6ms")
	require.NoError(t, err)
	f, err := FitPercentiles("--pause", pts)
	require.NoError(t, err)
	assert.False(t, f.Exact)
	assert.Greater(t, f.Residual, 0.01)
	assert.Contains(t, f.String(), "least squares in log space, residual")
	// No base does better than the one found, base 0 included.
	_, _, ssr0 := regress(pts, 0)
	assert.LessOrEqual(t, f.Residual, math.Sqrt(ssr0/3)+1e-3)
	for j := range 10 {
		_, _, ssr := regress(pts, float64(time.Millisecond)*float64(j)/10)
		assert.LessOrEqual(t, f.Residual, math.Sqrt(ssr/3)+1e-3, "base %d/10 ms", j)
	}
}

func TestFitFourPoints(t *testing.T) {
	f := mustFit(t, "p50=1ms,p90=2ms,p99=5ms,p99.9=9ms")
	// The lowest, middle (p99: index 4/2) and highest points are passed through; p90
	// shows the residual.
	require.True(t, f.Exact)
	assert.InEpsilon(t, float64(time.Millisecond), float64(Percentile(f.Dist, 50)), 1e-3)
	assert.InEpsilon(t, float64(5*time.Millisecond), float64(Percentile(f.Dist, 99)), 1e-3)
	assert.InEpsilon(t, float64(9*time.Millisecond), float64(Percentile(f.Dist, 99.9)), 1e-3)
	assert.Greater(t, f.Residual, 0.01)
}

func TestFitErrors(t *testing.T) {
	// σ = ln(24h/1ns) / z99 = 32.1 / 2.33 = 13.8 > 10.
	_, err := fitString("p50=1ns,p99=24h")
	assert.ErrorContains(t, err, "sigma 13.8, at most 10")
	assert.ErrorContains(t, err, "--latency")
	_, err = FitPercentiles("--work", nil)
	assert.ErrorContains(t, err, "empty")
	_, err = FitPercentiles("--work", []Point{{P: 100, V: time.Second}})
	assert.ErrorContains(t, err, "(0, 100)")
	_, err = FitPercentiles("--work", []Point{{P: 50, V: -time.Second}})
	assert.ErrorContains(t, err, "--work")
	_, err = FitPercentiles("--work", []Point{{P: math.NaN(), V: time.Second}})
	assert.Error(t, err)
	_, err = FitPercentiles("--work", []Point{{P: 99, V: time.Second}, {P: 50, V: 2 * time.Second}})
	assert.ErrorContains(t, err, "not above p50=2s")
}

// TestFitKnobRoundTrip checks that the knob spelling of a fit is read back by the knob
// parsers to exactly the fitted distribution, so a user can paste it into --set.
func TestFitKnobRoundTrip(t *testing.T) {
	for _, in := range []string{"p99=500ms", "p50=1ms,p99=5ms", "p90=2ms,p99=5ms", "p50=1ms,p99=5ms,p99.9=40ms",
		"p50=1ms,p99=5ms,p99.9=6ms", "p50=5ms,p99=11.600222ms,p99.9=16.065549ms", "p1=3us,p50=7.3ms,p99.99=2.2s"} {
		f := mustFit(t, in)
		d, err := knobs.ParseDist(f.Knob())
		require.NoError(t, err, f.Knob())
		assert.Equal(t, f.Dist, d, in)
		l, err := knobs.ParseLatency(f.Knob())
		require.NoError(t, err, f.Knob())
		assert.Equal(t, f.Dist, l.Fast, in)
		assert.Zero(t, l.SlowP, in)
		c := knobs.DefaultConfig()
		require.NoError(t, c.Set("latency", f.Knob()), in)
		assert.Equal(t, f.Knob(), c.Get("latency"), in)
		require.NoError(t, f.Dist.Validate("latency"), in)
	}
}

func TestPercentile(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		d    dist.Dist
		p    float64
		want time.Duration
	}{
		{dist.Constant(3 * ms), 99.9, 3 * ms},
		{dist.Uniform(0, 10*ms), 50, 5 * ms},
		{dist.Uniform(2*ms, 4*ms), 99, 3980 * time.Microsecond},
		// base − mean·ln(1 − 0.5) = 1ms + 1ms × 0.6931472 = 1.693147ms
		{dist.Exponential(ms, ms), 50, 1693147 * time.Nanosecond},
		// 1ms·e^(0.5 × 2.3263479) = 1ms·e^1.1631739 = 3.2000741ms, plus the base 1ms
		{dist.Dist{Kind: dist.KindLognormal, Base: ms, Median: ms, Sigma: 0.5}, 99, 4200074 * time.Nanosecond},
		// Out of range clamps to the ends instead of panicking.
		{dist.Uniform(2*ms, 4*ms), 150, 4 * ms},
		{dist.Uniform(2*ms, 4*ms), math.NaN(), 2 * ms},
		{dist.Lognormal(ms, 1), 100, dist.MaxDuration},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Percentile(tc.d, tc.p), "%v at p%g", tc.d, tc.p)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Millisecond:       "5.000ms",
		1250 * time.Millisecond:    "1.250s",
		812500 * time.Nanosecond:   "812.500µs",
		999 * time.Nanosecond:      "999ns",
		-2 * time.Millisecond:      "-2.000ms",
		90 * time.Second:           "90.000s",
		8481738 * time.Nanosecond:  "8.482ms",
		16963477 * time.Nanosecond: "16.963ms",
	} {
		assert.Equal(t, want, FormatDuration(d), "%d ns", int64(d))
	}
}

func TestRoundSig(t *testing.T) {
	assert.Equal(t, 0.69183, roundSig(0.6918302848827697, 5))
	assert.Equal(t, 1235000.0, roundSig(1234567, 4))
	assert.Equal(t, 0.0, roundSig(0, 4))
	assert.Equal(t, time.Millisecond, roundDuration(999999.6))
	assert.Equal(t, dist.MaxDuration, roundDuration(math.Inf(1)))
}

// FuzzParsePercentiles checks that no input panics and that whatever parses either fits
// or is refused as an *InputError. Its seeds run with every go test.
func FuzzParsePercentiles(f *testing.F) {
	for _, s := range []string{"p50=1ms,p99=5ms", "p50=1ms,p99=5ms,p99.9=40ms", "p99=5", "p1e3=1ms",
		"p50=1ns,p99=24h", "p0.0000001=1ns,p99.9999999=24h", "p50=1ms,p50.00000000000000001=2ms", "p99.99999999999999999=1s",
		"p50=1ms,p60=1000001ns,p70=1000002ns", "p=1ms", "p.=1ms", "p50=1h,p51=24h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pts, err := ParsePercentiles("--x", s)
		if err != nil {
			var ie *InputError
			require.True(t, errors.As(err, &ie), "%q: %v", s, err)
			return
		}
		fit, err := FitPercentiles("--x", pts)
		if err != nil {
			var ie *InputError
			require.True(t, errors.As(err, &ie), "%q: %v", s, err)
			return
		}
		require.NoError(t, fit.Dist.Validate("x"), "%q: %v", s, fit.Dist)
		d, err := knobs.ParseDist(fit.Knob())
		require.NoError(t, err, "%q: %s", s, fit.Knob())
		require.Equal(t, fit.Dist, d, s)
	})
}

func fitString(s string) (Fit, error) {
	pts, err := ParsePercentiles("--latency", s)
	if err != nil {
		return Fit{}, err
	}
	return FitPercentiles("--latency", pts)
}

func mustFit(t *testing.T, s string) Fit {
	t.Helper()
	f, err := fitString(s)
	require.NoError(t, err, s)
	return f
}

func ExampleFitPercentiles() {
	pts, err := ParsePercentiles("--latency", "p50=1ms,p99=5ms")
	if err != nil {
		fmt.Println(err)
		return
	}
	fit, err := FitPercentiles("--latency", pts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("--set latency=" + fit.Knob())
	for _, r := range fit.Percentiles() {
		fmt.Println(r)
	}
	// Output:
	// --set latency=lognormal(1ms,0.69183)
	// asked p50=1ms, fit p50=1.000ms
	// fit p90=2.427ms
	// asked p99=5ms, fit p99=5.000ms
	// fit p99.9=8.482ms
}
