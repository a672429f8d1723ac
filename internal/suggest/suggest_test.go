package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDistance(t *testing.T) {
	assert.Equal(t, 0, Distance("ttl", "ttl"))
	assert.Equal(t, 1, Distance("tll", "ttl"))
	assert.Equal(t, 3, Distance("kitten", "sitting"))
	assert.Equal(t, 3, Distance("", "abc"))
}

func TestClosest(t *testing.T) {
	known := []string{"ttl", "tries", "drift_factor", "drift_pad", "nodes", "replicates"}
	assert.Equal(t, []string{"ttl"}, Closest("tll", known, 3))
	assert.Equal(t, []string{"ttl"}, Closest("TTL", known, 3), "case is ignored")
	assert.Equal(t, []string{"drift_factor", "drift_pad"}, Closest("drift", known, 3), "a shared substring counts")
	assert.Equal(t, []string{"replicates"}, Closest("replicate", known, 1))
	assert.Empty(t, Closest("zzzzzz", known, 3))
	assert.Len(t, Closest("drift", known, 1), 1, "at most n")
}
