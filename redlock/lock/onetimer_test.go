package lock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestOneTimerArmsTheEarliestOnce: arming at the same time again asks nothing of the
// process, a new time sets a new timer (the old one then fires stale), nothing due
// cancels it, and only the timer last set fires.
func TestOneTimerArmsTheEarliestOnce(t *testing.T) {
	var ot OneTimer
	out := ot.Arm(nil, time.Second, 3*time.Second, true)
	assert.Equal(t, []Output{{Kind: OutSetTimer, Timer: 1, After: 2 * time.Second}}, out)
	assert.Empty(t, ot.Arm(nil, 2*time.Second, 3*time.Second, true), "already armed there")
	out = ot.Arm(nil, 2*time.Second, 2500*time.Millisecond, true)
	assert.Equal(t, []Output{{Kind: OutSetTimer, Timer: 2, After: 500 * time.Millisecond}}, out)
	assert.False(t, ot.Fired(1), "the timer it replaced is stale")
	assert.True(t, ot.Fired(2))
	assert.False(t, ot.Fired(2), "fired once; disarmed")
	assert.Equal(t, []Output{{Kind: OutSetTimer, Timer: 3}}, ot.Arm(nil, 4*time.Second, 3*time.Second, true), "a past time fires at once")
	assert.Equal(t, []Output{{Kind: OutCancelTimer, Timer: 3}}, ot.Arm(nil, 4*time.Second, 0, false))
	assert.Empty(t, ot.Arm(nil, 4*time.Second, 0, false), "nothing armed, nothing to cancel")
	assert.False(t, ot.Fired(0))
}
