package locktest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
)

// superseder is a fake algorithm that keeps one live timer and supersedes it without
// cancelling the one before: each Acquire sets a new timer of the next of afters, and
// only the live timer reports (an AcquireFailed event).
type superseder struct {
	afters []time.Duration
	armed  lock.TimerID
}

func (s *superseder) Acquire(time.Duration, string) ([]lock.Output, error) {
	s.armed++
	return []lock.Output{{Kind: lock.OutSetTimer, Timer: s.armed, After: s.afters[s.armed-1]}}, nil
}
func (s *superseder) Extend(time.Duration) ([]lock.Output, error)  { return nil, lock.ErrNotHeld }
func (s *superseder) Release(time.Duration) ([]lock.Output, error) { return nil, lock.ErrNotHeld }
func (s *superseder) Reply(time.Duration, int, lock.Req, lock.Payload) ([]lock.Output, error) {
	return nil, nil
}
func (s *superseder) Timer(_ time.Duration, id lock.TimerID) ([]lock.Output, error) {
	if id != s.armed {
		return nil, nil
	}
	s.armed = 0
	return []lock.Output{{Kind: lock.OutEvent, Event: lock.Event{Kind: lock.AcquireFailed}}}, nil
}

// TestDriverFiresTheLastTimerSet: FireLast fires the timer set last, though a superseded
// one falls due earlier (which FireNext would fire, to no effect), advances the clock to
// it, leaves the superseded one pending, and refuses once the last one has fired.
func TestDriverFiresTheLastTimerSet(t *testing.T) {
	d := locktest.NewDriver(&superseder{afters: []time.Duration{time.Second, 5 * time.Second}})
	_, err := d.Take(d.C.Acquire(0, "r"))
	require.NoError(t, err)
	_, err = d.Take(d.C.Acquire(0, "r"))
	require.NoError(t, err)
	tm, ok := d.Pending(2)
	require.True(t, ok)
	assert.Equal(t, 5*time.Second, tm.At)
	_, ok = d.Pending(3)
	assert.False(t, ok, "no timer 3 was set")

	_, err = d.FireLast()
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, d.Now)
	assert.Equal(t, []lock.EventKind{lock.AcquireFailed}, d.Kinds(), "the live timer reported")
	assert.Equal(t, []locktest.Timer{{ID: 1, At: time.Second}}, d.Timers, "the superseded timer stays")

	_, err = d.FireLast()
	assert.ErrorContains(t, err, "the last timer set (id 2) is not pending")
	assert.Equal(t, 5*time.Second, d.Now, "a refused FireLast leaves the clock")
}

// TestDriverFindsSends: Oldest returns the oldest waiting send a test asks for and
// nothing once it is answered; SentWhen says when each send went out.
func TestDriverFindsSends(t *testing.T) {
	d := locktest.NewDriver(&lease{servers: 3, timeout: time.Second})
	d.Now = 2 * time.Millisecond
	_, err := d.Take(d.C.Acquire(d.Now, "r"))
	require.NoError(t, err)
	byNode := func(n int) func(lock.Output) bool { return func(o lock.Output) bool { return o.Node == n } }
	o, ok := d.Oldest(byNode(1))
	require.True(t, ok)
	assert.Equal(t, lock.Req(2), o.Req)
	first, ok := d.Oldest(func(lock.Output) bool { return true })
	require.True(t, ok)
	assert.Equal(t, 0, first.Node, "the oldest of all")

	d.Now = 7 * time.Millisecond
	_, err = d.Reply(1, o.Req, lock.Payload{Word: replyNo})
	require.NoError(t, err)
	_, ok = d.Oldest(byNode(1))
	assert.False(t, ok, "node 1 answered")

	at, ok := d.SentWhen(1, 2)
	require.True(t, ok)
	assert.Equal(t, 2*time.Millisecond, at, "when it went out, not when it was answered")
	_, ok = d.SentWhen(0, 2)
	assert.False(t, ok, "request 2 went to node 1")
}
