package redis

import (
	"fmt"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Persistence is a node's durability setting.
type Persistence uint8

// The persistence modes.
const (
	// PersistNone keeps nothing: a crash or restart comes back empty (Redis with
	// `save ""` and `appendonly no`; SHUTDOWN then saves nothing either).
	PersistNone Persistence = iota
	// PersistAOFEverySec is `appendonly yes` with `appendfsync everysec`: writes reach the
	// disk at fsync instants — the first flush in a later wall-clock second than the last
	// fsync, as Redis decides it — and a power loss loses what came after the last one.
	PersistAOFEverySec
	// PersistAOFAlways is `appendfsync always`: every write is on disk before it is
	// acknowledged, so nothing acknowledged is ever lost.
	PersistAOFAlways
)

var persistenceNames = [...]string{PersistNone: "none", PersistAOFEverySec: "aof-everysec", PersistAOFAlways: "aof-always"}

func (p Persistence) String() string {
	if int(p) < len(persistenceNames) {
		return persistenceNames[p]
	}
	return "persistence(" + strconv.Itoa(int(p)) + ")"
}

// ParsePersistence parses "none", "aof-everysec" or "aof-always".
func ParsePersistence(s string) (Persistence, error) {
	for i, name := range persistenceNames {
		if s == name {
			return Persistence(i), nil
		}
	}
	return 0, sim.BadParam("persistence", s, persistenceSet)
}

const persistenceSet = "{none, aof-everysec, aof-always}"

// Limits and defaults of a node's configuration. Every queue and table a node keeps is
// bounded by one of them.
const (
	MaxServiceTime  = time.Second   // per command; a slower server is a paused one
	DefaultMaxQueue = 1024          // requests waiting while the node is busy or paused
	MaxQueueLimit   = 1 << 20       // bound on MaxQueue
	DefaultHz       = 10            // Redis's default hz: active expiry and fsync checks
	MaxHz           = 500           // Redis's own maximum
	DefaultEpochMs  = 1700000000000 // 2023-11-14T22:13:20Z: the wall reading 0 in Unix ms
	MaxEpochMs      = 1 << 50       // far beyond any real clock, far from int64 overflow
	// MaxUnsynced bounds the AOF writes waiting for an fsync (one per key: the latest
	// state wins). Reaching it fails the run rather than growing without bound.
	MaxUnsynced = 1 << 20
)

// NodeConfig configures one Redis process.
type NodeConfig struct {
	// Clock is the node's local clock. Keys expire on its wall reading, the cron runs on
	// its monotonic reading.
	Clock clock.Config
	// ServiceTime is the true time each command occupies the node. Commands are served
	// one at a time; a command takes effect and is answered when its service ends.
	ServiceTime time.Duration
	// MaxQueue bounds the requests waiting for service; a request arriving at a full
	// queue is dropped (the client times out). 0 means DefaultMaxQueue.
	MaxQueue int
	// MaxKeys bounds the keyspace (see EngineConfig.MaxKeys). 0 means DefaultMaxKeys.
	MaxKeys int
	// Persistence is the node's durability setting.
	Persistence Persistence
	// Hz is how many times per second (of the node's monotonic clock) the cron runs
	// active expiry and the everysec fsync check, as Redis's hz. 0 means DefaultHz.
	Hz int
	// EpochMs is the Unix time in ms at which the node's wall clock reads zero, so keys
	// get realistic absolute expiries (Redis refuses an expiry at or before 1970).
	// 0 means DefaultEpochMs.
	EpochMs int64
	// PreloadScripts puts the standard scripts in the script cache at every start, as a
	// deployment that runs SCRIPT LOAD on boot would. Without it a fresh, restarted or
	// promoted node answers EVALSHA with NOSCRIPT until some client sends EVAL, exactly
	// as Redis 7 does (it neither persists nor replicates scripts).
	PreloadScripts bool
}

// withDefaults validates c and fills in its defaults.
func (c NodeConfig) withDefaults() (NodeConfig, error) {
	switch {
	case c.ServiceTime < 0 || c.ServiceTime > MaxServiceTime:
		return c, sim.BadParam("service_time", c.ServiceTime, fmt.Sprintf("[0s, %v]", MaxServiceTime))
	case c.MaxQueue < 0 || c.MaxQueue > MaxQueueLimit:
		return c, sim.BadParam("max_queue", c.MaxQueue, fmt.Sprintf("[0, %d] (0 = %d)", MaxQueueLimit, DefaultMaxQueue))
	case c.MaxKeys < 0 || c.MaxKeys > MaxKeysLimit:
		return c, sim.BadParam("max_keys", c.MaxKeys, fmt.Sprintf("[0, %d] (0 = %d)", MaxKeysLimit, DefaultMaxKeys))
	case int(c.Persistence) >= len(persistenceNames):
		return c, sim.BadParam("persistence", int(c.Persistence), persistenceSet)
	case c.Hz < 0 || c.Hz > MaxHz:
		return c, sim.BadParam("hz", c.Hz, fmt.Sprintf("[0, %d] (0 = %d)", MaxHz, DefaultHz))
	case c.EpochMs < 0 || c.EpochMs > MaxEpochMs:
		return c, sim.BadParam("epoch_ms", c.EpochMs, fmt.Sprintf("[0, %d] (0 = %d)", int64(MaxEpochMs), int64(DefaultEpochMs)))
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = DefaultMaxQueue
	}
	if c.MaxKeys == 0 {
		c.MaxKeys = DefaultMaxKeys
	}
	if c.Hz == 0 {
		c.Hz = DefaultHz
	}
	if c.EpochMs == 0 {
		c.EpochMs = DefaultEpochMs
	}
	return c, nil
}

// Limits of a group's configuration.
const (
	MaxGroupNodes   = 16        // a master and up to 15 replicas
	MaxReplDelay    = time.Hour // replication delay and jitter
	MaxFailoverWait = time.Hour // detection timeout
	// DefaultMaxBacklog is the replication items one replica may have in flight when
	// GroupConfig leaves it zero. Overflowing it makes the replica resynchronise in
	// full, as Redis does when a replica's output buffer limit is hit.
	DefaultMaxBacklog = 1 << 16
	MaxBacklogLimit   = 1 << 22
	// MaxScheduledFaults bounds the faults scheduled on one group with At.
	MaxScheduledFaults = 1 << 16
	// MaxDowntime bounds how long a fault keeps a node down or paused.
	MaxDowntime = model.MaxDowntime
)

// GroupConfig configures a Group: one logical Redis endpoint made of a master and its
// replicas, with Sentinel-like failover.
type GroupConfig struct {
	// Name is the endpoint's name on the network and in traces. Its nodes are traced as
	// Name when it has one node, and as Name.0, Name.1, ... otherwise.
	Name string
	// Nodes are the processes; Nodes[0] starts as the master, the others as its replicas.
	// An empty list means one node with the zero NodeConfig.
	Nodes []NodeConfig
	// ReplicationDelay is how long a write takes from the master to a replica, plus a
	// uniform draw in [0, ReplicationJitter]; writes still arrive in order.
	ReplicationDelay  time.Duration
	ReplicationJitter time.Duration
	// FailoverAfter is how long the master must be seen down before the most up-to-date
	// reachable replica is promoted (Sentinel's down-after-milliseconds plus the election,
	// as one number). 0 disables failover.
	FailoverAfter time.Duration
	// MaxBacklog bounds each replica's replication items in flight; 0 means
	// DefaultMaxBacklog.
	MaxBacklog int
}

func (c GroupConfig) withDefaults() (GroupConfig, error) {
	switch {
	case c.Name == "":
		return c, sim.BadParam("name", `""`, "a non-empty endpoint name")
	case len(c.Nodes) > MaxGroupNodes:
		return c, sim.BadParam("nodes", len(c.Nodes), fmt.Sprintf("[1, %d] (0 = 1)", MaxGroupNodes))
	case c.ReplicationDelay < 0 || c.ReplicationDelay > MaxReplDelay:
		return c, sim.BadParam("replication_delay", c.ReplicationDelay, fmt.Sprintf("[0s, %v]", MaxReplDelay))
	case c.ReplicationJitter < 0 || c.ReplicationJitter > MaxReplDelay:
		return c, sim.BadParam("replication_jitter", c.ReplicationJitter, fmt.Sprintf("[0s, %v]", MaxReplDelay))
	case c.FailoverAfter < 0 || c.FailoverAfter > MaxFailoverWait:
		return c, sim.BadParam("failover_after", c.FailoverAfter, fmt.Sprintf("[0s, %v] (0 = never)", MaxFailoverWait))
	case c.MaxBacklog < 0 || c.MaxBacklog > MaxBacklogLimit:
		return c, sim.BadParam("max_backlog", c.MaxBacklog, fmt.Sprintf("[0, %d] (0 = %d)", MaxBacklogLimit, DefaultMaxBacklog))
	}
	if len(c.Nodes) == 0 {
		c.Nodes = []NodeConfig{{}}
	}
	if c.MaxBacklog == 0 {
		c.MaxBacklog = DefaultMaxBacklog
	}
	return c, nil
}
