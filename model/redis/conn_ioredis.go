package redis

import (
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// offlineConn is ConnOffline, ioredis's connections (under node-redlock), with the TCP
// connection under each (see ConnOffline).
type offlineConn struct {
	queuedConn
	nodes []offlineState
	hsSeq uint64
}

func newOfflineConn(link *model.Link, n int) *offlineConn {
	o := &offlineConn{queuedConn: *newQueuedConn(link, n), nodes: make([]offlineState, n)}
	for i := range o.nodes { // ioredis connects as the process starts, when every host is in its first boot
		o.nodes[i].boot = 1
	}
	return o
}

// The timers of an offline connection: Link.After's arg is node<<1 | one of these.
const (
	timerReconnect = 0 // ioredis reconnects to a node
	timerTCP       = 1 // the kernel's TCP timer on a node's connection
)

func (c *offlineConn) Timer(now sim.Time, arg uint32) {
	node := int(arg >> 1)
	if arg&1 == timerReconnect {
		c.reconnect(now, node)
		return
	}
	c.tcpTimer(now, node)
}

func (c *offlineConn) Send(now sim.Time, node int, req lock.Req, p *lock.Payload, _ time.Duration) {
	c.note(node, req, p)
	c.offlineSend(now, node, req, p)
}

func (c *offlineConn) Abandon(_ sim.Time, node int, req lock.Req) { c.offlineAbandon(node, req) }

// Receive takes node's answers: an ack of a SYN or a retransmission, a reply to the
// connection's own handshake or probe, or a reply to a request (see offlineAnswered).
func (c *offlineConn) Receive(now sim.Time, node int, id uint64, m *model.Message) {
	switch {
	case m.Kind == model.MsgAck:
		c.acked(node, id, m)
	case m.Kind == model.MsgReply && id >= model.ConnID:
		c.offlineControl(now, node, id, m)
	case m.Kind == model.MsgReply && !c.offlineAnswered(now, node, lock.Req(id), m):
	default:
		c.queuedConn.Receive(now, node, id, m)
	}
}

func (c *offlineConn) Restart(now sim.Time) {
	c.queuedConn.Restart(now)
	clear(c.nodes)
	for i := range c.nodes { // ioredis connects as the new process starts
		c.nodes[i].down = true
		c.reconnect(now, i)
	}
}

// offlineState is ioredis's connection to one node under ConnOffline, with the TCP
// connection under it: the kernel retransmits what the server's host does not
// acknowledge, which is how ioredis, with no timeout of its own, learns that a host lost
// power (a reset once it is back, ETIMEDOUT if it stays away).
type offlineState struct {
	down     bool        // closed, and reconnecting
	attempts int         // ioredis's retryAttempts: closes since the connection was last ready
	hs       uint64      // the reconnect's handshake awaited; 0: none
	sent     []parkedReq // written and unanswered (ioredis's commandQueue), in order
	queue    []parkedReq // waiting for the connection (its offline queue), in order

	boot    uint32        // the host boot the open connection is bound to (Message.Conn)
	tcpEv   sim.EventID   // the kernel's timer: retransmission, or the connect's SYN; 0: none
	tcpN    int           // retransmissions, or SYNs resent, since the timer was armed
	tcpWait time.Duration // how long the connect has waited, on the client's clock
	probe   uint64        // the retransmission awaiting the host's answer; 0: none
}

// ioredis's defaults: retryStrategy's step and cap, maxRetriesPerRequest, and
// connectTimeout, which ends a connect that got no answer (a host without power).
const (
	ioredisRetryStep      = 50 * time.Millisecond
	ioredisRetryCap       = 2 * time.Second
	ioredisMaxRetries     = 20
	ioredisConnectTimeout = 10 * time.Second
)

// Linux's TCP timers (include/net/tcp.h, net/ipv4/tcp_timer.c and the default sysctls),
// which decide when a client with no timeout of its own learns that a server's host lost
// power.
const (
	// tcpRTOMin is TCP_RTO_MIN, the floor of the retransmission timeout, which on a LAN
	// is the timeout itself (the round trip and a jiffy add a few ms: 204ms on loopback).
	// Unacknowledged data is probed first by the tail-loss probe, about tcpRTOMin after it
	// was sent (2 SRTT + TCP_RTO_MIN, capped by the timeout), then retransmitted at each
	// timeout, which starts at tcpRTOMin after the probe and doubles up to tcpRTOMax
	// (TCP_RTO_MAX): at 0.2, 0.4, 0.8, 1.6, 3.2s ... after the send.
	tcpRTOMin = 200 * time.Millisecond
	tcpRTOMax = 120 * time.Second
	// tcpRetries2 is net.ipv4.tcp_retries2: the timeout after that many retransmissions
	// (past the probe) fails the connection with ETIMEDOUT, about 925s after the send.
	tcpRetries2 = 15
	// tcpSynRTO is TCP_TIMEOUT_INIT, a SYN's timeout. Since Linux 6.5 the first
	// tcpSynLinear timeouts stay at it (tcp_syn_linear_timeouts 4, and the kernel's count
	// starts one later) before doubling: an unanswered SYN goes again 1, 2, 3, 4, 5 and 7s
	// after the first (older kernels: 1, 3 and 7s), until ioredisConnectTimeout.
	tcpSynRTO    = time.Second
	tcpSynLinear = 5
)

// tcpBackoff returns the kernel's next timeout after n probes of unacknowledged data.
func tcpBackoff(n int) time.Duration {
	if n <= 1 {
		return tcpRTOMin
	}
	return min(tcpRTOMin<<(n-1), tcpRTOMax)
}

// synBackoff returns the kernel's next SYN timeout after n retransmissions of the SYN.
func synBackoff(n int) time.Duration {
	if n < tcpSynLinear {
		return tcpSynRTO
	}
	return tcpSynRTO << (n - tcpSynLinear + 1)
}

// connSYN marks a request as a new connection's first segment (Message.Conn): the host, if
// up, acknowledges it at once, whatever its process is doing.
const connSYN = ^uint32(0)

// offlineSend writes a request on node's connection under ConnOffline, or, while that
// connection is down, queues it: it goes out after the reconnect.
func (c *offlineConn) offlineSend(now sim.Time, node int, req lock.Req, p *lock.Payload) {
	oc := &c.nodes[node]
	if oc.down {
		oc.queue = append(oc.queue, parkedReq{req: req, body: *p})
		return
	}
	oc.sent = append(oc.sent, parkedReq{req: req, body: *p})
	c.offlineWrite(now, node, req, p)
}

// offlineWrite puts a request on node's open connection, and starts the kernel's
// retransmission timer unless data written before is still unacknowledged.
func (c *offlineConn) offlineWrite(now sim.Time, node int, req lock.Req, p *lock.Payload) {
	oc := &c.nodes[node]
	m := model.Request(uint64(req), *p)
	m.Conn = oc.boot
	c.link.Send(node, m)
	if oc.tcpEv == 0 {
		c.armTCP(now, node, tcpRTOMin)
	}
}

// armTCP (re)starts the kernel's timer on node's connection, after d on the client's clock.
func (c *offlineConn) armTCP(now sim.Time, node int, d time.Duration) {
	oc := &c.nodes[node]
	c.link.Cancel(oc.tcpEv)
	c.tcpAfter(now, node, d)
	if oc.tcpN = 0; oc.down {
		oc.tcpWait = 0
	}
}

// tcpAfter sets the kernel's timer on node's connection to fire after d on the client's
// clock, for this incarnation of the process.
func (c *offlineConn) tcpAfter(now sim.Time, node int, d time.Duration) {
	c.nodes[node].tcpEv = c.link.After(now, d, uint32(node)<<1|timerTCP)
}

// disarmTCP stops the kernel's timer on node's connection: everything written is
// acknowledged, or the connection is gone.
func (c *offlineConn) disarmTCP(node int) {
	oc := &c.nodes[node]
	c.link.Cancel(oc.tcpEv)
	oc.tcpEv, oc.probe = 0, 0
}

// tcpTimer is the kernel's timer on node's connection. While connecting, it sends the
// handshake's SYN again until ioredis's connectTimeout ends the attempt, which closes the
// connection. Connected, it probes with the unacknowledged data (the tail-loss probe, then
// a retransmission at each timeout; see tcpRTOMin), and after tcpRetries2 retransmissions
// fails the connection with ETIMEDOUT, which ioredis closes.
func (c *offlineConn) tcpTimer(now sim.Time, node int) {
	oc := &c.nodes[node]
	oc.tcpEv = 0
	if oc.down {
		if oc.hs == 0 {
			return
		}
		oc.tcpWait += min(synBackoff(oc.tcpN), ioredisConnectTimeout-oc.tcpWait)
		if oc.tcpWait >= ioredisConnectTimeout {
			oc.hs = 0
			c.closed(now, node)
			return
		}
		c.sendSYN(node)
		oc.tcpN++
		c.tcpAfter(now, node, min(synBackoff(oc.tcpN), ioredisConnectTimeout-oc.tcpWait))
		return
	}
	if oc.tcpN == 1+tcpRetries2 { // the tail-loss probe, then the retransmissions
		c.offlineClose(now, node) // ETIMEDOUT
		return
	}
	c.hsSeq++
	oc.probe = model.ConnID | c.hsSeq
	c.link.Send(node, model.Probe(oc.probe, oc.boot))
	oc.tcpN++
	c.tcpAfter(now, node, tcpBackoff(oc.tcpN))
}

// acked takes a host's acknowledgement under ConnOffline: of the reconnect's SYN (the new
// connection is bound to the host's boot, and the handshake's PING waits for the server's
// process), or of a retransmission (the data reached the host, which knows the connection:
// the server is merely slow). Either way the kernel stops its timer.
func (c *offlineConn) acked(node int, id uint64, m *model.Message) {
	oc := &c.nodes[node]
	switch {
	case id == oc.hs && oc.hs != 0:
		oc.boot = m.Conn
	case id == oc.probe && oc.probe != 0:
	default:
		c.link.Stray()
		return
	}
	c.disarmTCP(node)
}

// offlineControl takes a reply to one of the connection's own messages under
// ConnOffline: the reconnect's handshake, or a reset answering a retransmission (the host
// rebooted since the connection opened, or its process is gone), which closes it.
func (c *offlineConn) offlineControl(now sim.Time, node int, id uint64, m *model.Message) {
	oc := &c.nodes[node]
	if id == oc.probe && oc.probe != 0 {
		c.offlineClose(now, node)
		return
	}
	c.reconnected(now, node, id, m)
}

// offlineAnswered takes a reply to req from node under ConnOffline. A refusal (the node's
// process is gone, or its host rebooted since the connection opened) closes the connection
// and keeps req, with every other unanswered request, for after the reconnect: it reports
// false, and the algorithm hears nothing. A NOSCRIPT to an EVALSHA sends it again as EVAL
// and reports false too. Any other reply is the request's answer: it reports true.
func (c *offlineConn) offlineAnswered(now sim.Time, node int, req lock.Req, m *model.Message) bool {
	r := &m.Body
	oc := &c.nodes[node]
	i := 0
	for i < len(oc.sent) && oc.sent[i].req != req {
		i++
	}
	if i == len(oc.sent) {
		return !oc.down // a refusal of a request already queued again: nobody waits for it
	}
	if resp.ReplyKind(r.Word) != resp.ReplyNone {
		if p := &oc.sent[i]; noScript(r) && resp.Op(p.body.Word&0xff) == resp.OpEvalSHA {
			// Every EVALSHA that comes back NOSCRIPT is sent again as EVAL, under the same id,
			// not only the last one sent (retryAsEval's rule): after a reconnect the queued
			// EVALSHAs go out together, and a restarted server's empty script cache refuses
			// each (node-redlock then EVALs each, in order, as the conformance script
			// kill-3s shows on a real redis-server).
			asEval(&p.body)
			c.stats.Resent++
			c.offlineWrite(now, node, req, &p.body)
			return false
		}
		oc.sent = append(oc.sent[:i], oc.sent[i+1:]...)
		if len(oc.sent) == 0 {
			c.disarmTCP(node)
		} else {
			c.armTCP(now, node, tcpRTOMin) // an answer acknowledges the data before it
		}
		return true
	}
	c.offlineClose(now, node)
	return false
}

// offlineClose closes node's connection under ConnOffline: what was sent and not answered
// is resent first after the reconnect, then the offline queue.
func (c *offlineConn) offlineClose(now sim.Time, node int) {
	oc := &c.nodes[node]
	oc.queue = append(append([]parkedReq(nil), oc.sent...), oc.queue...)
	oc.sent = oc.sent[:0]
	c.closed(now, node)
}

// offlineAbandon forgets req, which the algorithm stopped waiting for: ioredis would
// still deliver its answer, to nobody, so only the bookkeeping of answers goes (a reply
// lost on the way would otherwise stay in it for ever). A queued req still goes out.
func (c *offlineConn) offlineAbandon(node int, req lock.Req) {
	oc := &c.nodes[node]
	for i := range oc.sent {
		if oc.sent[i].req == req {
			oc.sent = append(oc.sent[:i], oc.sent[i+1:]...)
			return
		}
	}
}

// closed is ioredis's close handler for node's connection: count the attempt, fail the
// queued commands every maxRetriesPerRequest + 1 closes, and reconnect after
// retryStrategy's delay.
func (c *offlineConn) closed(now sim.Time, node int) {
	c.disarmTCP(node)
	oc := &c.nodes[node]
	oc.down, oc.hs, oc.boot = true, 0, 0
	oc.attempts++
	c.link.After(now, min(ioredisRetryStep*time.Duration(oc.attempts), ioredisRetryCap), uint32(node)<<1|timerReconnect)
	if oc.attempts%(ioredisMaxRetries+1) != 0 {
		return
	}
	q := oc.queue
	oc.queue = nil
	for _, p := range q { // MaxRetriesPerRequestError
		if c.link.Dead() {
			return
		}
		c.link.Deliver(now, node, p.req, resp.NoReply.Payload())
	}
}

// reconnect opens a new connection to node: a PING handshake, as ioredis's ready check,
// whose first segment is the SYN; the kernel sends it again while no host answers.
func (c *offlineConn) reconnect(now sim.Time, node int) {
	oc := &c.nodes[node]
	if !oc.down {
		return
	}
	c.hsSeq++
	oc.hs = model.ConnID | c.hsSeq
	c.stats.Connects++
	c.sendSYN(node)
	c.armTCP(now, node, tcpSynRTO)
}

// sendSYN sends node's handshake as a new connection's first segment.
func (c *offlineConn) sendSYN(node int) {
	m := model.Request(c.nodes[node].hs, pingPayload())
	m.Conn = connSYN
	c.link.Send(node, m)
}

// reconnected answers a reconnect's handshake under ConnOffline: refused, the connection
// closes again; answered, it is ready, bound to the answering host's boot, and the queued
// requests go out in order.
func (c *offlineConn) reconnected(now sim.Time, node int, hs uint64, m *model.Message) {
	oc := &c.nodes[node]
	if oc.hs != hs || hs == 0 {
		c.link.Stray()
		return
	}
	oc.hs = 0
	if resp.ReplyKind(m.Body.Word) == resp.ReplyNone {
		c.closed(now, node)
		return
	}
	c.disarmTCP(node)
	oc.down, oc.attempts, oc.boot = false, 0, m.Conn
	q := oc.queue
	oc.queue = nil
	for _, p := range q {
		oc.sent = append(oc.sent, p)
		c.note(node, p.req, &p.body)
		c.offlineWrite(now, node, p.req, &p.body)
	}
}
