// Package invariant holds the runtime assertions of the simulation path, in TigerBeetle's
// manner: where an invariant can break (time going backward, a key's expiry computed on
// another clock, the network losing count of a message, a state machine's round counters
// out of step), the code states it and checks it. The checks are compiled in only with the
// build tag "invariants" (`go test -tags invariants ./...`, which CI runs): callers write
//
//	if invariant.Enabled {
//		invariant.Check(cond, "what broke: %v", x)
//	}
//
// and the normal build, where Enabled is a false constant, drops the check entirely, so the
// hot path pays nothing for it. The package imports nothing of the project, so the pure
// algorithm packages can use it too.
package invariant

import "fmt"

// Check panics with the formatted message when cond is false: an invariant broke, and the
// run can no longer be trusted, so it stops at the first sign rather than report wrong
// results. Its arguments are boxed even when cond holds, so a check on a path that must
// not allocate tests the condition itself and calls Check(false, ...) only when it fails.
func Check(cond bool, format string, args ...any) {
	if !cond {
		panic("invariant broken: " + fmt.Sprintf(format, args...))
	}
}
