package clock_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

const s = sim.Time(time.Second)

// reading is one expected pair of readings at a true time.
type reading struct {
	at         sim.Time
	wall, mono time.Duration
}

func TestReadings(t *testing.T) {
	tests := []struct {
		name string
		cfg  clock.Config
		want []reading
	}{
		{"ideal clock reads true time", clock.Config{}, []reading{
			{0, 0, 0}, {1, 1, 1}, {10 * s, 10 * time.Second, 10 * time.Second}, {sim.Never, math.MaxInt64, math.MaxInt64},
		}},
		{"+100 ppm after 10s reads 10.001s", clock.Config{DriftPPM: 100}, []reading{
			{10 * s, 10001 * time.Millisecond, 10001 * time.Millisecond},
		}},
		{"-100 ppm after 10s reads 9.999s", clock.Config{DriftPPM: -100}, []reading{
			{10 * s, 9999 * time.Millisecond, 9999 * time.Millisecond},
		}},
		{"offset shows on wall only", clock.Config{Offset: -250 * time.Millisecond}, []reading{
			{0, -250 * time.Millisecond, 0}, {s, 750 * time.Millisecond, time.Second},
		}},
		{"1s forward step at 5s", clock.Config{Steps: []clock.Step{{At: 5 * s, By: time.Second}}}, []reading{
			{5*s - 1, 5*time.Second - 1, 5*time.Second - 1}, {5 * s, 6 * time.Second, 5 * time.Second},
			{10 * s, 11 * time.Second, 10 * time.Second},
		}},
		{"2s backward step at 5s", clock.Config{Steps: []clock.Step{{At: 5 * s, By: -2 * time.Second}}}, []reading{
			{5*s - 1, 5*time.Second - 1, 5*time.Second - 1}, {5 * s, 3 * time.Second, 5 * time.Second},
		}},
		{"steps at the same time add up", clock.Config{Steps: []clock.Step{{At: s, By: 3}, {At: s, By: 4}}}, []reading{
			{s - 1, time.Second - 1, time.Second - 1}, {s, time.Second + 7, time.Second},
		}},
		{"+10ms slew at 500 ppm completes in 20s", clock.Config{Slews: []clock.Slew{{At: 0, By: 10 * time.Millisecond, RatePPM: 500}}}, []reading{
			{10 * s, 10005 * time.Millisecond, 10005 * time.Millisecond},
			{20*s - 2000, 20*time.Second + 10*time.Millisecond - 2000 - 1, 20*time.Second + 10*time.Millisecond - 2000 - 1},
			{20 * s, 20010 * time.Millisecond, 20010 * time.Millisecond},
			{60 * s, 60010 * time.Millisecond, 60010 * time.Millisecond},
		}},
		{"-10ms slew at 1000 ppm from 5s on a drifting clock", clock.Config{DriftPPM: 100, Slews: []clock.Slew{{At: 5 * s, By: -10 * time.Millisecond, RatePPM: 1000}}}, []reading{
			{5 * s, 5000500 * time.Microsecond, 5000500 * time.Microsecond},
			{10 * s, 9996 * time.Millisecond, 9996 * time.Millisecond},
			{15 * s, 14991500 * time.Microsecond, 14991500 * time.Microsecond},
			{25 * s, 24992500 * time.Microsecond, 24992500 * time.Microsecond},
		}},
		{"1ns slew at 0.003 ppm ends on its remainder", clock.Config{Slews: []clock.Slew{{At: 0, By: 1, RatePPM: 0.003}}}, []reading{
			{333333333, 333333333, 333333333}, {333333334, 333333335, 333333335},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, tt.cfg, 1)
			for _, r := range tt.want {
				assert.Equal(t, r.wall, c.Wall(r.at), "Wall(%v)", r.at)
				assert.Equal(t, r.mono, c.Mono(r.at), "Mono(%v)", r.at)
			}
		})
	}
}

func TestSlewEnd(t *testing.T) {
	tests := []struct {
		slew clock.Slew
		want sim.Time
	}{
		{clock.Slew{At: 0, By: 10 * time.Millisecond, RatePPM: 500}, 20 * s},
		{clock.Slew{At: 0, By: -10 * time.Millisecond}, 20 * s}, // default 500 ppm
		{clock.Slew{At: 5 * s, By: -10 * time.Millisecond, RatePPM: 1000}, 15 * s},
		{clock.Slew{At: 7, By: 1, RatePPM: 0.003}, 7 + 333333334},
		{clock.Slew{At: 7, By: 0}, 7},
		{clock.Slew{At: s, By: clock.MaxSpan, RatePPM: 0.001}, sim.Never},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.slew.End(), "%+v", tt.slew)
	}
}

