package knobs

import (
	"fmt"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/zookeeper"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/curator"
	"github.com/redlock-sim/redlock-sim/redlock/hybrid"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
)

// This file registers the hybrid lock (algorithm hybrid): Redlock on the `nodes` Redis
// masters first, Curator's mutex on a ZooKeeper ensemble of zk_servers servers when Redis
// gives the acquire up. The Redis part reads Redlock's knobs, the ZooKeeper part the zk_*
// and recipe knobs (and retry_delay and tries, as curator does); its service is the
// ensemble beside the Redis masters, each client's connection split between the
// `connection` knob's and a ZooKeeper session.

// hybridAlgorithm is the registration of the hybrid lock, and through it of its two
// services.
var hybridAlgorithm = Algorithm{Name: "hybrid", Service: &hybridService,
	Fences: func(cfg *Config) bool { return cfg.ZK.Token != curator.NoToken },
	Help: "the seeds' hybrid lock (package redlock/hybrid): Redlock on the nodes Redis masters first and, when Redis " +
		"gives the acquire up, Curator 5.4's InterProcessMutex on a ZooKeeper ensemble of zk_servers servers " +
		"\"as arbiter\"; release goes to whichever holds. The Redis part reads Redlock's knobs (its fencing " +
		"token only with fencing), the ZooKeeper part the zk_* and recipe knobs, retry_delay and tries as " +
		"curator does, and carries the token fence_token asks for (none by default); a lock taken through ZooKeeper is acquired with reason escalated",
	New: func(cfg *Config) (lock.Factory, error) {
		if err := cfg.ZK.check(cfg.ZK.Servers); err != nil {
			return nil, err
		}
		rf, err := redlock.Factory(cfg.Lock)
		if err != nil {
			return nil, err
		}
		zf, err := curator.Factory(cfg.CuratorConfig())
		if err != nil {
			return nil, err
		}
		return hybrid.Factory(hybrid.Config{Masters: cfg.Lock.Effective().Nodes, Redis: rf, ZooKeeper: zf})
	}}

// hybridService is the ZooKeeper ensemble beside the Redis masters: zk_servers servers
// zk1…zkK after redis1…redisN, and each client's connection the `connection` knob's to the
// masters and a ZooKeeper session to the ensemble, its messages shown in RESP or
// ZooKeeper's words by their side (model.SplitProtocol).
var hybridService = Service{Name: "zookeeper", ServerPrefix: "zk", Protocol: model.SplitProtocol{A: resp.Protocol{}, B: zk.Protocol{}},
	ConnFor: func(cfg *Config) model.NewConn {
		return model.SplitConn(cfg.Connection.Conn, cfg.Lock.Effective().Nodes,
			zookeeper.NewSessionConn(zookeeper.SessionConfig{Timeout: cfg.ZK.SessionTimeout}))
	},
	Servers: zookeeperService.Servers,
	Count:   func(cfg *Config) int { return cfg.ZK.Servers }}

// hybridKnobs are the hybrid lock's own knobs.
func hybridKnobs() []knob {
	return []knob{intKnob("zk_servers", "zookeeper", "the hybrid lock's ZooKeeper ensemble: its servers, after the nodes Redis masters (curator's ensemble is nodes)",
		1, zookeeper.MaxServers, "", func(c *Config) *int { return &c.ZK.Servers })}
}

// hybridInert returns why a hybrid knob cannot change a run of c ("" when it can, or
// when name is not one).
func (c *Config) hybridInert(name string) string {
	if name != "zk_servers" || c.Algorithm == hybridAlgorithm.Name {
		return ""
	}
	return fmt.Sprintf("it is the size of the hybrid lock's ZooKeeper ensemble, and algorithm %s is not hybrid (curator's ensemble is nodes; set algorithm=hybrid)", c.Algorithm)
}
