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
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

const ms = time.Millisecond

// TestDriftFactor: drift_factor = max(2 × (client + node) ppm × 1e-6, 0.01).
func TestDriftFactor(t *testing.T) {
	tests := []struct {
		name         string
		client, node float64
		want         float64
	}{
		{"quartz clocks stay at the page's 0.01", 200, 200, 0.01}, // 2 × 0.0004 = 0.0008 < 0.01
		{"no drift stated", 0, 0, 0.01},                           // the floor
		{"just at the floor", 2500, 2500, 0.01},                   // 2 × 0.005 = 0.01
		{"just above the floor", 3000, 3000, 0.012},               // 2 × 0.006 = 0.012
		{"planted: a client drifting 2 %", 20_000, 0, 0.04},       // 2 × 0.02 = 0.04 ≥ 0.02 + margin
		{"planted: both drifting 1 %", 10_000, 10_000, 0.04},      // 2 × (0.01 + 0.01)
		{"planted: both drifting 2 %", 20_000, 20_000, 0.08},      // 2 × 0.04
		{"the largest the knobs allow", 100_000, 100_000, 0.4},    // 2 × 0.2, still < 0.5
		{"nonsense counts as none", math.NaN(), -5, 0.01},         // NaN and negatives → 0
		// 2 × (1234.5 + 4321.5) × 1e-6 = 0.011112: to four digits, up, 0.01112.
		{"an awkward ppm rounds up, never down", 1234.5, 4321.5, 0.01112},
	}
	for _, tc := range tests {
		got, lines := DriftFactor(tc.client, tc.node)
		assert.Equal(t, tc.want, got, tc.name) // exactly the decimal, so the knob reads 0.01112
		assert.Len(t, lines, 3, tc.name)
		assert.Contains(t, lines[len(lines)-1], "drift_factor = ", tc.name)
	}
	got, _ := DriftFactor(20_000, 0)
	assert.GreaterOrEqual(t, got, 0.02*DriftMargin, "clocks drifting 2 % need 0.02 plus the margin")
}

// env is the hand-computable environment: constant distributions (p99.9 = the value),
// clocks without drift, five nodes without persistence and a stated restart delay of 0s, one
// client.
func env(latency, pause, work time.Duration) Env {
	return Env{Nodes: 5, Latency: dist.Constant(latency), Pause: dist.Constant(pause), Work: dist.Constant(work), Clients: 1,
		RestartDelayGiven: true}
}

