package zookeeper

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Ensemble is a ZooKeeper ensemble: its servers, each a network endpoint named zk1, zk2, …
// with its own clock, and what their quorum messages carry by reference (the
// transactions' contents, the snapshots a new follower syncs from).
type Ensemble struct {
	s   *sim.Sim
	net *network.Net[model.Message]
	cfg Config

	servers []*Server
	eps     []network.Endpoint
	peerOf  []int32 // endpoint → server index, -1 for the clients

	// txns are the transactions' contents by zxid: a PROPOSAL names its zxid and the
	// follower reads the content here, as it would from the packet.
	txns   map[int64]txn
	pruned int64 // the transactions up to this zxid are forgotten

	// leaders records the leader of each epoch that ever established itself, for the
	// invariant that there is one per epoch.
	leaders map[uint32]int
	// committed is the highest zxid a leader committed: a leader established later must
	// hold it (a committed write survives a minority of crashes).
	committed int64
	stats     Stats
}

// Stats counts what an ensemble did.
type Stats struct {
	Elections   uint64 // leaders established
	Commits     uint64 // transactions committed by a leader
	Expired     uint64 // sessions the leader expired
	Lost        uint64 // client messages a server could not serve (not serving, stopped, unknown session)
	MaxEpoch    uint32
	StaleServed uint64 // reads served by a server that had not applied the newest committed transaction
	// Stale counts client messages of a connection the client had closed, which its TCP
	// link held through a partition: discarded on arrival, never served.
	Stale uint64
	// StaleQuorum counts quorum packets of an earlier epoch (a closed connection between
	// servers) discarded on arrival.
	StaleQuorum uint64
}

// txn is a transaction: a client's write as the leader proposed it. Its outcome (an
// error, the sequential name) is decided when a server applies it, the same on every
// server since they apply the same transactions in the same order.
type txn struct {
	zxid      int64
	op        zk.Op // OpConnect (createSession), OpClose (closeSession), OpCreate, OpDelete
	flags     zk.Flags
	version   int32
	path      string
	data      string
	session   int64
	timeoutMs int64
	origin    int    // the server the client is connected to
	tag       uint64 // the origin's request tag, 0 for the leader's own (expiry)
}

