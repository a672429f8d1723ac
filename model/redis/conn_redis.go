package redis

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Connection names a Redis driver's connection semantics, the `connection` knob: whether a
// client's connection to a node outlives a request that timed out on it, which decides
// whether requests sent to a stalled node still run there when it continues, and what it
// does when the node's process is gone. Each is a Conn of its own (Conn returns it).
type Connection uint8

// The connection semantics.
const (
	// ConnQueued is one connection per node that outlives timeouts (what the Redlock page
	// assumes; whether ioredis, under node-redlock, behaves so is for its profile to
	// check): a request sent to a stalled node waits in its queue and
	// runs when the node continues, whether or not the client still waits for the reply,
	// and a NOSCRIPT that comes back late is still answered with EVAL.
	ConnQueued Connection = iota
	// ConnDrop is go-redis v9: a connection whose read timed out is closed. A request
	// already written to it still runs when the node continues (its bytes are in the
	// node's socket) but its reply is never read; the next request to that node opens a
	// new connection and is sent only once the handshake is answered, which a stalled node
	// does not do: if the lock algorithm gives up first, the request never reaches the
	// node. A process connects on first use, so its first request to each node waits for
	// a handshake too.
	ConnDrop
	// ConnOffline is ioredis (under node-redlock): one connection per node that outlives
	// timeouts, as ConnQueued, but a refused one (the node's process killed or shut down,
	// its host up) is closed and reconnected after retryStrategy's min(50ms × attempts,
	// 2s), while every command meant for that node waits in its offline queue: the
	// unanswered ones it had sent first (autoResendUnfulfilledCommands), then the ones
	// issued since, all sent once a reconnect is answered. Every 21st close
	// (maxRetriesPerRequest 20) fails the queued commands, about 10.5s into an outage.
	// The client learns of the close from its next request's refusal, not at the kill.
	// A host that lost power (Node.Crash) answers nothing, and ioredis has no timeout of
	// its own: the client's kernel retransmits the unanswered data (at 0.2, 0.4, 0.8,
	// 1.6s ..., at most 120s apart); the first retransmission to reach the host booted
	// again is reset, which closes the connection, and after 16 the connection fails with
	// ETIMEDOUT (about 925s). A reconnect's SYN that no host answers goes again at 1, 2,
	// 3, 4, 5 and 7s until connectTimeout (10s) closes it. A connection left idle through a
	// reboot is reset by its next request. Keepalive on an idle connection is not modelled,
	// and the kernel's timers wait out a pause of the process as its own timers do (a real
	// kernel retransmits through a GC pause).
	ConnOffline
	// ConnGoRedis is go-redis v9 as a client built with its default options runs a command
	// (goRedisConn): ConnDrop's connection, plus its retries (a timed-out, reset or
	// undialable command is tried again on a new connection, up to 3 times, after a
	// backoff), its dial retries (5 dials, 100ms apart), its pool's fail-fast after 20
	// failed connection attempts, and the request's context, read when it takes a
	// connection, between dials and between retries, never during a read. ConnDrop is
	// the same driver with its retries off (MaxRetries −1), as redlock/redisdriver runs it.
	ConnGoRedis
	// ConnRedisPy8 is redis-py 8 as its defaults run a command (redisPyConn): a 5s socket
	// timeout, 10 retries of a timed-out or failed command on a new connection and 10 of
	// each connect, with ExponentialWithJitterBackoff (10ms base, 1s cap); a dead
	// connection found as the pool hands it out is reconnected, and a connect that still
	// fails raises without retrying the command.
	ConnRedisPy8
)

var connectionNames = [...]string{ConnQueued: "queued", ConnDrop: "drop", ConnOffline: "offline-queue", ConnGoRedis: "go-redis", ConnRedisPy8: "redis-py-8"}

func (c Connection) String() string {
	if int(c) < len(connectionNames) {
		return connectionNames[c]
	}
	return "connection(" + strconv.Itoa(int(c)) + ")"
}

