package network

import (
	"fmt"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
)

// Linux's TCP retransmission, the numbers a TCP link (SetTCP) follows: the timeout starts
// at TCPRTOMin (TCP_RTO_MIN, the floor a LAN's round trips never lift it from), doubles
// at each retransmission up to TCPRTOMax (TCP_RTO_MAX), and the kernel gives the data up
// after TCPRetries2 retransmissions (net.ipv4.tcp_retries2's default), when the next
// timeout runs out: 924.6s after the first send. model/redis's ioredis connection
// (conn_ioredis.go, tcpRTOMin, tcpRTOMax, tcpRetries2) uses the same numbers.
const (
	TCPRTOMin   = 200 * time.Millisecond
	TCPRTOMax   = 120 * time.Second
	TCPRetries2 = 15
)

// Retransmission returns when the kernel sends data first sent at sent for the k-th time
// again (k ≥ 1): sent + TCPRTOMin·(2^k − 1), each doubling capped at TCPRTOMax. k =
// TCPRetries2+1 is when it gives the data up.
func Retransmission(sent sim.Time, k int) sim.Time {
	var d time.Duration
	for j := 0; j < k; j++ {
		d += min(TCPRTOMin<<min(j, 30), TCPRTOMax)
	}
	return sent.Add(d)
}

// backlog is a TCP link's messages waiting for a retransmission: in send order (slot+1
// through the slab's next; the head is the oldest), and the head's next retransmission,
// the k-th, due at due.
type backlog struct {
	from, to Endpoint
	head     int32
	k        int
	due      sim.Time
}

// SetTCP makes the directed link from → to a TCP connection: a message that a partition
// would drop (when it is sent or when it arrives) or that loss would lose waits instead,
// with every later message of the link behind it, and goes again at the kernel's
// retransmissions (Retransmission): it arrives at the first one at which the link is up
// (and, with loss, not lost again: a fresh draw each time), plus a latency drawn then.
// After TCPRetries2 retransmissions it is dropped (reason "retries") with the messages
// behind it, as the kernel times the connection out. The link keeps send order among the
// messages it held and after them (FIFO); that the messages a link never held keep it is
// the link's FIFO setting. Duplication and DropNext still apply as on any link. A link
// stays TCP for the run, whatever SetLink later sets.
func (n *Net[M]) SetTCP(from, to Endpoint) error {
	if err := n.checkPair(from, to); err != nil {
		return err
	}
	n.link(from, to).tcp = true
	return nil
}

// SetTCPEndpoint makes every link to and from e a TCP connection (SetTCP), including the
// links of endpoints added later: a server whose clients connect over TCP.
func (n *Net[M]) SetTCPEndpoint(e Endpoint) error {
	if err := n.checkEndpoint("endpoint", e); err != nil {
		return err
	}
	n.eps[e].tcp = true
	n.markTCP(e)
	return nil
}

// markTCP marks the links between e and the TCP endpoints (all of them when e is one).
func (n *Net[M]) markTCP(e Endpoint) {
	all := n.eps[e].tcp
	for o := range Endpoint(len(n.eps)) {
		if o != e && (all || n.eps[o].tcp) {
			n.link(e, o).tcp, n.link(o, e).tcp = true, true
		}
	}
}

// Reset discards the messages the TCP link from → to holds for retransmission (reason
// "reset"), as from's kernel drops a connection's unacknowledged data when from closes
// it: what the sender gave up must not reach the receiver after a partition heals. A
// message already retransmitted (in flight again) is not recalled. It reports how many
// it discarded.
func (n *Net[M]) Reset(from, to Endpoint) int {
	if !n.known(from) || !n.known(to) {
		return 0
	}
	k := slices.IndexFunc(n.backlogs, func(b backlog) bool { return b.from == from && b.to == to })
	if k < 0 {
		return 0
	}
	head := n.backlogs[k].head
	n.backlogs = slices.Delete(n.backlogs, k, k+1)
	l := n.link(from, to)
	l.stop = l.cut
	dropped := 0
	for s := head; s != 0; {
		next := n.slab[s-1].next
		n.drop(s-1, reasonReset)
		s = next
		dropped++
	}
	return dropped
}

