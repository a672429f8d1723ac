package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// TraceOptions says which lines of the narrated trace to show and how precisely. The zero
// value shows every line, with times to the millisecond and durations to the microsecond:
// what a reader can follow; the nanoseconds are there on request.
type TraceOptions struct {
	// Actors keeps the lines by or about these actors (client1, redis3, storage, net,
	// oracle): an actor's own events, the commands a client sent as the nodes ran them,
	// the replies from a node, the network faults on an actor's links, the violations
	// that name a client. Empty: every actor.
	Actors []string
	// Only keeps the lines of these kinds (see TraceKinds). Empty: every kind.
	Only []string
	// HideCleanup leaves out cleanup traffic (see TraceKinds' note).
	HideCleanup bool
	// Precise shows times and durations to the nanosecond.
	Precise bool
}

// TraceKinds are the kinds of line TraceOptions.Only selects, with what each covers, for
// help texts. Cleanup traffic, which HideCleanup hides whatever the kinds, is the traffic
// of a client's requests that no longer matter to it: the release round it sends after
// an acquire attempt ended without the lock (the commands as the nodes run them and
// their replies), and replies that reach it after the attempt, extension or release they
// answer has ended.
var TraceKinds = []struct{ Name, Help string }{
	{"faults", "what went wrong: pauses, crashes, restarts, failovers, cuts, drops, clogs (the !! lines)"},
	{"violations", "the oracle's verdicts (the ** lines), each with the faults in effect"},
	{"lock", "the clients' lock steps (acquire, attempt ended, acquired, extend, release) and keys expiring on nodes"},
	{"commands", "Redis commands as the nodes run them, the replies the clients receive, the nodes' fsyncs and replication"},
	{"writes", "the clients' writes to the protected storage and the storage's verdicts"},
}

// lineKind is a TraceKinds entry as a bit.
type lineKind uint8

const (
	lineFault lineKind = 1 << iota
	lineViolation
	lineLock
	lineCommand
	lineWrite
)

// name is the TraceKinds name of a single kind.
func (k lineKind) name() string {
	for i := range TraceKinds {
		if k == 1<<i {
			return TraceKinds[i].Name
		}
	}
	return ""
}

// ParseTraceKinds turns a list of TraceKinds names into a mask; an unknown name is an
// *UnknownError.
func parseTraceKinds(names []string) (lineKind, error) {
	var mask lineKind
	var known []string
	for _, k := range TraceKinds {
		known = append(known, k.Name)
	}
	for _, name := range names {
		name = strings.TrimSpace(name)
		i := slices.Index(known, name)
		if name == "" { // a trailing comma
			continue
		}
		if i < 0 {
			return 0, fmt.Errorf("trace filter: %w (the kinds are %s)", knobs.Unknown("kind of trace line", name, known), strings.Join(known, ", "))
		}
		mask |= 1 << i
	}
	return mask, nil
}

// Narrator is the trace sink of `redlock-sim run --trace` and of the golden files: it turns
// the kernel's trace records into a transcript a person can follow, one line per event:
//
//	0.001s    redis3    [wall 0.001s]  SET lock Zm9v... NX PX 10000 → OK
//	0.002s    client1   [mono 0.002s]  ← redis3: OK
//	1.500s !! redis3    [wall 2.500s]  crash keys=1 dropped=0 lost_writes=1
//	2.000s ** oracle                   VIOLATION validity_overlap on lock: client1 and client2; fault [1]
//	                                   [1] redis3 lost 1 unsynced write(s) in crashes
//
// The columns are the true time, a marker (!! a fault, ** a violation), the actor, the
// actor's own clock where it has one (a client's monotonic reading, a node's wall reading:
// what each of them believes), and the event with commands in redis-cli syntax. Deliveries
// of commands to nodes and of writes to the storage are folded into the lines of the
// node's exec and the storage's verdict, which say the same thing. A violation's faults
// are numbered and spelled out once, under the first violation they are in effect for.
type Narrator struct {
	w        *world.World
	proto    lock.Protocol // the world's: how its messages read
	out      io.Writer
	lines    func(*Line) // instead of out, when set (NewLineNarrator)
	from, to sim.Time
	opts     TraceOptions
	only     lineKind // 0: every kind
	actors   map[string]bool
	kinds    map[string]actorKind
	clocks   map[string]*clock.Clock
	groupOf  map[string]string // a node's group, when the group has another name
	pending  pendingWrite      // the last write delivered to the storage, shown with its verdict
	clients  map[string]*clientTrack
	reqs     map[reqKey]reqTrack // requests delivered to nodes, awaiting their reply
	queued   map[string][]queued // per node or group: commands delivered, awaiting exec
	faultNo  map[string]int      // a fault's number, once spelled out
	viols    int                 // violation records seen: the index of the next in the oracle's list
	held     *line               // a violation line, until the oracle has listed its faults
	buf      []byte
	err      error
	bad      error        // the first record that did not decode
	lock     LockSettings // how the lock's tokens and its servers' ids read
}

