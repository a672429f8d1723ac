package zookeeper

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

// look makes the server look for a leader: it stops serving (closing its clients'
// connections, as a ZooKeeperServer that shuts down does) and starts an election round
// FinalizeWait from now.
func (sv *Server) look(now sim.Time, reason string) error {
	s := sv.e.s
	if sv.role != roleLooking || sv.serving {
		sv.closeClients(now)
	}
	for _, id := range []sim.EventID{sv.tickEv, sv.expireEv, sv.initEv, sv.electEv} {
		s.Cancel(id)
	}
	sv.tickEv, sv.expireEv, sv.initEv, sv.electEv = 0, 0, 0, 0
	sv.role, sv.serving, sv.leader = roleLooking, false, -1
	sv.resetRole()
	sv.stats.Elections++
	s.Trace(sv.name, RecLooking, sim.Str("reason", reason), sim.Int("zxid", sv.lastLogged()))
	sv.notTimeout = sv.e.cfg.FinalizeWait
	sv.electEv = sv.after(now, sv.notTimeout, evElect)
	return nil
}

func (sv *Server) lookOrFail(now sim.Time, reason string) {
	if err := sv.look(now, reason); err != nil {
		sv.e.s.Fail(err)
	}
}

// lastLogged is the zxid of the last transaction the server has written to its log (on
// disk or under its fsync): its vote in an election.
func (sv *Server) lastLogged() int64 {
	z := sv.logTail()
	for _, q := range [][]fsyncItem{sv.fsyncing, sv.fsyncQ} {
		for _, it := range q {
			if !it.newLeader {
				z = max(z, it.zxid)
			}
		}
	}
	return z
}

// logTail is the zxid of the last transaction on disk (in the log, or the snapshot).
func (sv *Server) logTail() int64 {
	if n := len(sv.log); n > 0 {
		return sv.log[n-1]
	}
	return sv.snapZxid
}

// appendLog puts z on disk after the last transaction there, and snapshots the tree once
// the log has SnapCount transactions since the last snapshot (ZooKeeper's snapCount),
// letting the ensemble forget the transactions every server has in a snapshot.
func (sv *Server) appendLog(z int64) {
	if z <= sv.logTail() {
		return
	}
	sv.log = append(sv.log, z)
	if len(sv.log) < sv.e.cfg.SnapCount || sv.tree == nil {
		return
	}
	sv.snapTree, sv.snapZxid = sv.tree.clone(), sv.tree.lastZxid
	i := 0
	for i < len(sv.log) && sv.log[i] <= sv.snapZxid {
		i++
	}
	sv.log = slices.Clone(sv.log[i:])
	sv.e.prune()
}

// reachable returns the servers this one can exchange votes with now: running, not
// stalled, and connected both ways (itself included).
func (sv *Server) reachable() uint32 {
	mask := uint32(1) << sv.idx
	for j, o := range sv.e.servers {
		if j == sv.idx || !o.up || o.paused {
			continue
		}
		if sv.e.net.Connected(sv.ep, o.ep) && sv.e.net.Connected(o.ep, sv.ep) {
			mask |= 1 << j
		}
	}
	return mask
}

// elect is an election round's decision, FastLeaderElection simplified: the votes are
// read from the reachable servers' state instead of exchanged as notifications. A server
// that finds a leader follows it; a quorum of looking servers elects the one with the
// highest (last logged zxid, id); with no quorum the round is tried again after twice
// the wait, up to MaxNotificationInterval.
func (sv *Server) elect(now sim.Time) {
	reach := sv.reachable()
	for j, o := range sv.e.servers {
		if reach&(1<<j) != 0 && j != sv.idx && o.role == roleLeading {
			sv.follow(now, j)
			return
		}
	}
	lookers := uint32(0)
	best := -1
	for j, o := range sv.e.servers {
		if reach&(1<<j) == 0 || o.role != roleLooking {
			continue
		}
		lookers |= 1 << j
		if best < 0 || o.lastLogged() > sv.e.servers[best].lastLogged() ||
			o.lastLogged() == sv.e.servers[best].lastLogged() && j > best {
			best = j
		}
	}
	switch {
	case sv.e.quorum(lookers) && best == sv.idx:
		sv.lead(now, lookers)
	case sv.e.quorum(lookers):
		// Another server wins: wait for its NEWLEADER, and look again if none comes.
		sv.electEv = sv.after(now, sv.e.cfg.FinalizeWait, evElect)
	default:
		sv.notTimeout = min(2*sv.notTimeout, sv.e.cfg.MaxNotificationInterval)
		sv.electEv = sv.after(now, sv.notTimeout, evElect)
	}
}

