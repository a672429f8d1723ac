package curator

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAMutexRemembersBoundedIDs: a long run's mutex keeps at most keptIDs protected ids
// (one per attempt, kept for step scripts' $vN, grew its heap by 45 MiB an hour), and
// Values still names the current one first.
func TestAMutexRemembersBoundedIDs(t *testing.T) {
	m, err := New(DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	for range 3 * keptIDs {
		m.newAttempt(0)
	}
	assert.Len(t, m.ids, keptIDs)
	vs := m.Values()
	require.Len(t, vs, keptIDs+1)
	assert.Equal(t, m.id, vs[0], "the current id first")
	assert.Equal(t, m.ids[0], vs[len(vs)-1], "then the kept ones, newest first")
}
