package experiments

import (
	"context"
	"io"
	"testing"

	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hottest trace sites fold their records into the trace hash without building fields
// when no sink is attached (sim.Sim.Fold); every scenario must hash the same either way,
// or a traced rerun of a sweep's run would not reproduce its hash.
func TestFoldedRecordsHashAsTraced(t *testing.T) {
	for _, sc := range scenarios.Scenarios() {
		plain, err := Run(context.Background(), sc.Name, nil, 1, Options{})
		require.NoError(t, err, sc.Name)
		traced, err := Run(context.Background(), sc.Name, nil, 1, Options{Trace: io.Discard})
		require.NoError(t, err, sc.Name)
		assert.Equal(t, traced.TraceHash, plain.TraceHash, sc.Name)
		assert.Equal(t, traced.Events, plain.Events, sc.Name)
	}
}
