package sweep

// RunSeed returns the world seed of replicate r of point p in a sweep with seed s:
//
//	RunSeed(s, p, r) = mix(mix(mix(s) ^ p) ^ r)
//
// where mix is the splitmix64 finaliser (Steele, Lea and Flood, 2014). It depends on those
// three numbers only, never on workers, shards or the order in which runs finish, and it
// does not depend on the number of replicates, so raising replicates from 3 to 10 keeps
// the first three seeds of every point. mix is a bijection, so for one sweep seed
// different points never share their chain of states, and nearby sweep seeds give
// unrelated run seeds.
func RunSeed(s uint64, p, r int) uint64 {
	return splitmix64(splitmix64(splitmix64(s)^uint64(p)) ^ uint64(r))
}

// splitmix64 is the finaliser of the SplitMix64 generator: golden-ratio increment, then
// two xor-shift-multiply rounds, so that inputs differing in one bit give unrelated
// outputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