// follow asks leader j to take this server on (FOLLOWERINFO); its NEWLEADER follows.
func (sv *Server) follow(now sim.Time, j int) {
	sv.role, sv.leader, sv.serving = roleFollowing, j, false
	sv.heard = sv.clk.Mono(now)
	sv.send(j, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpFollowInfo)}})
	sv.tickEv = sv.after(now, sv.e.cfg.TickTime/2, evTick)
}

// lead makes the server the leader of a new epoch among lookers: it commits its whole
// log (ZAB's new leader's history), sends NEWLEADER to the others and waits initLimit
// ticks for a quorum of them to sync.
func (sv *Server) lead(now sim.Time, lookers uint32) {
	epoch := sv.acceptedEpoch
	for j, o := range sv.e.servers {
		if lookers&(1<<j) != 0 {
			epoch = max(epoch, o.acceptedEpoch)
		}
	}
	epoch++
	sv.acceptedEpoch = epoch
	sv.role, sv.leader, sv.serving = roleLeading, sv.idx, false
	sv.flushLog()
	for _, z := range sv.log {
		if z > sv.tree.lastZxid {
			if x, ok := sv.e.txns[z]; ok {
				_, _, sv.changes = sv.tree.apply(&x, sv.changes[:0])
			}
		}
	}
	sv.counter = 0
	sv.peers = make([]peerState, len(sv.e.servers))
	sv.acked = 1 << sv.idx
	sv.e.s.Trace(sv.name, RecLeading, sim.Int("epoch", int64(epoch)), sim.Int("zxid", sv.tree.lastZxid))
	mono := sv.clk.Mono(now)
	for j := range sv.e.servers {
		sv.peers[j].heard = mono
		if j != sv.idx && lookers&(1<<j) != 0 {
			sv.sendNewLeader(j)
		}
	}
	sv.initEv = sv.after(now, time.Duration(sv.e.cfg.InitLimit)*sv.e.cfg.TickTime, evInit)
	sv.tickEv = sv.after(now, sv.e.cfg.TickTime/2, evTick)
	sv.establishIfQuorum(now)
}

// flushLog completes the writes under or waiting for fsync: a new leader writes its
// history before it leads.
func (sv *Server) flushLog() {
	sv.e.s.Cancel(sv.fsyncEv)
	sv.fsyncEv = 0
	for _, q := range [][]fsyncItem{sv.fsyncing, sv.fsyncQ} {
		for _, it := range q {
			if !it.newLeader {
				sv.appendLog(it.zxid)
			}
		}
	}
	sv.fsyncing, sv.fsyncQ = nil, nil
}

func (sv *Server) sendNewLeader(j int) {
	out := make([]int64, len(sv.outstanding))
	for i, p := range sv.outstanding {
		out[i] = p.zxid
	}
	last := sv.tree.lastZxid
	if n := len(out); n > 0 {
		last = out[n-1]
	}
	sv.peers[j].snap = &snapshot{epoch: sv.acceptedEpoch, tree: sv.tree.clone(), outstanding: out, last: last}
	sv.peers[j].forwarding = true
	sv.send(j, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpNewLeader),
		Int: zk.Zxid(sv.acceptedEpoch, 0)}})
}

// establishIfQuorum starts serving once a quorum acknowledged NEWLEADER: every session
// in the tree is tracked afresh, as a new leader's session tracker starts.
func (sv *Server) establishIfQuorum(now sim.Time) {
	if sv.serving || !sv.e.quorum(sv.acked) {
		return
	}
	sv.serving = true
	sv.currentEpoch = sv.acceptedEpoch
	sv.e.s.Cancel(sv.initEv)
	sv.initEv = 0
	sv.e.established(sv.acceptedEpoch, sv.idx)
	sv.e.s.Trace(sv.name, RecEstablished, sim.Int("epoch", int64(sv.acceptedEpoch)), sim.Int("followers", int64(popcount(sv.acked)-1)))
	for j := range sv.e.servers {
		if j != sv.idx && sv.acked&(1<<j) != 0 {
			sv.send(j, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpUpToDate)}})
		}
	}
	mono := sv.clk.Mono(now)
	for _, id := range sv.tree.Sessions() {
		sv.track(mono, id, sv.tree.sessions[id], -1)
	}
	sv.nextExpiry = roundToNextInterval(mono, sv.e.cfg.TickTime)
	sv.armExpirer(now)
}