// TestRecommendHandComputed checks every value against arithmetic done by hand. With a
// constant latency L: round trip = 2L; timeout = max(3 × 2L, 5ms); jitter = clients × 2L;
// delay = jitter + 2L; all rounded up to two significant digits.
func TestRecommendHandComputed(t *testing.T) {
	type want struct {
		ttl, timeout, delay, jitter time.Duration
		df                          float64
		tries                       int
		extend                      time.Duration // ExtendEvery; 0 = no extension
		maxExt                      int
		fencing                     bool
		restart                     time.Duration
		restartOK                   bool
	}
	tests := []struct {
		name string
		env  Env
		tgt  Targets
		want want
	}{
		{
			// round trip 2ms; timeout max(6ms, 5ms) = 6ms; jitter 1 × 2ms; delay 2 + 2 = 4ms.
			// TTL ≥ (1s + 100ms + 6ms + 2ms) / 0.99 = 1119.19ms → 1.2s.
			// Restart: none, so ≥ ttl = 1.2s; given 0s.
			// Tries: one client, nobody else holds the lock: 1.
			name: "no targets", env: env(ms, 100*ms, time.Second),
			want: want{ttl: 1200 * ms, timeout: 6 * ms, delay: 4 * ms, jitter: 2 * ms, df: 0.01, tries: 1, restart: 1200 * ms},
		},
		{
			// As above, with the acquire target 1s (one client: still 1 try). The
			// unavailability target 1162ms leaves TTL ≤ 1162 − 4 − 2 − 6 = 1150ms, so the
			// 1.2s rounding is refused and the ttl is 1119.19ms rounded up to the ms.
			name: "rounding held back by the unavailability target", env: env(ms, 100*ms, time.Second),
			tgt:  Targets{AcquireP99: time.Second, Unavailability: 1162 * ms},
			want: want{ttl: 1120 * ms, timeout: 6 * ms, delay: 4 * ms, jitter: 2 * ms, df: 0.01, tries: 1, restart: 1120 * ms},
		},
		{
			// Work 10s cannot fit TTL ≤ 2000 − 12 = 1988ms, so extend every ttl/3:
			// TTL ≥ max((100 + 6 + 2) / (1 − 1/3 − 0.01), 3 × 6) = 164.467ms → 170ms;
			// every ⌊170/3⌋ = 56ms, ⌈10000/56⌉ = 179 extensions.
			name: "long work extends", env: env(ms, 100*ms, 10*time.Second), tgt: Targets{Unavailability: 2 * time.Second},
			want: want{ttl: 170 * ms, timeout: 6 * ms, delay: 4 * ms, jitter: 2 * ms, df: 0.01, tries: 1,
				extend: 56 * ms, maxExt: 179, restart: 170 * ms},
		},
		{
			// Planted: pauses of 500ms against an unavailability of 300ms.
			// TTL ≤ 300 − 4 − 2 − 6 = 288ms; the pause needs ≥ (500 + 6 + 2) / 0.656667 =
			// 773.6ms even extending: a Conflict. With fencing the ttl covers the work only:
			// (50 + 6 + 2) / 0.99 = 58.59ms → 59ms.
			name: "planted conflict: pause against unavailability", env: env(ms, 500*ms, 50*ms),
			tgt:  Targets{Unavailability: 300 * ms},
			want: want{ttl: 59 * ms, timeout: 6 * ms, delay: 4 * ms, jitter: 2 * ms, df: 0.01, tries: 1, fencing: true, restart: 59 * ms},
		},
		{
			// Planted: a client drifting 2 %: drift_factor 0.04;
			// TTL ≥ (1s + 6ms + 2ms) / 0.96 = 1050ms → 1.1s.
			name: "planted: clocks drifting 2 %", env: with(env(ms, 0, time.Second), func(e *Env) { e.ClientDriftPPM = 20_000 }),
			want: want{ttl: 1100 * ms, timeout: 6 * ms, delay: 4 * ms, jitter: 2 * ms, df: 0.04, tries: 1, restart: 1100 * ms},
		},
		{
			// Latency 10ms: round trip 20ms, timeout 60ms, four clients: jitter 80ms,
			// delay 100ms. TTL ≥ (200 + 0 + 60 + 2) / 0.99 = 264.6ms → 270ms.
			// aof-always needs no restart delay. Tries, no load given (saturated): a hold
			// keeps the key B = 200 + 2 × 20 = 240ms; a try is refused with probability
			// 240 / (240 + 20) = 0.923; ⌈ln 0.01 / ln 0.923⌉ = ⌈57.53⌉ = 58.
			name: "contention, aof-always", env: with(env(10*ms, 0, 200*ms), func(e *Env) { e.Clients = 4; e.Persistence = redis.PersistAOFAlways }),
			want: want{ttl: 270 * ms, timeout: 60 * ms, delay: 100 * ms, jitter: 80 * ms, df: 0.01, tries: 58, restart: 0, restartOK: true},
		},
		{
			// aof-everysec with a 5s restart delay against a 270ms ttl: enough.
			name: "aof-everysec, long enough restart delay", env: with(env(10*ms, 0, 200*ms), func(e *Env) {
				e.Persistence = redis.PersistAOFEverySec
				e.NodeRestartDelay = 5 * time.Second
			}),
			// jitter 20ms, delay 40ms; one client: 1 try.
			want: want{ttl: 270 * ms, timeout: 60 * ms, delay: 40 * ms, jitter: 20 * ms, df: 0.01, tries: 1, restart: 270 * ms, restartOK: true},
		},
		{
			// A network described by p50 = 1ms and p99 = 5ms: σ = 0.69183, p99.9 =
			// 1ms·e^(0.69183 × 3.0902323) = 8.4817ms; round trip 16.963ms; timeout
			// 3 × 16.963 = 50.89 → 51ms; jitter 16.963 → 17ms; delay 17 + 16.963 = 33.96 →
			// 34ms. TTL ≥ (1s + 51ms + 2ms) / 0.99 = 1063.6ms → 1.1s. One client: 1 try.
			name: "lognormal latency", env: with(env(0, 0, time.Second), func(e *Env) { e.Latency = dist.Lognormal(ms, 0.69183) }),
			want: want{ttl: 1100 * ms, timeout: 51 * ms, delay: 34 * ms, jitter: 17 * ms, df: 0.01, tries: 1, restart: 1100 * ms},
		},
	}
	for _, tc := range tests {
		r, err := Recommend(tc.env, tc.tgt)
		require.NoError(t, err, tc.name)
		got := want{ttl: r.TTL, timeout: r.Timeout, delay: r.RetryDelay, jitter: r.RetryJitter, df: r.DriftFactor,
			tries: r.Tries, extend: r.ExtendEvery, maxExt: r.MaxExtensions, fencing: r.Fencing, restart: r.RestartDelay, restartOK: r.RestartOK}
		assert.Equal(t, tc.want, got, tc.name)
		assert.Equal(t, tc.want.extend > 0, r.Extend, tc.name)
		assert.Equal(t, RecommendedDriftPad, r.DriftPad, tc.name)
		assert.Equal(t, tc.want.fencing, len(r.Conflicts) > 0, tc.name)
	}
}

