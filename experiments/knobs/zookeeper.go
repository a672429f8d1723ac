package knobs

import (
	"fmt"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/zookeeper"
	"github.com/redlock-sim/redlock-sim/redlock/curator"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

// This file registers Curator's InterProcessMutex (algorithm curator) and the ZooKeeper
// ensemble it runs on (the service zookeeper), with their knobs: zoo.cfg's (tickTime,
// initLimit, syncLimit, min/maxSessionTimeout, ZooKeeper's defaults) and the recipe's
// (Curator's session and connection timeouts, acquire's limit, what the application does
// at SUSPENDED, Curator's recipe or the naive one). The `nodes` knob is the ensemble's
// size; retry_delay and tries are ExponentialBackoffRetry's baseSleepTimeMs and
// maxRetries + 1.

// ZooKeeper holds the knobs of the ZooKeeper ensemble and of Curator's recipe.
type ZooKeeper struct {
	TickTime             time.Duration
	InitLimit, SyncLimit int
	Fsync                time.Duration // each transaction log fsync (zk_fsync)
	// MinSessionTimeout and MaxSessionTimeout: 0 is ZooKeeper's default, 2 and 20 ticks.
	MinSessionTimeout, MaxSessionTimeout time.Duration
	SessionTimeout                       time.Duration // what Curator asks for
	ConnectionTimeout                    time.Duration
	AcquireTimeout                       time.Duration // 0: acquire() without a limit
	OnSuspended                          curator.OnSuspended
	Recipe                               curator.Recipe
	Token                                curator.Token // the application's fencing token (fence_token)
	// Servers is the hybrid lock's ensemble size (zk_servers); curator's is `nodes`.
	Servers int
}

// defaultZooKeeper returns ZooKeeper's and Curator's defaults.
func defaultZooKeeper() ZooKeeper {
	d := zookeeper.DefaultConfig()
	return ZooKeeper{TickTime: d.TickTime, InitLimit: d.InitLimit, SyncLimit: d.SyncLimit, Fsync: d.Fsync,
		SessionTimeout: 60 * time.Second, ConnectionTimeout: 15 * time.Second, Servers: 3}
}

// Limits of the ZooKeeper knobs: generous, but each a bound on a run's timers.
const (
	MaxTickTime = time.Minute
	MaxLimit    = 1000 // initLimit, syncLimit, in ticks
	MaxZKWait   = time.Hour
)

// ensemble returns the ensemble's configuration for n servers.
func (z *ZooKeeper) ensemble(n int) zookeeper.Config {
	cfg := zookeeper.DefaultConfig()
	cfg.Servers, cfg.TickTime, cfg.InitLimit, cfg.SyncLimit, cfg.Fsync = n, z.TickTime, z.InitLimit, z.SyncLimit, z.Fsync
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = z.MinSessionTimeout, z.MaxSessionTimeout
	return cfg
}

// bounds returns the session timeouts the ensemble grants, its defaults filled in.
func (z *ZooKeeper) bounds() (lo, hi time.Duration) {
	lo, hi = z.MinSessionTimeout, z.MaxSessionTimeout
	if lo == 0 {
		lo = 2 * z.TickTime
	}
	if hi == 0 {
		hi = 20 * z.TickTime
	}
	return lo, hi
}

// check refuses what single knobs cannot: session bounds that contradict the tick or
// each other, and an ensemble the model cannot build.
func (z *ZooKeeper) check(servers int) error {
	lo, hi := z.bounds()
	switch {
	case servers > zookeeper.MaxServers:
		return sim.BadParam("nodes", servers, fmt.Sprintf("[1, %d] with algorithm curator: the ZooKeeper ensemble's servers (3 or 5 in practice)", zookeeper.MaxServers))
	case z.MinSessionTimeout != 0 && z.MinSessionTimeout < z.TickTime:
		return sim.BadParam("zk_min_session_timeout", z.MinSessionTimeout, fmt.Sprintf("at least zk_tick_time (%v), or 0s for 2 × zk_tick_time", z.TickTime))
	case hi < lo:
		return sim.BadParam("zk_max_session_timeout", hi, fmt.Sprintf("at least the minimum session timeout (%v), or 0s for 20 × zk_tick_time", lo))
	}
	return nil
}

// CuratorConfig returns the recipe's configuration: the session timeout Curator asks for,
// clamped as the ensemble will (its negotiated timeout, which Curator's LOST counts), and
// ExponentialBackoffRetry(retry_delay, tries − 1).
func (c *Config) CuratorConfig() curator.Config {
	lo, hi := c.ZK.bounds()
	return curator.Config{SessionTimeout: min(max(c.ZK.SessionTimeout, lo), hi),
		ConnectionTimeout: c.ZK.ConnectionTimeout, BaseSleep: c.Lock.RetryDelay,
		MaxRetries: min(c.Lock.Tries-1, curator.MaxRetries), AcquireTimeout: c.ZK.AcquireTimeout,
		OnSuspended: c.ZK.OnSuspended, Recipe: c.ZK.Recipe, Token: c.ZK.Token}
}

// curatorAlgorithm is the registration of Curator's mutex, and through it the ensemble.
var curatorAlgorithm = Algorithm{Name: "curator", Service: &zookeeperService,
	Fences: func(cfg *Config) bool { return cfg.ZK.Token != curator.NoToken },
	Ignores: []string{"ttl", "drift_factor", "drift_pad", "retry_jitter", "variant", "mode", "timeout", "timeout_factor",
		"context_factor", "extend_timeout", "release_timeout", "fail_fast", "max_extensions", "set_nx_on_extend",
		"extend_every", "fencing", "dialect", "connection", "validity_clock", "replicas", "replication_delay",
		"replication_jitter", "failover_after", "persistence", "service_time", "hz", "preload_scripts"},
	Help: "Apache Curator 5.4's InterProcessMutex (package redlock/curator) on a ZooKeeper 3.8 ensemble of nodes " +
		"servers (model/zookeeper): ephemeral sequential nodes, a watch on the predecessor, Curator's " +
		"connection states; the czxid or the sequence as fencing token when fence_token asks for one; it reads the zk_* and recipe knobs, retry_delay " +
		"and tries (ExponentialBackoffRetry(retry_delay, tries − 1))",
	New: func(cfg *Config) (lock.Factory, error) {
		if err := cfg.ZK.check(cfg.Lock.Effective().Nodes); err != nil {
			return nil, err
		}
		return curator.Factory(cfg.CuratorConfig())
	}}

// zookeeperService is the ZooKeeper ensemble: nodes servers zk1…zkN, each a process the
// world's faults reach, and each client's connection a ZooKeeper session asking for
// session_timeout.
var zookeeperService = Service{Name: "zookeeper", ServerPrefix: "zk", Protocol: zk.Protocol{},
	ConnFor: func(cfg *Config) model.NewConn {
		return zookeeper.NewSessionConn(zookeeper.SessionConfig{Timeout: cfg.ZK.SessionTimeout})
	},
	Servers: func(env ServiceEnv) ([]Server, error) {
		if err := env.Config.ZK.check(env.Servers); err != nil {
			return nil, err
		}
		zc := env.Config.ZK.ensemble(env.Servers)
		zc.ClockOf = func(name string) (clock.Config, error) { return env.Clock(name) }
		e, err := zookeeper.New(env.Sim, env.Net, zc)
		if err != nil {
			return nil, err
		}
		out := make([]Server, 0, env.Servers)
		for _, sv := range e.Servers() {
			out = append(out, Server{Endpoint: sv.Endpoint(), Process: zkProcess{sv: sv, s: env.Sim}})
		}
		return out, nil
	}}

// zkProcess is a ZooKeeper server as the world's process faults reach it
// (model.ServerProcess): each fault calls the server's own (Crash, Kill, Shutdown,
// Restart, Stall, Thaw), which write the server's records, and writes the fault kind's
// record beside them for the narration and the timeline (a restart's is the server's).
type zkProcess struct {
	sv *zookeeper.Server
	s  *sim.Sim
}

func (p zkProcess) Name() string        { return p.sv.Name() }
func (p zkProcess) Clock() *clock.Clock { return p.sv.Clock() }
func (p zkProcess) Up() bool            { return p.sv.Up() }
func (p zkProcess) Paused() bool        { return p.sv.Paused() }

func (p zkProcess) Stop(_ sim.Time, how model.FaultKind) {
	d, ok := how.Desc()
	if !p.sv.Up() || !ok || d.Effect != model.EffectStop {
		return
	}
	p.s.Trace(p.sv.Name(), d.Record)
	switch how {
	case model.FaultKill:
		p.sv.Kill()
	case model.FaultShutdown:
		p.sv.Shutdown()
	default:
		p.sv.Crash()
	}
}

func (p zkProcess) Start(sim.Time) { p.sv.Restart() } // writes model.RecRestart itself

func (p zkProcess) Stall(sim.Time) {
	if p.sv.Up() && !p.sv.Paused() {
		p.s.Trace(p.sv.Name(), model.RecPause)
		p.sv.Stall()
	}
}

func (p zkProcess) Thaw(sim.Time) {
	if p.sv.Up() && p.sv.Paused() {
		p.s.Trace(p.sv.Name(), model.RecResume)
		p.sv.Thaw()
	}
}

// zkKnobs are the ensemble's and the recipe's knobs.
func zkKnobs() []knob {
	waits := func(name, help, note string, lo time.Duration, field func(*ZooKeeper) *time.Duration) knob {
		return durKnob(name, "zookeeper", help, lo, MaxZKWait, note, func(c *Config) *time.Duration { return field(&c.ZK) })
	}
	return []knob{
		durKnob("zk_tick_time", "zookeeper", "zoo.cfg tickTime: the unit of the ensemble's limits and of session expiry's buckets",
			time.Millisecond, MaxTickTime, "", func(c *Config) *time.Duration { return &c.ZK.TickTime }),
		intKnob("zk_init_limit", "zookeeper", "zoo.cfg initLimit: ticks a new leader waits for a quorum to sync", 1, MaxLimit, "",
			func(c *Config) *int { return &c.ZK.InitLimit }),
		intKnob("zk_sync_limit", "zookeeper", "zoo.cfg syncLimit: ticks of silence after which a leader and a follower give each other up", 1, MaxLimit, "",
			func(c *Config) *int { return &c.ZK.SyncLimit }),
		durKnob("zk_fsync", "zookeeper", "how long each server's transaction log fsync takes: a server acknowledges a proposal only after it (writes waiting meanwhile share the next one)",
			0, time.Second, "", func(c *Config) *time.Duration { return &c.ZK.Fsync }),
		waits("zk_min_session_timeout", "zoo.cfg minSessionTimeout: a shorter session asked for is raised to it", " (0 = 2 × zk_tick_time)", 0,
			func(z *ZooKeeper) *time.Duration { return &z.MinSessionTimeout }),
		waits("zk_max_session_timeout", "zoo.cfg maxSessionTimeout: a longer session asked for is cut to it", " (0 = 20 × zk_tick_time)", 0,
			func(z *ZooKeeper) *time.Duration { return &z.MaxSessionTimeout }),
		waits("session_timeout", "the session timeout Curator asks for (CuratorFrameworkFactory's 60s); the ensemble clamps it", "", time.Millisecond,
			func(z *ZooKeeper) *time.Duration { return &z.SessionTimeout }),
		waits("connection_timeout", "how long Curator lets a request wait for a connection before it fails with CONNECTIONLOSS (15s)", "", time.Millisecond,
			func(z *ZooKeeper) *time.Duration { return &z.ConnectionTimeout }),
		waits("acquire_timeout", "Curator's acquire(time, unit): give up the wait and delete the node after this long", " (0 = acquire(), no limit)", 0,
			func(z *ZooKeeper) *time.Duration { return &z.AcquireTimeout }),
		enumKnob("on_suspended", "what the application does with a held lock when Curator says SUSPENDED: carry on until LOST, or stop at once as Curator recommends",
			curator.OnSuspendeds(), func(c *Config) *curator.OnSuspended { return &c.ZK.OnSuspended }),
		enumKnob("fence_token", "the fencing token the application takes from its lock node and sends with its writes: none (InterProcessMutex hands out none), the node's czxid, or its sequence number (plus one)",
			curator.Tokens(), func(c *Config) *curator.Token { return &c.ZK.Token }),
		enumKnob("recipe", "Curator's recipe (each waiter watches its predecessor), or the naive one (every waiter watches the lock's children: the herd)",
			curator.Recipes(), func(c *Config) *curator.Recipe { return &c.ZK.Recipe }),
	}
}

// enumKnob is a knob whose values are an enum's names.
func enumKnob[E interface {
	comparable
	fmt.Stringer
}](name, help string, all []E, field func(*Config) *E) knob {
	names := enumNames(all)
	return knob{Param: Param{Name: name, Group: "zookeeper", Unit: "enum", Allowed: oneOf(names), Help: help},
		set: func(c *Config, v string) error {
			for _, e := range all {
				if e.String() == v {
					*field(c) = e
					return nil
				}
			}
			return asValueError(name, v, oneOf(names), unknownChoice(v, names))
		},
		get: func(c *Config) string { return (*field(c)).String() }}
}

// zkInert returns why a ZooKeeper knob cannot change a run of c ("" when it can, or
// when name is not one).
func (c *Config) zkInert(name string) string {
	if a, err := LookupAlgorithm(c.Algorithm); err == nil && slices.Contains(a.Ignores, name) {
		return fmt.Sprintf("algorithm %s never reads it: it is Redlock's or the Redis servers', and %s locks with a ZooKeeper session (its knobs are the zookeeper group's, retry_delay and tries)", a.Name, a.Name)
	}
	for _, k := range zkKnobs() {
		if k.Name != name {
			continue
		}
		a, err := LookupAlgorithm(c.Algorithm)
		if err == nil && a.Service != &zookeeperService && a.Service != &hybridService {
			return fmt.Sprintf("it tunes the ZooKeeper ensemble or Curator's recipe, and algorithm %s runs no ZooKeeper (set client=curator, or algorithm=hybrid)", a.Name)
		}
		return ""
	}
	return ""
}
