package tune

import (
	"fmt"
	"math"
	"time"

	"github.com/redlock-sim/redlock-sim/model/redis"
)

// poissonAtLeast returns P(X ≥ k) for X Poisson with mean m.
func poissonAtLeast(m float64, k int) float64 {
	if k <= 0 {
		return 1
	}
	term, below := math.Exp(-m), 0.0
	for i := range k {
		if i > 0 {
			term *= m / float64(i)
		}
		below += term
	}
	return max(1-below, 0)
}

// nodesStep reasons about N from the nodes' crash rate and restart delay: how many
// masters may be down at once (availability: a quorum needs Q = N/2 + 1 of them) and how
// many must forget a lock inside one ttl for two clients to hold majorities at once
// (safety: two majorities share 2Q − N masters, each of which must have restarted empty
// since it voted). Odd N all share 2Q − N = 1, which is why more masters buy availability,
// never safety against crash-restarts: only delayed restarts or aof-always do. It returns
// the per-acquisition chance of such a double grant (an estimate) and the arithmetic.
func nodesStep(e Env, r Recommendation) (float64, []string) {
	n, q := e.Nodes, e.Nodes/2+1
	share := 2*q - n
	lines := []string{fmt.Sprintf("N = %d masters, a quorum is Q = N/2 + 1 = %d: the lock stays available with up to N − Q = %d down, and two majorities share 2Q − N = %d master(s)",
		n, q, n-q, share)}
	if e.NodeCrashRate == 0 {
		return 0, append(lines, "no node crashes stated (--node-crash-rate 0): if one does crash, the restart delay above is what keeps the lock safe")
	}
	if !e.RestartDelayGiven {
		lines = append(lines, fmt.Sprintf("the restart delay is the default, %v: give yours (--restart-delay), since the answer turns on it", e.NodeRestartDelay))
	}
	down := float64(n) * e.NodeCrashRate * e.NodeRestartDelay.Seconds()
	lines = append(lines, fmt.Sprintf("masters down at a time: on average N × crash rate × restart delay = %d × %.3g/s × %v = %.3g; more than N − Q = %d down (no quorum) ≈ P(Poisson(%.3g) ≥ %d) = %.3g of the time",
		n, e.NodeCrashRate, e.NodeRestartDelay, down, n-q, down, n-q+1, poissonAtLeast(down, n-q+1)))
	forgets := e.Persistence != redis.PersistAOFAlways && e.NodeRestartDelay < r.TTL
	if !forgets {
		return 0, append(lines, "a restarted master cannot forget a lock still valid (aof-always, or a restart delay of at least the ttl): no crash-restart lets a second client in")
	}
	m := float64(n) * e.NodeCrashRate * r.TTL.Seconds()
	p := poissonAtLeast(m, share)
	return p, append(lines,
		fmt.Sprintf("masters that crash and come back empty inside one ttl: N × crash rate × ttl = %d × %.3g/s × %v = %.3g on average; %d of them let a second client in: P(Poisson(%.3g) ≥ %d) = %.3g per acquisition (an upper estimate: it needs a second client asking then, and the restarted master among its votes)",
			n, e.NodeCrashRate, r.TTL, m, share, m, share, p),
		fmt.Sprintf("with N = %d that is %.3g per 10,000 acquisitions; any odd N gives the same 2Q − N = 1, and more masters are more to crash, so adding masters makes it no better (N = 5 against N = 3: 5/3 as many): a restart delay ≥ ttl (%v) or aof-always does", n, p*Per10k, r.TTL))
}

// expectedEvents is how many events of a fault the whole confirmation draws: rate per
// actor per second × actors × simulated time × runs.
func expectedEvents(rate float64, actors int, d time.Duration, runs int) float64 {
	return rate * float64(actors) * d.Seconds() * float64(runs)
}