func TestTimerFires(t *testing.T) {
	fast := mustNew(t, clock.Config{DriftPPM: 100}, 1)
	slow := mustNew(t, clock.Config{DriftPPM: -400000}, 1)
	ideal := mustNew(t, clock.Config{}, 1)
	assert.Equal(t, 10*s, ideal.TimerFires(0, 10*time.Second))
	assert.Equal(t, s+10, ideal.TimerFires(s, 10))
	assert.Equal(t, sim.Time(10), ideal.TimerFires(-5, 10), "before 0 the clock reads as at 0")
	assert.Equal(t, sim.Time(-5), ideal.TimerFires(-5, 0))
	// A fast clock fires early in true time: ceil(10s / 1.0001).
	assert.Equal(t, sim.Time(9999000100), fast.TimerFires(0, 10*time.Second))
	assert.Equal(t, s, fast.TimerFires(s, -time.Second))
	assert.Equal(t, sim.Never, ideal.TimerFires(s, math.MaxInt64), "overflowing deadline saturates")
	assert.Equal(t, sim.Time(1e18), slow.TimerFires(0, 6e17))
	top := slow.Mono(sim.Never)
	assert.Equal(t, sim.Never, slow.TimerFires(0, top+1), "a 0.6-speed clock never gets there")
	assert.Equal(t, sim.Never-2, slow.TimerFires(0, top-1), "floor(0.6*(Never-2)) = top-1 exactly")
}

func TestWallReaches(t *testing.T) {
	cfg := clock.Config{Offset: time.Second, Steps: []clock.Step{{At: 5 * s, By: 10 * time.Second}, {At: 20 * s, By: -10 * time.Second}}}
	c := mustNew(t, cfg, 1)
	assert.Equal(t, 2*s, c.WallReaches(0, 3*time.Second))
	assert.Equal(t, 5*s, c.WallReaches(0, 12*time.Second), "a forward step reaches early")
	assert.Equal(t, 15*s, c.WallReaches(0, 26*time.Second))
	assert.Equal(t, 30*s, c.WallReaches(0, 31*time.Second), "a backward step delays")
	assert.Equal(t, 21*s, c.WallReaches(20*s, 22*time.Second))
	assert.Equal(t, 7*s, c.WallReaches(7*s, 0), "already reached")
	assert.Equal(t, sim.Time(-3), c.WallReaches(-3, time.Second))
	assert.Equal(t, s, c.WallReaches(-3, 2*time.Second))
	assert.Equal(t, sim.Never-s, c.WallReaches(0, math.MaxInt64))
	slow := mustNew(t, clock.Config{DriftPPM: -400000}, 1)
	assert.Equal(t, sim.Never, slow.WallReaches(0, math.MaxInt64))
}

func TestSaturationNeverWraps(t *testing.T) {
	fast := mustNew(t, clock.Config{DriftPPM: 499999.999, Offset: clock.MaxSpan}, 1)
	assert.Equal(t, time.Duration(math.MaxInt64), fast.Mono(sim.Never))
	assert.Equal(t, time.Duration(math.MaxInt64), fast.Wall(sim.Never))
	back := mustNew(t, clock.Config{Offset: -clock.MaxSpan, Steps: []clock.Step{{At: 0, By: -clock.MaxSpan}, {At: 1, By: -clock.MaxSpan}}}, 1)
	assert.Equal(t, -2*clock.MaxSpan, back.Wall(0))
	assert.Equal(t, time.Duration(math.MinInt64+1), back.Wall(1), "saturated, not wrapped")
	assert.Equal(t, sim.Time(0), back.WallReaches(0, math.MinInt64))
	ahead := mustNew(t, clock.Config{Offset: time.Second}, 1)
	assert.Equal(t, sim.Time(5), ahead.WallReaches(5, math.MinInt64), "w - offset underflows: already reached")
}