func popcount(m uint32) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// quorumMsg handles a message from another server.
func (sv *Server) quorumMsg(now sim.Time, j int, m *model.Message) {
	p := &m.Body
	op := zk.OpOf(p)
	if m.Conn != sv.acceptedEpoch && op != zk.OpNewLeader && op != zk.OpFollowInfo {
		// A packet of an earlier epoch's connection, which a partition held: that
		// connection is closed. NEWLEADER checks its epoch itself, and FOLLOWERINFO comes
		// from a server that has not accepted this one yet.
		sv.e.stats.StaleQuorum++
		return
	}
	if op == zk.OpEOF {
		sv.peerClosed(now, j)
		return
	}
	if sv.role == roleLeading {
		sv.peers[j].heard = sv.clk.Mono(now)
		sv.leaderMsg(now, j, m, op)
		return
	}
	if op == zk.OpNewLeader {
		sv.newLeader(now, j, zk.Epoch(p.Int))
		return
	}
	if sv.role != roleFollowing || j != sv.leader {
		return // a leader this server does not follow (an old epoch's)
	}
	sv.heard = sv.clk.Mono(now)
	switch op {
	case zk.OpProposal:
		sv.proposal(now, p.Int)
	case zk.OpCommit:
		sv.commitTo = max(sv.commitTo, p.Int)
		sv.applyCommitted(now)
	case zk.OpUpToDate:
		sv.serving = true
		sv.currentEpoch = sv.acceptedEpoch
		sv.e.s.Trace(sv.name, RecFollowing, sim.Str("leader", sv.e.servers[j].name), sim.Int("epoch", int64(sv.acceptedEpoch)))
	case zk.OpLeaderPing:
		var b []byte
		for _, s := range sv.touched {
			b = binary.BigEndian.AppendUint64(b, uint64(s))
		}
		sv.touched = sv.touched[:0]
		sv.send(j, model.Message{Kind: model.MsgReply, Body: lock.Payload{Word: uint64(zk.OpLeaderPing), Str2: string(b)}})
	default:
		if m.Kind == model.MsgReply {
			sv.leaderReply(now, m, op)
		}
	}
}

// peerClosed handles server j's end of their connection closing (its process died): a
// follower of j looks for a new leader at once, a leader stops sending to j.
func (sv *Server) peerClosed(now sim.Time, j int) {
	switch {
	case sv.role == roleFollowing && sv.leader == j:
		sv.lookOrFail(now, "leader connection closed")
	case sv.role == roleLeading:
		sv.peers[j].forwarding = false
	}
}

// newLeader syncs with leader j of epoch: it takes the leader's snapshot, log and
// outstanding proposals (ZAB's synchronisation, as a SNAP), writes them and, once they
// are on disk, acknowledges. It refuses an epoch older than one it accepted, or the
// same epoch from another leader.
func (sv *Server) newLeader(now sim.Time, j int, epoch uint32) {
	if epoch < sv.acceptedEpoch || epoch == sv.acceptedEpoch && !(sv.role == roleFollowing && sv.leader == j) {
		return
	}
	if sv.role == roleLeading {
		return
	}
	ld := sv.e.servers[j]
	if ld.role != roleLeading || ld.acceptedEpoch != epoch || ld.peers[sv.idx].snap == nil {
		return
	}
	snap := ld.peers[sv.idx].snap
	ld.peers[sv.idx].snap = nil
	sv.e.s.Cancel(sv.electEv)
	sv.electEv = 0
	if sv.role != roleFollowing {
		sv.role = roleFollowing
		sv.closeClients(now)
	}
	sv.resetRole()
	sv.leader, sv.serving, sv.acceptedEpoch = j, false, epoch
	sv.tree, sv.log = snap.tree, nil
	sv.snapTree, sv.snapZxid = snap.tree.clone(), snap.tree.lastZxid
	sv.pending = snap.outstanding
	sv.lastRecv, sv.commitTo = snap.last, sv.tree.lastZxid
	sv.fsyncing, sv.fsyncQ = nil, nil
	sv.e.s.Cancel(sv.fsyncEv)
	sv.fsyncEv = 0
	sv.heard = sv.clk.Mono(now)
	if sv.tickEv == 0 {
		sv.tickEv = sv.after(now, sv.e.cfg.TickTime/2, evTick)
	}
	sv.enqueueFsync(now, fsyncItem{zxid: zk.Zxid(epoch, 0), newLeader: true})
	for _, z := range snap.outstanding {
		sv.enqueueFsync(now, fsyncItem{zxid: z})
	}
}

