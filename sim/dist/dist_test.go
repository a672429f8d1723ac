package dist

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapBoundsEveryDraw: a capped lognormal with a tail far beyond its cap draws nothing
// above the cap, and as much below it as the uncapped one; a cap below the base is refused.
func TestCapBoundsEveryDraw(t *testing.T) {
	d := Lognormal(time.Millisecond, 3)
	d.Cap = 50 * time.Millisecond
	capped, err := NewSampler(d, "pause")
	require.NoError(t, err)
	free := Lognormal(time.Millisecond, 3).Sampler()
	r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	atCap := 0
	for range 10_000 {
		a, b := capped.Draw(r1), free.Draw(r2)
		require.LessOrEqual(t, a, d.Cap)
		assert.Equal(t, min(b, d.Cap), a, "the same draw, clamped")
		if a == d.Cap {
			atCap++
		}
	}
	assert.Positive(t, atCap, "σ = 3 reaches 50 × the median often")
	d.Base, d.Cap = time.Second, time.Millisecond
	_, err = NewSampler(d, "pause")
	assert.ErrorContains(t, err, "pause.cap")
}
