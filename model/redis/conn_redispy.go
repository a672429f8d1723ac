package redis

import (
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// redis-py 8.1.0's defaults (redis/_defaults.py; docs/clients.md, "Which redis-py", gives
// each its source line).
const (
	// redisPySocketTimeout is DEFAULT_SOCKET_TIMEOUT (5s), the wait for a reply, the
	// connection's handshake's too; redisPyConnectTimeout, DEFAULT_SOCKET_CONNECT_TIMEOUT,
	// the wait for a TCP handshake.
	redisPySocketTimeout  = 5 * time.Second
	redisPyConnectTimeout = 5 * time.Second
	// redisPyRetries is DEFAULT_RETRY_COUNT: a command, and a connect, is retried up to 10
	// times, after failure f waiting ExponentialWithJitterBackoff's min(cap, U[0, 1) ×
	// base × 2^f), base DEFAULT_RETRY_BASE (10ms), cap DEFAULT_RETRY_CAP (1s).
	redisPyRetries     = 10
	redisPyRetryBase   = 10 * time.Millisecond
	redisPyRetryCap    = time.Second
	redisPyMaxFailures = redisPyRetries
)

// redisPyConn is ConnRedisPy8: redis-py 8's synchronous client with its defaults
// (redis/client.py _execute_command, redis/connection.py ConnectionPool.get_connection,
// AbstractConnection.connect, connect_check_health, redis/retry.py Retry.call_with_retry).
// One command per node at a time, as redlock-py's blocking calls have:
//
//   - Taking a connection from the pool connects it if it has no socket, and reconnects
//     one whose peer closed it while it was idle (its health check). That connect is
//     retried whole (the TCP handshake and the connection's handshake) up to 10 times with
//     the backoff; if it still fails, the command fails with ConnectionError, never
//     retried (get_connection runs outside the command's retry loop).
//   - The command is written and its reply awaited for the socket timeout (5s). A timeout
//     or a connection error fails the try: the connection is closed and, after the
//     backoff, the command is tried again, up to 10 times; a try that finds no socket
//     connects first, retrying only the TCP handshake (connect_check_health with
//     retry_socket_connect), and a handshake that fails fails the try.
//
// So a stalled server costs a command up to 11 socket timeouts, a killed one (its host
// refusing) about 4s of connects, and the algorithm hears one answer per request: the
// reply, or a connection error (resp.NoReply) once redis-py raises.
type redisPyConn struct {
	driverBase
	nodes []redisPyNode
}

// redisPyPhase is where a node's command is in redis-py's loops.
type redisPyPhase uint8

const (
	rpIdle      redisPyPhase = iota
	rpDialing                // a TCP handshake awaits the host's answer
	rpHello                  // the connection's handshake awaits its reply
	rpConnPause              // the backoff between two connects
	rpCommand                // the command is written; its reply is awaited
	rpCmdPause               // the backoff before the command's next try
)

// redisPyNode is a client's pool for one node and the command under way on it.
type redisPyNode struct {
	phase redisPyPhase
	open  bool   // a connected socket is idle in the pool
	fresh bool   // the command's socket was connected by this try
	boot  uint32 // the host boot the socket is bound to
	req   lock.Req
	body  lock.Payload
	// fromPool says the connect under way is the pool's (retried whole; its failure
	// fails the command), not a try's (only the TCP handshake retried; a failure fails
	// the try).
	fromPool     bool
	tries        int // the command's failed tries
	connFailures int // the connect's failed attempts
	wait         uint64
	ev           sim.EventID
}

func newRedisPyConn(link *model.Link, n int) *redisPyConn {
	return &redisPyConn{driverBase: driverBase{link: link}, nodes: make([]redisPyNode, n)}
}

func (c *redisPyConn) Send(now sim.Time, node int, req lock.Req, p *lock.Payload, _ time.Duration) {
	st := &c.nodes[node]
	if st.phase != rpIdle {
		c.drop(node)
	}
	st.req, st.body, st.tries = req, *p, 0
	if st.open {
		st.fresh = false
		c.write(now, node)
		return
	}
	c.connect(now, node, true)
}

// connect starts a connect to node: the pool's (fromPool) or a try's.
func (c *redisPyConn) connect(now sim.Time, node int, fromPool bool) {
	st := &c.nodes[node]
	st.fromPool, st.connFailures = fromPool, 0
	c.dial(now, node)
}

// dial sends a bare TCP handshake to node's host.
func (c *redisPyConn) dial(now sim.Time, node int) {
	st := &c.nodes[node]
	st.wait = c.nextID()
	c.link.Send(node, model.Probe(st.wait, 0))
	c.enter(now, node, rpDialing, redisPyConnectTimeout)
}

// dialed sends the new socket's handshake.
func (c *redisPyConn) dialed(now sim.Time, node int, boot uint32) {
	st := &c.nodes[node]
	st.boot = boot
	st.wait = c.nextID()
	m := model.Request(st.wait, pingPayload())
	m.Conn = boot
	c.stats.Connects++
	c.link.Send(node, m)
	c.enter(now, node, rpHello, redisPySocketTimeout)
}

// connectFailed takes a failed TCP handshake (refused, or no answer in time) or, when
// handshake, a failed connection handshake (a timeout or a reset). The pool's connect
// retries either; a try's retries only the TCP handshake, and fails the try otherwise.
func (c *redisPyConn) connectFailed(now sim.Time, node int, handshake bool) {
	st := &c.nodes[node]
	st.open = false
	if !st.fromPool && handshake {
		c.tryFailed(now, node)
		return
	}
	st.connFailures++
	if st.connFailures > redisPyMaxFailures {
		if st.fromPool {
			c.fail(now, node) // get_connection raises outside the command's retries
			return
		}
		c.tryFailed(now, node)
		return
	}
	c.enter(now, node, rpConnPause, c.backoff(st.connFailures))
}

// write sends node's command on its connected socket: the algorithm's id on the first
// try, one of the connection's own on a retry, so that an earlier try's reply is told
// apart.
func (c *redisPyConn) write(now sim.Time, node int) {
	st := &c.nodes[node]
	st.wait = uint64(st.req)
	if st.tries > 0 {
		st.wait = c.nextID()
	}
	m := model.Request(st.wait, st.body)
	m.Conn = st.boot
	c.link.Send(node, m)
	c.enter(now, node, rpCommand, redisPySocketTimeout)
}

// tryFailed fails the command's try with a ConnectionError or TimeoutError: close the
// socket, and after the backoff try again, unless the retries are spent.
func (c *redisPyConn) tryFailed(now sim.Time, node int) {
	st := &c.nodes[node]
	st.open = false
	st.tries++
	if st.tries > redisPyMaxFailures {
		c.fail(now, node)
		return
	}
	c.stats.Resent++
	c.enter(now, node, rpCmdPause, c.backoff(st.tries))
}

// backoff draws ExponentialWithJitterBackoff's pause after failure f.
func (c *redisPyConn) backoff(f int) time.Duration {
	d := time.Duration(c.link.Rand().Float64() * float64(redisPyRetryBase<<f))
	return min(d, redisPyRetryCap)
}

// fail ends node's command with a connection error.
func (c *redisPyConn) fail(now sim.Time, node int) {
	req := c.nodes[node].req
	c.finish(node)
	c.link.Deliver(now, node, req, resp.NoReply.Payload())
}

// drop forgets node's command before its answer, closing a socket it was reading.
func (c *redisPyConn) drop(node int) {
	st := &c.nodes[node]
	if st.phase == rpHello || st.phase == rpCommand {
		st.open = false
	}
	c.finish(node)
}

// finish forgets node's command; its socket, if connected, goes back to the pool.
func (c *redisPyConn) finish(node int) {
	st := &c.nodes[node]
	c.link.Cancel(st.ev)
	st.phase, st.req, st.wait, st.ev = rpIdle, 0, 0, 0
}

func (c *redisPyConn) enter(now sim.Time, node int, p redisPyPhase, d time.Duration) {
	st := &c.nodes[node]
	c.link.Cancel(st.ev)
	st.phase = p
	st.ev = c.link.After(now, d, uint32(node))
}

func (c *redisPyConn) Abandon(_ sim.Time, node int, req lock.Req) {
	if c.nodes[node].req == req {
		c.drop(node)
	}
}

func (c *redisPyConn) Receive(now sim.Time, node int, id uint64, m *model.Message) {
	st := &c.nodes[node]
	switch {
	case m.Kind == model.MsgPush:
		c.link.Deliver(now, node, lock.PushReq, m.Body)
	case id != st.wait || st.wait == 0:
		c.link.Stray()
	case st.phase == rpDialing && m.Kind == model.MsgAck:
		c.dialed(now, node, m.Conn)
	case st.phase == rpDialing && m.Kind == model.MsgReply: // refused
		c.connectFailed(now, node, false)
	case m.Kind != model.MsgReply:
		c.link.Stray()
	case st.phase == rpHello && resp.ReplyKind(m.Body.Word) == resp.ReplyNone:
		c.connectFailed(now, node, true)
	case st.phase == rpHello:
		st.open, st.fresh = true, true
		c.write(now, node)
	case st.phase != rpCommand:
		c.link.Stray()
	case resp.ReplyKind(m.Body.Word) == resp.ReplyNone && !st.fresh:
		// The pool's health check finds a socket its peer closed while it was idle, and
		// get_connection reconnects it before the command is written.
		st.open = false
		c.connect(now, node, true)
	case resp.ReplyKind(m.Body.Word) == resp.ReplyNone:
		c.tryFailed(now, node)
	default:
		req := st.req
		c.finish(node)
		c.link.Deliver(now, node, req, m.Body)
	}
}

func (c *redisPyConn) Timer(now sim.Time, arg uint32) {
	node := int(arg)
	st := &c.nodes[node]
	st.ev = 0
	switch st.phase {
	case rpDialing:
		c.connectFailed(now, node, false)
	case rpHello:
		c.connectFailed(now, node, true)
	case rpConnPause:
		c.dial(now, node)
	case rpCommand:
		c.tryFailed(now, node)
	case rpCmdPause: // the try's socket was closed: the next one connects first
		c.connect(now, node, false)
	}
}

func (c *redisPyConn) Restart(sim.Time) { clear(c.nodes) }