type actorKind uint8

const (
	actorOther actorKind = iota
	actorClient
	actorGroup
	actorNode
	actorStorage
	// actorServer is a server of a lock service other than Redis: its records and the
	// requests it receives are narrated as they come, in its protocol's words, with its
	// wall clock when it has a process (World.Processes), and its process faults' records
	// (model.FaultKinds) as faults.
	actorServer
)

// line is one narrated line before it is filtered and written.
type line struct {
	at      sim.Time
	actor   string
	marker  string
	local   string
	text    string
	kind    lineKind
	peers   [2]string // other actors the line is about
	cleanup bool
	viol    int    // a violation line: its index in the oracle's list, plus one
	msg     uint64 // the network message the line is about (its id), 0 when none
	notes   []string
}

// Line is one narrated line as data, for a reader that lays lines out itself (the
// viewer): the columns of the text trace, with what the text leaves implicit spelled out.
type Line struct {
	At     sim.Time
	Actor  string
	Marker string // "!!" a fault, "**" a violation, "  " otherwise
	Local  string // the actor's own clock reading, "[mono 0.002s]", or empty
	Text   string
	Kind   string // the TraceKinds name the line falls under
	// Peers are the other actors the line is about (a command's sender, a violation's
	// second client), empty when none.
	Peers [2]string
	// Cleanup marks cleanup traffic (TraceKinds' note).
	Cleanup bool
	// Violation is the line's index in the oracle's violations, -1 when it is none.
	Violation int
	// Msg is the network message id (network.Flight ids, as the deliver records carry
	// them) the line is about: a reply received, a command run, a write judged, a message
	// dropped; 0 when none.
	Msg uint64
	// Notes are the faults spelled out under a violation line, "[1] redis3 ...".
	Notes []string
}

// clientTrack is what the Narrator follows of a client to tell its cleanup traffic.
type clientTrack struct {
	failed bool // its last attempt ended without the lock, and it holds nothing since
	ends   int  // operations (attempts, extensions, releases) ended so far
}

type reqKey struct {
	client string
	id     uint64
}

type reqTrack struct {
	ends    int // the client's ends when the request reached its node
	cleanup bool
}

type queued struct {
	cmd     resp.Command // when isCmd: a TCP probe is queued too, and never run
	isCmd   bool
	from    string
	cleanup bool
	msg     uint64 // its network message id
}

type pendingWrite struct {
	from, msg string
	id        uint64 // its network message id
}

// maxQueued bounds the commands remembered per node between delivery and exec (a node
// runs them in order, so only a paused node keeps many waiting); maxReqs bounds the
// requests remembered until their reply (only lost replies keep one long).
const (
	maxQueued = 256
	maxReqs   = 4096
)

// NewLineNarrator is NewNarrator for a reader that lays lines out itself: each line is
// passed to emit, which must copy what it keeps, in place of being written as text.
func NewLineNarrator(w *world.World, emit func(*Line), opts TraceOptions) (*Narrator, error) {
	n, err := NewNarrator(w, io.Discard, 0, 0, opts)
	if err != nil {
		return nil, err
	}
	n.lines = emit
	return n, nil
}

