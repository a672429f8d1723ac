package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Handler receives the events scheduled for it. Actors register no closures: an event
// names its handler, an integer kind and an integer argument, so scheduling allocates
// nothing and boxes nothing (a pointer stored in an interface is not an allocation).
type Handler interface {
	// HandleEvent runs one event; kind and arg are what was given to Schedule.
	HandleEvent(now Time, kind int, arg uint64)
}

// EventID names a scheduled event so it can be cancelled. The zero EventID names no
// event. An ID carries its slot's generation, so cancelling an event that already ran,
// or was already cancelled, is a harmless no-op even after the slot is reused.
type EventID uint64

// DefaultMaxPending is the limit on pending events when Config leaves it zero. A healthy
// world of tens of processes keeps a few thousand events pending; a million means a
// runaway feedback loop, which is reported instead of eating memory.
const DefaultMaxPending = 1 << 20

// Config configures a Sim.
type Config struct {
	Seed       uint64 // the run seed; every random stream derives from it
	MaxPending int    // limit on pending events; 0 means DefaultMaxPending
}

// Sim is one simulated run: a virtual true-time clock, the event queue, the run seed and
// the trace. It is strictly single-threaded; parallelism lives in the sweep runner,
// across independent Sims.
type Sim struct {
	now      Time
	seq      uint64
	near     []entry // the events due within farHorizon: sorted, or a heap (see sortedMax)
	heapMode bool    // near is a 4-ary min-heap rather than sorted latest first
	far      []entry // unordered: events scheduled further ahead than farHorizon
	farMin   Time    // no far event is due before farMin
	slots    []slot  // event payloads, addressed by entry.slot and EventID
	free     int32   // head of the free-slot list, -1 when empty
	max      int
	stopped  bool
	err      error
	executed uint64
	seed     uint64
	poster   Poster // runs the posted events (see Post)
	tracer
}

// entry is what the queue orders: the event's time, then key = seq<<seqShift | payload,
// so events at one instant run in schedule order. The payload is a slot index, or for a
// posted event postBit and the event's argument. Packing them into one word keeps an
// entry at 16 bytes, four to a cache line, which is exactly one node's children in the
// 4-ary heap.
type entry struct {
	at  Time
	key uint64
}

// slotBits bounds the slot index (and so max_pending) and a posted event's argument to
// 2^24-1; with the posted flag that leaves 39 bits of sequence number: 5·10^11 events per
// run, most of a day of wall time at full speed.
const (
	slotBits = 24
	slotMask = 1<<slotBits - 1
	postBit  = 1 << slotBits
	seqShift = slotBits + 1
	maxSeq   = 1<<(64-seqShift) - 1
)

// The near events are few in a world of tens of processes (five or so in the standard
// bench workload, sixty with ten clients on locks of their own), and for up to a hundred
// or so a sorted array beats a heap. While there are at most sortedMax of them, near is
// sorted latest first: the next event is the last one, taken in O(1), and a new one is
// shifted into place from the end, or past linearMax placed by binary search and one
// copy. Past sortedMax it becomes a 4-ary heap, and back below sortedMin it is sorted
// again (the gap keeps a queue hovering near one size from switching back and forth).
// Either way the events run in the same (time, seq) order.
const (
	sortedMax = 128
	sortedMin = 32
	linearMax = 32 // past this many, a new event's place is found by binary search
)

// slot returns the entry's slot index, or a posted event's argument.
func (e *entry) slot() int32 { return int32(e.key & slotMask) }

// posted reports whether the entry is a posted event, which has no slot.
func (e *entry) posted() bool { return e.key&postBit != 0 }

// setPos records in e's slot where e is in the queue; a posted event has no slot.
func (s *Sim) setPos(e *entry, pos int32) {
	if !e.posted() {
		s.slots[e.slot()].pos = pos
	}
}

// farHorizon splits the pending events in two. Those due within it are in the heap;
// those due later (timeouts, which are nearly all cancelled, crons, back-offs) wait in an
// unordered list, where scheduling and cancelling cost O(1), and move into the heap when
// the heap reaches their time. The order events run in is the same either way.
const farHorizon = 20 * time.Millisecond

