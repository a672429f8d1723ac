// Package sim is the deterministic kernel of redlock-sim: virtual true time, the event
// queue ordered by (time, sequence number), seeded random streams per component, and the
// trace sink with its always-on trace hash.
//
// True time exists only here. Every process in the simulated world sees its own clock
// (package clock), derived from true time, and every random draw comes from a PCG stream
// derived from (run seed, component name). Nothing in this package reads the machine's
// clock, sleeps, or starts a goroutine, so one seed always gives one trace, on any
// machine and under any GOMAXPROCS.
//
// Speed: events due within farHorizon wait in a sorted array while there are few of them
// (as in a world of tens of processes) and in a 4-ary heap when there are many; later
// ones (timeouts, which are nearly all cancelled, crons, back-offs) wait in an unordered
// list with O(1) schedule and cancel, moving in when the near events reach their time.
// The order events run in does not depend on where they waited. Events that are never
// cancelled, a network's deliveries, can be posted (Sim.Post) rather than scheduled: the
// queue entry then carries the event's argument itself, with no slot and no EventID,
// and runs in the same order a scheduled one would. The trace hash folds one
// word per field, strings as digests cached by address. The hottest records are written
// once, over Emitter, and copied per emitter by go generate (internal/cmd/emitgen): an
// untraced run folds their values directly (Hasher) instead of building fields no sink
// will read, and a traced one builds them (Texter).
package sim