// NewNarrator returns the narration of w's run into out, of the lines in the true-time
// window [from, to) (to = 0: to the end) that opts keep.
func NewNarrator(w *world.World, out io.Writer, from, to sim.Time, opts TraceOptions) (*Narrator, error) {
	n := &Narrator{w: w, proto: w.Protocol(), out: out, from: from, to: to, opts: opts,
		kinds: map[string]actorKind{}, clocks: map[string]*clock.Clock{}, groupOf: map[string]string{},
		clients: map[string]*clientTrack{}, reqs: map[reqKey]reqTrack{}, queued: map[string][]queued{},
		faultNo: map[string]int{}, lock: lockSettings(w)}
	if to == 0 {
		n.to = sim.Never
	}
	known := []string{}
	for _, c := range w.Clients {
		n.kinds[c.Name()] = actorClient
		n.clocks[c.Name()] = c.Clock()
		n.clients[c.Name()] = &clientTrack{}
		known = append(known, c.Name())
	}
	for _, g := range w.Groups {
		for i := range g.Len() {
			nd := g.Node(i)
			n.kinds[nd.Name()] = actorNode
			n.clocks[nd.Name()] = nd.Clock()
			if nd.Name() != g.Name() {
				n.groupOf[nd.Name()] = g.Name()
				known = append(known, nd.Name())
			}
		}
		n.kinds[g.Name()] = actorGroup // a group of one node shares its node's name
		known = append(known, g.Name())
	}
	for i, e := range w.Servers {
		if name := w.Net.Name(e); n.kinds[name] == actorOther {
			n.kinds[name] = actorServer
			known = append(known, name)
			if i < len(w.Processes) && w.Processes[i] != nil && w.Processes[i].Clock() != nil {
				n.clocks[name] = w.Processes[i].Clock()
			}
		}
	}
	storage := w.Net.Name(w.Storage.Endpoint())
	n.kinds[storage] = actorStorage
	known = append(known, storage, network.Actor, oracle.Actor)
	var err error
	if n.only, err = parseTraceKinds(opts.Only); err != nil {
		return nil, err
	}
	if len(opts.Actors) > 0 {
		n.actors = map[string]bool{}
		for _, a := range opts.Actors {
			a = strings.TrimSpace(a)
			if a == "" { // a trailing comma
				continue
			}
			if !slices.Contains(known, a) {
				return nil, fmt.Errorf("trace filter: %w (the actors of this run are %s)", knobs.Unknown("actor", a, known), strings.Join(known, ", "))
			}
			n.actors[a] = true
		}
		if len(n.actors) == 0 {
			n.actors = nil
		}
	}
	return n, nil
}

// Record narrates one trace record. A record that does not decode (its writer and this
// narration gone apart) is shown as a ?? line with what is wrong, whatever the filters
// keep, and kept for Undecoded.
func (n *Narrator) Record(r *sim.Record) {
	if n.err != nil {
		return
	}
	// The oracle judges a write as the storage takes it, before the storage traces its
	// verdict: the verdict reads better first.
	verdict := n.held != nil && r.Kind == model.RecStorageWrite && r.At == n.held.at && n.kinds[r.Actor] == actorStorage
	if !verdict {
		n.release()
	}
	l := line{at: r.At, actor: r.Actor, marker: "  "}
	ok, err := n.describe(r, &l)
	switch {
	case err != nil:
		if n.bad == nil {
			n.bad = err
		}
		l = line{at: r.At, actor: r.Actor, marker: "??", text: "UNDECODED " + r.Kind + n.fields(r) + " (" + err.Error() + ")"}
		n.write(&l)
	case ok && l.viol > 0:
		n.held = &l // the oracle lists the violation's faults just after tracing it
		return
	case ok:
		n.write(&l)
	}
	if verdict {
		n.release()
	}
}

// Undecoded returns the error of the first record the narration could not decode, or
// nil. It is a bug (a record's writer and its decoder gone apart), which the run reports.
func (n *Narrator) Undecoded() error { return n.bad }

// Finish flushes what the narration still holds at the end of the run.
func (n *Narrator) Finish() { n.release() }

// Err returns the first error writing the narration, if any.
func (n *Narrator) Err() error { return n.err }

// release writes the violation line held back, now that the oracle has listed its faults:
// each fault gets a number the first time a shown violation is under it, and is spelled
// out under that violation only.
func (n *Narrator) release() {
	if n.held == nil {
		return
	}
	l := n.held
	n.held = nil
	if !n.shown(l) {
		return
	}
	var notes []string
	var nums []int
	if vs := n.w.Oracle.Violations(); l.viol <= len(vs) {
		for _, f := range vs[l.viol-1].Faults {
			no, ok := n.faultNo[f]
			if !ok {
				no = len(n.faultNo) + 1
				n.faultNo[f] = no
				notes = append(notes, "["+strconv.Itoa(no)+"] "+f)
			}
			nums = append(nums, no)
		}
	}
	l.text += FaultRefs(nums)
	l.notes = notes
	n.write(l)
	if n.lines != nil {
		return
	}
	for _, note := range notes {
		n.writeNote(note)
	}
}

