package experiments_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

func TestReplayDebug(t *testing.T) {
	sc, err := scenarios.LookupScenario("gc-pause")
	require.NoError(t, err)
	rp, rec, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	plain, err := experiments.RunScenario(context.Background(), sc, nil, 1, experiments.Options{})
	require.NoError(t, err)
	assert.Equal(t, plain.TraceHash, rec.TraceHash)
	t.Logf("steps %d states %d msgs %d", len(rp.Steps), len(rp.States), len(rp.Messages))
	for i, s := range rp.Steps[:40] {
		t.Logf("%d %+v %+v", i, s, rp.States[s.State].Clients)
	}
}
