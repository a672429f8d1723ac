//go:build invariants

package model

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestClientMonotonicClockIsAsserted: a client whose monotonic reading went backward stops
// the run.
func TestClientMonotonicClockIsAsserted(t *testing.T) {
	w := newProcWorld(t, StorageConfig{})
	c := w.client(w.cfg(5 * ms))
	c.lastMono = time.Hour
	assert.PanicsWithValue(t, "invariant broken: client alice: monotonic clock went backward: 0s after 1h0m0s",
		func() { c.mono(0) })
}
