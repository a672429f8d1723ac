package network

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// FaultKind names a kind of network fault.
type FaultKind uint8

// The fault kinds. Partitions (isolate, split, block) cut links: a message crosses a
// link only if the link is up both when it is sent and when it arrives, so a message in
// flight when its link is cut is lost, like packets on a dead cable. A clog cuts nothing:
// it holds the messages that arrive while it lasts and delivers them, in send order, in
// one burst when it ends (unless a partition cuts the link by then).
const (
	FaultIsolate FaultKind = iota + 1 // cut every link to and from Node (not Node → Node)
	FaultSplit                        // cut every link between different Groups
	FaultBlock                        // cut the one directed link From → To
	FaultClog                         // hold the link From → To for For
	FaultHealAll                      // heal every partition (clogs run their course)
)

var faultNames = [...]string{"", "isolate", "split", "block", "clog", "heal_all"}

func (k FaultKind) String() string {
	if k > 0 && int(k) < len(faultNames) {
		return faultNames[k]
	}
	return fmt.Sprintf("FaultKind(%d)", k)
}

// Fault describes one fault, to apply now (Apply) or at a given true time (At). Fields
// its Kind does not use are ignored.
type Fault struct {
	Kind     FaultKind
	Node     Endpoint // FaultIsolate
	From, To Endpoint // FaultBlock and FaultClog
	// Groups are the sides of a FaultSplit; every endpoint not named in any group
	// (including ones added later) is on one more side, together.
	Groups [][]Endpoint
	// For is how long the fault lasts: required for a clog, optional for a partition
	// (0 keeps it until Heal or HealAll).
	For time.Duration
}

// IsolateFault returns a fault cutting node off from everyone for d (0: until healed).
func IsolateFault(node Endpoint, d time.Duration) Fault {
	return Fault{Kind: FaultIsolate, Node: node, For: d}
}

// SplitFault returns a fault splitting the endpoints into groups for d (0: until healed).
func SplitFault(d time.Duration, groups ...[]Endpoint) Fault {
	return Fault{Kind: FaultSplit, Groups: groups, For: d}
}

// BlockFault returns a fault cutting from → to, but not to → from, for d (0: until
// healed): the asymmetric partition that a one-way firewall rule or a half-dead NIC makes.
func BlockFault(from, to Endpoint, d time.Duration) Fault {
	return Fault{Kind: FaultBlock, From: from, To: to, For: d}
}

// ClogFault returns a fault clogging from → to for d.
func ClogFault(from, to Endpoint, d time.Duration) Fault {
	return Fault{Kind: FaultClog, From: from, To: to, For: d}
}

// HealAllFault returns a fault healing every partition.
func HealAllFault() Fault { return Fault{Kind: FaultHealAll} }

// FaultID names one applied partition or clog: its place in Faults, plus one. The zero
// FaultID names nothing.
type FaultID uint64

// FaultSpan is one applied fault and the true-time interval it was in force, for the
// oracle and the timeline.
type FaultSpan struct {
	ID    FaultID
	Fault Fault    // as applied; its Groups must not be modified
	Start sim.Time // when it was applied
	End   sim.Time // when it was healed or ended; sim.Never while still in force
}

// faults is the fault state embedded in Net.
type faults struct {
	active    []partition
	spans     []FaultSpan
	scheduled []Fault
	maxFaults int
	random    randomFaults
}

func (fs *faults) init(cfg Config) {
	fs.maxFaults = orDefault(cfg.MaxFaults, DefaultMaxFaults)
	fs.random = newRandomFaults(cfg.Random)
}

// partition is an active partition.
type partition struct {
	id    FaultID
	kind  FaultKind
	a, b  Endpoint
	sides []int32 // FaultSplit: the group of each endpoint; -1, or beyond the end, is the rest
}

func (p *partition) cuts(from, to Endpoint) bool {
	switch p.kind {
	case FaultIsolate:
		return from != to && (from == p.a || to == p.a)
	case FaultBlock:
		return from == p.a && to == p.b
	}
	return p.side(from) != p.side(to)
}

func (p *partition) side(e Endpoint) int32 {
	if int(e) < len(p.sides) {
		return p.sides[e]
	}
	return -1
}