// proposal logs a proposal from the leader; a gap in the zxids (a lost packet, which TCP
// would have turned into a broken connection) sends the server looking.
func (sv *Server) proposal(now sim.Time, z int64) {
	if sv.lastRecv != 0 && z != sv.lastRecv+1 && !(zk.Epoch(z) > zk.Epoch(sv.lastRecv) && uint32(z) == 1) {
		sv.lookOrFail(now, "proposal out of order")
		return
	}
	sv.lastRecv = z
	sv.pending = append(sv.pending, z)
	sv.enqueueFsync(now, fsyncItem{zxid: z})
}

// applyCommitted applies, in order, the proposals up to the last commit.
func (sv *Server) applyCommitted(now sim.Time) {
	n := 0
	for n < len(sv.pending) && sv.pending[n] <= sv.commitTo {
		sv.apply(now, sv.pending[n])
		n++
	}
	sv.pending = sv.pending[n:]
}

// leaderMsg handles a message a leader gets from server j.
func (sv *Server) leaderMsg(now sim.Time, j int, m *model.Message, op zk.Op) {
	p := &m.Body
	switch op {
	case zk.OpFollowInfo:
		sv.sendNewLeader(j)
	case zk.OpAck:
		sv.ack(now, j, p.Int)
	case zk.OpLeaderPing:
		if m.Kind == model.MsgReply {
			mono := sv.clk.Mono(now)
			for b := p.Str2; len(b) >= 8; b = b[8:] {
				sv.touch(mono, int64(binary.BigEndian.Uint64([]byte(b[:8]))))
			}
		}
	case zk.OpSync:
		if sv.serving {
			last := sv.tree.lastZxid
			if n := len(sv.outstanding); n > 0 {
				last = sv.outstanding[n-1].zxid
			}
			sv.send(j, model.Message{Kind: model.MsgReply, ReqID: m.ReqID, Body: lock.Payload{Word: uint64(zk.OpSyncDone), Int: last}})
		}
	case zk.OpRevalidate:
		code := zk.SessionExpired
		if sv.serving && sv.valid(p.Int) {
			code = zk.OK
			sv.touch(sv.clk.Mono(now), p.Int)
			sv.setOwner(p.Int, j)
		}
		sv.send(j, model.Message{Kind: model.MsgReply, ReqID: m.ReqID, Body: zk.Err(zk.OpRevalidate, code)})
	case zk.OpConnect, zk.OpCreate, zk.OpDelete, zk.OpClose:
		if !sv.serving {
			return
		}
		if code := sv.checkSession(op, p.Int, j); code != zk.OK {
			sv.send(j, model.Message{Kind: model.MsgReply, ReqID: m.ReqID, Body: zk.Err(op, code)})
			return
		}
		x := txnOf(p, j, m.ReqID)
		sv.propose(now, &x)
	}
}

// checkSession is the leader's check of a write's session (SessionTrackerImpl.checkSession):
// SESSIONEXPIRED for a session it does not track or is closing, SESSIONMOVED when the
// write comes through another server than the one the session's client last connected to
// (a request left behind on a connection the client gave up); a session of no known
// owner (re-tracked by a new leader) takes the first server that asks. closeSession and
// createSession are not checked.
func (sv *Server) checkSession(op zk.Op, session int64, owner int) zk.Code {
	if op != zk.OpCreate && op != zk.OpDelete {
		return zk.OK
	}
	for i := range sv.tracked {
		t := &sv.tracked[i]
		if t.session != session {
			continue
		}
		switch {
		case t.closing:
			return zk.SessionExpired
		case t.owner < 0:
			t.owner = owner
		case t.owner != owner:
			return zk.SessionMoved
		}
		return zk.OK
	}
	return zk.SessionExpired
}

// setOwner records the server a session's client connected to (a revalidation, or a
// reconnect to the leader).
func (sv *Server) setOwner(session int64, owner int) {
	for i := range sv.tracked {
		if sv.tracked[i].session == session {
			sv.tracked[i].owner = owner
		}
	}
}

// txnOf is the transaction of a client's write forwarded by server origin as tag (Int
// carries the session).
func txnOf(p *lock.Payload, origin int, tag uint64) txn {
	m := zk.Unpack(p)
	x := txn{op: m.Op, flags: m.Flags, version: m.Version, path: m.Str, data: m.Str2, session: m.Int,
		origin: origin, tag: tag}
	if m.Op == zk.OpConnect {
		x.timeoutMs, x.version = int64(m.Timeout/time.Millisecond), 0
	}
	return x
}