func with(e Env, f func(*Env)) Env {
	f(&e)
	return e
}

// TestRecommendPlantedConflict: pauses of 500ms at p99.9 against an unavailability
// target of 300ms is a Conflict naming both, by how much, and fencing as the way out.
func TestRecommendPlantedConflict(t *testing.T) {
	e := env(ms, 0, 50*ms)
	pause, err := fitString("p99=100ms,p99.9=500ms")
	require.NoError(t, err)
	e.Pause = pause.Dist
	r, err := Recommend(e, Targets{Unavailability: 300 * ms})
	require.NoError(t, err)
	require.Len(t, r.Conflicts, 1)
	c := r.Conflicts[0]
	assert.Equal(t, "ttl", c.Quantity)
	assert.Contains(t, c.Need, "pause")
	assert.Contains(t, c.Limit, "unavailability target of 300ms")
	// TTL ≤ 300 − 4 − 2 − 6 = 288ms; pause p99.9 ≈ 500ms (the fit's rounding moves it by
	// 25µs) needs ≥ (500 + 6 + 2) / 0.656667 = 773.6ms → 774ms.
	assert.Equal(t, 288*ms, c.AtMost)
	assert.Equal(t, 774*ms, c.AtLeast)
	assert.Equal(t, 486*ms, c.By())
	assert.Contains(t, c.Advice, "Fencing")
	assert.Contains(t, c.String(), "486ms apart")
	assert.True(t, r.Fencing)
	assert.True(t, stepHas(r, "ttl", "CONFLICT: covering pauses of"))
}

// TestRecommendAcquireConflict: a time-to-acquire target below one round trip cannot be
// met: latency 10ms makes a round trip of 20ms against a 15ms target.
func TestRecommendAcquireConflict(t *testing.T) {
	r, err := Recommend(env(10*ms, 0, 100*ms), Targets{AcquireP99: 15 * ms})
	require.NoError(t, err)
	require.Len(t, r.Conflicts, 1)
	c := r.Conflicts[0]
	assert.Equal(t, "time to acquire", c.Quantity)
	assert.Equal(t, 20*ms, c.AtLeast)
	assert.Equal(t, 15*ms, c.AtMost)
	assert.Equal(t, 1, r.Tries)
	assert.False(t, r.Fencing, "fencing does not make a network faster")
}

// TestRecommendShowsArithmetic checks the lines of the simplest case word for word: they
// are the report, so their wording is part of the contract.
func TestRecommendShowsArithmetic(t *testing.T) {
	r, err := Recommend(env(ms, 100*ms, time.Second), Targets{})
	require.NoError(t, err)
	names := make([]string, len(r.Steps))
	for i, s := range r.Steps {
		names[i] = s.Name
		assert.NotEmpty(t, s.Lines, s.Name)
	}
	assert.Equal(t, []string{"drift_factor", "drift_pad", "timeout", "retry_delay and retry_jitter", "ttl", "node restart delay", "tries",
		"usage overlap incidents, analytically", "nodes and crashes"}, names)
	assert.True(t, stepHas(r, "ttl", "ttl = 1.2s; MIN_VALIDITY = TTL − (T2 − T1) − CLOCK_DRIFT = 1.2s − 6ms − (1.2s × 0.01 + 2ms) = 1.180s ≥ work + pause = 1.100s ✓"))
	assert.True(t, stepHas(r, "ttl", "= (1.000s + 100.000ms + 6ms + 2ms) / (1 − 0.01) = 1.119s"))
	assert.True(t, stepHas(r, "timeout", "timeout = max(3 × 2.000ms, 5ms) = 6.000ms → 6ms"))
	assert.True(t, stepHas(r, "node restart delay", "given 0s < 1.2s ✗: short by 1.2s"))
	assert.True(t, stepHas(r, "tries", "one client: nobody else holds the lock"))
	assert.True(t, stepHas(r, "drift_factor", "drift_factor = max(0, 0.01, the Redlock page's value) = 0.01"))

	r, err = Recommend(env(ms, 100*ms, 10*time.Second), Targets{Unavailability: 2 * time.Second})
	require.NoError(t, err)
	assert.True(t, stepHas(r, "ttl", "MIN_VALIDITY = TTL − (T2 − T1) − CLOCK_DRIFT = 170ms − 6ms − (170ms × 0.01 + 2ms) = 160.300ms ≥ ttl/3 between extensions + pause = 156.000ms ✓"))
	assert.True(t, stepHas(r, "ttl", "extend every 56ms (ttl/3, rounded down to the ms), at most 179 times"))
}

