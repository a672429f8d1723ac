package search

import "math/rand/v2"

// Choices is the sequence of choices that generated one world and its fault schedule:
// each a whole number below the bound the generator asked with. It is what shrinking
// shrinks (Hypothesis's way): any sequence generates some world, because a value beyond
// its bound is clamped and a sequence that runs out answers 0, the simplest choice, so
// every shrunk case is one the generator could have drawn.
type Choices []uint64

// chooser hands out choices to the generator: from the recorded prefix while it lasts,
// then from rng (drawing a fresh world) or as 0 (replaying a shrunk one). It records the
// values it handed out, clamped, which is the canonical sequence of what was generated.
type chooser struct {
	prefix Choices
	rng    *rand.Rand // nil: replaying; past the prefix every choice is 0
	used   Choices
}

// maxChoices bounds a sequence: a generator that asks for more than this is a bug, and the
// bound keeps a shrink candidate's work finite.
const maxChoices = 4096

// draw returns a choice in [0, n); n is at least 1.
func (c *chooser) draw(n uint64) uint64 {
	var v uint64
	i := len(c.used)
	switch {
	case i < len(c.prefix):
		v = min(c.prefix[i], n-1)
	case c.rng != nil && i < maxChoices:
		v = c.rng.Uint64N(n)
	}
	c.used = append(c.used, v)
	return v
}

// flip returns a choice in {0, 1}: 0 is the simpler side (off, at a time, restart).
func (c *chooser) flip() bool { return c.draw(2) == 1 }

// intn returns a choice in [0, n) as an int.
func (c *chooser) intn(n int) int { return int(c.draw(uint64(max(n, 1)))) }

// less reports whether a is simpler than b: shorter, or as long and smaller at the first
// choice where they differ (shortlex), the order shrinking only ever moves down.
func (a Choices) less(b Choices) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// streamSeed derives the choice stream of a run from its world seed, on a stream of its
// own so that the world's draws and the search's never share numbers.
func streamRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5ea4c4_c401ce5)) }
