package world

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/sim"
)

// TestMaxClientsIsTheOracles ties the clients knob's bound, stated by knobs without
// importing the oracle, to what the oracle can judge: the two are equal, the knob refuses
// one more, and a world of that many clients runs with every client judged.
func TestMaxClientsIsTheOracles(t *testing.T) {
	require.Equal(t, oracle.MaxClients, knobs.MaxClients)
	cfg := knobs.DefaultConfig()
	err := cfg.Set("clients", "65")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "clients")
	assert.Contains(t, err.Error(), "64")

	w := plan(t, 1, knobs.KV{Name: "clients", Value: "64"}, knobs.KV{Name: "duration", Value: "2s"})
	require.NoError(t, w.Build())
	require.Len(t, w.Clients, 64)
	require.NoError(t, w.Sim.RunUntil(sim.Time(2*time.Second)))
	w.Oracle.Finish(sim.Time(2 * time.Second))
	n := w.Oracle.Counts()
	assert.GreaterOrEqual(t, n.Attempts, int64(64), "every client tried")
	assert.Zero(t, n.ValidityOverlaps)
}