// Apply applies f now and returns its FaultID (0 for FaultHealAll). A partition with a
// duration heals itself; a clog ends itself.
func (n *Net[M]) Apply(f Fault) (FaultID, error) {
	if err := n.checkFault(f); err != nil {
		return 0, err
	}
	return n.apply(f)
}

// Isolate cuts node off from every other endpoint until healed.
func (n *Net[M]) Isolate(node Endpoint) (FaultID, error) { return n.Apply(IsolateFault(node, 0)) }

// Split cuts every link between different groups until healed.
func (n *Net[M]) Split(groups ...[]Endpoint) (FaultID, error) {
	return n.Apply(SplitFault(0, groups...))
}

// Block cuts from → to, but not to → from, until healed.
func (n *Net[M]) Block(from, to Endpoint) (FaultID, error) { return n.Apply(BlockFault(from, to, 0)) }

// Clog holds the messages arriving on from → to for d, then delivers them in a burst.
func (n *Net[M]) Clog(from, to Endpoint, d time.Duration) (FaultID, error) {
	return n.Apply(ClogFault(from, to, d))
}

// At schedules f to be applied at true time t, which must not be in the past. It is
// validated now, so a bad schedule is an error at setup rather than a failed run.
func (n *Net[M]) At(t sim.Time, f Fault) error {
	if t < n.s.Now() {
		return sim.BadParam("at", t, fmt.Sprintf("[%v, never) (not before now)", n.s.Now()))
	}
	if err := n.checkFault(f); err != nil {
		return err
	}
	if len(n.scheduled) >= MaxScheduled {
		return sim.BadParam("scheduled_faults", len(n.scheduled)+1, fmt.Sprintf("at most %d per run", MaxScheduled))
	}
	f.Groups = cloneGroups(f.Groups)
	n.scheduled = append(n.scheduled, f)
	_, err := n.s.Schedule(t, (*events[M])(n), kindFault, uint64(len(n.scheduled)-1))
	return err
}

// fire applies the scheduled fault i.
func (n *Net[M]) fire(i int) {
	f := n.scheduled[i]
	n.scheduled[i] = Fault{}
	if _, err := n.apply(f); err != nil {
		n.s.Fail(err)
	}
}

// Heal ends partition id and reports whether it was still in force.
func (n *Net[M]) Heal(id FaultID) bool {
	k := slices.IndexFunc(n.active, func(p partition) bool { return p.id == id })
	if k < 0 {
		return false
	}
	n.active = slices.Delete(n.active, k, k+1)
	n.spans[id-1].End = n.s.Now()
	n.recut()
	n.s.Trace(Actor, RecHeal, sim.Int("fault", int64(id)))
	return true
}

// HealAll ends every partition. Clogs are not partitions: they end at their own time.
func (n *Net[M]) HealAll() {
	for _, p := range n.active {
		n.spans[p.id-1].End = n.s.Now()
	}
	healed := len(n.active)
	n.active = n.active[:0]
	n.recut()
	n.s.Trace(Actor, RecHealAll, sim.Int("healed", int64(healed)))
}

// Connected reports whether a message sent from → to now can cross, as far as
// partitions go: it may still be lost, or held by a clog (see Clogged).
func (n *Net[M]) Connected(from, to Endpoint) bool {
	return n.known(from) && n.known(to) && !n.link(from, to).cut
}

// Clogged reports whether from → to is clogged now.
func (n *Net[M]) Clogged(from, to Endpoint) bool {
	return n.known(from) && n.known(to) && n.link(from, to).clogged
}

// Faults returns every partition and clog applied so far, in the order applied, with
// the interval each was in force: the fault intervals the oracle and the timeline draw.
func (n *Net[M]) Faults() []FaultSpan { return slices.Clone(n.spans) }

func (n *Net[M]) checkFault(f Fault) error {
	if err := n.checkTargets(f); err != nil {
		return err
	}
	if f.Kind == FaultHealAll {
		return nil
	}
	if f.For < 0 || f.For > MaxDuration || f.Kind == FaultClog && f.For == 0 {
		return sim.BadParam("for", f.For, fmt.Sprintf("[0s, %v] (a clog: above 0s)", MaxDuration))
	}
	return nil
}

