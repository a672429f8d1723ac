package model

import (
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Conn is a client process's connection to its lock service's servers: whatever the lock
// library's driver does between the algorithm and the network (go-redis's handshakes and
// closed connections, ioredis's offline queue and the kernel's TCP timers under it, a
// NOSCRIPT answered by resending the script's source, a ZooKeeper client's session). The
// client process knows no protocol: it hands the connection the algorithm's requests and
// whatever its servers send, and the connection, which may read the protocol, decides what
// goes on the network and what reaches the algorithm, through its Link. A profile chooses
// the connection (ClientConfig.Conn); DirectConn is one that adds nothing.
//
// A connection lives as long as its process object, across restarts (Restart forgets its
// state), so that the ids it numbers its own messages with keep growing from one life to
// the next: a handshake's id is in the trace, and a restart must not reuse one.
type Conn interface {
	// Send carries the algorithm's request req (body p) to server node. ctx is the deadline
	// of the context the library hands its driver with it, from now (0: none): only a
	// connection that models a driver which reads contexts heeds it.
	Send(now sim.Time, node int, req lock.Req, p *lock.Payload, ctx time.Duration)
	// Abandon says the algorithm stopped waiting for req from node (lock.OutAbandon).
	Abandon(now sim.Time, node int, req lock.Req)
	// Receive takes a reply, an ack or a push from server node. id is m.ReqID without the
	// process's incarnation: an algorithm's request id, or one of the connection's own
	// (ConnID and above). Replies to an earlier incarnation never reach it.
	Receive(now sim.Time, node int, id uint64, m *Message)
	// Timer runs a timer the connection set with Link.After.
	Timer(now sim.Time, arg uint32)
	// Restart forgets every connection: the process died and starts again (a connection
	// that connects eagerly, as ioredis does, connects anew).
	Restart(now sim.Time)
	// Stats returns what the connection counted.
	Stats() ConnStats
}

// ConnStats counts what a connection did beyond carrying requests.
type ConnStats struct {
	Connects uint64 // connections opened (handshakes sent)
	Resent   uint64 // requests sent again on the connection's own account (a NOSCRIPT answered with EVAL, a driver's retry)
}

// NewConn builds a client's connection to its n servers, talking through link.
type NewConn func(link *Link, n int) Conn

// ConnID is the first request id a connection may give its own messages (handshakes,
// probes): the algorithm's ids never come near it.
const ConnID = 1 << (lifeShift - 1)

// Link is what a connection may ask of the client process that owns it. A side of a
// SplitConn has a Link of its own, which numbers its servers from base and marks its
// request ids and timer arguments, so that neither side knows of the other.
type Link struct {
	c        *Client
	base     int    // the process's index of the link's server 0
	reqTag   uint64 // set in every request id the link sends (SplitReq on a split's first side)
	timerTag uint32 // set in every timer argument the link sets (splitTimer on its second)
}

// Send sends m to server node, as a message of the process's current incarnation (its
// request id carries it: replies to an earlier one are dropped before any connection
// sees them).
func (l *Link) Send(node int, m Message) {
	c := l.c
	m.ReqID |= l.reqTag | c.life<<lifeShift
	c.net.Send(c.ep, c.cfg.Nodes[l.base+node], m)
}

// SendRequest sends request req with body p to server node, as Send does with
// Request(req, *p). It builds the message in the network's call itself: on the path of
// every request, a message built first and then handed on was copied twice more.
func (l *Link) SendRequest(node int, req uint64, p *lock.Payload) {
	c := l.c
	c.net.Send(c.ep, c.cfg.Nodes[l.base+node], Message{Kind: MsgCommand, ReqID: req | l.reqTag | c.life<<lifeShift, Body: *p})
}

// Deliver feeds the algorithm body p as server node's reply to req (lock.PushReq: a push),
// and carries out what it asks.
func (l *Link) Deliver(now sim.Time, node int, req lock.Req, p lock.Payload) {
	c := l.c
	outs, err := c.m.Reply(c.mono(now), l.base+node, req, p)
	c.feed(now, outs, err)
}

// After runs the connection's Timer(arg) after d on the process's clock, unless the
// process dies first (a timer of an earlier incarnation never fires).
func (l *Link) After(now sim.Time, d time.Duration, arg uint32) sim.EventID {
	c := l.c
	return c.at(c.clk.TimerFires(now, d), cevConn, uint64(arg|l.timerTag)|c.life<<32)
}

// Cancel cancels a timer After set.
func (l *Link) Cancel(id sim.EventID) { l.c.s.Cancel(id) }

// Dead reports whether the process died while the connection was handing it replies: it
// must stop.
func (l *Link) Dead() bool { return l.c.state == csDead }

// Stray counts a message nobody had use for.
func (l *Link) Stray() { l.c.stats.Stray++ }

// Rand returns the connection's own random stream, "<client>/conn", for what its driver
// randomises (go-redis's retry backoff): its draws leave the algorithm's and the
// workload's streams alone, and a connection that draws nothing creates none. A restarted
// process continues it.
func (l *Link) Rand() *rand.Rand {
	c := l.c
	if c.connRand == nil {
		c.connRand = c.s.Rand(c.cfg.Name + "/conn")
	}
	return c.connRand
}

// Endpoint returns server node's network endpoint.
func (l *Link) Endpoint(node int) network.Endpoint { return l.c.cfg.Nodes[l.base+node] }

// DirectConn is a connection that adds nothing: each request goes out as it is, each reply
// and push reaches the algorithm as it came, and a request the algorithm gave up on is
// forgotten. It reads no protocol.
func DirectConn(link *Link, _ int) Conn { return &direct{link: link} }

type direct struct{ link *Link }

func (d *direct) Send(_ sim.Time, node int, req lock.Req, p *lock.Payload, _ time.Duration) {
	d.link.SendRequest(node, uint64(req), p)
}

func (d *direct) Abandon(sim.Time, int, lock.Req) {}

func (d *direct) Receive(now sim.Time, node int, id uint64, m *Message) {
	switch m.Kind {
	case MsgReply:
		d.link.Deliver(now, node, lock.Req(id), m.Body)
	case MsgPush:
		d.link.Deliver(now, node, lock.PushReq, m.Body)
	default:
		d.link.Stray()
	}
}

func (d *direct) Timer(sim.Time, uint32) {}
func (d *direct) Restart(sim.Time)       {}
func (d *direct) Stats() ConnStats       { return ConnStats{} }

// SplitReq is the bit a SplitConn's first side sets in the request ids it sends, and its
// servers' replies carry back: within the low 32 bits a trace keeps of an id, and above
// any id a connection or its algorithm numbers (each numbers from 1, its own from ConnID,
// whose low 32 bits restart at 0), so that a trace can tell whose message it shows
// (SplitProtocol).
const SplitReq = 1 << 31

// splitTimer is the bit a SplitConn's second side sets in its timer arguments: above the
// node and kind bits the Redis connections pack, and above any ZooKeeper session's
// generation a run reaches (2^23 connections).
const splitTimer = 1 << 31

// SplitConn returns the connection of a process whose algorithm talks to two services at
// once (the hybrid lock: Redis masters first, a ZooKeeper ensemble after them): its
// servers 0..first−1 are reached through a's connection, the rest through b's, each
// numbering its own servers from 0 and each with its own Link, so that neither knows of
// the other. a's request ids carry SplitReq (taken off again before a sees a reply) and
// b's timer arguments splitTimer, so that the two sides' ids and timers, each numbered
// from 1, never meet. A split is not split again.
func SplitConn(a NewConn, first int, b NewConn) NewConn {
	return func(link *Link, n int) Conn {
		la := &Link{c: link.c, base: link.base, reqTag: SplitReq}
		lb := &Link{c: link.c, base: link.base + first, timerTag: splitTimer}
		return &split{a: a(la, first), b: b(lb, n-first), first: first}
	}
}

type split struct {
	a, b  Conn
	first int
}

func (s *split) Send(now sim.Time, node int, req lock.Req, p *lock.Payload, ctx time.Duration) {
	if node < s.first {
		s.a.Send(now, node, req, p, ctx)
		return
	}
	s.b.Send(now, node-s.first, req, p, ctx)
}

func (s *split) Abandon(now sim.Time, node int, req lock.Req) {
	if node < s.first {
		s.a.Abandon(now, node, req)
		return
	}
	s.b.Abandon(now, node-s.first, req)
}

func (s *split) Receive(now sim.Time, node int, id uint64, m *Message) {
	if node < s.first {
		s.a.Receive(now, node, id&^SplitReq, m)
		return
	}
	s.b.Receive(now, node-s.first, id, m)
}

func (s *split) Timer(now sim.Time, arg uint32) {
	if arg&splitTimer != 0 {
		s.b.Timer(now, arg&^splitTimer)
		return
	}
	s.a.Timer(now, arg)
}

func (s *split) Restart(now sim.Time) {
	s.a.Restart(now)
	s.b.Restart(now)
}

func (s *split) Stats() ConnStats {
	a, b := s.a.Stats(), s.b.Stats()
	return ConnStats{Connects: a.Connects + b.Connects, Resent: a.Resent + b.Resent}
}

// SplitProtocol is the protocol of a world whose clients talk to two services through a
// SplitConn: A is the first side's (RESP), B the second's (ZooKeeper's). Their payloads
// cannot be told apart by their words (RESP's "(integer) 0" and ZooKeeper's ping reply
// pack alike), so a trace renders a message in A's words when its request id carries
// SplitReq, as the first side's requests and their replies do, and in B's otherwise: the
// second side's, its servers' pushes and what they send one another (a Redis group's
// replication stays inside its endpoint). Its own Append methods, for a payload without
// its message, speak B.
type SplitProtocol struct{ A, B lock.Protocol }

// Of returns the protocol of the message with request id id.
func (p SplitProtocol) Of(id uint64) lock.Protocol {
	if id&SplitReq != 0 {
		return p.A
	}
	return p.B
}

// Name returns both protocols' names, "resp+zookeeper".
func (p SplitProtocol) Name() string { return p.A.Name() + "+" + p.B.Name() }

// AppendRequest appends q in B's words.
func (p SplitProtocol) AppendRequest(dst []byte, q *lock.Payload) []byte {
	return p.B.AppendRequest(dst, q)
}

// AppendReply appends q in B's words.
func (p SplitProtocol) AppendReply(dst []byte, q *lock.Payload) []byte {
	return p.B.AppendReply(dst, q)
}

// AppendPush appends q in B's words.
func (p SplitProtocol) AppendPush(dst []byte, q *lock.Payload) []byte { return p.B.AppendPush(dst, q) }
