package clock_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

func TestMonoMatchesExactModel(t *testing.T) {
	forSeeds(t, func(t *testing.T, r *rand.Rand, cfg clock.Config) {
		c, m := mustNew(t, cfg, 1), newRef(cfg)
		for _, at := range probes(r, cfg) {
			require.Equal(t, m.mono(at), c.Mono(at), "Mono(%d)", at)
		}
	})
}

func TestMonoNeverDecreases(t *testing.T) {
	forSeeds(t, func(t *testing.T, r *rand.Rand, cfg clock.Config) {
		c := mustNew(t, cfg, 1)
		ts := probes(r, cfg)
		slices.Sort(ts)
		for i, at := range ts {
			if at < sim.Never {
				require.LessOrEqual(t, c.Mono(at), c.Mono(at+1), "Mono(%d) > Mono(%d+1)", at, at)
			}
			if i > 0 {
				require.LessOrEqual(t, c.Mono(ts[i-1]), c.Mono(at), "Mono(%d) > Mono(%d)", ts[i-1], at)
			}
		}
	})
}

// TestMonoNeverDecreasesNanoByNano scans every nanosecond across the ends of slews that
// nearly stop a clock already running at half speed, where rounding of separately
// floored terms would run it backward.
func TestMonoNeverDecreasesNanoByNano(t *testing.T) {
	for _, drift := range []float64{-499999.999, -250000, 0, 499999.999} {
		cfg := clock.Config{DriftPPM: drift, Slews: []clock.Slew{
			{At: 3, By: -7, RatePPM: 500000},
			{At: 100, By: 13, RatePPM: 500000},
			{At: 200, By: -5, RatePPM: 300000.001},
		}}
		c := mustNew(t, cfg, 1)
		for at := sim.Time(0); at < 400; at++ {
			require.LessOrEqual(t, c.Mono(at), c.Mono(at+1), "drift %v: Mono(%d) > Mono(%d)", drift, at, at+1)
		}
		require.Equal(t, newRef(cfg).mono(400), c.Mono(400))
	}
}

func TestTimerFiresExact(t *testing.T) {
	forSeeds(t, func(t *testing.T, r *rand.Rand, cfg clock.Config) {
		c := mustNew(t, cfg, 1)
		for _, start := range probes(r, cfg) {
			for _, d := range durations(r) {
				checkTimer(t, c, start, d)
			}
		}
	})
}

// durations returns timer lengths from a nanosecond to centuries, and some ≤ 0.
func durations(r *rand.Rand) []time.Duration {
	out := []time.Duration{-time.Second, 0, 1, 2, time.Duration(r.Int64N(1e6)), time.Duration(r.Int64N(1e12))}
	return append(out, time.Duration(r.Int64N(1<<62)), time.Duration(1<<63-1))
}

func checkTimer(t *testing.T, c *clock.Clock, start sim.Time, d time.Duration) {
	t.Helper()
	fire := c.TimerFires(start, d)
	if d <= 0 {
		require.Equal(t, start, fire, "TimerFires(%d, %d)", start, d)
		return
	}
	from := c.Mono(start)
	if fire == sim.Never && c.Mono(sim.Never)-from < d {
		return // genuinely never
	}
	require.Greater(t, fire, start, "TimerFires(%d, %d)", start, d)
	require.GreaterOrEqual(t, c.Mono(fire)-from, d, "TimerFires(%d, %d) = %d fires early", start, d, fire)
	require.Less(t, c.Mono(fire-1)-from, d, "TimerFires(%d, %d) = %d fires late", start, d, fire)
}

func TestStepMovesOnlyWall(t *testing.T) {
	forSeeds(t, func(t *testing.T, r *rand.Rand, cfg clock.Config) {
		noSteps := cfg
		noSteps.Steps = nil
		c, base := mustNew(t, cfg, 7), mustNew(t, noSteps, 7)
		for _, at := range probes(r, cfg) {
			require.Equal(t, base.Mono(at), c.Mono(at), "Mono(%d) moved by a step", at)
			if base.Mono(at) > math.MaxInt64/2 {
				continue // the wall may saturate; TestSaturationNeverWraps covers that
			}
			want := base.Wall(at) + stepsUpTo(cfg.Steps, at)
			require.Equal(t, want, c.Wall(at), "Wall(%d)", at)
		}
	})
}