// stopped handles slot i on a link that is cut, or holds a TCP backlog: a datagram link
// drops it, a TCP link holds it for its retransmission.
func (n *Net[M]) stopped(i int32, l *link) {
	if !l.tcp {
		n.drop(i, reasonPartition)
		return
	}
	reason := reasonQueued
	if l.cut {
		reason = reasonPartition
	}
	n.hold(i, l, reason)
}

// hold puts slot i in its TCP link's backlog, in send order, and, when it is the oldest
// there, makes its retransmission the backlog's next; reason says why (a cut, a loss, or
// an earlier message held).
func (n *Net[M]) hold(i int32, l *link, reason string) {
	f := &n.slab[i]
	n.stats.Retransmitted++
	n.traceMsg(&n.names.hold, i, reason)
	l.stop = true
	k := slices.IndexFunc(n.backlogs, func(b backlog) bool { return b.from == f.from && b.to == f.to })
	if k < 0 {
		f.next = 0
		n.backlogs = append(n.backlogs, backlog{from: f.from, to: f.to, head: i + 1})
		n.arm(len(n.backlogs) - 1)
		return
	}
	b := &n.backlogs[k]
	if n.slab[b.head-1].id > f.id {
		f.next, b.head = b.head, i+1
		n.arm(k)
		return
	}
	prev := b.head - 1
	for n.slab[prev].next != 0 && n.slab[n.slab[prev].next-1].id < f.id {
		prev = n.slab[prev].next - 1
	}
	f.next, n.slab[prev].next = n.slab[prev].next, i+1
}

// arm schedules backlog k's next event: its head's first retransmission after now, or,
// past the last, the moment the kernel gives up.
func (n *Net[M]) arm(k int) {
	b := &n.backlogs[k]
	now := n.s.Now()
	sent := n.slab[b.head-1].sent
	b.k = 1
	for b.k <= TCPRetries2 && Retransmission(sent, b.k) <= now {
		b.k++
	}
	b.due = max(Retransmission(sent, b.k), now)
	if _, err := n.s.Schedule(b.due, (*events[M])(n), kindRetransmit, uint64(b.from)<<32|uint64(b.to)); err != nil {
		n.s.Fail(fmt.Errorf("network: retransmit: %w", err))
	}
}

// retransmit runs the retransmission due now on from → to (an event of a backlog whose
// head has changed since is stale): if the link is up and the copy not lost, the whole
// backlog goes again, in order, each with a latency drawn now; otherwise the head waits
// for the next one, or, after the last, the backlog is dropped.
func (n *Net[M]) retransmit(from, to Endpoint) {
	k := slices.IndexFunc(n.backlogs, func(b backlog) bool { return b.from == from && b.to == to })
	if k < 0 || n.backlogs[k].due != n.s.Now() {
		return
	}
	b := n.backlogs[k]
	l := n.link(from, to)
	p := &n.profiles[l.profile]
	switch {
	case b.k > TCPRetries2:
		n.backlogs = slices.Delete(n.backlogs, k, k+1)
		l.stop = l.cut
		for s := b.head; s != 0; {
			next := n.slab[s-1].next
			n.drop(s-1, reasonRetries)
			s = next
		}
		return
	case l.cut || p.loss > 0 && n.rng.Float64() < p.loss:
		n.arm(k)
		return
	}
	n.backlogs = slices.Delete(n.backlogs, k, k+1)
	l.stop = l.cut
	now := n.s.Now()
	for s := b.head; s != 0; {
		next := n.slab[s-1].next
		at := max(now.Add(p.lat.draw(n.rng, n.src)), l.last) // the held messages keep their order
		l.last = at
		n.scheduleAt(s-1, at)
		s = next
	}
}

// scheduleAt schedules slot i's arrival at at.
func (n *Net[M]) scheduleAt(i int32, at sim.Time) {
	var err error
	if n.posts {
		err = n.s.Post(at, uint32(i))
	} else {
		_, err = n.s.Schedule(at, (*events[M])(n), kindDeliver, uint64(i))
	}
	if err != nil {
		n.release(i)
		n.s.Fail(fmt.Errorf("network: retransmit: %w", err))
	}
}
