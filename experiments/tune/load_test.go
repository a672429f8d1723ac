package tune

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// contended is a hand-computable contended lock: latency a constant 1ms (a round trip of
// 2ms), holds of a constant 50ms, three clients. B = 50 + 2 × 2 = 54ms; retry_delay =
// jitter (3 × 2 = 6ms) + 2ms = 8ms, so a refused try costs s = 2 + 8 = 10ms.
func contended(load Load) Env {
	return Env{Nodes: 5, Latency: dist.Constant(ms), Pause: dist.Constant(0), Work: dist.Constant(50 * ms), Clients: 3, Load: load}
}

// TestTriesFromTheLoad checks the tries against the load's arithmetic done by hand.
func TestTriesFromTheLoad(t *testing.T) {
	for _, tc := range []struct {
		name    string
		load    Load
		refusal float64
		tries   int
		think   time.Duration // the mean rest the confirmation simulates
	}{
		// Saturated: refused with probability B / (B + RTT) = 54 / 56; ⌈ln 0.01 / ln
		// (54/56)⌉ = ⌈126.6⌉ = 127.
		{"no load: saturated", Load{}, 54.0 / 56, 127, 0},
		// 5 a second: ρ = 5 × 0.054 = 0.27. Tries come s = 10ms apart, closer than a hold
		// of 54ms, so a try is refused with ρ^(s/B) = 0.27^(10/54) = 0.78469;
		// ⌈ln 0.01 / ln 0.78469⌉ = ⌈18.99⌉ = 19. The wait is s·ρ/(1 − ρ) = 10 × 0.27 /
		// 0.73 = 3.699ms; think = 3/5 − 0.054 − 0.003699 − 0.002 = 540.3ms → 541ms (up to
		// the ms).
		{"5 a second", Load{PerSecond: 5}, math.Pow(0.27, 10.0/54), 19, 541 * ms},
		// 15 a second: ρ = 0.81, refused 0.81^(10/54) = 0.96173; ⌈ln 0.01 / ln 0.96173⌉ =
		// ⌈118.0⌉ = 119; wait = 10 × 0.81 / 0.19 = 42.63ms; think = 0.2 − 0.054 − 0.04263 −
		// 0.002 = 101.37ms → 102ms.
		{"15 a second: busy", Load{PerSecond: 15}, math.Pow(0.81, 10.0/54), 119, 102 * ms},
	} {
		r, err := Recommend(contended(tc.load), Targets{})
		require.NoError(t, err, tc.name)
		assert.InDelta(t, tc.refusal, r.Contention.Refusal, 1e-9, tc.name)
		assert.Equal(t, tc.tries, r.Tries, tc.name)
		assert.Equal(t, 54*ms, r.Contention.Busy, tc.name)
		assert.Equal(t, 10*ms, r.Contention.Cost, tc.name)
		assert.Equal(t, tc.think, Mean(r.Contention.Think), tc.name)
		assert.Empty(t, r.Conflicts, tc.name)
	}
	// A stricter success target needs more tries at the same load: 0.999 at 5 a second,
	// ⌈ln 0.001 / ln 0.78469⌉ = ⌈28.49⌉ = 29.
	r, err := Recommend(contended(Load{PerSecond: 5}), Targets{MinSuccess: 0.999})
	require.NoError(t, err)
	assert.Equal(t, 29, r.Tries)
	// A looser one fewer: 0.9 → ⌈9.50⌉ = 10.
	r, err = Recommend(contended(Load{PerSecond: 5}), Targets{MinSuccess: 0.9})
	require.NoError(t, err)
	assert.Equal(t, 10, r.Tries)

	// Retries a hold apart or more look at independent moments: refused with ρ itself.
	assert.Equal(t, 0.27, spread(0.27, 0.054, 0.054))
	assert.Equal(t, 0.27, spread(0.27, 0.2, 0.054))
}

// TestTriesThinkFixedPoint: with a think time, ρ solves ρ = K·B / (think + B + RTT +
// s·ρ/(1 − ρ)); the solution is checked by putting it back in.
func TestTriesThinkFixedPoint(t *testing.T) {
	r, err := Recommend(contended(Load{Think: dist.Constant(200 * ms), ThinkGiven: true}), Targets{})
	require.NoError(t, err)
	rho := r.Contention.Utilization
	assert.InDelta(t, rho, 3*0.054/(0.200+0.054+0.002+0.010*rho/(1-rho)), 1e-9)
	// By hand: at ρ = 0.598, 0.162 / (0.256 + 0.01 × 0.598 / 0.402) = 0.162 / 0.27088 = 0.598.
	assert.InDelta(t, 0.598, rho, 1e-3)
	// The gap term B / (B + think + RTT) = 54 / 256 is smaller: the refusal is ρ^(s/B).
	assert.InDelta(t, math.Pow(rho, 10.0/54), r.Contention.Refusal, 1e-12)
	assert.Equal(t, triesFor(r.Contention.Refusal, DefaultMinSuccess), r.Tries)
	assert.Equal(t, 200*ms, Mean(r.Contention.Think), "the given rest is simulated as given")

	// A short rest: the releaser comes back before a waiter tries with probability
	// B / (B + think + RTT) = 54 / 57, and the lock is held nearly all the time; the
	// refusal is the larger of the two.
	r, err = Recommend(contended(Load{Think: dist.Constant(ms), ThinkGiven: true}), Targets{})
	require.NoError(t, err)
	gap := 0.054 / (0.054 + 0.001 + 0.002)
	assert.InDelta(t, max(gap, math.Pow(r.Contention.Utilization, 10.0/54)), r.Contention.Refusal, 1e-9)
	assert.GreaterOrEqual(t, r.Contention.Refusal, gap)
}