// FaultRefs renders fault numbers as "; faults [1]-[4], [6]".
func FaultRefs(nums []int) string {
	if len(nums) == 0 {
		return ""
	}
	s := "; fault"
	if len(nums) > 1 {
		s += "s"
	}
	sorted := slices.Clone(nums)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[j]+1 {
			j++
		}
		if i > 0 {
			s += ","
		}
		s += " [" + strconv.Itoa(sorted[i]) + "]"
		if j > i+1 {
			s += "-[" + strconv.Itoa(sorted[j]) + "]"
		} else if j == i+1 {
			s += ", [" + strconv.Itoa(sorted[j]) + "]"
		}
		i = j + 1
	}
	return s
}

// shown reports whether the options keep l.
func (n *Narrator) shown(l *line) bool {
	if l.at < n.from || l.at >= n.to {
		return false
	}
	if n.opts.HideCleanup && l.cleanup {
		return false
	}
	if n.only != 0 && n.only&l.kind == 0 && l.kind != 0 { // an undecoded record's line has no kind
		return false
	}
	if n.actors != nil && !n.actors[l.actor] && !n.actors[l.peers[0]] && !n.actors[l.peers[1]] && l.kind != 0 {
		return false
	}
	return true
}

// write writes l if the options keep it, and says whether it did.
func (n *Narrator) write(l *line) bool {
	if !n.shown(l) {
		return false
	}
	if n.lines != nil {
		n.lines(&Line{At: l.at, Actor: l.actor, Marker: l.marker, Local: l.local, Text: l.text,
			Kind: l.kind.name(), Peers: l.peers, Cleanup: l.cleanup, Violation: l.viol - 1, Msg: l.msg,
			Notes: l.notes})
		return true
	}
	b := n.buf[:0]
	b = appendLeft(b, n.clock(l.at.Duration()), n.timeWidth())
	b = append(b, ' ')
	b = append(b, l.marker...)
	b = append(b, ' ')
	b = appendRight(b, l.actor, 9)
	b = append(b, ' ')
	b = appendRight(b, l.local, n.timeWidth()+8)
	b = append(b, ' ')
	b = append(b, l.text...)
	b = append(b, '\n')
	n.buf = b
	_, n.err = n.out.Write(b)
	return n.err == nil
}

// writeNote writes a line of the event column only: a fault spelled out under a violation.
func (n *Narrator) writeNote(text string) {
	b := n.buf[:0]
	for range n.timeWidth() + 4 + 10 + n.timeWidth() + 8 + 1 {
		b = append(b, ' ')
	}
	b = append(b, text...)
	b = append(b, '\n')
	n.buf = b
	_, n.err = n.out.Write(b)
}

func (n *Narrator) timeWidth() int {
	if n.opts.Precise {
		return 14
	}
	return 8
}

