package zookeeper

import (
	"fmt"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Config is an ensemble's configuration: zoo.cfg's timing knobs with ZooKeeper's
// defaults, the log's fsync latency, the election's timers and each server's clock.
type Config struct {
	Servers   int           // ensemble size; 3 or 5 in practice (1 to MaxServers)
	TickTime  time.Duration // zoo.cfg tickTime: the unit of every other limit
	InitLimit int           // ticks a new leader waits for a quorum to sync (NEWLEADER acks)
	SyncLimit int           // ticks a follower may stay silent before the leader drops it, and the leader before a follower gives it up
	// MinSessionTimeout and MaxSessionTimeout bound a session's timeout; zero means
	// ZooKeeper's defaults, 2 and 20 ticks.
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// Fsync is how long a transaction log's fsync takes; a server acknowledges a proposal
	// only after it, and one fsync runs at a time.
	Fsync time.Duration
	// FinalizeWait and MaxNotificationInterval are FastLeaderElection's: an election round
	// decides FinalizeWait after it starts, and a round that finds no quorum tries again
	// after twice the wait, up to MaxNotificationInterval.
	FinalizeWait, MaxNotificationInterval time.Duration
	// Clocks are the servers' clocks (drift, steps, slews), by index. A server past the
	// end gets ClockOf(its name) when ClockOf is set (a world's knobs.ServiceEnv.Clock,
	// which draws every server's clock alike), an ideal clock otherwise.
	Clocks  []clock.Config
	ClockOf func(name string) (clock.Config, error)
	// SnapCount is how many transactions a server logs before it snapshots its tree
	// (zoo.cfg's snapCount); the ensemble forgets a transaction once every server has it
	// in a snapshot, which bounds a long run's memory.
	SnapCount int
	// MaxQueue bounds the messages a stalled server keeps to read when it thaws (its
	// sockets' buffers); more are dropped.
	MaxQueue int
}

// MaxServers bounds an ensemble's size (the acknowledgement sets are bit masks).
const MaxServers = 31

// DefaultConfig returns ZooKeeper's defaults (tickTime 2000 ms, initLimit 10, syncLimit
// 5, sessions of 2 to 20 ticks, FastLeaderElection's 200 ms and 60 s, snapCount 100000)
// for three servers whose log fsyncs take 2 ms.
func DefaultConfig() Config {
	return Config{Servers: 3, TickTime: 2 * time.Second, InitLimit: 10, SyncLimit: 5, Fsync: 2 * time.Millisecond,
		FinalizeWait: 200 * time.Millisecond, MaxNotificationInterval: 60 * time.Second, MaxQueue: 4096,
		SnapCount: 100000}
}

// withDefaults fills the zero fields of c with DefaultConfig's, the session bounds with
// 2 and 20 ticks, and checks the result.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.Servers == 0 {
		c.Servers = d.Servers
	}
	if c.TickTime == 0 {
		c.TickTime = d.TickTime
	}
	if c.InitLimit == 0 {
		c.InitLimit = d.InitLimit
	}
	if c.SyncLimit == 0 {
		c.SyncLimit = d.SyncLimit
	}
	if c.FinalizeWait == 0 {
		c.FinalizeWait = d.FinalizeWait
	}
	if c.MaxNotificationInterval == 0 {
		c.MaxNotificationInterval = d.MaxNotificationInterval
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = d.MaxQueue
	}
	if c.SnapCount == 0 {
		c.SnapCount = d.SnapCount
	}
	if c.MinSessionTimeout == 0 {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if c.MaxSessionTimeout == 0 {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	return c, c.validate()
}

func (c Config) validate() error {
	switch {
	case c.Servers < 1 || c.Servers > MaxServers:
		return sim.BadParam("zk_servers", c.Servers, fmt.Sprintf("1 to %d", MaxServers))
	case c.TickTime < time.Millisecond:
		return sim.BadParam("zk_tick", c.TickTime, "at least 1ms")
	case c.InitLimit < 1:
		return sim.BadParam("zk_init_limit", c.InitLimit, "at least 1 tick")
	case c.SyncLimit < 1:
		return sim.BadParam("zk_sync_limit", c.SyncLimit, "at least 1 tick")
	case c.MinSessionTimeout < c.TickTime:
		return sim.BadParam("zk_min_session_timeout", c.MinSessionTimeout, fmt.Sprintf("at least one tick (%v)", c.TickTime))
	case c.MaxSessionTimeout < c.MinSessionTimeout:
		return sim.BadParam("zk_max_session_timeout", c.MaxSessionTimeout,
			fmt.Sprintf("at least zk_min_session_timeout (%v)", c.MinSessionTimeout))
	case c.Fsync < 0:
		return sim.BadParam("zk_fsync", c.Fsync, "0s or more")
	case c.FinalizeWait < 0 || c.MaxNotificationInterval < c.FinalizeWait:
		return sim.BadParam("zk_max_notification_interval", c.MaxNotificationInterval,
			fmt.Sprintf("at least the finalize wait (%v)", c.FinalizeWait))
	case len(c.Clocks) > c.Servers:
		return sim.BadParam("zk_clocks", len(c.Clocks), fmt.Sprintf("at most one per server (%d)", c.Servers))
	case c.SnapCount < 1:
		return sim.BadParam("zk_snap_count", c.SnapCount, "at least 1")
	case c.MaxQueue < 1:
		return sim.BadParam("zk_max_queue", c.MaxQueue, "at least 1")
	}
	return nil
}

// Quorum returns how many servers make a majority of the ensemble.
func (c Config) Quorum() int { return c.Servers/2 + 1 }

// ClampTimeout returns the session timeout a server grants for one asked for
// (ZooKeeperServer.processConnectRequest: raised to the minimum, cut to the maximum).
func (c Config) ClampTimeout(asked time.Duration) time.Duration {
	return min(max(asked, c.MinSessionTimeout), c.MaxSessionTimeout)
}
