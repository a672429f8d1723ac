//go:build invariants

package invariant

// Enabled reports whether the runtime assertions are compiled in (build tag "invariants").
const Enabled = true