// clock renders a time or a clock reading in seconds, to the millisecond unless precise.
func (n *Narrator) clock(d time.Duration) string {
	if n.opts.Precise {
		return strconv.FormatFloat(d.Seconds(), 'f', 9, 64) + "s"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
}

// dur renders a duration, to the microsecond unless precise: 986.779ms, not 986.779293ms.
func (n *Narrator) dur(d time.Duration) string {
	if !n.opts.Precise {
		d = d.Round(time.Microsecond)
	}
	return d.String()
}

// localAt returns the actor's own reading of its clock at true time at: a client's
// monotonic reading, or a node's wall clock (on which its keys expire).
func (n *Narrator) localAt(actor string, at sim.Time) string {
	ck := n.clocks[actor]
	if ck == nil {
		return ""
	}
	switch n.kinds[actor] {
	case actorClient:
		return n.mono(ck.Mono(at))
	case actorNode, actorGroup, actorServer:
		return "[wall " + n.clock(ck.Wall(at)) + "]"
	}
	return ""
}

// mono renders a client's monotonic reading, as its records carry it.
func (n *Narrator) mono(d time.Duration) string { return "[mono " + n.clock(d) + "]" }

// describe fills in l from r and follows the clients' state; false: r makes no line. An
// error is a record that does not decode, of which nothing has been followed (but a
// violation's place in the oracle's list).
func (n *Narrator) describe(r *sim.Record, l *line) (bool, error) {
	switch {
	case r.Actor == network.Actor:
		return n.describeNet(r, l)
	case r.Actor == oracle.Actor:
		if r.Kind == oracle.RecViolation {
			n.viols++ // even when it does not decode: the next one is the oracle's next
		}
		v, err := oracle.DecodeViolation(r)
		if err != nil {
			return false, err
		}
		l.marker, l.kind = "**", lineViolation
		l.peers = [2]string{v.First, v.Second}
		l.text = "VIOLATION " + v.Kind + " on " + v.Resource + ": " + v.First + " and " + v.Second
		l.viol = n.viols
		return true, nil
	}
	l.kind = lineCommand
	switch n.kinds[r.Actor] {
	case actorNode, actorGroup:
		l.local = n.localAt(r.Actor, r.At)
		if err := n.describeNode(r, l); err != nil {
			return false, err
		}
	case actorStorage:
		if r.Kind == model.RecStorageWrite {
			v, err := model.DecodeStorageWrite(r)
			if err != nil {
				return false, err
			}
			verdict := "accepted"
			if !v.Accepted {
				verdict = "REJECTED"
			}
			l.kind, l.peers[0], l.msg = lineWrite, n.pending.from, n.pending.id
			l.text = n.pending.from + ": " + n.pending.msg + " → " + verdict
			n.pending = pendingWrite{}
			return true, nil
		}
	case actorClient:
		return n.describeClient(r, l)
	case actorServer:
		l.local = n.localAt(r.Actor, r.At)
		if _, ok := model.FaultByRecord(r.Kind); ok {
			l.marker, l.kind = "!!", lineFault
		}
	}
	if l.text == "" {
		l.text = r.Kind + n.fields(r, "mono")
	}
	return true, nil
}

func (n *Narrator) describeNode(r *sim.Record, l *line) error {
	l.peers[1] = n.groupOf[r.Actor] // --actor redis1 shows the nodes of group redis1
	switch r.Kind {
	case redis.RecExec:
		x, err := redis.DecodeExec(r)
		if err != nil {
			return err
		}
		l.text = x.Cmd.String()
		if q, ok := n.dequeue(r.Actor, &x.Cmd); ok {
			l.peers[0], l.cleanup, l.msg = q.from, q.cleanup, q.msg
		}
		if x.HasReply {
			l.text += " → " + x.Reply.String()
		}
	case redis.RecDrop: // a command the node did not run: it is down, or its queue is full
		x, err := redis.DecodeDrop(r)
		if err != nil {
			return err
		}
		if x.HasCmd {
			if q, ok := n.dequeue(r.Actor, &x.Cmd); ok {
				l.peers[0], l.cleanup, l.msg = q.from, q.cleanup, q.msg
			}
		}
	case redis.RecExpire:
		l.kind = lineLock
	default:
		if redis.IsNodeFault(r.Kind) {
			l.marker, l.kind = "!!", lineFault
		}
	}
	return nil
}

// dequeue takes the command a node runs off the list of those delivered to it (or to its
// group), to learn who sent it.
func (n *Narrator) dequeue(node string, cmd *resp.Command) (queued, bool) {
	for _, name := range [2]string{node, n.groupOf[node]} {
		q := n.queued[name]
		for i := range q {
			if q[i].isCmd && q[i].cmd == *cmd {
				found := q[i]
				n.queued[name] = slices.Delete(q, i, i+1)
				return found, true
			}
		}
	}
	return queued{}, false
}

func (n *Narrator) describeClient(r *sim.Record, l *line) (bool, error) {
	ct := n.clients[r.Actor]
	l.kind = lineLock
	if r.Kind == model.RecPauseMerged {
		p, err := model.DecodePauseMerged(r)
		if err != nil {
			return false, err
		}
		l.local = n.mono(p.Mono)
		l.marker, l.kind = "!!", lineFault
		l.text = "pause for=" + n.dur(p.For) + " while already paused: "
		if r.At.Duration()+p.For == p.Until {
			l.text += "pause extended to " + n.clock(p.Until)
		} else {
			l.text += "inside the pause in progress, which ends at " + n.clock(p.Until)
		}
		return true, nil
	}
	e, err := model.DecodeClientEvent(r)
	if err != nil {
		return false, err
	}
	l.local = n.mono(e.Mono)
	switch e.Kind {
	case model.EvPause:
		l.marker, l.kind = "!!", lineFault
		l.text = "pause for=" + n.dur(e.For) + ", until " + n.clock(r.At.Duration()+e.For)
		return true, nil
	case model.EvResume, model.EvCrash, model.EvRestart:
		l.marker, l.kind = "!!", lineFault
	case model.EvWrite:
		l.kind = lineWrite
	case model.EvAttemptEnded:
		if !e.HasLock {
			return false, sim.RecordError(r, "an attempt's end without its attempt, votes and reason")
		}
		ct.ends++
		ct.failed = e.Reason != lock.ReasonNone
	case model.EvAcquireStart, model.EvAcquired, model.EvReleaseStart:
		ct.failed = false
	case model.EvReleased, model.EvExtended, model.EvExtendFailed, model.EvAcquireFailed:
		ct.ends++
	}
	l.text = r.Kind + n.fields(r, "mono")
	return true, nil
}

func (n *Narrator) describeNet(r *sim.Record, l *line) (bool, error) {
	l.marker, l.kind = "!!", lineFault
	switch r.Kind {
	case network.RecDeliver, network.RecDrop, network.RecHold, network.RecDup:
	case network.RecClog, network.RecUnclog:
		x, err := network.DecodeLink(r)
		if err != nil {
			return false, err
		}
		l.peers = [2]string{x.From, x.To}
		l.text = r.Kind + n.fields(r)
		return true, nil
	case network.RecPartition:
		x, err := network.DecodePartition(r)
		if err != nil {
			return false, err
		}
		l.peers = [2]string{x.From, x.To}
		l.text = r.Kind + n.fields(r)
		return true, nil
	default:
		l.text = r.Kind + n.fields(r)
		return true, nil
	}
	x, m, err := decodeMsg(r)
	if err != nil {
		return false, err
	}
	from, to, msg := x.From, x.To, messageText(&m, n.proto, &n.lock)
	l.peers = [2]string{from, to}
	l.msg = x.ID
	switch r.Kind {
	case network.RecDeliver:
		return n.describeDeliver(from, to, &m, msg, l), nil
	case network.RecDrop:
		l.text = "drop " + from + "→" + to + " (" + x.Reason + "): " + msg
	case network.RecHold:
		l.text = "hold " + from + "→" + to + " (" + holdWhy(x.Reason) + "): " + msg
	case network.RecDup:
		l.text = "duplicate " + from + "→" + to + ": " + msg
	}
	return true, nil
}

// holdWhy says why the network holds a message: a clog (no reason recorded), or on a TCP
// link the cut or loss its kernel retransmits through, or the backlog it queues behind.
func holdWhy(reason string) string {
	switch reason {
	case "":
		return "clogged"
	case "queued":
		return "queued behind a retransmission"
	}
	return reason + ": TCP retransmits it"
}

// decodeMsg decodes a network record about a message, and the message: a world's network
// always carries model Messages and writes them into its records.
func decodeMsg(r *sim.Record) (network.MsgRecord, model.Message, error) {
	x, err := network.DecodeMsgRecord(r)
	if err != nil {
		return x, model.Message{}, err
	}
	if x.Msg == nil {
		return x, model.Message{}, sim.RecordError(r, "no field \"msg\" (a world's network writes its messages)")
	}
	m, err := model.DecodeMessageField(x.Msg)
	if err != nil {
		return x, m, sim.RecordError(r, err.Error())
	}
	return x, m, nil
}

// describeDeliver narrates a message's delivery: a reply as a client's line; a command
// is only remembered, to be narrated as its node runs it, and a write as the storage
// judges it. text is the message as the trace shows it, without its request id.
func (n *Narrator) describeDeliver(from, to string, m *model.Message, text string, l *line) bool {
	l.marker, l.kind = "  ", lineCommand
	switch n.kinds[to] {
	case actorGroup, actorNode:
		ct := n.clients[from]
		if ct == nil { // between nodes: a replica's stream, shown as the node receives it
			if n.kinds[to] == actorGroup {
				return false
			}
			l.actor, l.peers = to, [2]string{from, n.groupOf[to]}
			l.local = n.localAt(to, l.at)
			l.text = "← " + from + ": " + text
			return true
		}
		isCmd := m.Kind == model.MsgCommand
		cmd := resp.CommandOf(&m.Body) // a Redis node's request, in RESP
		cleanup := ct.failed && isCmd && redis.IsRelease(&cmd)
		if len(n.reqs) >= maxReqs {
			n.forgetEnded()
		}
		n.reqs[reqKey{from, m.ReqID}] = reqTrack{ends: ct.ends, cleanup: cleanup}
		q := n.queued[to]
		if len(q) == maxQueued { // commands a crash lost: the oldest are the likeliest
			q = slices.Delete(q, 0, 1)
		}
		n.queued[to] = append(q, queued{cmd: cmd, isCmd: isCmd, from: from, cleanup: cleanup, msg: l.msg})
		return false
	case actorStorage:
		n.pending = pendingWrite{from: from, msg: text, id: l.msg}
		return false
	case actorServer:
		l.actor, l.peers = to, [2]string{from}
		l.local = n.localAt(to, l.at)
		l.text = "← " + from + ": " + text
		return true
	case actorClient:
		if n.kinds[from] == actorStorage { // acknowledgements nobody waits for
			return false
		}
		key := reqKey{to, m.ReqID}
		if rq, ok := n.reqs[key]; ok {
			l.cleanup = rq.cleanup || rq.ends < n.clients[to].ends
			delete(n.reqs, key)
		}
		l.actor, l.peers = to, [2]string{from}
		l.local = n.localAt(to, l.at)
		l.text = "← " + from + ": " + text
		return true
	}
	return false
}

// forgetEnded forgets the requests of operations that have ended, whose replies were
// lost: a reply that still comes is then shown, not hidden as cleanup.
func (n *Narrator) forgetEnded() {
	for k, rq := range n.reqs { // determinism:allow deletes only; the order reaches nothing
		if rq.ends < n.clients[k.client].ends {
			delete(n.reqs, k)
		}
	}
}

// attemptEnded is the kind of an attempt's end record, whose validity says nothing.
var attemptEnded = model.EvAttemptEnded.String()

// fields renders the record's fields as " k=v", as the record has them, leaving out those
// named in skip and those that say nothing (reason=none, token=0): the text of a record
// the narration has no words of its own for.
func (n *Narrator) fields(r *sim.Record, skip ...string) string {
	var b []byte
	for i := range r.Fields {
		f := &r.Fields[i]
		if slices.Contains(skip, f.Key) || (f.Key == "reason" && f.Str == "none") ||
			(f.Key == "token" && f.Kind == sim.FieldInt && f.Int == 0) ||
			(f.Key == "validity" && (r.Kind == attemptEnded || n.lock.Service == "zookeeper" && len(n.w.Groups) == 0)) {
			continue // a ZooKeeper lock has no validity: it is held while its session lives (the hybrid lock's Redis locks have one)
		}
		b = append(b, ' ')
		b = append(b, f.Key...)
		b = append(b, '=')
		if f.Kind == sim.FieldInt && n.zxidField(r, f.Key) {
			b = append(b, Zxid(f.Int)...)
		} else if f.Kind == sim.FieldDur {
			b = append(b, n.dur(time.Duration(f.Int))...)
		} else {
			b = f.AppendValue(b)
		}
	}
	return string(b)
}

// zxidField reports whether field key of r holds a ZooKeeper zxid or session id, which
// read in hexadecimal as ZooKeeper prints them (0x100000004: epoch 1, counter 4): a
// client's fencing token when it is a czxid, a server's session and zxid fields.
func (n *Narrator) zxidField(r *sim.Record, key string) bool {
	switch n.kinds[r.Actor] {
	case actorClient:
		return key == "token" && n.lock.Tokens == TokenZxid
	case actorServer:
		return n.lock.Service == "zookeeper" && (key == "session" || key == "zxid")
	}
	return false
}

func appendLeft(b []byte, s string, width int) []byte {
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

func appendRight(b []byte, s string, width int) []byte {
	b = append(b, s...)
	for i := len([]rune(s)); i < width; i++ {
		b = append(b, ' ')
	}
	return b
}