// New builds an ensemble of cfg.Servers servers on net, named zk1…zkN, all of them
// looking for a leader from the start. A lock service's registration is one call:
//
//	Servers: func(env knobs.ServiceEnv) ([]network.Endpoint, error) {
//		cfg := zookeeper.DefaultConfig() // and the knobs' values
//		cfg.ClockOf = env.Clock
//		e, err := zookeeper.New(env.Sim, env.Net, cfg)
//		if err != nil {
//			return nil, err
//		}
//		return e.Endpoints(), nil
//	}
//
// with the clients' connection NewSessionConn (the recipe addresses the ensemble as
// server 0; the session picks among all the endpoints).
func New(s *sim.Sim, net *network.Net[model.Message], cfg Config) (*Ensemble, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	e := &Ensemble{s: s, net: net, cfg: cfg, txns: map[int64]txn{}, leaders: map[uint32]int{}}
	for i := 0; i < cfg.Servers; i++ {
		name := "zk" + strconv.Itoa(i+1)
		var ck clock.Config
		switch {
		case i < len(cfg.Clocks):
			ck = cfg.Clocks[i]
		case cfg.ClockOf != nil:
			if ck, err = cfg.ClockOf(name); err != nil {
				return nil, fmt.Errorf("zookeeper: server %s: %w", name, err)
			}
		}
		clk, err := clock.New(ck, s.Rand(name+"/clock"))
		if err != nil {
			return nil, fmt.Errorf("zookeeper: server %s: %w", name, err)
		}
		sv := &Server{e: e, idx: i, name: name, clk: clk, up: true, tree: newTree(),
			conns: map[network.Endpoint]*cnxn{}, tags: map[uint64]pendingReq{}, opened: map[network.Endpoint]uint32{},
			dataW: map[string][]network.Endpoint{}, childW: map[string][]network.Endpoint{}}
		if sv.ep, err = net.AddEndpoint(name, sv); err != nil {
			return nil, fmt.Errorf("zookeeper: %w", err)
		}
		// Every connection to a server is TCP, its clients' and its peers': a partition
		// delays what it carries until the kernel's retransmission after the heal.
		if err := net.SetTCPEndpoint(sv.ep); err != nil {
			return nil, fmt.Errorf("zookeeper: %w", err)
		}
		e.servers = append(e.servers, sv)
		e.eps = append(e.eps, sv.ep)
	}
	e.peerOf = make([]int32, int(slices.Max(e.eps))+1)
	for i := range e.peerOf {
		e.peerOf[i] = -1
	}
	for i, ep := range e.eps {
		e.peerOf[ep] = int32(i)
	}
	for _, sv := range e.servers {
		if err := sv.look(s.Now(), "start"); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Servers returns the servers, by index.
func (e *Ensemble) Servers() []*Server { return e.servers }

// Server returns server i (0-based; its name is zk<i+1>).
func (e *Ensemble) Server(i int) *Server { return e.servers[i] }

// Endpoints returns the servers' endpoints, by index: the addresses a session's client
// is given.
func (e *Ensemble) Endpoints() []network.Endpoint { return slices.Clone(e.eps) }

// Config returns the configuration with its defaults filled in.
func (e *Ensemble) Config() Config { return e.cfg }

// Stats returns the ensemble's counters.
func (e *Ensemble) Stats() Stats { return e.stats }

// Leader returns the index of the server leading and serving, or -1 when none is.
func (e *Ensemble) Leader() int {
	for i, sv := range e.servers {
		if sv.up && sv.role == roleLeading && sv.serving {
			return i
		}
	}
	return -1
}

// EpochLeaders returns, for every epoch a leader established, that leader's index.
func (e *Ensemble) EpochLeaders() map[uint32]int {
	out := make(map[uint32]int, len(e.leaders))
	for k, v := range e.leaders {
		out[k] = v
	}
	return out
}

// Committed returns the contents of the committed transaction zxid, as the leader
// proposed it: its op and path, and whether it is known.
func (e *Ensemble) Committed(zxid int64) (op zk.Op, path string, ok bool) {
	x, ok := e.txns[zxid]
	if !ok {
		return 0, "", false
	}
	return x.op, x.path, true
}

// prune forgets the transactions every server has in its snapshot: no restart replays
// them and no follower will be sent them.
func (e *Ensemble) prune() {
	low := e.servers[0].snapZxid
	for _, sv := range e.servers[1:] {
		low = min(low, sv.snapZxid)
	}
	if low <= e.pruned {
		return
	}
	for z := range e.txns {
		if z <= low {
			delete(e.txns, z)
		}
	}
	e.pruned = low
}

// Transactions returns how many transactions' contents the ensemble keeps.
func (e *Ensemble) Transactions() int { return len(e.txns) }

func (e *Ensemble) peer(from network.Endpoint) int {
	if int(from) < len(e.peerOf) {
		return int(e.peerOf[from])
	}
	return -1
}

func (e *Ensemble) established(epoch uint32, leader int) {
	if invariant.Enabled {
		prev, ok := e.leaders[epoch]
		invariant.Check(!ok || prev == leader, "zookeeper: two leaders in epoch %d: zk%d and zk%d", epoch, prev+1, leader+1)
		last := e.servers[leader].tree.lastZxid
		invariant.Check(last >= e.committed, "zookeeper: zk%d leads epoch %d without committed zxid %#x (it has %#x)",
			leader+1, epoch, e.committed, last)
	}
	e.leaders[epoch] = leader
	e.stats.Elections++
	e.stats.MaxEpoch = max(e.stats.MaxEpoch, epoch)
}

// quorum reports whether the servers in mask make a majority.
func (e *Ensemble) quorum(mask uint32) bool {
	n := 0
	for m := mask; m != 0; m &= m - 1 {
		n++
	}
	return n >= e.cfg.Quorum()
}

// timeout is the ensemble's clamp of a session timeout asked for, in ms.
func (e *Ensemble) timeoutMs(asked time.Duration) int64 {
	return int64(e.cfg.ClampTimeout(asked) / time.Millisecond)
}