func stepHas(r Recommendation, step, text string) bool {
	for _, s := range r.Steps {
		if s.Name != step {
			continue
		}
		for _, l := range s.Lines {
			if strings.Contains(l, text) {
				return true
			}
		}
	}
	return false
}

// TestRecommendSafeByConstruction walks a grid of environments and checks the promise
// behind every recommendation without conflicts: MIN_VALIDITY covers the designed work
// and pause (or the time between extensions and the pause), the ttl respects the
// unavailability target, and every setting is one the knobs accept.
func TestRecommendSafeByConstruction(t *testing.T) {
	lats := []dist.Dist{dist.Constant(200 * time.Microsecond), dist.Lognormal(ms, 0.69183), dist.Uniform(ms, 20*ms)}
	var plain, extending, conflicting int
	for _, lat := range lats {
		for _, pause := range []time.Duration{0, 50 * ms, 500 * ms} {
			for _, work := range []time.Duration{ms, 300 * ms, 30 * time.Second} {
				for _, u := range []time.Duration{0, 400 * ms, 5 * time.Second} {
					for _, ppm := range []float64{0, 200, 20_000} {
						e := Env{Nodes: 5, Latency: lat, Pause: dist.Constant(pause), Work: dist.Constant(work), Clients: 3,
							ClientDriftPPM: ppm, NodeDriftPPM: ppm}
						tgt := Targets{Unavailability: u}
						r, err := Recommend(e, tgt)
						require.NoError(t, err)
						checkSettings(t, r)
						if len(r.Conflicts) > 0 {
							conflicting++
							for _, c := range r.Conflicts {
								assert.Positive(t, c.By(), "%+v %+v: %v", e, tgt, c)
							}
							// Fencing is the advice exactly when a pause is what does not fit.
							assert.Equal(t, strings.Contains(r.Conflicts[0].Need, "pause"), r.Fencing, "%+v %+v", e, tgt)
							continue
						}
						drift := time.Duration(math.Ceil(float64(r.TTL)*r.DriftFactor)) + r.DriftPad
						valid := r.TTL - r.Timeout - drift
						if r.Extend {
							extending++
							assert.GreaterOrEqual(t, valid, r.ExtendEvery+pause, "%+v %+v", e, tgt)
							assert.GreaterOrEqual(t, r.ExtendEvery, r.Timeout, "an extension round ends before the next is due")
							assert.GreaterOrEqual(t, time.Duration(r.MaxExtensions)*r.ExtendEvery, work)
						} else {
							plain++
							assert.GreaterOrEqual(t, valid, work+pause, "%+v %+v", e, tgt)
						}
						if u > 0 {
							unavail := float64(r.TTL)/(1-ppm*1e-6) + float64(r.RetryDelay+r.RetryJitter+r.Timeout)
							assert.LessOrEqual(t, unavail, float64(u), "%+v %+v", e, tgt)
						}
					}
				}
			}
		}
	}
	t.Logf("%d plain, %d extending, %d with conflicts", plain, extending, conflicting)
	assert.Positive(t, plain)
	assert.Positive(t, extending)
	assert.Positive(t, conflicting)
}

// checkSettings applies every recommended knob to a default world config: each must be
// accepted and read back in the same spelling.
func checkSettings(t *testing.T, r Recommendation) {
	t.Helper()
	c := knobs.DefaultConfig()
	for _, s := range r.Knobs() {
		require.NoError(t, c.Set(s.Name, s.Value), "%s=%s", s.Name, s.Value)
		assert.Equal(t, s.Value, c.Get(s.Name), s.Name)
	}
	assert.Equal(t, r.TTL, c.Lock.TTL)
	assert.Equal(t, r.DriftFactor, c.Lock.DriftFactor)
	assert.Equal(t, r.Tries, c.Lock.Tries)
}