// Connections returns every connection semantics, in declaration order.
func Connections() []Connection {
	return []Connection{ConnQueued, ConnDrop, ConnOffline, ConnGoRedis, ConnRedisPy8}
}

// Conn builds connection semantics k for a client of n Redis nodes: a NewConn.
func (k Connection) Conn(link *model.Link, n int) model.Conn {
	switch k {
	case ConnDrop:
		return newDropConn(link, n)
	case ConnOffline:
		return newOfflineConn(link, n)
	case ConnGoRedis:
		return newGoRedisConn(link, n)
	case ConnRedisPy8:
		return newRedisPyConn(link, n)
	}
	return newQueuedConn(link, n)
}

// ParseConnection returns the connection semantics with the given name.
func ParseConnection(s string) (Connection, error) {
	for i, n := range connectionNames {
		if n == s {
			return Connection(i), nil
		}
	}
	return 0, fmt.Errorf("unknown connection semantics %q", s)
}

// queuedConn is ConnQueued: each request goes out as it is, on a connection that outlives
// timeouts. It reads RESP for one thing only: an EVALSHA answered NOSCRIPT is sent again
// as EVAL with the script's source, under the same request id, as go-redis's Script.Run
// does (and redisdriver with it): a fresh, restarted or promoted Redis 7 has an empty
// script cache. The algorithm never sees the NOSCRIPT, only the EVAL's reply, exactly as
// against real Redis.
type queuedConn struct {
	link    *model.Link
	lastReq []lock.Req     // each node's latest request
	lastCmd []lock.Payload // each node's latest request's Word, and its whole body when an EVALSHA
	stats   model.ConnStats
}

func newQueuedConn(link *model.Link, n int) *queuedConn {
	return &queuedConn{link: link, lastReq: make([]lock.Req, n), lastCmd: make([]lock.Payload, n)}
}

// note remembers req as node's latest request; only an EVALSHA is ever resent.
func (q *queuedConn) note(node int, req lock.Req, p *lock.Payload) {
	q.lastReq[node] = req
	if q.lastCmd[node].Word = p.Word; resp.Op(p.Word&0xff) == resp.OpEvalSHA {
		q.lastCmd[node] = *p
	}
}

func (q *queuedConn) Send(_ sim.Time, node int, req lock.Req, p *lock.Payload, _ time.Duration) {
	q.note(node, req, p)
	q.link.SendRequest(node, uint64(req), p)
}

func (q *queuedConn) Abandon(sim.Time, int, lock.Req) {}

func (q *queuedConn) Receive(now sim.Time, node int, id uint64, m *model.Message) {
	switch {
	case m.Kind == model.MsgPush:
		q.link.Deliver(now, node, lock.PushReq, m.Body)
	case m.Kind != model.MsgReply || id >= model.ConnID:
		q.link.Stray()
	case !q.retryAsEval(node, lock.Req(id), &m.Body):
		q.link.Deliver(now, node, lock.Req(id), m.Body)
	}
}

// retryAsEval resends node's latest request, an EVALSHA that got NOSCRIPT, as EVAL.
func (q *queuedConn) retryAsEval(node int, req lock.Req, r *lock.Payload) bool {
	cmd := &q.lastCmd[node]
	if !noScript(r) || q.lastReq[node] != req || resp.Op(cmd.Word&0xff) != resp.OpEvalSHA {
		return false
	}
	asEval(cmd)
	q.stats.Resent++
	q.link.SendRequest(node, uint64(req), cmd)
	return true
}

// noScript reports whether r is Redis's NOSCRIPT error.
func noScript(r *lock.Payload) bool {
	return resp.ReplyKind(r.Word) == resp.ReplyError && strings.HasPrefix(r.Str, "NOSCRIPT")
}

// asEval turns an EVALSHA's body into the EVAL of the same script.
func asEval(p *lock.Payload) { p.Word = p.Word&^0xff | uint64(resp.OpEval) }

