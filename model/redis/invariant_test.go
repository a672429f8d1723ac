//go:build invariants

package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// TestExpiryOnTheNodesOwnClockIsAsserted: a key written with an expiry that is not this
// node's wall reading plus the TTL (as if computed on another clock) stops the run.
func TestExpiryOnTheNodesOwnClockIsAsserted(t *testing.T) {
	w := newLockWorld(t, 1, 1, constLink(ms), true)
	n := w.groups[0].nodes[0]
	set := resp.Set("lock", "v", resp.CondNX, 10*time.Second)
	n.eng.effects = append(n.eng.effects[:0], effect{key: "lock", val: "v", exp: 1_000 + 10_000})
	assert.NotPanics(t, func() { n.checkExpiries(&set, 1_000) })
	n.eng.effects[0].exp = 2_000 + 10_000 // another clock's reading
	assert.PanicsWithValue(t, "invariant broken: node redis1: SET \"lock\" PX 10000 gave expiry 12000 on a wall clock reading 1000",
		func() { n.checkExpiries(&set, 1_000) })
	n.eng.effects[0].exp = 500 // already past on this clock
	assert.Panics(t, func() { n.checkExpiries(&set, 1_000) })
}