func (n *Net[M]) checkTargets(f Fault) error {
	switch f.Kind {
	case FaultIsolate:
		return n.checkEndpoint("node", f.Node)
	case FaultSplit:
		return n.checkGroups(f.Groups)
	case FaultBlock, FaultClog:
		return n.checkPair(f.From, f.To)
	case FaultHealAll:
		return nil
	}
	return sim.BadParam("kind", f.Kind, "isolate, split, block, clog or heal_all")
}

func (n *Net[M]) checkGroups(groups [][]Endpoint) error {
	seen := make([]bool, len(n.eps))
	for g, group := range groups {
		for j, e := range group {
			param := fmt.Sprintf("groups[%d][%d]", g, j)
			if err := n.checkEndpoint(param, e); err != nil {
				return err
			}
			if seen[e] {
				return sim.BadParam(param, int(e), "an endpoint in no other group")
			}
			seen[e] = true
		}
	}
	return nil
}

func (n *Net[M]) apply(f Fault) (FaultID, error) {
	switch f.Kind {
	case FaultHealAll:
		n.HealAll()
		return 0, nil
	case FaultClog:
		return n.clog(f)
	}
	return n.partition(f)
}

// record remembers f as applied now, within the limit on faults.
func (n *Net[M]) record(f Fault, end sim.Time) (FaultID, error) {
	if len(n.spans) >= n.maxFaults {
		return 0, fmt.Errorf("network: %v: %w: %d faults (max_faults %d)", f.Kind, ErrFull, len(n.spans), n.maxFaults)
	}
	f.Groups = cloneGroups(f.Groups)
	n.spans = append(n.spans, FaultSpan{ID: FaultID(len(n.spans) + 1), Fault: f, Start: n.s.Now(), End: end})
	return FaultID(len(n.spans)), nil
}

func (n *Net[M]) partition(f Fault) (FaultID, error) {
	id, err := n.record(f, sim.Never)
	if err != nil {
		return 0, err
	}
	p := partition{id: id, kind: f.Kind, a: f.Node, sides: n.sides(f.Groups)}
	if f.Kind == FaultBlock {
		p.a, p.b = f.From, f.To
	}
	n.active = append(n.active, p)
	n.recut()
	n.tracePartition(id, f)
	if f.For > 0 {
		_, err = n.s.Schedule(n.s.Now().Add(f.For), (*events[M])(n), kindHeal, uint64(id))
	}
	return id, err
}

func (n *Net[M]) sides(groups [][]Endpoint) []int32 {
	if groups == nil {
		return nil
	}
	sides := make([]int32, len(n.eps))
	for i := range sides {
		sides[i] = -1
	}
	for g, group := range groups {
		for _, e := range group {
			sides[e] = int32(g)
		}
	}
	return sides
}

func (n *Net[M]) tracePartition(id FaultID, f Fault) {
	fs := []sim.Field{sim.Int("fault", int64(id)), sim.Str("kind", f.Kind.String())}
	switch f.Kind {
	case FaultIsolate:
		fs = append(fs, n.nameField("node", f.Node))
	case FaultBlock:
		fs = append(fs, n.nameField("from", f.From), n.nameField("to", f.To))
	case FaultSplit:
		fs = append(fs, sim.Str("groups", n.groupsText(f.Groups)))
	}
	if f.For > 0 {
		fs = append(fs, sim.Dur("for", f.For))
	}
	n.s.Trace(Actor, RecPartition, fs...)
}

// groupsText renders groups as "[a b] [c] [rest]"; partitions are rare, so formatting
// it always (the trace hash folds it) costs nothing that matters.
func (n *Net[M]) groupsText(groups [][]Endpoint) string {
	var b strings.Builder
	for _, group := range groups {
		b.WriteByte('[')
		for j, e := range group {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(n.eps[e].name)
		}
		b.WriteString("] ")
	}
	b.WriteString("[rest]")
	return b.String()
}

