package network

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Endpoint names one attachment point of the network (a Redis node, a client) by a small
// integer, so per-link state lives in slices rather than maps.
type Endpoint int

// Receiver is what an endpoint does with a delivered message. msg points into the
// network's own storage and is valid only during the call: a receiver that keeps the
// message copies it (messages are values). Passing it by pointer saves a copy of the whole
// message per delivery, and deliveries are most of a world's events. A crashed process
// still receives: what it does with the message is the process's business, not the
// network's.
type Receiver[M any] interface {
	Receive(now sim.Time, from, to Endpoint, msg *M)
}

// Stats counts what the network did with messages. A duplicate counts as a second copy:
// Sent + Duplicated = Delivered + Lost + Partitioned + Dropped + TimedOut + Reset +
// InFlight at all times.
type Stats struct {
	Sent        uint64 // messages accepted by Send
	Duplicated  uint64 // extra copies made by duplication
	Delivered   uint64 // copies handed to a receiver
	Lost        uint64 // copies dropped by the loss draw
	Partitioned uint64 // copies dropped because their link was cut at send or arrival
	Dropped     uint64 // copies dropped by DropNext
	Held        uint64 // copies held by a clog (later delivered or dropped)
	// Retransmitted counts the copies a TCP link (SetTCP) held for retransmission instead
	// of dropping them (later delivered, or dropped with TimedOut or Reset).
	Retransmitted uint64
	TimedOut      uint64 // copies a TCP link gave up after TCPRetries2 retransmissions
	Reset         uint64 // copies held by a TCP link that its sender's close discarded (Reset)
}

// Actor is the actor of every network trace record.
const Actor = "net"

// The kinds of the network's trace records. Consumers of the trace switch on these, never
// on spelled-out strings.
const (
	RecDeliver   = "deliver"   // a message reached its receiver: from, to, id, msg, latency
	RecDrop      = "drop"      // a message was lost or cut off: from, to, id, msg, reason
	RecDup       = "dup"       // a message was duplicated: from, to, id, msg
	RecHold      = "hold"      // a clogged link held a message: from, to, id, msg (a TCP link's hold for retransmission adds its reason)
	RecUnclog    = "unclog"    // a clog ended and released what it held: from, to, held
	RecPartition = "partition" // a partition began: fault and the endpoints it cuts
	RecClog      = "clog"      // a clog began: fault, from, to, for
	RecHeal      = "heal"      // one fault healed: fault
	RecHealAll   = "heal_all"  // every partition healed: healed
)

// Event kinds of the network's kernel events.
const (
	kindDeliver = iota
	kindUnclog
	kindFault
	kindHeal
	kindRandomIsolate
	kindRandomClog
	kindRetransmit
)

// Net is a simulated network carrying messages of type M between endpoints in virtual
// time. It is generic so that messages travel unboxed, and it keeps in-flight messages
// in a slab whose index is the kernel event's argument: a message costs no allocation in
// steady state. Like sim.Sim, it is single-threaded: only the run's own events and
// setup code call it.
type Net[M any] struct {
	s      *sim.Sim
	rng    *rand.Rand                              // latency, loss and duplication draws
	src    *rand.PCG                               // rng's generator, for uniform latencies drawn without rng's indirection
	frng   *rand.Rand                              // random fault draws, split off rng at New
	parts  func(m *M) (i, i2 int64, s1, s2 string) // the message's trace field (SetMessage)
	format func(f *sim.Field, dst []byte) []byte
	noted  bool // deliveries show the message as a note (SetDeliveryNotes)
	names  traceNames

	eps      []endpoint[M]
	stride   int    // row length of links: a capacity, so adding endpoints rarely copies
	links    []link // links[from*stride+to]
	profiles []profile

	slab     []flight[M]
	free     int32 // head of the free-slot list, -1 when empty
	inFlight int
	// receiving counts deliveries whose receiver is running (invariants builds only): their
	// copies are counted delivered and still in flight until the receiver returns.
	receiving int
	maxIn     int
	nextID    uint64
	stats     Stats
	scratch   []int32 // held slots being released by a clog's end
	posts     bool    // deliveries are posted events (sim.Sim.Post), not scheduled ones
	// backlogs are the TCP links holding messages for retransmission (few at a time: a
	// linear search in the slow paths beats a field in every link).
	backlogs []backlog

	faults
}

type endpoint[M any] struct {
	name string
	nm   sim.Name // name with its trace digest
	r    Receiver[M]
	tcp  bool // every link to and from it is a TCP connection (SetTCPEndpoint)
}

