package sim

import "math/rand/v2"

// NewRand returns the random stream of one component of one run. The stream depends only
// on (seed, name), so adding a client to a world never changes what a node draws, and the
// PCG sequence of math/rand/v2 is promised stable across Go versions.
func NewRand(seed uint64, name string) *rand.Rand { return rand.New(NewSource(seed, name)) }

// NewSource returns the generator under NewRand(seed, name)'s stream, for a component
// that draws so often that it calls the generator directly (the network draws a latency
// per message): rand.Rand reaches its source through an interface, which costs more than
// the draw.
func NewSource(seed uint64, name string) *rand.PCG {
	h := fnv1a(fnvOffset, name)
	return rand.NewPCG(splitmix64(seed^h), splitmix64(h+0x9e3779b97f4a7c15))
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv1a folds the bytes of s into h. It is hand-written rather than hash/fnv so that it
// costs no allocation on the trace hot path.
func fnv1a(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// splitmix64 scrambles x so that nearby seeds give unrelated PCG states.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
