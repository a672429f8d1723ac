package clock_test

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// propertyRuns is how many seeded random configurations each property test checks.
const propertyRuns = 400

// genConfig draws a random valid configuration. Rates are drawn in whole ppb so the
// reference model below knows them exactly; drifts span the whole allowed (-50%, +50%),
// with extra weight on the extremes, where a slow slew nearly stops the clock.
func genConfig(r *rand.Rand) clock.Config {
	scale := []int64{1e3, 1e6, 1e9, 1e12, 1e15}[r.IntN(5)] // horizon of events, in ns
	cfg := clock.Config{
		Offset:   time.Duration(r.Int64N(2*int64(time.Hour))) - time.Hour,
		DriftPPM: float64(genDriftPPB(r)) / 1000,
	}
	for range r.IntN(6) {
		cfg.Steps = append(cfg.Steps, clock.Step{
			At: sim.Time(r.Int64N(scale)),
			By: time.Duration(r.Int64N(2*scale+1) - scale),
		})
	}
	if len(cfg.Steps) > 1 && r.IntN(3) == 0 { // two steps at the same time
		cfg.Steps[1].At = cfg.Steps[0].At
	}
	cfg.Slews = genSlews(r, scale)
	if r.IntN(2) == 0 {
		cfg.Noise = time.Duration(r.Int64N(int64(time.Millisecond)) + 1)
	}
	return cfg
}

func genDriftPPB(r *rand.Rand) int64 {
	const limit = 499_999_999
	switch r.IntN(4) {
	case 0:
		return -limit
	case 1:
		return limit
	case 2:
		return r.Int64N(2_000_001) - 1_000_000 // within ±1000 ppm, the realistic range
	}
	return r.Int64N(2*limit+1) - limit
}

// genSlews draws up to four non-overlapping slews, some back to back.
func genSlews(r *rand.Rand, scale int64) []clock.Slew {
	var slews []clock.Slew
	at := sim.Time(0)
	for range r.IntN(5) {
		if r.IntN(3) > 0 {
			at += sim.Time(r.Int64N(scale))
		}
		s := clock.Slew{At: at, By: time.Duration(r.Int64N(2*scale+1) - scale), RatePPM: float64(genRatePPB(r)) / 1000}
		slews = append(slews, s)
		if at = s.End(); at == sim.Never {
			break
		}
	}
	r.Shuffle(len(slews), func(i, j int) { slews[i], slews[j] = slews[j], slews[i] })
	return slews
}

func genRatePPB(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return 500_000_000
	case 1:
		return 500_000 // ntpd's 500 ppm
	case 2:
		return r.Int64N(7) + 1 // tiny rates leave remainders
	}
	return r.Int64N(500_000_000) + 1
}

// ref is an independent model of the monotonic reading: the exact sum, in ppb units,
// of the drifting base and each slew's clamped gain, with no pieces and no precomputed
// state, floored and saturated like Mono.
type ref struct {
	driftPPB int64
	slews    []clock.Slew
}

func newRef(cfg clock.Config) ref {
	return ref{driftPPB: int64(math.Round(cfg.DriftPPM * 1000)), slews: cfg.Slews}
}

func (m ref) mono(t sim.Time) time.Duration {
	t = max(t, 0)
	n := new(big.Int).Mul(big.NewInt(int64(t)), big.NewInt(1e9+m.driftPPB))
	for _, s := range m.slews {
		if t <= s.At || s.By == 0 {
			continue
		}
		rate := int64(math.Round(s.RatePPM * 1000))
		gain := new(big.Int).Mul(big.NewInt(int64(t-s.At)), big.NewInt(rate))
		full := new(big.Int).Mul(big.NewInt(int64(s.By)), big.NewInt(1e9))
		full.Abs(full)
		if gain.Cmp(full) > 0 {
			gain = full
		}
		if s.By < 0 {
			gain.Neg(gain)
		}
		n.Add(n, gain)
	}
	n.Div(n, big.NewInt(1e9))
	if !n.IsInt64() {
		return math.MaxInt64
	}
	return time.Duration(n.Int64())
}

// probes returns true times worth checking for cfg: around every step, slew start and
// slew end, plus random times across and beyond the configured events.
func probes(r *rand.Rand, cfg clock.Config) []sim.Time {
	var marks []sim.Time
	for _, s := range cfg.Steps {
		marks = append(marks, s.At)
	}
	for _, s := range cfg.Slews {
		marks = append(marks, s.At, s.End())
	}
	var out []sim.Time
	for _, m := range marks {
		for _, d := range []sim.Time{-2, -1, 0, 1, 2} {
			if t := m + d; t >= 0 && t-d == m {
				out = append(out, t)
			}
		}
	}
	horizon := slices.Max(append(marks, 1_000))
	for range 20 {
		out = append(out, sim.Time(r.Int64N(int64(2*min(horizon, sim.Never/4)))))
	}
	return append(out, 0, 1, sim.Never-1, sim.Never)
}

// stripped returns cfg without noise, so the same configuration can be compared with
// and without it.
func stripped(cfg clock.Config) clock.Config {
	cfg.Noise = 0
	return cfg
}

func mustNew(t testing.TB, cfg clock.Config, seed uint64) *clock.Clock {
	t.Helper()
	c, err := clock.New(cfg, sim.NewRand(seed, "clock"))
	require.NoError(t, err, "config %+v", cfg)
	return c
}

// forSeeds runs check on propertyRuns seeded random configurations.
func forSeeds(t *testing.T, check func(t *testing.T, r *rand.Rand, cfg clock.Config)) {
	for seed := range uint64(propertyRuns) {
		r := sim.NewRand(seed, "clock-test")
		cfg := genConfig(r)
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { check(t, r, cfg) }) {
			t.Logf("failing seed %d: %+v", seed, cfg)
			return
		}
	}
}