// ack counts server j's acknowledgement of zxid z, or of NEWLEADER (a zxid of counter 0),
// which also acknowledges the proposals its snapshot held.
func (sv *Server) ack(now sim.Time, j int, z int64) {
	if uint32(z) == 0 {
		if zk.Epoch(z) != sv.acceptedEpoch {
			return
		}
		sv.acked |= 1 << j
		for i := range sv.outstanding {
			sv.outstanding[i].acks |= 1 << j
		}
		if sv.serving {
			sv.send(j, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpUpToDate)}})
		}
		sv.establishIfQuorum(now)
		sv.tryCommit(now)
		return
	}
	for i := range sv.outstanding {
		if sv.outstanding[i].zxid == z {
			sv.outstanding[i].acks |= 1 << j
			break
		}
	}
	sv.tryCommit(now)
}

// propose gives write x the next zxid, sends it to the followers and writes it to the
// leader's own log.
func (sv *Server) propose(now sim.Time, x *txn) {
	sv.counter++
	x.zxid = zk.Zxid(sv.acceptedEpoch, sv.counter)
	if invariant.Enabled {
		if n := len(sv.outstanding); n > 0 {
			invariant.Check(x.zxid > sv.outstanding[n-1].zxid, "zookeeper: %s proposed zxid %#x after %#x", sv.name, x.zxid, sv.outstanding[n-1].zxid)
		}
		invariant.Check(x.zxid > sv.tree.lastZxid, "zookeeper: %s proposed zxid %#x after applying %#x", sv.name, x.zxid, sv.tree.lastZxid)
	}
	sv.e.txns[x.zxid] = *x
	sv.outstanding = append(sv.outstanding, proposal{zxid: x.zxid})
	for j := range sv.peers {
		if sv.peers[j].forwarding {
			sv.send(j, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpProposal), Int: x.zxid}})
		}
	}
	sv.enqueueFsync(now, fsyncItem{zxid: x.zxid})
}

// tryCommit commits, in order, the proposals a quorum acknowledged.
func (sv *Server) tryCommit(now sim.Time) {
	for len(sv.outstanding) > 0 && sv.serving && sv.e.quorum(sv.outstanding[0].acks) {
		z := sv.outstanding[0].zxid
		sv.outstanding = sv.outstanding[1:]
		for j := range sv.peers {
			if sv.peers[j].forwarding {
				sv.send(j, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpCommit), Int: z}})
			}
		}
		sv.e.stats.Commits++
		sv.e.committed = max(sv.e.committed, z)
		sv.apply(now, z)
	}
}

// enqueueFsync writes it to the log: it reaches the disk with the next fsync, which
// starts when the one in progress ends (a group commit, as SyncRequestProcessor batches).
func (sv *Server) enqueueFsync(now sim.Time, it fsyncItem) {
	sv.fsyncQ = append(sv.fsyncQ, it)
	if sv.fsyncEv == 0 {
		sv.startFsync(now)
	}
}

func (sv *Server) startFsync(now sim.Time) {
	sv.fsyncing, sv.fsyncQ = sv.fsyncQ, sv.fsyncing[:0]
	id, err := sv.e.s.After(sv.e.cfg.Fsync, sv, evFsync, 0)
	if err != nil {
		sv.e.s.Fail(err)
	}
	sv.fsyncEv = id
}

// fsynced acknowledges what the fsync put on disk.
func (sv *Server) fsynced(now sim.Time) {
	done := sv.fsyncing
	sv.fsyncing = nil
	for _, it := range done {
		if it.newLeader {
			// Acknowledged only to the leader it synced with: a server that went looking
			// meanwhile has no leader to tell (a new sync empties the queue first).
			if sv.role == roleFollowing && sv.leader >= 0 {
				sv.send(sv.leader, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpAck), Int: it.zxid}})
			}
			continue
		}
		sv.appendLog(it.zxid)
		switch sv.role {
		case roleLeading:
			sv.ack(now, sv.idx, it.zxid)
		case roleFollowing:
			sv.send(sv.leader, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpAck), Int: it.zxid}})
		}
	}
	if len(sv.fsyncQ) > 0 {
		sv.startFsync(now)
	}
}

