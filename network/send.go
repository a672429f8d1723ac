package network

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The record writers (emitDeliver, emitMsgRecord: generic over sim.Emitter) are copied for
// each concrete emitter into emit_gen.go; see internal/cmd/emitgen.
//
//go:generate go run ../internal/cmd/emitgen

// Drop reasons, as they appear in the trace.
const (
	reasonLoss      = "loss"
	reasonPartition = "partition"
	reasonDropNext  = "dropped"
	reasonQueued    = "queued"  // a TCP link's hold: behind an earlier message waiting for its retransmission
	reasonRetries   = "retries" // a TCP link gave up after TCPRetries2 retransmissions
	reasonReset     = "reset"   // a TCP link's held message discarded by its sender's close (Reset)
)

// Send sends msg from one endpoint to another. It draws loss, latency and duplication
// from the network's stream and schedules the delivery; the sender learns nothing of the
// outcome, as on a real network. A message whose link is cut when it is sent is dropped
// at once. An unknown endpoint or a full network fails the run (see sim.Sim.Fail):
// both are bugs in the world, not conditions a process could handle.
func (n *Net[M]) Send(from, to Endpoint, msg M) {
	if !n.known(from) || !n.known(to) {
		n.s.Fail(fmt.Errorf("network: send: %w", n.checkPair(from, to)))
		return
	}
	i := n.alloc()
	if i < 0 {
		return
	}
	n.nextID++
	f := &n.slab[i]
	f.msg, f.sent, f.id, f.from, f.to = msg, n.s.Now(), n.nextID, from, to
	n.stats.Sent++
	l := n.link(from, to)
	p := &n.profiles[l.profile]
	switch {
	case p.uniform && !l.stop: // launch, in line
		n.schedule(i, l, p, n.s.Now().Add(p.ubase+time.Duration(uint64n(n.src, p.uspan))))
	case l.stop:
		n.stopped(i, l)
	case p.dropNext > 0:
		if p.dropNext--; p.dropNext == 0 {
			p.uniform = p.wasUniform
		}
		n.drop(i, reasonDropNext)
	case p.loss > 0 && n.rng.Float64() < p.loss:
		if l.tcp {
			n.hold(i, l, reasonLoss)
			return
		}
		n.drop(i, reasonLoss)
	default:
		n.launch(i, l, p)
		if p.dup > 0 && n.rng.Float64() < p.dup {
			n.duplicate(i, l, p)
		}
	}
}

// duplicate sends a second copy of slot i with its own latency draw.
func (n *Net[M]) duplicate(i int32, l *link, p *profile) {
	j := n.alloc()
	if j < 0 {
		return
	}
	n.slab[j] = n.slab[i]
	n.stats.Duplicated++
	n.traceMsg(&n.names.dup, j, "")
	n.launch(j, l, p)
}

// launch draws slot i's latency and schedules its arrival.
func (n *Net[M]) launch(i int32, l *link, p *profile) {
	n.schedule(i, l, p, n.s.Now().Add(p.lat.draw(n.rng, n.src)))
}

// schedule schedules slot i's arrival at at, or later on a FIFO link.
func (n *Net[M]) schedule(i int32, l *link, p *profile, at sim.Time) {
	if p.fifo {
		at = max(at, l.last)
		l.last = at
	}
	var err error
	if n.posts {
		err = n.s.Post(at, uint32(i))
	} else {
		_, err = n.s.Schedule(at, (*events[M])(n), kindDeliver, uint64(i))
	}
	if err != nil {
		n.release(i)
		n.s.Fail(fmt.Errorf("network: send: %w", err))
	}
}

// HandlePost delivers slot arg, posted by launch.
func (e *events[M]) HandlePost(now sim.Time, arg uint32) { (*Net[M])(e).arrive(int32(arg)) }

// HandleEvent runs the network's kernel events.
func (e *events[M]) HandleEvent(now sim.Time, kind int, arg uint64) {
	n := (*Net[M])(e)
	switch kind {
	case kindDeliver:
		n.arrive(int32(arg))
	case kindUnclog:
		n.unclog(Endpoint(arg>>32), Endpoint(uint32(arg)))
	case kindFault:
		n.fire(int(arg))
	case kindHeal:
		n.Heal(FaultID(arg))
	case kindRandomIsolate:
		n.randomIsolate()
	case kindRandomClog:
		n.randomClog()
	case kindRetransmit:
		n.retransmit(Endpoint(arg>>32), Endpoint(uint32(arg)))
	}
}

// arrive handles slot i reaching its destination: a clogged link holds it, a cut link
// drops it, otherwise it is delivered. It is never inlined, so that HandlePost always
// inlines into the kernel's run loop: arrive's cost sits at PGO's budget for hot calls,
// and whether it fitted turned on the profile's noise.
//
//go:noinline
func (n *Net[M]) arrive(i int32) {
	f := &n.slab[i]
	l := n.link(f.from, f.to)
	if !l.clogged {
		n.deliver(i, l)
		return
	}
	n.stats.Held++
	n.traceMsg(&n.names.hold, i, "")
	f.next = 0
	if l.heldTail == 0 {
		l.heldHead = i + 1
	} else {
		n.slab[l.heldTail-1].next = i + 1
	}
	l.heldTail = i + 1
}

// deliver hands slot i to its receiver, unless its link l is cut now (or, a TCP link,
// holds earlier messages for their retransmission). The slot is freed after the receiver
// returns: until then the receiver reads the message in place.
func (n *Net[M]) deliver(i int32, l *link) {
	if l.stop {
		n.stopped(i, l)
		return
	}
	f := &n.slab[i]
	n.stats.Delivered++
	n.traceDeliver(i)
	// The receiver's own sends may grow the slab; the message it reads stays where it is
	// (the old array lives on while referenced, and nobody writes it any more).
	if invariant.Enabled {
		n.receiving++ // counted delivered, not yet released: see CheckConservation
	}
	n.eps[f.to].r.Receive(n.s.Now(), f.from, f.to, &f.msg)
	n.release(i)
	if invariant.Enabled {
		n.receiving--
		n.checkConservation()
	}
}

