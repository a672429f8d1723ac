package tune

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim/dist"
)

func TestSurvival(t *testing.T) {
	assert.Equal(t, 1.0, survival(dist.Constant(5*ms), 4*ms))
	assert.Equal(t, 0.0, survival(dist.Constant(5*ms), 5*ms))
	assert.InDelta(t, 0.25, survival(dist.Uniform(0, 4*ms), 3*ms), 1e-12)
	assert.InDelta(t, math.Exp(-2), survival(dist.Exponential(ms, 10*ms), 21*ms), 1e-12)
	assert.InDelta(t, 0.5, survival(dist.Lognormal(10*ms, 1), 10*ms), 1e-12, "the median")
	assert.InDelta(t, 0.01, survival(dist.Lognormal(10*ms, 1), Percentile(dist.Lognormal(10*ms, 1), 99)), 1e-6)
	capped := dist.Lognormal(10*ms, 1)
	capped.Cap = 50 * ms
	assert.Positive(t, survival(capped, 49*ms))
	assert.Zero(t, survival(capped, 50*ms), "nothing is drawn above the cap")
	assert.Equal(t, 50*ms, Percentile(capped, 99.99))
}

// TestUsageTailByHand: constant work of 100ms, pauses exponential with mean 100ms at 2 a
// second, a recommendation of ttl 500ms (drift 0.01 + 2ms) on a 1ms one-way latency:
// V = 500 − 2 − (5 + 2) = 491ms; work alone never outlasts it; a pause begins during a
// hold with probability 1 − e^(−2 × 0.1) and outlasts 391ms with probability e^(−3.91).
func TestUsageTailByHand(t *testing.T) {
	e := env(ms, 0, 100*ms)
	e.Pause, e.PauseRate, e.Clients = dist.Exponential(0, 100*ms), 2, 3
	// Saturated with retries at once (s = 0): any overrun lets a waiter in.
	r := Recommendation{TTL: 500 * ms, DriftFactor: 0.01, DriftPad: 2 * ms}
	p, lines := usageTail(e, r)
	want := -math.Expm1(-0.2) * math.Exp(-3.91)
	assert.InDelta(t, want, p, want*1e-9)
	one := e
	one.Clients = 1
	p1, _ := usageTail(one, r)
	assert.Zero(t, p1, "one client: nobody to overlap")

	// A waiter that retries every 200ms catches an overrun of o with probability o/200ms
	// (its phase at random), so two waiters miss it with (1 − o/s)²: constant work of
	// 591ms overruns V = 491ms by 100ms; 1 − (1 − 0.5)² = 0.75.
	late := e
	late.Work, late.PauseRate = dist.Constant(591*ms), 0
	r.Contention.Cost = 200 * ms
	p2, _ := usageTail(late, r)
	assert.InDelta(t, 0.75, p2, 1e-9)
	r.Contention.Cost = 0
	assert.Contains(t, lines[0], "V = ttl − RTT p50 − (ttl × drift_factor + drift_pad) = 500ms − 2.000ms − 7ms = 491.000ms")

	// A pause capped below the slack V − work cannot let anyone in.
	e.Pause.Cap = 390 * ms
	p, _ = usageTail(e, r)
	assert.Zero(t, p)
	// Work that outlasts V does, pause or not: half of a uniform hold up to 2V.
	e.Work, e.PauseRate = dist.Uniform(0, 982*ms), 0
	p, _ = usageTail(e, r)
	assert.InDelta(t, 0.5, p, 1e-3)
}