// tick runs every half tick: a leader pings its followers, and every other half tick
// gives up leading when fewer than a quorum spoke within syncLimit ticks (Leader.lead's
// "Not sufficient followers synced"); a follower gives its leader up after syncLimit
// ticks of silence (initLimit while it syncs), as its socket's read timeout does.
func (sv *Server) tick(now sim.Time) {
	cfg := &sv.e.cfg
	mono := sv.clk.Mono(now)
	switch sv.role {
	case roleLeading:
		for j := range sv.peers {
			if sv.peers[j].forwarding {
				sv.send(j, model.Message{Kind: model.MsgCommand, Body: lock.Payload{Word: uint64(zk.OpLeaderPing)}})
			}
		}
		sv.tickHalf = !sv.tickHalf
		if sv.serving && sv.tickHalf {
			synced := uint32(1) << sv.idx
			for j := range sv.peers {
				if sv.peers[j].forwarding && mono-sv.peers[j].heard <= time.Duration(cfg.SyncLimit)*cfg.TickTime {
					synced |= 1 << j
				}
			}
			if !sv.e.quorum(synced) {
				sv.lookOrFail(now, "not sufficient followers synced")
				return
			}
		}
	case roleFollowing:
		limit := time.Duration(cfg.SyncLimit) * cfg.TickTime
		if !sv.serving {
			limit = time.Duration(cfg.InitLimit) * cfg.TickTime
		}
		if mono-sv.heard > limit {
			sv.lookOrFail(now, "leader silent")
			return
		}
	default:
		return
	}
	sv.tickEv = sv.after(now, cfg.TickTime/2, evTick)
}

// roundToNextInterval is ExpiryQueue's: the first multiple of interval after t.
func roundToNextInterval(t, interval time.Duration) time.Duration {
	return (t/interval + 1) * interval
}

// track starts tracking session on the leader, touched now, its client connected to
// server owner (-1: not known yet).
func (sv *Server) track(mono time.Duration, session, timeoutMs int64, owner int) {
	i, found := slices.BinarySearchFunc(sv.tracked, session, func(t tracked, s int64) int {
		switch {
		case t.session < s:
			return -1
		case t.session > s:
			return 1
		}
		return 0
	})
	if !found {
		sv.tracked = slices.Insert(sv.tracked, i, tracked{session: session, timeoutMs: timeoutMs})
	}
	t := &sv.tracked[i]
	t.timeoutMs, t.closing, t.owner = timeoutMs, false, owner
	t.expiry = roundToNextInterval(mono+time.Duration(timeoutMs)*time.Millisecond, sv.e.cfg.TickTime)
}

// touch moves a live session's expiry to the bucket after now + its timeout
// (SessionTrackerImpl.touchSession); a closing one stays closing.
func (sv *Server) touch(mono time.Duration, session int64) {
	if sv.role != roleLeading {
		return
	}
	for i := range sv.tracked {
		t := &sv.tracked[i]
		if t.session == session && !t.closing {
			t.expiry = roundToNextInterval(mono+time.Duration(t.timeoutMs)*time.Millisecond, sv.e.cfg.TickTime)
			return
		}
	}
}

func (sv *Server) valid(session int64) bool {
	for _, t := range sv.tracked {
		if t.session == session {
			return !t.closing
		}
	}
	return false
}

func (sv *Server) untrack(session int64) {
	sv.tracked = slices.DeleteFunc(sv.tracked, func(t tracked) bool { return t.session == session })
}

func (sv *Server) armExpirer(now sim.Time) {
	d := sv.nextExpiry - sv.clk.Mono(now)
	sv.expireEv = sv.after(now, max(d, 0), evExpire)
}

// expire is the leader's session tracker waking at a bucket: every session whose expiry
// is that bucket (or an earlier one, after a stall) is closed through a closeSession
// transaction.
func (sv *Server) expire(now sim.Time) {
	if sv.role != roleLeading || !sv.serving {
		return
	}
	for i := range sv.tracked {
		t := &sv.tracked[i]
		if t.closing || t.expiry > sv.nextExpiry {
			continue
		}
		t.closing = true
		sv.e.stats.Expired++
		sv.e.s.Trace(sv.name, RecExpire, sim.Int("session", t.session), sim.Dur("timeout", time.Duration(t.timeoutMs)*time.Millisecond))
		sv.propose(now, &txn{op: zk.OpClose, session: t.session, origin: -1})
	}
	sv.nextExpiry += sv.e.cfg.TickTime
	sv.armExpirer(now)
}