// stepsUpTo sums, the slow obvious way, the steps taken at or before at.
func stepsUpTo(steps []clock.Step, at sim.Time) time.Duration {
	var sum time.Duration
	for _, s := range steps {
		if s.At <= at {
			sum += s.By
		}
	}
	return sum
}

func TestNoiseBoundedAndPure(t *testing.T) {
	forSeeds(t, func(t *testing.T, r *rand.Rand, cfg clock.Config) {
		cfg.Noise = time.Duration(r.Int64N(int64(time.Millisecond))) + 1
		c, clean, again := mustNew(t, cfg, 3), mustNew(t, stripped(cfg), 3), mustNew(t, cfg, 3)
		ts := probes(r, cfg)
		var seen []time.Duration
		for _, at := range ts {
			noise := c.Wall(at) - clean.Wall(at)
			require.LessOrEqual(t, max(noise, -noise), cfg.Noise, "noise at %d", at)
			require.Equal(t, c.Mono(at), clean.Mono(at), "noise reached Mono at %d", at)
			seen = append(seen, noise)
		}
		for i := len(ts) - 1; i >= 0; i-- { // another clock, read in reverse order
			require.Equal(t, seen[i], again.Wall(ts[i])-clean.Wall(ts[i]), "noise at %d not pure", ts[i])
			require.Equal(t, seen[i], c.Wall(ts[i])-clean.Wall(ts[i]), "noise at %d changed on re-read", ts[i])
		}
	})
}

// TestNoiseIsNoisy guards the other tests against a noise that is always zero: over
// many readings it must take both signs and come close to its bound.
func TestNoiseIsNoisy(t *testing.T) {
	const bound = 100 * time.Microsecond
	c := mustNew(t, clock.Config{Noise: bound}, 1)
	other := mustNew(t, clock.Config{Noise: bound}, 2)
	var lo, hi time.Duration
	differs := 0
	for at := sim.Time(0); at < 10000; at++ {
		n := c.Wall(at) - time.Duration(at)
		lo, hi = min(lo, n), max(hi, n)
		if n != other.Wall(at)-time.Duration(at) {
			differs++
		}
	}
	assert.Less(t, lo, -bound*9/10)
	assert.Greater(t, hi, bound*9/10)
	assert.Greater(t, differs, 9900, "seeds 1 and 2 should give unrelated noise")
}

func TestWallReachesExact(t *testing.T) {
	forSeeds(t, func(t *testing.T, r *rand.Rand, cfg clock.Config) {
		c, clean := mustNew(t, cfg, 5), mustNew(t, stripped(cfg), 5)
		for _, from := range probes(r, cfg) {
			for _, w := range wallTargets(r, clean, from) {
				got := c.WallReaches(from, w)
				require.Equal(t, clean.WallReaches(from, w), got, "noise changed WallReaches(%d, %d)", from, w)
				checkWallReaches(t, clean, cfg.Steps, from, w, got)
			}
		}
	})
}

// wallTargets returns wall deadlines behind, at and ahead of the reading at from.
func wallTargets(r *rand.Rand, c *clock.Clock, from sim.Time) []time.Duration {
	now := c.Wall(from)
	out := []time.Duration{now - time.Second, now, now + 1, time.Duration(1<<63 - 1)}
	for range 4 {
		ahead := time.Duration(r.Int64N(int64(1) << r.IntN(62)))
		if now+ahead > now {
			out = append(out, now+ahead)
		}
	}
	return out
}