// TestImpossibleLoadRefused: more holds a second than one lock can serve, or than the
// clients can make, is an input error that names the flag and shows the arithmetic.
func TestImpossibleLoadRefused(t *testing.T) {
	// 1/B = 1/0.054 = 18.5 a second at most.
	_, err := Recommend(contended(Load{PerSecond: 20}), Targets{})
	var ie *InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Equal(t, "--acquisitions-per-second", ie.Field)
	assert.Contains(t, ie.Problem, "at most 1/B = 18.5 acquisitions a second")

	// 18 a second fits one lock (ρ = 0.972) but three clients waiting 10 × 0.972 / 0.028
	// = 347ms a cycle cannot make it.
	_, err = Recommend(contended(Load{PerSecond: 18}), Targets{})
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Equal(t, "--acquisitions-per-second", ie.Field)
	assert.Contains(t, ie.Problem, "3 clients cannot make that many")

	// One client alone is bounded by its own cycle.
	one := contended(Load{PerSecond: 100})
	one.Clients = 1
	_, err = Recommend(one, Targets{})
	require.True(t, errors.As(err, &ie), "%v", err)
	assert.Contains(t, ie.Problem, "one client holds the lock")
}

// TestSaturatedLockBeyondRetries: a lock whose holds are long against the round trip,
// with no load given, needs more tries than retries can give: a conflict, not a number.
func TestSaturatedLockBeyondRetries(t *testing.T) {
	e := contended(Load{})
	e.Work = dist.Constant(5 * time.Second) // refused 5.004 / 5.006: ⌈ln 0.01 / ln 0.9996⌉ ≈ 11,500
	r, err := Recommend(e, Targets{})
	require.NoError(t, err)
	assert.Equal(t, MaxUsefulTries, r.Tries)
	require.NotEmpty(t, r.Conflicts)
	assert.Equal(t, "tries", r.Conflicts[len(r.Conflicts)-1].Quantity)
	assert.True(t, stepHas(r, "tries", "too busy for retries to fix"))
}

func TestTriesFor(t *testing.T) {
	assert.Equal(t, 1, triesFor(0, 0.99))
	assert.Equal(t, 1, triesFor(0.01, 0.99)) // 0.01^1 ≤ 0.01 exactly
	assert.Equal(t, 2, triesFor(0.1, 0.99))
	assert.Equal(t, 7, triesFor(0.5, 0.99)) // 0.5^7 = 0.0078
	assert.Equal(t, MaxUsefulTries+1, triesFor(1, 0.99))
	assert.Equal(t, MaxUsefulTries+1, triesFor(0.5, 1))
}

func TestMean(t *testing.T) {
	assert.Equal(t, 5*ms, Mean(dist.Constant(5*ms)))
	assert.Equal(t, 15*ms, Mean(dist.Uniform(10*ms, 20*ms)))
	assert.Equal(t, 12*ms, Mean(dist.Exponential(2*ms, 10*ms)))
	// e^(0.5²/2) = 1.1331485.
	assert.InDelta(t, float64(113314845), float64(Mean(dist.Lognormal(100*ms, 0.5))), 1)
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{
		"0.1": 0.1, "0.1/s": 0.1, "5/min": 5.0 / 60, "2/hour": 2.0 / 3600, "1/day": 1.0 / 86400,
		"1/week": 1.0 / (7 * 86400), "1/month": 12 / SecondsPerYear, "3/year": 3 / SecondsPerYear,
		" 5 / minutes ": 5.0 / 60, "0": 0, "1/h": 1.0 / 3600,
	} {
		got, err := ParseRate(in)
		require.NoError(t, err, in)
		assert.InDelta(t, want, got, want*1e-12, in)
	}
	for in, want := range map[string]string{
		"NaN": "finite", "Inf": "finite", "-1": "negative", "1/fortnight": `unknown period "fortnight"`,
		"abc": "finite number", "": "finite number", "1e400": "finite",
	} {
		_, err := ParseRate(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
	assert.False(t, math.IsNaN(12/SecondsPerYear))
}