// slot holds an event's payload and its place in the queue.
type slot struct {
	h    Handler
	arg  uint64
	kind int32
	pos  int32 // posFree, posSorted (in near, sorted), -3-i at far[i], or i at near[i] as a heap
	gen  uint32
	next int32 // next free slot while free
}

const (
	posFree   = -1
	posSorted = -2
)

// New returns an empty simulation at true time zero.
func New(cfg Config) (*Sim, error) {
	if cfg.MaxPending < 0 || cfg.MaxPending > slotMask {
		return nil, BadParam("max_pending", cfg.MaxPending, fmt.Sprintf("[0, %d] (0 = default)", slotMask))
	}
	max := cfg.MaxPending
	if max == 0 {
		max = DefaultMaxPending
	}
	return &Sim{free: -1, max: max, farMin: Never, seed: cfg.Seed, tracer: newTracer()}, nil
}

// Now returns the current true time: the time of the event being run, or of the last one.
func (s *Sim) Now() Time { return s.now }

// Seed returns the run seed.
func (s *Sim) Seed() uint64 { return s.seed }

// Rand returns the random stream of the named component of this run (see NewRand).
func (s *Sim) Rand(name string) *rand.Rand { return NewRand(s.seed, name) }

// Source returns the generator under Rand(name)'s stream (see NewSource).
func (s *Sim) Source(name string) *rand.PCG { return NewSource(s.seed, name) }

// Pending returns the number of events waiting to run.
func (s *Sim) Pending() int { return len(s.near) + len(s.far) }

// Executed returns the number of events run so far.
func (s *Sim) Executed() uint64 { return s.executed }

// Schedule arranges for h.HandleEvent(at, kind, arg) to run at true time at. Events at
// one instant run in the order they were scheduled. Scheduling in the past is refused
// (the kernel's promise is that time never moves backward), and so is growing the queue
// past its limit.
func (s *Sim) Schedule(at Time, h Handler, kind int, arg uint64) (EventID, error) {
	if at < s.now || s.Pending() >= s.max || s.seq == maxSeq {
		return 0, s.refuse(at)
	}
	i := s.alloc()
	sl := &s.slots[i]
	sl.h, sl.kind, sl.arg = h, int32(kind), arg
	s.seq++
	e := entry{at: at, key: s.seq<<seqShift | uint64(i)}
	switch {
	case at-s.now > Time(farHorizon):
		sl.pos = -3 - int32(len(s.far))
		s.far = append(s.far, e)
		s.farMin = min(s.farMin, at)
	case s.heapMode || len(s.near) >= linearMax:
		s.push(e)
	default:
		sl.pos = posSorted
		s.insertNew(e)
	}
	return EventID(uint64(sl.gen)<<32 | uint64(i+1)), nil
}

// insertNew is push's shift loop for an event just scheduled, the common case: its seq
// is the highest of all, so it goes after every event due at or before it, and comparing
// the times is enough. The near events must be sorted and fewer than linearMax.
func (s *Sim) insertNew(e entry) {
	near := append(s.near, e)
	j := len(near) - 1
	for ; j > 0 && near[j-1].at <= e.at; j-- {
		near[j] = near[j-1]
	}
	near[j] = e
	s.near = near
}

// Poster runs the posted events of a Sim (see Sim.Post).
type Poster interface {
	// HandlePost runs one posted event; arg is what was given to Post.
	HandlePost(now Time, arg uint32)
}

// SetPoster makes p the runner of posted events and reports whether it could: a Sim has
// one, and once set it stays (a later call changes nothing and returns false).
func (s *Sim) SetPoster(p Poster) bool {
	if p == nil || s.poster != nil {
		return false
	}
	s.poster = p
	return true
}

