package dist

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
)

func TestSamplerDrawsLikeTheNetwork(t *testing.T) {
	s, err := NewSampler(Uniform(time.Millisecond, 3*time.Millisecond), "hold")
	require.NoError(t, err)
	r := sim.NewRand(1, "test")
	var sum time.Duration
	for i := 0; i < 10000; i++ {
		d := s.Draw(r)
		require.GreaterOrEqual(t, d, time.Millisecond)
		require.LessOrEqual(t, d, 3*time.Millisecond)
		sum += d
	}
	assert.InDelta(t, float64(2*time.Millisecond), float64(sum/10000), float64(50*time.Microsecond))

	c, err := NewSampler(Constant(5*time.Millisecond), "think")
	require.NoError(t, err)
	assert.Equal(t, 5*time.Millisecond, c.Draw(r))
}

func TestSamplerRejectsBadDist(t *testing.T) {
	_, err := NewSampler(Uniform(2*time.Millisecond, time.Millisecond), "hold")
	var pe *sim.ParamError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "hold.max", pe.Param)
	require.Error(t, Constant(-1).Validate("latency"))
}