// recut recomputes which links the active partitions cut. Partitions change rarely and
// worlds are small, so recomputing beats keeping counts consistent incrementally.
func (n *Net[M]) recut() {
	k := Endpoint(len(n.eps))
	for from := Endpoint(0); from < k; from++ {
		for to := Endpoint(0); to < k; to++ {
			l := n.link(from, to)
			l.cut = n.cutNow(from, to)
			l.stop = l.cut
		}
	}
	for _, b := range n.backlogs {
		n.link(b.from, b.to).stop = true
	}
}

func (n *Net[M]) cutNow(from, to Endpoint) bool {
	for i := range n.active {
		if n.active[i].cuts(from, to) {
			return true
		}
	}
	return false
}

func (n *Net[M]) clog(f Fault) (FaultID, error) {
	end := n.s.Now().Add(f.For)
	id, err := n.record(f, end)
	if err != nil {
		return 0, err
	}
	l := n.link(f.From, f.To)
	if !l.clogged || end > l.clogEnd {
		l.clogEnd = end
	}
	l.clogged = true
	n.s.Trace(Actor, RecClog, sim.Int("fault", int64(id)), n.nameField("from", f.From), n.nameField("to", f.To), sim.Dur("for", f.For))
	_, err = n.s.Schedule(end, (*events[M])(n), kindUnclog, uint64(f.From)<<32|uint64(f.To))
	return id, err
}

func cloneGroups(groups [][]Endpoint) [][]Endpoint {
	if groups == nil {
		return nil
	}
	out := make([][]Endpoint, len(groups))
	for i, g := range groups {
		out[i] = slices.Clone(g)
	}
	return out
}

// randomFaults is a validated RandomFaults.
type randomFaults struct {
	isolateRate float64
	isolateFor  dist.Sampler
	clogRate    float64
	clogFor     dist.Sampler
	until       sim.Time
}

func newRandomFaults(r RandomFaults) randomFaults {
	until := r.Until
	if until == 0 {
		until = sim.Never
	}
	return randomFaults{
		isolateRate: r.IsolateRate, isolateFor: r.IsolateFor.Sampler(),
		clogRate: r.ClogRate, clogFor: r.ClogFor.Sampler(), until: until,
	}
}

func (n *Net[M]) startRandom() error {
	if err := n.nextRandom(kindRandomIsolate, n.random.isolateRate); err != nil {
		return err
	}
	return n.nextRandom(kindRandomClog, n.random.clogRate)
}

// nextRandom schedules the next random fault of a kind after a Poisson gap, unless the
// rate is zero or the gap reaches past Until.
func (n *Net[M]) nextRandom(kind int, rate float64) error {
	if rate == 0 {
		return nil
	}
	gap := n.frng.ExpFloat64() / rate * float64(time.Second)
	left := n.random.until - n.s.Now()
	if !(gap < float64(left)) {
		return nil
	}
	_, err := n.s.Schedule(n.s.Now()+sim.Time(gap), (*events[M])(n), kind, 0)
	return err
}

func (n *Net[M]) randomIsolate() {
	if err := n.nextRandom(kindRandomIsolate, n.random.isolateRate); err != nil {
		n.s.Fail(err)
	}
	if len(n.eps) == 0 {
		return
	}
	node := Endpoint(n.frng.IntN(len(n.eps)))
	n.applyRandom(IsolateFault(node, drawFor(&n.random.isolateFor, n.frng)))
}

func (n *Net[M]) randomClog() {
	if err := n.nextRandom(kindRandomClog, n.random.clogRate); err != nil {
		n.s.Fail(err)
	}
	if len(n.eps) < 2 {
		return
	}
	from := Endpoint(n.frng.IntN(len(n.eps)))
	to := Endpoint(n.frng.IntN(len(n.eps) - 1))
	if to >= from {
		to++
	}
	n.applyRandom(ClogFault(from, to, drawFor(&n.random.clogFor, n.frng)))
}

func (n *Net[M]) applyRandom(f Fault) {
	if _, err := n.apply(f); err != nil {
		n.s.Fail(err)
	}
}

// drawFor draws a random fault's duration; at least 1ns, since a zero-length partition
// would mean "until healed".
func drawFor(s *dist.Sampler, r *rand.Rand) time.Duration { return max(s.Draw(r), 1) }
