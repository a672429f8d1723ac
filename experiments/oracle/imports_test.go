package oracle

import (
	"go/build"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOracleImportsNoLockAlgorithm keeps the oracle algorithm-neutral: it may read the
// lock-client protocol's events (redlock/lock), never an algorithm's own package, so it
// judges any lock without change.
func TestOracleImportsNoLockAlgorithm(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/redlock-sim/redlock-sim/redlock") {
			assert.Equal(t, "github.com/redlock-sim/redlock-sim/redlock/lock", imp)
		}
	}
	assert.Contains(t, pkg.Imports, "github.com/redlock-sim/redlock-sim/redlock/lock")
}