func (n *Net[M]) drop(i int32, reason string) {
	switch reason {
	case reasonLoss:
		n.stats.Lost++
	case reasonDropNext:
		n.stats.Dropped++
	case reasonRetries:
		n.stats.TimedOut++
	case reasonReset:
		n.stats.Reset++
	default:
		n.stats.Partitioned++
	}
	n.traceMsg(&n.names.drop, i, reason)
	n.release(i)
	if invariant.Enabled {
		n.checkConservation()
	}
}

// unclog ends the clog of from → to if its time has come (a later, overlapping clog
// extends it) and delivers what it held, in send order, as one burst.
func (n *Net[M]) unclog(from, to Endpoint) {
	l := n.link(from, to)
	if !l.clogged || n.s.Now() < l.clogEnd {
		return
	}
	held := n.scratch[:0]
	for s := l.heldHead; s != 0; s = n.slab[s-1].next {
		held = append(held, s-1)
	}
	l.clogged, l.heldHead, l.heldTail = false, 0, 0
	slices.SortStableFunc(held, func(a, b int32) int { return cmp.Compare(n.slab[a].id, n.slab[b].id) })
	n.s.Trace(Actor, RecUnclog, n.nameField("from", from), n.nameField("to", to), sim.Int("held", int64(len(held))))
	for _, s := range held {
		n.deliver(s, n.link(from, to)) // looked up again: a receiver may cut the link
	}
	n.scratch = held[:0]
}

// traceDeliver records slot i's delivery: the hottest record of a world, one per message.
func (n *Net[M]) traceDeliver(i int32) {
	f := &n.slab[i]
	latency := n.s.Now().Sub(f.sent)
	if !n.s.Tracing() {
		emitDeliverHasher(n.s.Hasher(), n, f, latency)
	} else {
		emitDeliverTexter(n.s.Texter(), n, f, latency)
	}
}

// traceMsg records what happened to slot i: a drop with its reason, a duplicate, a hold.
func (n *Net[M]) traceMsg(kind *sim.Name, i int32, reason string) {
	f := &n.slab[i]
	if !n.s.Tracing() {
		emitMsgRecordHasher(n.s.Hasher(), n, kind, f, reason)
	} else {
		emitMsgRecordTexter(n.s.Texter(), n, kind, f, reason)
	}
}

// emitDeliver writes a delivery record: the message's endpoints and id (the head every
// message record starts with; written out, not called, on this hottest path), the message itself
// (a note when the world's processes fold it themselves, see SetDeliveryNotes), and its
// latency.
//
//lint:ignore U1000 the template internal/cmd/emitgen copies into emit_gen.go once per emitter; never called itself
func emitDeliver[M any, E sim.Emitter[E]](e E, n *Net[M], f *flight[M], latency time.Duration) {
	e = e.Begin(n.names.net, n.names.deliver).Name("from", n.eps[f.from].nm).Name("to", n.eps[f.to].nm).Int("id", int64(f.id))
	if n.parts != nil {
		switch {
		case !n.noted:
			i, i2, s1, s2 := n.parts(&f.msg)
			e = e.Custom("msg", i, i2, s1, s2, n.format)
		case e.Notes(): // a note is for readers: the hash skips it, so it is not even packed
			i, i2, s1, s2 := n.parts(&f.msg)
			e = e.NoteCustom("msg", i, i2, s1, s2, n.format)
		}
	}
	e.Dur("latency", latency).End()
}

// emitMsgRecord writes a drop, duplicate or hold record: the message's endpoints and id,
// the message, then a drop's reason (or a TCP link's hold's: a clog's hold has none).
//
//lint:ignore U1000 the template internal/cmd/emitgen copies into emit_gen.go once per emitter; never called itself
func emitMsgRecord[M any, E sim.Emitter[E]](e E, n *Net[M], kind *sim.Name, f *flight[M], reason string) {
	e = e.Begin(n.names.net, *kind).Name("from", n.eps[f.from].nm).Name("to", n.eps[f.to].nm).Int("id", int64(f.id))
	if n.parts != nil {
		i, i2, s1, s2 := n.parts(&f.msg)
		e = e.Custom("msg", i, i2, s1, s2, n.format)
	}
	if reason != "" {
		e = e.Str("reason", reason)
	}
	e.End()
}

func (n *Net[M]) nameField(key string, e Endpoint) sim.Field { return sim.Str(key, n.eps[e].name) }

// alloc returns a free slot, or -1 after failing the run when the limit is reached.
func (n *Net[M]) alloc() int32 {
	if n.inFlight >= n.maxIn {
		n.s.Fail(fmt.Errorf("network: send: %w: %d messages in flight (max_in_flight %d)", ErrFull, n.inFlight, n.maxIn))
		return -1
	}
	n.inFlight++
	if n.free >= 0 {
		i := n.free
		n.free = n.slab[i].next
		return i
	}
	n.slab = append(n.slab, flight[M]{})
	return int32(len(n.slab) - 1)
}

// release frees slot i. The message is left in place until the slot is reused (clearing
// it cost a tenth of a delivery): the slab keeps alive at most one old message per slot,
// and slots are bounded by max_in_flight.
func (n *Net[M]) release(i int32) {
	f := &n.slab[i]
	f.next = n.free
	n.free = i
	n.inFlight--
}
