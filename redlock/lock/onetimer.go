package lock

import "time"

// OneTimer is the single timer the client process gives an algorithm, kept by a client
// that multiplexes deadlines of its own onto it (RedissonRedLock's masters and watchdogs,
// the hybrid lock's two sides): armed at the earliest of them, re-armed only when that
// changes, and fired only by the timer it last set.
type OneTimer struct {
	armed   TimerID
	armedAt time.Duration
	last    TimerID
}

// Arm appends to out what keeps the process's timer at at, from now, when found, or
// cancels it when nothing is due.
func (t *OneTimer) Arm(out []Output, now, at time.Duration, found bool) []Output {
	switch {
	case !found:
		if t.armed != 0 {
			out = append(out, Output{Kind: OutCancelTimer, Timer: t.armed})
			t.armed = 0
		}
	case t.armed == 0 || t.armedAt != at:
		t.last++
		t.armed, t.armedAt = t.last, at
		out = append(out, Output{Kind: OutSetTimer, Timer: t.armed, After: max(at-now, 0)})
	}
	return out
}

// Fired reports whether id is the timer last armed (an earlier one is stale), and then
// disarms it: the caller runs whatever fell due and arms again.
func (t *OneTimer) Fired(id TimerID) bool {
	if id != t.armed || id == 0 {
		return false
	}
	t.armed = 0
	return true
}