// traceNames are the network's actor and record kinds, digests worked out once.
type traceNames struct {
	net, deliver, drop, dup, hold sim.Name
}

// link is the state of one directed link. Its zero value is a link with the default
// profile, no partition and no clog.
type link struct {
	last     sim.Time // FIFO: the latest delivery time scheduled on the link
	clogEnd  sim.Time // while clogged: when the clog ends
	heldHead int32    // while clogged: held slots in arrival order (slot+1; 0 = none)
	heldTail int32
	profile  int32 // index into profiles; 0 is Config.Default
	cut      bool  // some active partition cuts the link
	// stop is cut, or a TCP link's backlog of messages waiting for their retransmission:
	// the one flag Send's and deliver's common paths test, so a TCP link costs them
	// nothing (on a datagram link stop is cut).
	stop    bool
	clogged bool
	tcp     bool // the link is a TCP connection (SetTCP): what a cut or a loss would drop waits for a retransmission
}

// flight is one message copy in flight.
type flight[M any] struct {
	msg      M
	sent     sim.Time
	id       uint64 // send order; a duplicate shares its original's id
	from, to Endpoint
	next     int32 // next free slot, or next held slot (slot+1)
}

// events is Net under another name, so that the kernel's HandleEvent is not part of
// Net's own API.
type events[M any] Net[M]

// New returns a network with no endpoints, drawing every latency, loss and duplication
// from src (the caller passes s.Source("net") or similar, so the network's draws depend
// only on the seed). Random faults, if configured, start here.
func New[M any](s *sim.Sim, cfg Config, src *rand.PCG) (*Net[M], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if src == nil {
		return nil, sim.BadParam("src", nil, `a generator, such as s.Source("net")`)
	}
	rng := rand.New(src)
	n := &Net[M]{
		s:        s,
		rng:      rng,
		src:      src,
		frng:     rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())),
		profiles: []profile{newProfile(cfg.Default)},
		free:     -1,
		maxIn:    orDefault(cfg.MaxInFlight, DefaultMaxInFlight),
		names: traceNames{net: sim.NewName(Actor), deliver: sim.NewName(RecDeliver), drop: sim.NewName(RecDrop),
			dup: sim.NewName(RecDup), hold: sim.NewName(RecHold)},
	}
	// Deliveries are never cancelled, so they go in the kernel's posted-event lane, if no
	// other network of the same Sim took it (slots are below MaxLimit, within Post's arg).
	n.posts = s.SetPoster((*events[M])(n))
	n.faults.init(cfg)
	if err := n.startRandom(); err != nil {
		return nil, err
	}
	return n, nil
}

// SetMessage sets how records show a message: parts packs it into the four words of a
// sim.FieldCustom named "msg", and format (a static function) prints them, only when a sink
// asks. The same parts are folded into the trace hash and printed, so the two cannot
// disagree. parts must not keep m. Without it, records carry only the message id.
func (n *Net[M]) SetMessage(parts func(m *M) (i, i2 int64, s1, s2 string), format func(f *sim.Field, dst []byte) []byte) {
	n.parts, n.format = parts, format
}

// SetDeliveryNotes says that the world's processes fold every message's content into
// the trace hash themselves, where they make it or act on it (a Redis node's exec record
// holds the command and its reply). A delivery record then shows the message as a note
// (sim.Field.Note) and folds only the endpoints, the id and the latency: deliveries are
// the most frequent records, and their content was a tenth of a run's cost. Drops, holds
// and duplicates, which nobody acts on, still fold the message.
func (n *Net[M]) SetDeliveryNotes(on bool) { n.noted = on }

// AddEndpoint attaches a receiver under a name (used in traces) and returns its id. Ids
// are dense, in the order endpoints are added, starting at 0.
func (n *Net[M]) AddEndpoint(name string, r Receiver[M]) (Endpoint, error) {
	if err := n.checkNewEndpoint(name, r); err != nil {
		return 0, err
	}
	n.eps = append(n.eps, endpoint[M]{name: name, nm: sim.NewName(name), r: r})
	n.growLinks(len(n.eps))
	n.markTCP(Endpoint(len(n.eps) - 1))
	if len(n.active) > 0 { // a split's rest group, or an isolation, may cut the new links
		n.recut()
	}
	return Endpoint(len(n.eps) - 1), nil
}

