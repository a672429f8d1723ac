//go:build invariants

package zookeeper

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/zk"
)

// TestTwoLeadersInAnEpochAreAsserted: a second leader established in an epoch stops the
// run.
func TestTwoLeadersInAnEpochAreAsserted(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	ld := w.leader()
	assert.PanicsWithValue(t, "invariant broken: zookeeper: two leaders in epoch 1: zk3 and zk1", func() {
		w.e.established(ld.Epoch(), 0)
	})
}

// TestALeaderWithoutACommittedWriteIsAsserted: a leader established without a write a
// previous leader committed (as if elected by a minority's votes) stops the run.
func TestALeaderWithoutACommittedWriteIsAsserted(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	c := w.client("c")
	c.session(0, 10*time.Second)
	r := c.call(0, zk.Create("/a", "", 0))
	require.Equal(t, zk.OK, r.Code)
	stale := w.e.Server(0)
	stale.tree = newTree() // a server that never saw the write
	assert.Panics(t, func() { w.e.established(9, 0) })
}

// TestAZxidAppliedOutOfOrderIsAsserted: applying a transaction at or below the last one
// applied stops the run; so does proposing one.
func TestAZxidAppliedOutOfOrderIsAsserted(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	c := w.client("c")
	c.session(0, 10*time.Second)
	r := c.call(0, zk.Create("/a", "", 0))
	require.Equal(t, zk.OK, r.Code)
	sv := w.e.Server(0)
	assert.Panics(t, func() { sv.apply(w.s.Now(), r.Int) })
	ld := w.leader()
	ld.counter = 0 // as if the leader forgot how far its epoch got
	assert.Panics(t, func() { ld.propose(w.s.Now(), &txn{op: zk.OpCreate, path: "/b"}) })
}

// TestTheEnsembleKeepsItsInvariantsThroughFaults: a run of kills, crashes, stalls and
// restarts with a client writing throughout breaks none of the invariants.
func TestTheEnsembleKeepsItsInvariantsThroughFaults(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	c := w.client("c")
	for round := 0; round < 6; round++ {
		srv := round % 3
		c.send(srv, zk.Connect(0, 4*time.Second, 0))
		for k := 0; k < 5; k++ {
			c.send(srv, zk.Create("/n", "", zk.FlagSequential))
			w.runFor(20 * time.Millisecond)
		}
		sv := w.e.Server((round * 2) % 3)
		switch round % 3 {
		case 0:
			sv.Kill()
		case 1:
			sv.Crash()
		case 2:
			sv.Stall()
		}
		w.runFor(15 * time.Second)
		sv.Thaw()
		sv.Restart()
		w.runFor(2 * time.Second)
	}
	assert.GreaterOrEqual(t, len(w.e.EpochLeaders()), 4)
}
