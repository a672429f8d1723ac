// Package redlock is the Redlock distributed lock algorithm as a pure, deterministic state
// machine, in the manner of etcd-io/raft: time and the network belong to the caller.
//
// A Machine is a lock.Client (package redlock/lock, the lock-client protocol every lock
// algorithm of the project speaks). It takes inputs — Acquire, Extend, Release, a Reply from
// node i to request r, a Timer that fired — each carrying the caller's local monotonic
// reading, and answers each with its outputs: commands to send to node i (resp.Command
// values, which print in redis-cli syntax, packed into lock.Payloads), timers to set in
// local time, and
// algorithm-neutral lock events (an attempt started or ended with its votes, acquired with
// a validity deadline and maybe a fencing token, failed with a reason, extended, released).
// Factory registers it as a lock algorithm. It never reads a clock, sleeps, starts a
// goroutine, does I/O or draws randomness except from the *rand.Rand it is given. That is
// why the simulator (package model) and the real-Redis driver (package redisdriver) can
// run literally the same algorithm code, and why a seeded simulation replays exactly.
//
// The algorithm follows the steps of the Redlock page (https://redis.io/docs/latest/develop/use/patterns/distributed-locks/):
// note the start; SET resource value NX PX ttl on all N nodes (at once, or one after
// another in Sequential mode), waiting at most a per-node timeout for each; the lock is
// acquired only with N/2+1 OKs and validity = ttl − elapsed − (ttl × drift_factor +
// drift_pad) still positive; otherwise compare-and-delete on every node, including those
// that never answered, and retry after retry_delay ± retry_jitter, up to tries attempts.
// Extend is compare-and-pexpire on all nodes (a bounded number of times), Release is
// compare-and-delete on all nodes. Optional fencing takes a token with INCR once the quorum
// is won. Config holds the knobs, with bounds; Variant selects a teaching variant, which is
// the same machine with one named deviation.
//
// Dialect selects whose wire behaviour the machine reproduces where lock libraries that
// implement the same algorithm differ (redsync, node-redlock 4 and 5, redlock-py,
// RedLock.net). New resolves the dialect, and the variant's deviation, into one value of
// rules (the commands, the lock value's form, the fail-fast, retry and validity rules),
// each dialect's in a file of its own (dialect_redsync.go, ...), so the machine reads
// fields and never switches on the library while it handles replies.
//
// The outbox is a reused slice and outputs are plain structs, so a machine in steady
// state allocates nothing per command, reply or timer; an acquire allocates its random
// value.
package redlock