func (n *Net[M]) checkNewEndpoint(name string, r Receiver[M]) error {
	if len(n.eps) >= MaxEndpoints {
		return sim.BadParam("endpoints", len(n.eps)+1, fmt.Sprintf("at most %d", MaxEndpoints))
	}
	if name == "" || slices.ContainsFunc(n.eps, func(e endpoint[M]) bool { return e.name == name }) {
		return sim.BadParam("endpoint", fmt.Sprintf("%q", name), "a non-empty name not already used")
	}
	if r == nil {
		return sim.BadParam("receiver", nil, "a non-nil Receiver")
	}
	return nil
}

// growLinks makes room for k endpoints, doubling the stride so that adding endpoints
// one by one copies the matrix O(log k) times.
func (n *Net[M]) growLinks(k int) {
	if k <= n.stride {
		return
	}
	stride := max(8, n.stride)
	for stride < k {
		stride *= 2
	}
	links := make([]link, stride*stride)
	for from := 0; from < n.stride; from++ {
		copy(links[from*stride:from*stride+n.stride], n.links[from*n.stride:(from+1)*n.stride])
	}
	n.links, n.stride = links, stride
}

// Endpoints returns the number of endpoints.
func (n *Net[M]) Endpoints() int { return len(n.eps) }

// Name returns an endpoint's name, or "" for an unknown one.
func (n *Net[M]) Name(e Endpoint) string {
	if !n.known(e) {
		return ""
	}
	return n.eps[e].name
}

// SetLink overrides the behaviour of the directed link from → to.
func (n *Net[M]) SetLink(from, to Endpoint, l Link) error {
	if err := n.checkPair(from, to); err != nil {
		return err
	}
	if err := l.validate("link."); err != nil {
		return err
	}
	ln := n.link(from, to)
	if ln.profile == 0 {
		ln.profile = int32(len(n.profiles))
		n.profiles = append(n.profiles, profile{})
	}
	n.profiles[ln.profile] = newProfile(l)
	return nil
}

// DropNext makes the directed link from → to drop the next k messages sent on it (a
// message cut by a partition does not count), as a fault that eats a few packets: one
// reply lost on its way back, say. A DropNext while one is going on adds to it.
func (n *Net[M]) DropNext(from, to Endpoint, k int) error {
	if err := n.checkPair(from, to); err != nil {
		return err
	}
	if k < 1 {
		return sim.BadParam("count", k, "at least 1 message")
	}
	ln := n.link(from, to)
	if ln.profile == 0 { // the shared default profile: give the link a copy of its own
		ln.profile = int32(len(n.profiles))
		n.profiles = append(n.profiles, n.profiles[0])
	}
	p := &n.profiles[ln.profile]
	if p.dropNext == 0 {
		p.wasUniform = p.uniform
	}
	p.dropNext += k
	p.uniform = false
	return nil
}

// Stats returns the message counters so far.
func (n *Net[M]) Stats() Stats { return n.stats }

// CheckConservation verifies the network's conservation law: every copy sent or made by
// duplication was delivered, lost, dropped by a partition, or is still in flight (clogged
// copies included). A message the network lost count of would be a message that silently
// vanished from the run, so tests check this at the end of every run and the invariants
// build after every delivery and drop.
func (n *Net[M]) CheckConservation() error {
	s := &n.stats
	if in, out := s.Sent+s.Duplicated, s.Delivered+s.Lost+s.Partitioned+s.Dropped+s.TimedOut+s.Reset+uint64(n.inFlight-n.receiving); in != out {
		return fmt.Errorf("network: %d sent + %d duplicated = %d, but %d delivered + %d lost + %d partitioned + %d dropped + %d timed out + %d reset + %d in flight = %d",
			s.Sent, s.Duplicated, in, s.Delivered, s.Lost, s.Partitioned, s.Dropped, s.TimedOut, s.Reset, n.inFlight, out)
	}
	return nil
}

func (n *Net[M]) checkConservation() {
	if err := n.CheckConservation(); err != nil {
		invariant.Check(false, "%v", err)
	}
}

// InFlight returns the number of message copies sent and not yet delivered or dropped.
func (n *Net[M]) InFlight() int { return n.inFlight }

func (n *Net[M]) known(e Endpoint) bool { return e >= 0 && int(e) < len(n.eps) }

func (n *Net[M]) checkEndpoint(param string, e Endpoint) error {
	if !n.known(e) {
		return sim.BadParam(param, int(e), fmt.Sprintf("an endpoint in [0, %d)", len(n.eps)))
	}
	return nil
}

func (n *Net[M]) checkPair(from, to Endpoint) error {
	if err := n.checkEndpoint("from", from); err != nil {
		return err
	}
	return n.checkEndpoint("to", to)
}

func (n *Net[M]) link(from, to Endpoint) *link { return &n.links[int(from)*n.stride+int(to)] }
