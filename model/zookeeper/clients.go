package zookeeper

import (
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

// cnxn is a client's connection to this server: its session (0 until the connect is
// answered) and its requests, served in order (a read waits behind the session's write,
// as ZooKeeper's CommitProcessor keeps a session's order).
type cnxn struct {
	ep network.Endpoint
	// conn is the client's number of the connection (model.Message.Conn), stamped on what
	// the server sends on it: the client discards what an earlier connection sends.
	conn      uint32
	session   int64
	timeoutMs int64
	q         []request
	busy      bool  // the head waits for the leader (a write, a sync, a revalidation)
	syncPoint int64 // a sync's head waits until the server applied this zxid
}

type request struct {
	id uint64
	p  lock.Payload
}

// pendingReq is a request this server forwarded to the leader, by tag.
type pendingReq struct {
	c  *cnxn
	id uint64
}

// live returns the connection a pending request belongs to, or nil when it closed since.
func (sv *Server) live(pr pendingReq, ok bool) *cnxn {
	if !ok || pr.c == nil || sv.conns[pr.c.ep] != pr.c {
		return nil
	}
	return pr.c
}

// clientMsg handles a client's request. One of a connection older than the last the
// client opened to this server is discarded: the client closed that connection, and its
// TCP link held the request through a partition (a reset, which the client, on a newer
// connection, ignores). A request of a connection the server does not have (closed since,
// or never opened) is answered with EOF on that connection, as a reset.
func (sv *Server) clientMsg(now sim.Time, from network.Endpoint, m *model.Message) {
	if m.Conn < sv.opened[from] {
		sv.e.stats.Stale++
		return
	}
	if !sv.serving {
		sv.eof(from, m.Conn) // ZooKeeperServer not running: the connection is closed
		sv.e.stats.Lost++
		return
	}
	op := zk.OpOf(&m.Body)
	c := sv.conns[from]
	if op == zk.OpConnect {
		sv.connect(now, from, m)
		return
	}
	if c == nil || c.session == 0 || c.conn != m.Conn {
		sv.eof(from, m.Conn)
		sv.e.stats.Lost++
		return
	}
	sv.touchLocal(now, c.session)
	c.q = append(c.q, request{id: m.ReqID, p: m.Body})
	sv.process(now, c)
}

// touchLocal touches a session: on the leader's tracker directly, on a follower in the
// list its next ping reply carries (LearnerSessionTracker's touchTable).
func (sv *Server) touchLocal(now sim.Time, session int64) {
	if sv.role == roleLeading {
		sv.touch(sv.clk.Mono(now), session)
		return
	}
	if !slices.Contains(sv.touched, session) {
		sv.touched = append(sv.touched, session)
	}
}

// connect opens a connection: a new session goes through the leader as a createSession
// transaction; a known one is revalidated by the leader. A client that has seen a newer
// zxid than this server applied is refused, and tries another server.
func (sv *Server) connect(now sim.Time, from network.Endpoint, m *model.Message) {
	req := zk.Unpack(&m.Body)
	sv.opened[from] = m.Conn
	if zk.LastZxidOf(&m.Body) > sv.tree.lastZxid {
		sv.e.s.Trace(sv.name, RecRefuse, sim.Int("session", req.Int), sim.Int("zxid", sv.tree.lastZxid))
		sv.eof(from, m.Conn)
		return
	}
	sv.dropConn(from)
	c := &cnxn{ep: from, conn: m.Conn, session: req.Int}
	sv.conns[from] = c
	sv.order = append(sv.order, from)
	c.q = append(c.q, request{id: m.ReqID, p: m.Body})
	c.busy = true
	tag := sv.tag(c, m.ReqID)
	if req.Int == 0 {
		sv.nextSession++
		session := int64(sv.idx+1)<<56 | sv.nextSession
		c.session = session
		p := zk.Msg{Op: zk.OpConnect, Int: session, Timeout: time.Duration(sv.e.timeoutMs(req.Timeout)) * time.Millisecond}
		sv.toLeader(now, tag, p.Payload())
		return
	}
	if sv.role == roleLeading {
		ok := sv.valid(req.Int)
		if ok {
			sv.setOwner(req.Int, sv.idx)
		}
		sv.revalidated(now, tag, ok)
		return
	}
	sv.send(sv.leader, model.Message{Kind: model.MsgCommand, ReqID: tag, Body: lock.Payload{Word: uint64(zk.OpRevalidate), Int: req.Int}})
}

func (sv *Server) tag(c *cnxn, id uint64) uint64 {
	sv.nextTag++
	sv.tags[sv.nextTag] = pendingReq{c: c, id: id}
	return sv.nextTag
}

// toLeader hands a write (its session in Int) to the leader: proposed here when this
// server leads, forwarded otherwise.
func (sv *Server) toLeader(now sim.Time, tag uint64, p lock.Payload) {
	if sv.role == roleLeading {
		if code := sv.checkSession(zk.OpOf(&p), p.Int, sv.idx); code != zk.OK {
			sv.refused(now, tag, zk.OpOf(&p), code)
			return
		}
		x := txnOf(&p, sv.idx, tag)
		sv.propose(now, &x)
		return
	}
	sv.send(sv.leader, model.Message{Kind: model.MsgCommand, ReqID: tag, Body: p})
}

// revalidated answers a reconnect: the session and its timeout, or SESSIONEXPIRED (a
// ConnectResponse with timeout 0, after which the server closes the connection).
func (sv *Server) revalidated(now sim.Time, tag uint64, ok bool) {
	pr, found := sv.tags[tag]
	delete(sv.tags, tag)
	c := sv.live(pr, found)
	if c == nil {
		return
	}
	if !ok {
		sv.reply(c, pr.id, zk.Err(zk.OpConnect, zk.SessionExpired))
		sv.dropConn(c.ep)
		return
	}
	c.timeoutMs = sv.tree.sessions[c.session]
	if c.timeoutMs == 0 {
		c.timeoutMs = sv.e.timeoutMs(0)
	}
	sv.connected(now, c)
}

func (sv *Server) connected(now sim.Time, c *cnxn) {
	p := zk.Msg{Op: zk.OpConnect, Int: c.session, Timeout: time.Duration(c.timeoutMs) * time.Millisecond}
	sv.done(now, c, p.Payload())
}

// refused answers a write the leader refused (its session moved or expired).
func (sv *Server) refused(now sim.Time, tag uint64, op zk.Op, code zk.Code) {
	pr, ok := sv.tags[tag]
	delete(sv.tags, tag)
	if c := sv.live(pr, ok); c != nil && c.busy {
		sv.done(now, c, zk.Err(op, code))
	}
}

// leaderReply handles a follower's answers from the leader: a sync's point, a session's
// revalidation, a write refused.
func (sv *Server) leaderReply(now sim.Time, m *model.Message, op zk.Op) {
	switch op {
	case zk.OpCreate, zk.OpDelete:
		sv.refused(now, m.ReqID, op, zk.CodeOf(&m.Body))
	case zk.OpRevalidate:
		sv.revalidated(now, m.ReqID, zk.CodeOf(&m.Body) == zk.OK)
	case zk.OpSyncDone:
		pr, ok := sv.tags[m.ReqID]
		delete(sv.tags, m.ReqID)
		if c := sv.live(pr, ok); c != nil && c.busy {
			c.syncPoint = max(m.Body.Int, 1)
			sv.syncDone(now, c)
		}
	}
}

// process serves a connection's requests in order until one must wait for the leader.
func (sv *Server) process(now sim.Time, c *cnxn) {
	for len(c.q) > 0 && !c.busy {
		r := &c.q[0]
		op := zk.OpOf(&r.p)
		switch {
		case op.IsWrite():
			c.busy = true
			p := r.p
			p.Int = c.session
			sv.toLeader(now, sv.tag(c, r.id), p)
			return
		case op == zk.OpSync:
			c.busy = true
			if sv.role == roleLeading {
				c.syncPoint = max(sv.tree.lastZxid, 1)
				if n := len(sv.outstanding); n > 0 {
					c.syncPoint = sv.outstanding[n-1].zxid
				}
				sv.syncDone(now, c)
				return
			}
			sv.send(sv.leader, model.Message{Kind: model.MsgCommand, ReqID: sv.tag(c, r.id), Body: r.p})
			return
		}
		sv.stats.Requests++
		sv.reply(c, r.id, sv.read(c, &r.p))
		c.q = c.q[1:]
	}
}

func (sv *Server) syncDone(now sim.Time, c *cnxn) {
	if c.syncPoint == 0 || sv.tree.lastZxid < c.syncPoint {
		return
	}
	path := c.q[0].p.Str
	c.syncPoint = 0
	sv.done(now, c, lock.Payload{Word: uint64(zk.OpSync), Str: path, Int: sv.tree.lastZxid})
}

// done answers the connection's head request with p and serves the next ones.
func (sv *Server) done(now sim.Time, c *cnxn, p lock.Payload) {
	if len(c.q) == 0 {
		return
	}
	sv.stats.Requests++
	sv.reply(c, c.q[0].id, p)
	c.q, c.busy = c.q[1:], false
	sv.process(now, c)
}

func (sv *Server) reply(c *cnxn, id uint64, p lock.Payload) {
	sv.e.net.Send(sv.ep, c.ep, model.Message{Kind: model.MsgReply, ReqID: id, Body: p, Conn: c.conn})
}

// read answers a read from this server's tree, which may lag the leader's, and leaves
// the watch it asks for.
func (sv *Server) read(c *cnxn, p *lock.Payload) lock.Payload {
	m := zk.Unpack(p)
	if ld := sv.e.servers[max(sv.leader, 0)]; ld.up && ld.tree != nil && ld.tree.lastZxid > sv.tree.lastZxid {
		sv.e.stats.StaleServed++
	}
	watch := m.Flags&zk.FlagWatch != 0
	switch m.Op {
	case zk.OpPing:
		return zk.Ping()
	case zk.OpExists, zk.OpGetData:
		n, ok := sv.tree.nodes[m.Str]
		if watch && (ok || m.Op == zk.OpExists) {
			sv.dataW[m.Str] = addWatcher(sv.dataW[m.Str], c.ep)
		}
		if !ok {
			return zk.Err(m.Op, zk.NoNode)
		}
		r := zk.Msg{Op: m.Op, Int: n.Czxid, Version: n.Version}
		if n.EphemeralOwner != 0 {
			r.Flags |= zk.FlagEphemeral
		}
		if n.EphemeralOwner == c.session {
			r.Flags |= zk.FlagMine
		}
		if m.Op == zk.OpGetData {
			r.Str2 = n.Data
		}
		return r.Payload()
	case zk.OpGetChildren:
		n, ok := sv.tree.nodes[m.Str]
		if !ok {
			return zk.Err(m.Op, zk.NoNode)
		}
		if watch {
			sv.childW[m.Str] = addWatcher(sv.childW[m.Str], c.ep)
		}
		return lock.Payload{Word: uint64(zk.OpGetChildren), Int: int64(n.Cversion), Str2: zk.Children(n.children)}
	case zk.OpSetWatches:
		return sv.setWatch(c, &m)
	}
	return zk.Err(m.Op, zk.BadArguments)
}

func addWatcher(ws []network.Endpoint, ep network.Endpoint) []network.Endpoint {
	if slices.Contains(ws, ep) {
		return ws
	}
	return append(ws, ep)
}

// setWatch re-registers a watch after a reconnect, firing it at once when the node
// changed after the client's last zxid (ZooKeeper's SetWatches).
func (sv *Server) setWatch(c *cnxn, m *zk.Msg) lock.Payload {
	n, ok := sv.tree.nodes[m.Str]
	kind := zk.Op(m.Code)
	var fire zk.EventType
	switch kind {
	case zk.OpExists, zk.OpGetData:
		switch {
		case !ok && kind == zk.OpGetData:
			fire = zk.EventNodeDeleted
		case ok && n.Mzxid > m.Int:
			fire = zk.EventNodeDataChanged
		case ok && kind == zk.OpExists:
			fire = zk.EventNodeCreated
		}
		if fire == 0 {
			sv.dataW[m.Str] = addWatcher(sv.dataW[m.Str], c.ep)
		}
	case zk.OpGetChildren:
		switch {
		case !ok:
			fire = zk.EventNodeDeleted
		case n.Pzxid > m.Int:
			fire = zk.EventNodeChildrenChanged
		}
		if fire == 0 {
			sv.childW[m.Str] = addWatcher(sv.childW[m.Str], c.ep)
		}
	}
	if fire != 0 {
		sv.push(c.ep, zk.Event(fire, zk.StateSyncConnected, m.Str))
	}
	return lock.Payload{Word: uint64(zk.OpSetWatches)}
}

// push sends a watch event on the connection of endpoint to (a watch lives as long as
// its connection: dropConn forgets it).
func (sv *Server) push(to network.Endpoint, p lock.Payload) {
	sv.stats.Watches++
	var conn uint32
	if c := sv.conns[to]; c != nil {
		conn = c.conn
	}
	sv.e.net.Send(sv.ep, to, model.Message{Kind: model.MsgPush, Body: p, Conn: conn})
}

// apply applies committed transaction z: the watches it fires go out before the reply
// that could show the change (and before any later read's), then the client that asked
// for it, if connected here, gets its answer.
func (sv *Server) apply(now sim.Time, z int64) {
	if invariant.Enabled {
		invariant.Check(z > sv.tree.lastZxid, "zookeeper: %s applies zxid %#x after %#x", sv.name, z, sv.tree.lastZxid)
	}
	tx, known := sv.e.txns[z]
	if !known || z <= sv.tree.lastZxid {
		return
	}
	x := &tx
	sv.stats.Applied++
	var code zk.Code
	var path string
	code, path, sv.changes = sv.tree.apply(x, sv.changes[:0])
	for _, ch := range sv.changes {
		sv.fire(ch)
	}
	if sv.role == roleLeading {
		switch x.op {
		case zk.OpConnect:
			sv.track(sv.clk.Mono(now), x.session, x.timeoutMs, x.origin)
		case zk.OpClose:
			sv.untrack(x.session)
		}
	}
	if x.origin == sv.idx && x.tag != 0 {
		sv.answer(now, x, code, path)
	}
	if x.op == zk.OpClose {
		sv.closeSession(x.session)
	}
	for _, ep := range sv.order {
		if c := sv.conns[ep]; c != nil && c.syncPoint != 0 {
			sv.syncDone(now, c)
		}
	}
}

func (sv *Server) answer(now sim.Time, x *txn, code zk.Code, path string) {
	pr, ok := sv.tags[x.tag]
	delete(sv.tags, x.tag)
	c := sv.live(pr, ok)
	if c == nil || !c.busy {
		return
	}
	if x.op == zk.OpConnect {
		c.timeoutMs = x.timeoutMs
		sv.e.s.Trace(sv.name, RecSession, sim.Int("session", x.session), sim.Dur("timeout", time.Duration(x.timeoutMs)*time.Millisecond))
		sv.connected(now, c)
		return
	}
	if code != zk.OK {
		sv.done(now, c, zk.Err(x.op, code))
		return
	}
	switch x.op {
	case zk.OpCreate:
		sv.done(now, c, lock.Payload{Word: uint64(zk.OpCreate), Str: path, Int: x.zxid})
	case zk.OpDelete:
		sv.done(now, c, lock.Payload{Word: uint64(zk.OpDelete), Int: x.zxid})
	case zk.OpClose:
		sv.done(now, c, zk.Close())
	}
}

// fire sends the one-shot watches a change triggers (WatchManager.triggerWatch): a
// node's data watches on its creation, deletion or change; its parent's child watches,
// and on its deletion its own child watches too, each watcher once.
func (sv *Server) fire(ch change) {
	var sent []network.Endpoint
	ws := sv.dataW[ch.path]
	if ch.typ == zk.EventNodeChildrenChanged {
		ws = sv.childW[ch.path]
		delete(sv.childW, ch.path)
	} else {
		delete(sv.dataW, ch.path)
	}
	for _, ep := range ws {
		sv.push(ep, zk.Event(ch.typ, zk.StateSyncConnected, ch.path))
		sent = append(sent, ep)
	}
	if ch.typ == zk.EventNodeDeleted {
		for _, ep := range sv.childW[ch.path] {
			if !slices.Contains(sent, ep) {
				sv.push(ep, zk.Event(ch.typ, zk.StateSyncConnected, ch.path))
			}
		}
		delete(sv.childW, ch.path)
	}
}

// closeSession closes the connection of a session that ended (closed or expired): the
// server closes its socket.
func (sv *Server) closeSession(session int64) {
	for _, ep := range sv.order {
		if c := sv.conns[ep]; c != nil && c.session == session {
			sv.eof(ep, c.conn)
			sv.dropConn(ep)
			return
		}
	}
}

// closeClients closes every client connection (EOF), as a server that stops serving does.
func (sv *Server) closeClients(sim.Time) {
	for _, ep := range sv.order {
		sv.eof(ep, sv.conns[ep].conn)
	}
	sv.conns, sv.order = map[network.Endpoint]*cnxn{}, nil
	clear(sv.tags)
	clear(sv.dataW)
	clear(sv.childW)
	sv.touched = sv.touched[:0]
}

// clientClosed handles a client's FIN on connection conn: the client gave the server up
// (its timeout ran out), and the connection, with any older one, closes here too; the
// session lives on.
func (sv *Server) clientClosed(from network.Endpoint, conn uint32) {
	if c := sv.conns[from]; c != nil && c.conn <= conn {
		sv.dropConn(from)
	}
}

// dropConn forgets a connection and its watches.
func (sv *Server) dropConn(ep network.Endpoint) {
	if _, ok := sv.conns[ep]; !ok {
		return
	}
	delete(sv.conns, ep)
	sv.order = slices.DeleteFunc(sv.order, func(e network.Endpoint) bool { return e == ep })
	for _, w := range []map[string][]network.Endpoint{sv.dataW, sv.childW} {
		for p, ws := range w {
			if i := slices.Index(ws, ep); i >= 0 {
				w[p] = slices.Delete(ws, i, i+1)
			}
		}
	}
}
