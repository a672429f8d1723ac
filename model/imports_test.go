package model

import (
	"go/build"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelImportsNoLockAlgorithm keeps the client process free of any one lock algorithm:
// it drives whatever lock.Client it is given, and its messages carry Redis commands from
// redlock/resp, so a new algorithm never needs a change here.
func TestModelImportsNoLockAlgorithm(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	assert.NotContains(t, pkg.Imports, "github.com/redlock-sim/redlock-sim/redlock")
	assert.Contains(t, pkg.Imports, "github.com/redlock-sim/redlock-sim/redlock/lock")
}