// TestPlantedCappedPausesNeverOverlap: pauses and holds capped so that the longest hold
// plus the longest pause fit in the validity the arithmetic gives: zero usage overlap
// incidents analytically, and none in simulation, at the recommended ttl and above.
func TestPlantedCappedPausesNeverOverlap(t *testing.T) {
	in := DefaultInputs()
	in.Latency, in.Work = "p50=1ms,p99=5ms", "p50=50ms,p99=100ms,max=150ms"
	in.Pauses, in.PauseRate = "p99=100ms,p99.9=400ms,max=401ms", 2
	in.Duration, in.Seeds, in.MaxSeeds = time.Minute, 4, 4
	p, err := Prepare(in)
	require.NoError(t, err)
	assert.Zero(t, p.Rec.UsageTail, "capped below the slack")
	rep, err := p.Run(context.Background(), Options{Dir: t.TempDir(), Workers: 2})
	require.NoError(t, err)
	defer rep.Release()
	for _, o := range rep.Outcomes[1:] { // the recommendation and double it
		assert.Zero(t, o.Violations[1].Count, "%s: usage overlap incidents", o.TTL)
		assert.Zero(t, o.Pairs[1], "%s", o.TTL)
		assert.Zero(t, o.UsageEstimate, "%s", o.TTL)
	}
	assert.Positive(t, rep.Outcomes[0].Acquired)
}

// TestUsageTailAgreesWithTheSimulation: with pauses frequent and long enough for the
// simulation to count incidents (saturated, so that another client always waits), the
// analytic estimate and the simulated rate agree within a factor of two at the ttls
// where more than ten incidents were seen.
func TestUsageTailAgreesWithTheSimulation(t *testing.T) {
	in := DefaultInputs()
	in.Latency = "p50=1ms,p99=5ms"
	in.Pauses, in.PauseRate = "p50=20ms,p99=300ms", 2
	in.Duration, in.Seeds, in.MaxSeeds = 2*time.Minute, 20, 20
	in.MaxViolationsPer10k = 1000 // no target that would raise the ttl out of the incidents
	p, err := Prepare(in)
	require.NoError(t, err)
	rep, err := p.Run(context.Background(), Options{Dir: t.TempDir(), Workers: 2})
	require.NoError(t, err)
	defer rep.Release()
	checked := 0
	for _, o := range rep.Outcomes {
		v := o.Violations[1]
		if v.Count <= 10 {
			continue
		}
		checked++
		ratio := o.UsageEstimate / v.Estimate
		assert.True(t, ratio > 0.5 && ratio < 2, "%s: analytic %.3g, simulated %.3g per acquisition (%d incidents)", o.TTL, o.UsageEstimate, v.Estimate, v.Count)
	}
	assert.Positive(t, checked, "some ttl saw enough incidents to compare")
}

// TestTTLRaisedToTheTarget: work whose p99.9 the design covers leaves 10 holds in 10,000
// outlasting the validity; a target of 1 incident per 10,000 raises the ttl until the
// estimate meets it, and says so; without a target the design percentile stands.
func TestTTLRaisedToTheTarget(t *testing.T) {
	e := env(ms, 0, 0)
	e.Work = dist.Lognormal(50*ms, 0.5) // p99.9 = 50ms × e^(0.5 × 3.09) = 234ms
	e.Clients = 3                       // saturated: another always waits
	plain, err := Recommend(e, Targets{})
	require.NoError(t, err)
	assert.Greater(t, plain.UsageTail*Per10k, 1.0, "the design percentile alone leaves more")

	r, err := Recommend(e, Targets{MaxIncidents: 1.0 / Per10k})
	require.NoError(t, err)
	assert.Greater(t, r.TTL, plain.TTL)
	assert.LessOrEqual(t, r.UsageTail*Per10k, 1.0/TargetMargin, "a third of the target: the confirmation can show it")
	assert.True(t, stepHas(r, "ttl", "raised to "+r.TTL.String()))
	// The least such ttl, up to the rounding to two figures: 10 % shorter misses it.
	shorter, err := Recommend(e, Targets{TTL: r.TTL * 9 / 10 / ms * ms})
	require.NoError(t, err)
	assert.Greater(t, shorter.UsageTail*Per10k, 1.0/TargetMargin)

	// A target no ttl the unavailability target allows can meet: the ttl stays, and the
	// arithmetic says why.
	r, err = Recommend(e, Targets{MaxIncidents: 1e-12, Unavailability: 400 * ms})
	require.NoError(t, err)
	assert.True(t, stepHas(r, "ttl", "no ttl up to"))
}
