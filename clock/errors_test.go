package clock_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

func TestBadInput(t *testing.T) {
	good := clock.Slew{At: 0, By: time.Millisecond}
	tests := []struct {
		name    string
		cfg     clock.Config
		param   string
		value   any
		allowed string
	}{
		{"drift at -50%", clock.Config{DriftPPM: -500000}, "drift_ppm", -500000.0, "(-500000, 500000)"},
		{"drift at +50%", clock.Config{DriftPPM: 500000}, "drift_ppm", 500000.0, "(-500000, 500000)"},
		{"drift NaN", clock.Config{DriftPPM: math.NaN()}, "drift_ppm", math.NaN(), "(-500000, 500000)"},
		{"drift infinite", clock.Config{DriftPPM: math.Inf(-1)}, "drift_ppm", math.Inf(-1), "(-500000, 500000)"},
		{"offset too large", clock.Config{Offset: clock.MaxSpan + 1}, "offset", clock.MaxSpan + 1, "[-876000h0m0s, 876000h0m0s]"},
		{"negative noise", clock.Config{Noise: -1}, "noise", time.Duration(-1), "[0s, 1h0m0s]"},
		{"noise too large", clock.Config{Noise: 2 * time.Hour}, "noise", 2 * time.Hour, "[0s, 1h0m0s]"},
		{"step at negative time", clock.Config{Steps: []clock.Step{{At: 1}, {At: -1}}}, "steps[1].at", sim.Time(-1), "[0s, never]"},
		{"step too large", clock.Config{Steps: []clock.Step{{By: -clock.MaxSpan - 1}}}, "steps[0].by", -clock.MaxSpan - 1, "[-876000h0m0s, 876000h0m0s]"},
		{"too many steps", clock.Config{Steps: make([]clock.Step, clock.MaxSteps+1)}, "steps", clock.MaxSteps + 1, "at most 65536 steps"},
		{"slew at negative time", clock.Config{Slews: []clock.Slew{{At: -5, By: 1}}}, "slews[0].at", sim.Time(-5), "[0s, never]"},
		{"slew too large", clock.Config{Slews: []clock.Slew{{By: clock.MaxSpan + 1}}}, "slews[0].by", clock.MaxSpan + 1, "[-876000h0m0s, 876000h0m0s]"},
		{"negative slew rate", clock.Config{Slews: []clock.Slew{good, {At: sim.Time(time.Hour), By: 1, RatePPM: -1}}}, "slews[1].rate_ppm", -1.0, "[0.001, 500000], or 0 for the default 500"},
		{"slew rate above 50%", clock.Config{Slews: []clock.Slew{{By: 1, RatePPM: 500000.5}}}, "slews[0].rate_ppm", 500000.5, "[0.001, 500000], or 0 for the default 500"},
		{"slew rate below 1 ppb", clock.Config{Slews: []clock.Slew{{By: 1, RatePPM: 0.0004}}}, "slews[0].rate_ppm", 0.0004, "[0.001, 500000], or 0 for the default 500"},
		{"slew rate NaN", clock.Config{Slews: []clock.Slew{{By: 1, RatePPM: math.NaN()}}}, "slews[0].rate_ppm", math.NaN(), "[0.001, 500000], or 0 for the default 500"},
		{"too many slews", clock.Config{Slews: make([]clock.Slew, clock.MaxSlews+1)}, "slews", clock.MaxSlews + 1, "at most 65536 slews"},
		{"overlapping slews", clock.Config{Slews: []clock.Slew{{At: 20 * s, By: 1}, good, {At: s, By: 1}}}, "slews[2].at", s, "at or after 2s, when slews[1] ends (slews may not overlap)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := clock.New(tt.cfg, sim.NewRand(1, "clock"))
			assert.Nil(t, c)
			var pe *sim.ParamError
			require.True(t, errors.As(err, &pe), "want *sim.ParamError, got %v", err)
			assert.Equal(t, tt.param, pe.Param)
			assert.Equal(t, fmt.Sprint(tt.value), fmt.Sprint(pe.Value)) // Sprint: NaN != NaN
			assert.IsType(t, tt.value, pe.Value)
			assert.Equal(t, tt.allowed, pe.Allowed)
			assert.Contains(t, err.Error(), tt.param)
		})
	}
}
