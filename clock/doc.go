// Package clock gives every simulated process (a Redis node, a client) its own local
// clock, so that the simulation can reproduce the clock faults that break or stress
// Redlock: skew, drift, operator or NTP steps, NTP slews and reading jitter.
//
// A Clock is a pure function of true time (sim.Time): it holds no state that changes
// as the run advances, so reading it twice at the same true time gives the same value,
// and any component may read it in any order without changing the run. It offers two
// readings, both on the clock's own timeline (an ideal clock reads exactly t at true
// time t):
//
//   - Wall is what gettimeofday returns: offset, drift, slews, steps and noise all show.
//     Redis expires keys on it.
//   - Mono is what CLOCK_MONOTONIC returns: it never goes backward; drift and slews show
//     (Linux slews CLOCK_MONOTONIC with NTP), steps and noise do not. A careful client
//     measures elapsed time on it.
//
// TimerFires and WallReaches invert those readings exactly, to the nanosecond, so the
// simulator can schedule a local timer or a key's active expiry as an event in true time.
//
// All arithmetic is exact integer arithmetic (parts per billion, 128-bit products), so a
// run gives the same readings on every machine, and Mono is non-decreasing by
// construction rather than by luck of rounding.
package clock