// Post arranges for the poster's HandlePost(at, arg) to run at true time at. It is
// Schedule for the events of the one actor whose events are most of a run and are never
// cancelled, a network's deliveries: it takes no slot and gives no EventID, so the event
// is just its queue entry, which is a fifth of the kernel's cost per event. A posted event
// runs in the same order as if it had been scheduled: by time, then by the order of Post
// and Schedule calls. arg must be at most 2^24-1, and SetPoster must have been called.
func (s *Sim) Post(at Time, arg uint32) error {
	if at < s.now || s.Pending() >= s.max || s.seq == maxSeq || s.poster == nil || arg > slotMask {
		return s.refusePost(at, arg)
	}
	s.seq++
	e := entry{at: at, key: s.seq<<seqShift | postBit | uint64(arg)}
	switch {
	case at-s.now > Time(farHorizon):
		s.far = append(s.far, e)
		s.farMin = min(s.farMin, at)
	case s.heapMode || len(s.near) >= linearMax:
		s.push(e)
	default:
		s.insertNew(e)
	}
	return nil
}

// refusePost returns the error of a Post that cannot be accepted.
func (s *Sim) refusePost(at Time, arg uint32) error {
	switch {
	case s.poster == nil:
		return errors.New("sim: post: no poster set (see SetPoster)")
	case arg > slotMask:
		return BadParam("arg", arg, fmt.Sprintf("[0, %d]", slotMask))
	}
	return s.refuse(at)
}

// refuse returns the error of a Schedule at at that cannot be accepted.
func (s *Sim) refuse(at Time) error {
	switch n := s.Pending(); {
	case at < s.now:
		return &ParamError{Param: "at", Value: at, Allowed: fmt.Sprintf("[%v, never) (not before now)", s.now)}
	case n >= s.max:
		return fmt.Errorf("schedule at %v: %w: %d events pending (max_pending %d)", at, ErrFull, n, s.max)
	}
	return fmt.Errorf("schedule at %v: %w: %d events scheduled in one run", at, ErrFull, s.seq)
}

// After schedules an event d after now; d must not be negative.
func (s *Sim) After(d time.Duration, h Handler, kind int, arg uint64) (EventID, error) {
	if d < 0 {
		return 0, BadParam("delay", d, "[0s, ∞)")
	}
	return s.Schedule(s.now.Add(d), h, kind, arg)
}

// Cancel removes a pending event and reports whether it was still pending. Timers are
// cancelled constantly (every reply cancels a timeout), so this is O(1) for an event due
// beyond farHorizon and O(log n) in the heap, with no tombstones left behind in the queue.
func (s *Sim) Cancel(id EventID) bool {
	i := int32(uint32(id)) - 1
	if i < 0 || int(i) >= len(s.slots) {
		return false
	}
	sl := &s.slots[i]
	if sl.pos == posFree || sl.gen != uint32(id>>32) {
		return false
	}
	switch {
	case sl.pos == posSorted:
		s.removeSorted(i)
	case sl.pos < 0:
		s.removeFar(int(-3 - sl.pos))
	default:
		s.remove(int(sl.pos))
	}
	s.release(i)
	return true
}

// Step runs the earliest pending event and reports whether there was one to run.
func (s *Sim) Step() bool {
	if s.stopped || !s.ready() {
		return false
	}
	s.run(s.pop())
	return true
}

// NextAt returns the time of the earliest pending event, and false when none is pending.
// With Step it lets a driver run a world one event at a time and look at it between
// events (the viewer's replay does); the events run in the same order as under RunUntil.
func (s *Sim) NextAt() (Time, bool) {
	if !s.ready() {
		return 0, false
	}
	return s.top().at, true
}

// run runs event e, just taken from the queue.
func (s *Sim) run(e entry) {
	if e.at < s.now {
		s.timeBackward(e.at)
	}
	s.now = e.at
	s.executed++
	i := e.slot()
	if e.posted() {
		s.poster.HandlePost(e.at, uint32(i))
		return
	}
	sl := &s.slots[i]
	h, kind, arg := sl.h, int(sl.kind), sl.arg
	sl.h = nil
	sl.pos = posFree
	sl.gen++
	sl.next = s.free
	s.free = i
	h.HandleEvent(e.at, kind, arg)
}

// timeBackward stops everything: the queue handed out an event earlier than now, which
// would let an actor see time go backward. It is always checked: it costs one comparison
// per event, and a kernel that breaks it can be trusted with nothing.
func (s *Sim) timeBackward(at Time) {
	panic(fmt.Sprintf("sim: time moved backward: next event at %v, now %v", at, s.now))
}