func TestRecommendDeterministic(t *testing.T) {
	e := env(ms, 500*ms, 50*ms)
	e.Latency = dist.Lognormal(ms, 0.69183)
	a, err := Recommend(e, Targets{Unavailability: 300 * ms, AcquireP99: 2 * ms})
	require.NoError(t, err)
	b, err := Recommend(e, Targets{Unavailability: 300 * ms, AcquireP99: 2 * ms})
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

func TestRecommendBadInput(t *testing.T) {
	ok := env(ms, 0, ms)
	tests := []struct {
		field string
		env   Env
		tgt   Targets
	}{
		{"--nodes", with(ok, func(e *Env) { e.Nodes = 0 }), Targets{}},
		{"--nodes", with(ok, func(e *Env) { e.Nodes = 100 }), Targets{}},
		{"--clients", with(ok, func(e *Env) { e.Clients = 0 }), Targets{}},
		{"--client-drift-ppm", with(ok, func(e *Env) { e.ClientDriftPPM = -1 }), Targets{}},
		{"--node-drift-ppm", with(ok, func(e *Env) { e.NodeDriftPPM = 200_000 }), Targets{}},
		{"--node-drift-ppm", with(ok, func(e *Env) { e.NodeDriftPPM = math.NaN() }), Targets{}},
		{"--persistence", with(ok, func(e *Env) { e.Persistence = 7 }), Targets{}},
		{"--restart-delay", with(ok, func(e *Env) { e.NodeRestartDelay = -time.Second }), Targets{}},
		{"--latency", with(ok, func(e *Env) { e.Latency = dist.Lognormal(ms, -1) }), Targets{}},
		{"--work", with(ok, func(e *Env) { e.Work = dist.Uniform(2*ms, ms) }), Targets{}},
		{"--pauses", with(ok, func(e *Env) { e.Pause = dist.Constant(-ms) }), Targets{}},
		{"--max-acquire-p99", ok, Targets{AcquireP99: -ms}},
		{"--max-unavailability", ok, Targets{Unavailability: 48 * time.Hour}},
		{"--min-success", ok, Targets{MinSuccess: math.NaN()}},
		{"--min-success", ok, Targets{MinSuccess: 1.5}},
		{"--acquisitions-per-second", with(ok, func(e *Env) { e.Load.PerSecond = math.Inf(1) }), Targets{}},
		{"--think", with(ok, func(e *Env) { e.Load = Load{PerSecond: 1, Think: dist.Constant(ms), ThinkGiven: true} }), Targets{}},
	}
	for _, tc := range tests {
		_, err := Recommend(tc.env, tc.tgt)
		var ie *InputError
		require.True(t, errors.As(err, &ie), "%s: %v", tc.field, err)
		assert.Equal(t, tc.field, ie.Field)
		assert.NotEmpty(t, ie.Problem, tc.field)
	}
}

func TestRoundUp(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		1732 * ms:                 1800 * ms,
		50890 * time.Microsecond:  51 * ms,
		6 * ms:                    6 * ms,
		164467 * time.Microsecond: 170 * ms,
		99:                        99,
		101:                       110,
		0:                         0,
	} {
		assert.Equal(t, want, roundUpDuration(d), "%v", d)
	}
	assert.Equal(t, 0.04, roundUpSig(2*(20_000*1e-6), 4), "one ulp of noise is not a digit")
	assert.Equal(t, 0.01112, roundUpSig(0.011112, 4))
}

func ExampleRecommend() {
	lat, err := fitString("p50=1ms,p99=5ms")
	if err != nil {
		fmt.Println(err)
		return
	}
	e := Env{Nodes: 5, Persistence: redis.PersistAOFEverySec, Latency: lat.Dist, ClientDriftPPM: 200, NodeDriftPPM: 200,
		Pause: dist.Constant(100 * time.Millisecond), Work: dist.Constant(time.Second), Clients: 2, NodeRestartDelay: 5 * time.Second,
		Load: Load{PerSecond: 0.5}}
	r, err := Recommend(e, Targets{AcquireP99: time.Second, Unavailability: 3 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range r.SetFlags() {
		fmt.Println(f)
	}
	for _, s := range r.Steps {
		if s.Name == "ttl" {
			fmt.Println(s.Lines[len(s.Lines)-2])
		}
	}
	// Output:
	// --set ttl=1.2s
	// --set drift_factor=0.01
	// --set drift_pad=2ms
	// --set timeout=51ms
	// --set retry_delay=51ms
	// --set retry_jitter=34ms
	// --set tries=127
	// ttl = 1.2s; MIN_VALIDITY = TTL − (T2 − T1) − CLOCK_DRIFT = 1.2s − 51ms − (1.2s × 0.01 + 2ms) = 1.135s ≥ work + pause = 1.100s ✓
}
