// Package sim is the deterministic kernel of redlock-sim: virtual true time, the event
// queue ordered by (time, sequence number), seeded random streams per component, and the
// trace sink with its always-on trace hash.
//
// True time exists only here. Every process in the simulated world sees its own clock
// (package clock), derived from true time, and every random draw comes from a PCG stream
// derived from (run seed, component name). Nothing in this package reads the machine's
// clock, sleeps, or starts a goroutine, so one seed always gives one trace, on any
// machine and under any GOMAXPROCS.
package sim