// Run runs events until none are left, Stop is called, or an actor calls Fail.
func (s *Sim) Run() error {
	s.loop(Never)
	return s.err
}

// RunUntil runs every event due at or before t, then advances the clock to t (unless the
// run was stopped first), so a run of a given length ends at exactly that true time.
func (s *Sim) RunUntil(t Time) error {
	if t < s.now {
		return &ParamError{Param: "until", Value: t, Allowed: fmt.Sprintf("[%v, never) (not before now)", s.now)}
	}
	if s.loop(t) {
		s.now = t
	}
	return s.err
}

// loop is the one run loop of Run and RunUntil: it runs every event due at or before t,
// in (time, seq) order, until none is due or Stop or Fail ends the run, and reports
// whether it ran out of due events rather than being stopped. Taking the next event and
// running it are written out in it, not called.
func (s *Sim) loop(t Time) bool {
	s.stopped = false
	for !s.stopped {
		// The queue's fast path (near events sorted, the next due before any far one) and
		// run, written out: this loop runs every event of a world, and calling them (Go
		// inlines neither, PGO only sometimes) cost up to 1.5 % of the bench workload. Step
		// takes the same events with pop and run; the reference-model test holds both to
		// one order.
		var e entry
		if n := len(s.near) - 1; n >= 0 && !s.heapMode && s.near[n].at < s.farMin {
			if e = s.near[n]; e.at > t {
				return true
			}
			s.near = s.near[:n]
		} else if s.ready() && s.top().at <= t {
			e = s.pop()
		} else {
			return true
		}
		if e.at < s.now {
			s.timeBackward(e.at)
		}
		s.now = e.at
		s.executed++
		i := e.slot()
		if e.posted() {
			s.poster.HandlePost(e.at, uint32(i))
			continue
		}
		sl := &s.slots[i]
		h, kind, arg := sl.h, int(sl.kind), sl.arg
		sl.h = nil
		sl.pos = posFree
		sl.gen++
		sl.next = s.free
		s.free = i
		h.HandleEvent(e.at, kind, arg)
	}
	return false
}

// Stop makes Run or RunUntil return after the current event.
func (s *Sim) Stop() { s.stopped = true }

// Fail stops the run with err, which Run and RunUntil then return. Actors call it when
// they meet a condition they cannot continue from, such as a full event queue.
func (s *Sim) Fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.stopped = true
}

// Err returns the error the run failed with, if any.
func (s *Sim) Err() error { return s.err }

func (s *Sim) alloc() int32 {
	if s.free >= 0 {
		i := s.free
		s.free = s.slots[i].next
		return i
	}
	s.slots = append(s.slots, slot{gen: 1})
	return int32(len(s.slots) - 1)
}

func (s *Sim) release(i int32) {
	sl := &s.slots[i]
	sl.h = nil
	sl.pos = posFree
	sl.gen++
	sl.next = s.free
	s.free = i
}

func less(a, b *entry) bool { return a.at < b.at || (a.at == b.at && a.key < b.key) }

// top returns the earliest near event; near must not be empty.
func (s *Sim) top() *entry {
	if s.heapMode {
		return &s.near[0]
	}
	return &s.near[len(s.near)-1]
}

// push adds e to the near events.
func (s *Sim) push(e entry) {
	n := len(s.near)
	if s.heapMode || n == sortedMax {
		if !s.heapMode {
			s.toHeap()
		}
		s.near = append(s.near, e)
		s.up(n)
		return
	}
	s.setPos(&e, posSorted)
	s.near = append(s.near, e)
	if n > linearMax {
		s.insertSorted(n, e)
		return
	}
	// Latest first: shift the events due before e one place toward the end.
	j := n
	for ; j > 0 && less(&s.near[j-1], &e); j-- {
		s.near[j] = s.near[j-1]
	}
	s.near[j] = e
}

// insertSorted puts e into its place among the n sorted near events (near has room for
// it at n): a binary search, then one copy. For a long array this beats both shifting
// entry by entry and the heap, whose every pop sifts through unpredictable comparisons.
func (s *Sim) insertSorted(n int, e entry) {
	near := s.near
	lo, hi := 0, n // near[:lo] are due after e, near[hi:n] before it
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if less(&near[m], &e) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	copy(near[lo+1:n+1], near[lo:n])
	near[lo] = e
}

