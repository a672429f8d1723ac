package sim

import (
	"math"
	"time"
)

// Time is true time in nanoseconds since the run started. Only the simulator and the
// oracle see it; simulated processes read their own clocks instead. It prints like a
// time.Duration ("1.5s") so traces read naturally.
type Time int64

// Never is a time later than any event; it stands for "no deadline".
const Never Time = math.MaxInt64

// Add returns t+d, saturating at Never so a huge duration cannot wrap into the past.
func (t Time) Add(d time.Duration) Time {
	s := t + Time(d)
	if d > 0 && s < t {
		return Never
	}
	return s
}

// Sub returns the duration t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Duration returns t as the elapsed duration since the start of the run.
func (t Time) Duration() time.Duration { return time.Duration(t) }

// String formats t like a time.Duration, e.g. "1.5s".
func (t Time) String() string {
	if t == Never {
		return "never"
	}
	return time.Duration(t).String()
}