func (q *queuedConn) Timer(sim.Time, uint32) {}

func (q *queuedConn) Restart(sim.Time) {
	clear(q.lastReq)
	clear(q.lastCmd)
}

func (q *queuedConn) Stats() model.ConnStats { return q.stats }

// pingPayload is the handshake a connection waits for before it sends a command on it.
func pingPayload() lock.Payload {
	c := resp.Command{Op: resp.OpPing}
	return c.Payload()
}

// dropConn is ConnDrop, go-redis v9's connection (see ConnDrop).
type dropConn struct {
	queuedConn
	conns  []dropState
	parked []parkedReq // each node's request waiting for its new connection's handshake
	hsSeq  uint64
}

// dropState is a client's connection to one node under ConnDrop.
type dropState struct {
	open bool
	hs   uint64 // the handshake awaited (ConnID | its number); 0: none
}

// parkedReq is a request waiting for its connection.
type parkedReq struct {
	req  lock.Req
	body lock.Payload
}

func newDropConn(link *model.Link, n int) *dropConn {
	return &dropConn{queuedConn: *newQueuedConn(link, n), conns: make([]dropState, n), parked: make([]parkedReq, n)}
}

func (d *dropConn) Send(_ sim.Time, node int, req lock.Req, p *lock.Payload, _ time.Duration) {
	d.note(node, req, p)
	if !d.conns[node].open {
		d.park(node, req, p)
		return
	}
	d.link.SendRequest(node, uint64(req), p)
}

// park holds a request until its node's connection is open, opening one (a PING
// handshake) if none is on its way. A request parked earlier for that node belongs to a
// round that is over; the new one takes its place.
func (d *dropConn) park(node int, req lock.Req, p *lock.Payload) {
	d.parked[node] = parkedReq{req: req, body: *p}
	if d.conns[node].hs != 0 {
		return
	}
	d.hsSeq++
	d.conns[node].hs = model.ConnID | d.hsSeq
	d.stats.Connects++
	d.link.Send(node, model.Request(d.conns[node].hs, pingPayload()))
}

func (d *dropConn) Receive(now sim.Time, node int, id uint64, m *model.Message) {
	if m.Kind == model.MsgReply && id >= model.ConnID {
		d.handshaken(now, node, id, &m.Body)
		return
	}
	d.queuedConn.Receive(now, node, id, m)
}

// handshaken opens node's connection when hs answers the handshake it awaits, and sends
// the request parked on it. A handshake refused (the server's process is gone and its
// host resets the connection) leaves no connection, and the parked request fails at once
// with a connection error. A handshake the client gave up on is stray.
func (d *dropConn) handshaken(now sim.Time, node int, hs uint64, r *lock.Payload) {
	if d.conns[node].hs != hs {
		d.link.Stray()
		return
	}
	p := d.parked[node]
	d.parked[node] = parkedReq{}
	if resp.ReplyKind(r.Word) == resp.ReplyNone {
		d.conns[node] = dropState{}
		if p.req != 0 {
			d.link.Deliver(now, node, p.req, resp.NoReply.Payload())
		}
		return
	}
	d.conns[node] = dropState{open: true}
	if p.req != 0 {
		d.link.SendRequest(node, uint64(p.req), &p.body)
	}
}

// Abandon closes node's connection when the algorithm gives up on request req: go-redis
// closes a connection whose read timed out, and a handshake that timed out leaves none.
// The request, if it was still parked, is never sent; one already sent may still run, but
// its reply (a NOSCRIPT too) is never read.
func (d *dropConn) Abandon(_ sim.Time, node int, req lock.Req) {
	d.conns[node] = dropState{}
	if d.parked[node].req == req {
		d.parked[node] = parkedReq{}
	}
	if d.lastReq[node] == req {
		d.lastReq[node] = 0
	}
}

func (d *dropConn) Restart(now sim.Time) {
	d.queuedConn.Restart(now)
	clear(d.conns) // a new process connects anew
	clear(d.parked)
}
