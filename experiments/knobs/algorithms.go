package knobs

import (
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/redisson"
)

// Algorithm is a lock algorithm a world's clients can run: the value of the `algorithm`
// knob, and how to build the algorithm's clients from a world's knobs. The client process
// (model.Client) drives whatever New returns through the lock.Client interface, and the
// oracle judges it by the neutral lock events it reports, so neither changes for a new
// algorithm.
type Algorithm struct {
	Name string
	Help string
	// Masters is how many Redis endpoints (masters, each with its replicas) the
	// algorithm's clients address; 0 means the `nodes` knob's N, as Redlock's.
	Masters int
	// Watchdog says the algorithm renews its lock on its own, every extend_every, and
	// reports each renewal: the client process then never calls Extend.
	Watchdog bool
	// New returns the factory of the algorithm's clients for cfg, or the error of the first
	// knob it cannot use.
	New func(cfg *Config) (lock.Factory, error)
	// Fences, when set, says whether the locks it takes under cfg come with a fencing
	// token of the algorithm's own (Curator's czxid when the fence_token knob asks for
	// it), which the clients then send with their writes whatever the `fencing` knob
	// (Redlock's own fencing) says.
	Fences func(cfg *Config) bool
	// Ignores names the knobs its clients and servers never read (Redlock's ttl and drift,
	// the Redis servers' settings): each is inert under it, with Help's first words as why.
	Ignores []string
	// Service is the lock service its clients talk to; nil: Redis, whose servers are the
	// world's groups (model.Group) and whose connection is the `connection` knob's.
	Service *Service
}

// algorithmTable is the registry of lock algorithms. A new algorithm is its own package
// (a lock.Client) plus one entry here. It is read-only after package initialisation.
var algorithmTable = []Algorithm{
	{Name: "redlock", Help: "the Redlock page's algorithm (package redlock), with the algorithm knobs below",
		New: func(cfg *Config) (lock.Factory, error) { return redlock.Factory(cfg.Lock) }},
	{Name: "redisson", Masters: 1,
		Help: "Redisson 3.43.0's RLock (package redlock/redisson) on one master: a hash with a watchdog lease " +
			"(ttl), pub/sub wake-up, Redisson's own scripts; it reads ttl (lockWatchdogTimeout), timeout " +
			"(response timeout), retry_delay (retryInterval) and tries (sends of a command Redisson resends: " +
			"retryAttempts + 1); the watchdog is extend_every",
		New: func(cfg *Config) (lock.Factory, error) {
			return redisson.Factory(redissonConfig(cfg))
		}},
	{Name: "redisson-redlock", Watchdog: true,
		Help: "Redisson 3.43.0's RedissonRedLock (package redlock/redisson): an RLock on each of the nodes masters, " +
			"taken one after another, N/2 + 1 of them enough, no validity check; each master's lock has its own " +
			"watchdog (extend_every, from its own acquisition; 0: none); it reads ttl, timeout, retry_delay and " +
			"tries as redisson does",
		New: func(cfg *Config) (lock.Factory, error) {
			return redisson.RedLockFactory(redisson.RedLockConfig{
				Lock: redissonConfig(cfg), Masters: cfg.Lock.Effective().Nodes, Watchdog: cfg.ExtendEvery})
		}},
	curatorAlgorithm,
	hybridAlgorithm,
}

// redissonConfig is an RLock's settings from a world's knobs: with replicas, a Sentinel
// config, whose lock scripts Redisson resends after a timeout.
func redissonConfig(cfg *Config) redisson.Config {
	return redisson.Config{Lease: cfg.Lock.TTL, Timeout: cfg.Lock.NodeTimeout(), RetryInterval: cfg.Lock.RetryDelay,
		RetryAttempts: cfg.Lock.Tries - 1, Replicated: cfg.EffectiveReplicas() > 0, SyncTimeout: time.Second}
}

// Servers returns how many servers a's clients address under cfg: its own number
// (Redisson locks on one master), or the `nodes` knob's N.
func (a *Algorithm) Servers(cfg *Config) int {
	n := cfg.Lock.Effective().Nodes
	if a.Masters > 0 {
		n = a.Masters
	}
	if a.Service != nil && a.Service.Count != nil { // Redis's masters and the service's servers
		n += a.Service.Count(cfg)
	}
	return n
}

// RedisMasters returns how many Redis masters a's clients address under cfg: all its
// servers when its service is Redis, the masters beside another service's servers (the
// hybrid lock's, Service.Count), or none.
func (a *Algorithm) RedisMasters(cfg *Config) int {
	switch {
	case a.Service == nil:
		return a.Servers(cfg)
	case a.Service.Count != nil:
		return a.Servers(cfg) - a.Service.Count(cfg)
	}
	return 0
}

// ServerNames returns the names of the servers a world of a creates under cfg, in order:
// redis1…redisM for its Redis masters, then its service's own (zk1…zkK), as scenario
// actions name them.
func (a *Algorithm) ServerNames(cfg *Config) []string {
	m := a.RedisMasters(cfg)
	out := make([]string, 0, a.Servers(cfg))
	for i := range m {
		out = append(out, "redis"+strconv.Itoa(i+1))
	}
	if a.Service != nil {
		for i := range a.Servers(cfg) - m {
			out = append(out, a.Service.ServerPrefix+strconv.Itoa(i+1))
		}
	}
	return out
}

// Algorithms returns the registered lock algorithms, in table order.
func Algorithms() []Algorithm { return append([]Algorithm(nil), algorithmTable...) }

func algorithmNames(table []Algorithm) []string {
	out := make([]string, len(table))
	for i, a := range table {
		out[i] = a.Name
	}
	return out
}

// LookupAlgorithm returns the algorithm named name among the registered ones and extra
// (algorithms a world adds for itself, see world.WithAlgorithm).
func LookupAlgorithm(name string, extra ...Algorithm) (Algorithm, error) {
	table := append(Algorithms(), extra...)
	for _, a := range table {
		if a.Name == name {
			return a, nil
		}
	}
	names := algorithmNames(table)
	return Algorithm{}, asValueError("algorithm", name, oneOf(names), unknownChoice(name, names))
}
