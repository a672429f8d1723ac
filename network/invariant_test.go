//go:build invariants

package network

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// TestConservationIsAssertedOnEveryDelivery: a network that lost count of one message
// (here a send counted twice) stops the run at the next delivery.
func TestConservationIsAssertedOnEveryDelivery(t *testing.T) {
	s, err := sim.New(sim.Config{Seed: 1})
	require.NoError(t, err)
	n, err := New[int](s, Config{Default: Link{Latency: Latency{Fast: dist.Constant(ms)}}}, s.Source("net"))
	require.NoError(t, err)
	for _, name := range []string{"a", "b"} {
		_, err := n.AddEndpoint(name, quiet{})
		require.NoError(t, err)
	}
	n.Send(0, 1, 1)
	n.stats.Sent++ // the broken count
	assert.PanicsWithValue(t,
		"invariant broken: network: 2 sent + 0 duplicated = 2, but 1 delivered + 0 lost + 0 partitioned + 0 dropped + 0 timed out + 0 reset + 0 in flight = 1",
		func() { _ = s.RunUntil(sim.Time(2 * ms)) })
}

// quiet is an endpoint that takes messages and answers none.
type quiet struct{}

func (quiet) Receive(sim.Time, Endpoint, Endpoint, *int) {}