func TestNegativeTimesReadAsZero(t *testing.T) {
	c := mustNew(t, clock.Config{Offset: time.Second, DriftPPM: 300, Noise: time.Microsecond}, 1)
	assert.Equal(t, time.Duration(0), c.Mono(-5))
	assert.Equal(t, c.Wall(0), c.Wall(-5))
	assert.Equal(t, c.Wall(0), c.Wall(math.MinInt64))
}

func TestNewCopiesAndSortsItsInput(t *testing.T) {
	steps := []clock.Step{{At: 3 * s, By: 1}, {At: s, By: 2}, {At: 2 * s, By: 3}}
	slews := []clock.Slew{{At: 100 * s, By: time.Millisecond}, {At: 0, By: -time.Millisecond, RatePPM: 1000}}
	c := mustNew(t, clock.Config{Steps: steps, Slews: slews}, 1)
	assert.Equal(t, []clock.Step{{At: 3 * s, By: 1}, {At: s, By: 2}, {At: 2 * s, By: 3}}, steps, "caller's slice mutated")
	assert.Equal(t, []clock.Step{{At: s, By: 2}, {At: 2 * s, By: 3}, {At: 3 * s, By: 1}}, c.Steps())
	assert.Equal(t, []clock.Slew{{At: 0, By: -time.Millisecond, RatePPM: 1000}, {At: 100 * s, By: time.Millisecond, RatePPM: 500}}, c.Slews())
	assert.Zero(t, slews[0].RatePPM, "caller's slew rate filled in")
	c.Steps()[0].By = time.Hour
	c.Config().Slews[0].By = time.Hour
	assert.Equal(t, time.Duration(2), c.Steps()[0].By, "accessor exposed internal state")
	assert.Equal(t, -time.Millisecond, c.Slews()[0].By, "accessor exposed internal state")
	assert.Equal(t, time.Duration(5), c.Wall(2*s)-c.Mono(2*s))
}

// TestNewDrawsOneValue pins the promise that New consumes exactly one draw from a
// non-nil stream, noise or not, so a process's other draws do not shift.
func TestNewDrawsOneValue(t *testing.T) {
	ref := sim.NewRand(9, "p")
	ref.Uint64()
	second := ref.Uint64()
	for _, noise := range []time.Duration{0, time.Microsecond} {
		rng := sim.NewRand(9, "p")
		_, err := clock.New(clock.Config{Noise: noise}, rng)
		require.NoError(t, err)
		assert.Equal(t, second, rng.Uint64(), "noise %v", noise)
	}
}

func TestNilRand(t *testing.T) {
	c, err := clock.New(clock.Config{DriftPPM: 5}, nil)
	require.NoError(t, err)
	assert.Equal(t, 1000005*time.Microsecond, c.Wall(s))
	_, err = clock.New(clock.Config{Noise: 1}, nil)
	assert.ErrorContains(t, err, "rng is nil")
}

func TestDriftBoundary(t *testing.T) {
	// The slowest allowed slew must not stop even the slowest clock, drift rounding
	// to whole ppb included.
	slowest := []clock.Slew{{By: -time.Second, RatePPM: clock.MaxSlewPPM}}
	for _, ok := range []float64{-499999.999, -499999.9999, 499999.9999, 0.0004} {
		c, err := clock.New(clock.Config{DriftPPM: ok, Slews: slowest}, nil)
		require.NoError(t, err, "drift %v", ok)
		assert.Less(t, c.Mono(0), c.Mono(s), "drift %v stopped the clock", ok)
	}
	for _, bad := range []float64{-500000, 500000, -500000.1, math.NaN(), math.Inf(1)} {
		_, err := clock.New(clock.Config{DriftPPM: bad}, nil)
		assert.Error(t, err, "drift %v", bad)
	}
}

func TestOverlappingSlewsRejected(t *testing.T) {
	first := clock.Slew{At: 0, By: 10 * time.Millisecond, RatePPM: 500}
	_, err := clock.New(clock.Config{Slews: []clock.Slew{first, {At: 20*s - 1, By: 1}}}, nil)
	var pe *sim.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "slews[1].at", pe.Param)
	_, err = clock.New(clock.Config{Slews: []clock.Slew{{At: 20 * s, By: 1}, first}}, nil)
	assert.NoError(t, err, "back-to-back slews are fine")
	_, err = clock.New(clock.Config{Slews: []clock.Slew{first, {At: 5 * s}}}, nil)
	assert.NoError(t, err, "a zero slew takes no time")
}