// checkWallReaches checks got against the definition on a noise-free clock: reached at
// got, and not reached anywhere in [from, got). The wall only falls at a step, so its
// largest values in [from, got) are just before each step and just before got.
func checkWallReaches(t *testing.T, c *clock.Clock, steps []clock.Step, from sim.Time, w time.Duration, got sim.Time) {
	t.Helper()
	require.GreaterOrEqual(t, got, from, "WallReaches(%d, %d)", from, w)
	if got < sim.Never || c.Wall(sim.Never) >= w {
		require.GreaterOrEqual(t, c.Wall(got), w, "WallReaches(%d, %d) = %d: not reached", from, w, got)
	}
	if got == from {
		return
	}
	require.Less(t, c.Wall(got-1), w, "WallReaches(%d, %d) = %d: reached earlier", from, w, got)
	for _, s := range steps {
		if s.At > from && s.At <= got {
			require.Less(t, c.Wall(s.At-1), w, "WallReaches(%d, %d) = %d: reached before step at %d", from, w, got, s.At)
		}
	}
}

// FuzzTimerFires checks TimerFires against its definition on random configurations;
// `go test` runs the seed corpus, `go test -fuzz FuzzTimerFires` explores further.
func FuzzTimerFires(f *testing.F) {
	f.Add(uint64(1), int64(0), int64(time.Second))
	f.Add(uint64(2), int64(12345), int64(1))
	f.Add(uint64(3), int64(1)<<62, int64(1)<<62)
	f.Fuzz(func(t *testing.T, seed uint64, start, d int64) {
		cfg := genConfig(sim.NewRand(seed, "fuzz"))
		checkTimer(t, mustNew(t, cfg, seed), sim.Time(max(start, 0)), time.Duration(d))
	})
}

// FuzzMono checks Mono against the exact model and its own monotonicity.
func FuzzMono(f *testing.F) {
	f.Add(uint64(1), int64(0))
	f.Add(uint64(4), int64(1e12))
	f.Fuzz(func(t *testing.T, seed uint64, at int64) {
		cfg := genConfig(sim.NewRand(seed, "fuzz"))
		c, tt := mustNew(t, cfg, seed), sim.Time(max(at, 0))
		require.Equal(t, newRef(cfg).mono(tt), c.Mono(tt))
		if tt < sim.Never {
			require.LessOrEqual(t, c.Mono(tt), c.Mono(tt+1))
		}
	})
}

// FuzzWallReaches checks WallReaches against its definition.
func FuzzWallReaches(f *testing.F) {
	f.Add(uint64(1), int64(0), int64(time.Second))
	f.Add(uint64(5), int64(1e9), int64(-time.Hour))
	f.Fuzz(func(t *testing.T, seed uint64, from, w int64) {
		cfg := stripped(genConfig(sim.NewRand(seed, "fuzz")))
		at := sim.Time(max(from, 0))
		checkWallReaches(t, mustNew(t, cfg, seed), cfg.Steps, at, time.Duration(w), mustNew(t, cfg, seed).WallReaches(at, time.Duration(w)))
	})
}

// TestIdealClockFastPath checks the readings of a clock without drift, slews, steps or
// noise, which skip the general path, against the same clock with a step of zero (which
// takes it), at the probes of random configurations and at the extreme offsets.
func TestIdealClockFastPath(t *testing.T) {
	offsets := []time.Duration{0, -time.Hour, time.Hour, clock.MaxSpan, -clock.MaxSpan}
	forSeeds(t, func(t *testing.T, r *rand.Rand, cfg clock.Config) {
		ideal := clock.Config{Offset: cfg.Offset}
		if r.IntN(4) == 0 {
			ideal.Offset = offsets[r.IntN(len(offsets))]
		}
		general := ideal
		general.Steps = []clock.Step{{At: sim.Time(r.Int64N(1e9)), By: 0}}
		fast, slow := mustNew(t, ideal, 1), mustNew(t, general, 1)
		for _, at := range append(probes(r, cfg), -1, 0, sim.Never) {
			require.Equal(t, slow.Mono(at), fast.Mono(at), "Mono(%d)", at)
			require.Equal(t, slow.Wall(at), fast.Wall(at), "Wall(%d)", at)
			for _, d := range durations(r) {
				require.Equal(t, slow.TimerFires(at, d), fast.TimerFires(at, d), "TimerFires(%d, %d)", at, d)
			}
		}
	})
}