// pop removes and returns the earliest near event; near must not be empty.
func (s *Sim) pop() entry {
	if !s.heapMode {
		last := len(s.near) - 1
		e := s.near[last]
		s.near = s.near[:last]
		return e
	}
	e := s.near[0]
	s.remove(0)
	if len(s.near) < sortedMin {
		s.toSorted()
	}
	return e
}

// toHeap turns the sorted near events into a heap: reversed, they are sorted earliest
// first, which is a heap already.
func (s *Sim) toHeap() {
	slices.Reverse(s.near)
	for i := range s.near {
		s.setPos(&s.near[i], int32(i))
	}
	s.heapMode = true
}

// toSorted turns the near heap back into a sorted array, latest first.
func (s *Sim) toSorted() {
	slices.SortFunc(s.near, func(a, b entry) int {
		switch {
		case less(&a, &b):
			return 1
		case less(&b, &a):
			return -1
		}
		return 0
	})
	for i := range s.near {
		s.setPos(&s.near[i], posSorted)
	}
	s.heapMode = false
}

// removeSorted deletes slot i's event from the sorted near events. Cancelling a near
// event is rare (timeouts wait in the far list), and there are at most sortedMax of
// them, so a scan is enough.
func (s *Sim) removeSorted(i int32) {
	for j := range s.near {
		if s.near[j].key&(postBit|slotMask) == uint64(i) { // not a posted event
			s.near = slices.Delete(s.near, j, j+1)
			return
		}
	}
	panic("sim: a cancelled event is missing from the queue")
}

func (s *Sim) up(i int) {
	h := s.near
	e := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !less(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		s.setPos(&h[i], int32(i))
		i = p
	}
	h[i] = e
	s.setPos(&e, int32(i))
}

func (s *Sim) down(i int) {
	h := s.near
	n := len(h)
	e := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j, end := c+1, min(c+4, n); j < end; j++ {
			if less(&h[j], &h[m]) {
				m = j
			}
		}
		if !less(&h[m], &e) {
			break
		}
		h[i] = h[m]
		s.setPos(&h[i], int32(i))
		i = m
	}
	h[i] = e
	s.setPos(&e, int32(i))
}

// ready makes sure the top of the near events is the earliest pending event, moving far
// events in when the near events reach their time, and reports whether any event is
// pending.
func (s *Sim) ready() bool {
	// farMin is exact after a migration, so a second one (no near events, and a farMin
	// that was stale after a cancel) always moves something: at most two rounds.
	for len(s.far) > 0 && (len(s.near) == 0 || s.farMin <= s.top().at) {
		s.migrate()
	}
	return len(s.near) > 0
}

// migrate moves into the near events every far event due by the earliest near event (or,
// with none, by the earliest far event) or within farHorizon of now, whichever is later,
// so that afterwards every far event is due after the earliest near event.
func (s *Sim) migrate() {
	limit := s.now.Add(farHorizon)
	if len(s.near) > 0 {
		limit = max(limit, s.top().at)
	} else {
		limit = max(limit, s.farMin)
	}
	next := Never
	for i := 0; i < len(s.far); {
		e := s.far[i]
		if e.at > limit {
			next = min(next, e.at)
			i++
			continue
		}
		s.removeFar(i) // moves the last far event to i, which is looked at next
		s.push(e)
	}
	s.farMin = next
}

// removeFar deletes far[i], moving the last far event into its place. farMin stays a
// lower bound.
func (s *Sim) removeFar(i int) {
	last := len(s.far) - 1
	if i != last {
		s.far[i] = s.far[last]
		s.setPos(&s.far[i], -3-int32(i))
	}
	s.far = s.far[:last]
	if last == 0 {
		s.farMin = Never
	}
}

// remove deletes near[i] from the near heap, keeping it ordered.
func (s *Sim) remove(i int) {
	last := len(s.near) - 1
	if i != last {
		s.near[i] = s.near[last]
		s.near = s.near[:last]
		s.down(i)
		s.up(i)
		return
	}
	s.near = s.near[:last]
}
