package plots

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// TimelineOptions controls a run's space-time diagram.
type TimelineOptions struct {
	// Window is the true-time interval to draw; nil chooses DefaultWindow. Window.To = 0
	// means the end of the run.
	Window *report.Span
	// Width and Height are the figure's size in pixels; 0 means 1600×900.
	Width, Height int
	// Subtitle replaces the line under the title (by default the scenario's story).
	Subtitle string
	// Counts are the run's safety counts (its Record's Safety) for the title's verdicts;
	// nil counts the timeline's violations, of which it keeps only the first
	// oracle.MaxViolations (the title then says "at least").
	Counts *experiments.Safety
}

// DefaultWindow chooses the part of a run worth looking at first. With a violation: from
// up to two TTLs before the first one (so the holder whose lock it overlaps is in view) to
// one TTL after it ends. Without one: the whole run when it holds at most a dozen lock
// cycles, else the first dozen. Either way the window stops a little after the last thing
// that happened in it, so a run that went quiet does not leave half the figure empty.
func DefaultWindow(tl *report.Timeline) report.Span {
	end := tl.Duration
	last := lastActivity(tl)
	// pad leaves room after the last thing shown for its labels: a tenth of the window.
	pad := func(t time.Duration) time.Duration { return min(end, t+max(t/10, 10*time.Millisecond)) }
	if len(tl.Violations) > 0 {
		v := tl.Violations[0]
		s, e := secondsToDuration(v.StartS), secondsToDuration(v.EndS)
		lease := leaseOf(tl)
		from := max(0, s-2*lease)
		to := min(end, e+lease, pad(max(last, e)))
		return report.Span{From: from, To: max(to, min(end, e+time.Millisecond))}
	}
	var works []report.Span
	for _, c := range tl.Clients {
		works = append(works, c.Work...)
	}
	slices.SortFunc(works, func(a, b report.Span) int { return cmpDur(a.From, b.From) })
	const cycles = 12
	if len(works) > cycles {
		return report.Span{From: 0, To: pad(works[cycles-1].To)}
	}
	if last == 0 {
		return report.Span{From: 0, To: end}
	}
	return report.Span{From: 0, To: pad(last)}
}

// leaseOf returns how long tl's lock outlives a silent holder: its TTL, or the session
// timeout of a ZooKeeper lock (a timeline saved before LockSettings has only its TTL).
func leaseOf(tl *report.Timeline) time.Duration {
	if tl.Lock.Service != "" && tl.Lock.Lease > 0 {
		return tl.Lock.Lease
	}
	return tl.TTL
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func secondsToDuration(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// lastActivity returns the latest end of anything a node or client did that ended before
// the run did (keys, attempts, work, writes); spans still open at the end are left out.
func lastActivity(tl *report.Timeline) time.Duration {
	var last time.Duration
	upd := func(t time.Duration) {
		if t < tl.Duration {
			last = max(last, t)
		}
	}
	for _, n := range tl.Nodes {
		for _, k := range n.Keys {
			upd(k.To)
		}
	}
	for _, c := range tl.Clients {
		for _, a := range c.Attempts {
			upd(a.To)
		}
		for _, w := range c.Work {
			upd(w.To)
		}
		for _, w := range c.Writes {
			upd(w.At)
		}
	}
	return last
}

// laneKind says what a lane shows.
type laneKind uint8

const (
	laneOracle laneKind = iota // the violations, as the oracle names them
	laneNode
	laneClient
)

// tlLane is one horizontal lane of the diagram, centred on Y, H high (data units). Name
// is the process's; Label is what the axis shows.
type tlLane struct {
	Name  string
	Label string
	Kind  laneKind
	Y, H  float64
}

// shapeKind names what a shape depicts; the legend has one entry per kind shown.
type shapeKind uint8

const (
	shKey           shapeKind = iota + 1 // a lock key on a node, in its holder's colour
	shKeyUnknown                         // a lock key whose value is no client's
	shDown                               // a node crashed, until it restarts
	shNodePaused                         // a node stalled
	shRestart                            // a node restarted
	shFailover                           // a replica promoted
	shClockJump                          // a wall clock stepped
	shCut                                // a network cut touching the lane
	shValidity                           // a client believed it held the lock
	shWork                               // a client worked on the resource
	shAttemptLost                        // an acquire attempt that failed
	shAttemptWon                         // an acquire attempt that took the lock
	shPause                              // a client's stop-the-world pause
	shWriteOK                            // a storage write accepted
	shWriteStale                         // a stale storage write accepted
	shWriteRejected                      // a storage write rejected by fencing
	shWriteLost                          // a storage write that never arrived
	shWriteDelay                         // a write's time in the network, sent → judged
	shCrash                              // a client process died
	shExtend                             // a lock extended
	shExtendFailed                       // an extension that failed
	shViolation                          // a validity or usage overlap (band and label)
	shStaleMark                          // a stale write, on the oracle lane
	shFencedMark                         // writes rejected by fencing, on the oracle lane
	shLeader                             // a ZooKeeper server leads
	shFollower                           // a ZooKeeper server follows
	shElection                           // a ZooKeeper server looks for a leader
	shExpire                             // a ZooKeeper leader expired a client's session
)

// shape is one element of the diagram in data units: seconds across, lanes down. Instants
// have X0 == X1. Lane is the lane it belongs to (-1: spans several). Client picks the
// colour (-1: none).
type shape struct {
	Kind   shapeKind
	Lane   int
	X0, X1 float64
	Y0, Y1 float64
	Client int
	Label  string
}

// tlLayout is the whole diagram as data: what the figure shows, before any drawing.
type tlLayout struct {
	Title, Subtitle string
	From, To        float64 // the window, seconds
	Lanes           []tlLane
	Shapes          []shape
	Clients         []string
	// Service is the lock service when it is not Redis ("zookeeper"): the legend then
	// speaks of its locks, not of keys and OKs, unless Redis nodes are drawn beside it.
	Service string
	Redis   bool // the figure has Redis nodes' lanes
	// Column is the time one pixel column spans when the diagram was simplified to what a
	// reader can see at its scale (see simplify); 0 when every shape is drawn as it is.
	Column float64
}

// Layout geometry, in data units. A client lane is taller than a node lane: it stacks
// the validity window, the work, the attempts and the writes.
const (
	laneGap   = 0.35 // extra space between the oracle, node and client groups
	oracleH   = 1.0
	nodeH     = 0.8
	clientH   = 1.5
	keyHalf   = 0.24 // a key bar, around a node lane's centre
	downHalf  = 0.36 // a node's down or paused band
	pauseHalf = 0.66 // a client's pause band
)

// layoutTimeline computes the diagram of tl in the window [from, to) for a figure of the
// default width.
func layoutTimeline(tl *report.Timeline, win report.Span, subtitle string) *tlLayout {
	return layoutTimelineAt(tl, win, subtitle, DefaultWidth)
}

// layoutTimelineAt computes the diagram of tl in the window [from, to) for a figure
// columns pixels wide: past a few shapes per pixel column it draws what a reader can see
// at that scale (see simplify), so that an hour-long window costs what a short one does.
func layoutTimelineAt(tl *report.Timeline, win report.Span, subtitle string, columns int) *tlLayout {
	L := &tlLayout{From: win.From.Seconds(), To: win.To.Seconds(), Service: tl.Lock.Service, Redis: redisNodes(tl) > 0}
	for _, c := range tl.Clients {
		L.Clients = append(L.Clients, c.Name)
	}
	L.Title, L.Subtitle = timelineTitle(tl, win, nil), subtitle
	if L.Subtitle == "" {
		if sc, err := scenarios.LookupScenario(tl.Scenario); err == nil && sc.Name == tl.Scenario {
			L.Subtitle = sc.Story
		}
	}
	L.addLanes(tl)
	lanesOf := L.laneIndex(tl)
	for i := range tl.Nodes {
		L.nodeShapes(tl, i, lanesOf)
	}
	nodes := groups(tl)
	for j := range tl.Clients {
		L.clientShapes(tl, j, lanesOf, nodes)
	}
	L.netShapes(tl, lanesOf)
	L.violationShapes(tl, lanesOf)
	L.simplify(columns)
	return L
}

// shapesPerColumn is the number of shapes per pixel column of the figure past which the
// diagram is simplified: a teaching window (a few hundred shapes) is drawn exactly; an
// hour of a busy run (hundreds of thousands, which took minutes to draw and showed a
// smear) is drawn as a pixel grid would show it.
const shapesPerColumn = 4

// simplify bounds the shapes when there are more than shapesPerColumn per pixel column,
// drawing what a pixel grid can show. Shapes are grouped by where they sit (lane and
// height) and what they are (kind; a key of no client's counts as a key). Spans are
// binned per pixel column: each column goes to the client that covered most of it, and
// runs of columns with the same client become one span, so a node lane shows whose key
// it mostly held, moment by moment, not one client's bar over everything. Instants
// (writes, marks) keep one per column and per client. Write arrows, shorter than a
// column, go, and so do accepted writes: a dot per pixel would hide the work under it,
// and only the stale, rejected and lost ones are news. Each group then holds at most one shape per column and client, so the total
// is bounded by groups × columns × clients whatever the window's length; the subtitle
// says the figure is simplified.
func (L *tlLayout) simplify(columns int) {
	if columns <= 0 || len(L.Shapes) <= shapesPerColumn*columns {
		return
	}
	col := (L.To - L.From) / float64(columns)
	column := func(x float64) int { return min(columns-1, max(0, int((x-L.From)/col))) }
	type key struct {
		kind         shapeKind
		lane         int
		y0, y1       float64
		instant      bool
		instantOwner int // the client, for instants: each keeps its own marks
	}
	class := func(k shapeKind) shapeKind {
		if k == shKeyUnknown {
			return shKey
		}
		return k
	}
	var order []key
	groups := map[key][]shape{}
	for _, s := range L.Shapes {
		if s.Kind == shWriteDelay || s.Kind == shWriteOK { // a row of routine dots would hide the work under it
			continue
		}
		k := key{kind: class(s.Kind), lane: s.Lane, y0: s.Y0, y1: s.Y1, instant: s.X0 == s.X1}
		if k.instant {
			k.kind, k.instantOwner = s.Kind, s.Client
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	var out []shape
	for _, k := range order {
		g := groups[k]
		if k.instant {
			last := -1
			slices.SortStableFunc(g, func(a, b shape) int { return cmp.Compare(a.X0, b.X0) })
			for _, s := range g {
				if c := column(s.X0); c != last {
					out = append(out, s)
					last = c
				}
			}
			continue
		}
		out = append(out, binned(g, columns, L.From, L.To, col, len(L.Clients))...)
	}
	L.Shapes = out
	L.Column = col
	note := "[At this scale one pixel is " + roundDur(secondsToDuration(col)) +
		": each pixel shows whose key or lock covered most of it; one mark per pixel for stale, rejected or lost writes and events; accepted writes and write arrows not drawn; narrow --window to see each one]"
	if L.Subtitle != "" {
		note = L.Subtitle + "  " + note
	}
	L.Subtitle = note
}

// binned gives each pixel column of a group of spans to the client (or -1, no client)
// that covered most of it, and returns runs of columns with the same owner as spans, with
// that owner's kind and label.
func binned(g []shape, columns int, from, to, col float64, clients int) []shape {
	owners := clients + 1 // index 0 is "no client"
	cover := make([]float64, columns*owners)
	proto := make([]*shape, owners)
	for i := range g {
		s := &g[i]
		o := s.Client + 1
		if o < 0 || o >= owners {
			o = 0
		}
		if proto[o] == nil {
			proto[o] = s
		}
		first := min(columns-1, max(0, int((s.X0-from)/col)))
		last := min(columns-1, max(0, int((s.X1-from)/col)))
		for c := first; c <= last; c++ {
			lo, hi := from+float64(c)*col, from+float64(c+1)*col
			// A sliver still counts: a column it touches is not empty.
			cover[c*owners+o] += max(min(hi, s.X1)-max(lo, s.X0), 1e-12)
		}
	}
	var out []shape
	prev := -1
	for c := range columns {
		best, most := -1, 0.0
		for o := range owners {
			if v := cover[c*owners+o]; v > most {
				best, most = o, v
			}
		}
		if best >= 0 && best == prev {
			out[len(out)-1].X1 = min(to, from+float64(c+1)*col)
			continue
		}
		prev = best
		if best < 0 {
			continue
		}
		s := *proto[best]
		s.X0, s.X1 = from+float64(c)*col, min(to, from+float64(c+1)*col)
		switch s.Kind {
		case shKey, shKeyUnknown, shDown, shNodePaused, shLeader, shFollower, shElection: // labels that name a kind, not one instance
		default:
			s.Label = "" // "3/5", "pause 1.5s": true of one of the spans binned here, not of the bar
		}
		out = append(out, s)
	}
	return out
}

// redisNodes returns the number of Redis nodes' lanes (replicas included).
func redisNodes(tl *report.Timeline) int {
	n := 0
	for _, nl := range tl.Nodes {
		if nl.Service == "" {
			n++
		}
	}
	return n
}

// groups returns the number of Redlock nodes (groups), which attempts count OKs out of;
// another service's servers are none of them.
func groups(tl *report.Timeline) int {
	var seen []string
	for _, n := range tl.Nodes {
		if n.Service == "" && !slices.Contains(seen, n.Group) {
			seen = append(seen, n.Group)
		}
	}
	return len(seen)
}

func (L *tlLayout) addLanes(tl *report.Timeline) {
	y := 0.0 // the top of the next lane
	add := func(name, label string, k laneKind, h float64) {
		if n := len(L.Lanes); n > 0 && L.Lanes[n-1].Kind != k {
			y -= laneGap
		}
		L.Lanes = append(L.Lanes, tlLane{Name: name, Label: label, Kind: k, Y: y - h/2, H: h})
		y -= h
	}
	if L.violationsInWindow(tl) {
		add("oracle", "violations", laneOracle, oracleH)
	}
	// The Redlock page and Kleppmann call the nodes A, B, C, D, E; so do the scenarios'
	// stories. Groups with replicas keep their node names, which say master and replica.
	// Another service's servers (ZooKeeper's) are no Redlock nodes and get no letter.
	letters := groups(tl) == redisNodes(tl) && redisNodes(tl) <= 26
	for i, n := range tl.Nodes {
		label := n.Name
		if letters && n.Service == "" {
			label += " (" + string(rune('A'+i)) + ")"
		}
		add(n.Name, label, laneNode, nodeH)
	}
	for _, c := range tl.Clients {
		add(c.Name, c.Name, laneClient, clientH)
	}
}

func (L *tlLayout) violationsInWindow(tl *report.Timeline) bool {
	for _, v := range tl.Violations {
		if _, _, ok := L.clip(v.StartS, v.EndS); ok {
			return true
		}
	}
	return false
}

// laneIndex maps an endpoint or process name to its lanes: a node, a group (all its
// nodes), a client.
func (L *tlLayout) laneIndex(tl *report.Timeline) map[string][]int {
	m := map[string][]int{}
	for i, l := range L.Lanes {
		if l.Kind == laneOracle {
			continue
		}
		m[l.Name] = append(m[l.Name], i)
		if l.Kind == laneNode {
			for _, n := range tl.Nodes {
				if n.Name == l.Name && n.Group != n.Name {
					m[n.Group] = append(m[n.Group], i)
				}
			}
		}
	}
	return m
}

// clip clips [a, b] seconds to the window; ok is false when it lies outside. An instant
// (a == b) is kept when it falls inside.
func (L *tlLayout) clip(a, b float64) (float64, float64, bool) {
	if b < L.From || a > L.To || (a == b && a == L.To) {
		return 0, 0, false
	}
	return max(a, L.From), min(b, L.To), true
}

func (L *tlLayout) add(s shape, a, b float64) {
	x0, x1, ok := L.clip(a, b)
	if !ok {
		return
	}
	s.X0, s.X1 = x0, x1
	L.Shapes = append(L.Shapes, s)
}

func (L *tlLayout) span(k shapeKind, lane int, sp report.Span, y0, y1 float64, client int, label string) {
	L.add(shape{Kind: k, Lane: lane, Y0: y0, Y1: y1, Client: client, Label: label}, sp.From.Seconds(), sp.To.Seconds())
}

func (L *tlLayout) nodeShapes(tl *report.Timeline, i int, lanesOf map[string][]int) {
	n := &tl.Nodes[i]
	lane := lanesOf[n.Name][0]
	y := L.Lanes[lane].Y
	// Counted once per node, not per key: resources walks every key of every node.
	several := resources(tl) > 1
	for _, k := range n.Keys {
		label := "?"
		if k.Client >= 0 {
			label = tl.Clients[k.Client].Name
		}
		if several {
			label += " " + k.Resource
		}
		kind := shKey
		if k.Client < 0 {
			kind = shKeyUnknown
		}
		L.span(kind, lane, k.Span, y-keyHalf, y+keyHalf, k.Client, label)
	}
	for _, d := range n.Down {
		L.span(shDown, lane, d, y-downHalf, y+downHalf, -1, "down")
	}
	for _, p := range n.Paused {
		L.span(shNodePaused, lane, p, y-downHalf, y+downHalf, -1, "paused")
	}
	for _, r := range n.Roles {
		switch r.Role {
		case report.RoleLeader:
			L.span(shLeader, lane, r.Span, y+keyHalf, y+downHalf, -1, "leader, epoch "+strconv.FormatUint(uint64(r.Epoch), 10))
		case report.RoleFollower:
			L.span(shFollower, lane, r.Span, y+keyHalf, y+downHalf, -1, "follower")
		case report.RoleLooking:
			L.span(shElection, lane, r.Span, y+keyHalf, y+downHalf, -1, "election")
		}
	}
	for _, m := range n.Marks {
		L.mark(m, lane, y)
	}
}

// resources counts the distinct resources whose keys the timeline shows.
func resources(tl *report.Timeline) int {
	var seen []string
	for _, n := range tl.Nodes {
		for _, k := range n.Keys {
			if !slices.Contains(seen, k.Resource) {
				seen = append(seen, k.Resource)
			}
		}
	}
	return len(seen)
}

func (L *tlLayout) mark(m report.Mark, lane int, y float64) {
	kinds := map[string]shapeKind{report.MarkRestart: shRestart, report.MarkFailover: shFailover,
		report.MarkClockJump: shClockJump, report.MarkClockSlew: shClockJump, report.MarkCrash: shCrash,
		report.MarkExtend: shExtend, report.MarkExtendBad: shExtendFailed, report.MarkExpire: shExpire}
	k, ok := kinds[m.Kind]
	if !ok {
		return
	}
	t := m.At.Seconds()
	if k == shExtend || k == shExtendFailed { // a tick on the validity window
		L.add(shape{Kind: k, Lane: lane, Y0: y + 0.14, Y1: y + 0.62, Client: -1, Label: m.Text}, t, t)
		return
	}
	h := L.Lanes[lane].H / 2 * 0.9
	L.add(shape{Kind: k, Lane: lane, Y0: y - h, Y1: y + h, Client: -1, Label: m.Text}, t, t)
}

func (L *tlLayout) clientShapes(tl *report.Timeline, j int, lanesOf map[string][]int, nodes int) {
	c := &tl.Clients[j]
	lane := lanesOf[c.Name][0]
	y := L.Lanes[lane].Y
	for _, a := range c.Attempts {
		k := shAttemptLost
		if a.Won {
			k = shAttemptWon
		}
		label := strconv.Itoa(a.OKs) + "/" + strconv.Itoa(nodes)
		if a.Text != "" { // a lock that takes no votes says what the attempt did instead
			label = a.Text
			if !a.Won {
				label += ", " + a.Reason
			}
			label += "|" + shortAttempt(a)
		}
		if a.Reason == "validity-expired" {
			label += " OK, but too late: validity expired|" + label
		}
		L.span(k, lane, a.Span, y-0.62, y-0.34, j, label)
	}
	for _, v := range c.Validity {
		L.span(shValidity, lane, v, y+0.2, y+0.56, j, "")
	}
	for _, w := range c.Work {
		L.span(shWork, lane, w, y-0.16, y+0.12, j, "")
	}
	for _, p := range c.Pauses {
		L.span(shPause, lane, p, y-pauseHalf, y+pauseHalf, j, "pause "+roundDur(p.To-p.From))
	}
	labelled := -1 // the last write whose zxid token is written under it
	for i, w := range c.Writes {
		L.write(w, lane, y, j, &tl.Lock)
		if tl.Lock.Tokens != report.TokenZxid || !w.Fenced || len(L.Shapes) == 0 {
			continue
		}
		// A zxid is eleven characters: the same token again close by is left unwritten,
		// or the two would print over each other.
		if s := &L.Shapes[len(L.Shapes)-1]; labelled >= 0 && c.Writes[labelled].Token == w.Token &&
			(w.At-c.Writes[labelled].At).Seconds() < (L.To-L.From)/8 {
			s.Label = ""
		} else {
			labelled = i
		}
	}
	for _, m := range c.Marks {
		L.mark(m, lane, y)
	}
}

// roundDur renders a duration in its largest unit with three significant digits at most:
// "60s", "2.12s", "12.3ms".
func roundDur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	units := []struct {
		size time.Duration
		name string
	}{{time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "µs"}, {time.Nanosecond, "ns"}}
	for _, u := range units {
		if d >= u.size || u.size == time.Nanosecond {
			return sig3(float64(d)/float64(u.size)) + u.name
		}
	}
	return d.String()
}

// sig3 formats v (positive) with at most three significant digits and no trailing zeros.
func sig3(v float64) string {
	dec := max(0, 2-int(math.Floor(math.Log10(v))))
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// shortAttempt is an attempt's label when its Text does not fit: its lock node alone
// ("node 1").
func shortAttempt(a report.Attempt) string {
	short, _, _ := strings.Cut(a.Text, ",")
	return short
}

func (L *tlLayout) write(w report.Write, lane int, y float64, j int, lock *report.LockSettings) {
	yw := y - 0.02
	if !w.Arrived {
		t := w.Sent.Seconds()
		L.add(shape{Kind: shWriteLost, Lane: lane, Y0: yw, Y1: yw, Client: j, Label: "write lost"}, t, t)
		return
	}
	sent, at := w.Sent.Seconds(), w.At.Seconds()
	if at-sent > (L.To-L.From)/200 { // visible on the figure: draw its time in the network
		L.add(shape{Kind: shWriteDelay, Lane: lane, Y0: yw, Y1: yw, Client: j}, sent, at)
	}
	k := shWriteOK
	switch {
	case !w.Accepted:
		k = shWriteRejected
	case w.Stale:
		k = shWriteStale
	}
	label := ""
	if w.Fenced {
		label = "token " + lock.Token(w.Token)
	}
	L.add(shape{Kind: k, Lane: lane, Y0: yw, Y1: yw, Client: j, Label: label}, at, at)
}

// netShapes draws each network fault on the lanes it cuts off: a cut between a client and
// a node on the node's lane ("cut ↔ client1"), anything else on the lanes of its first
// endpoint that has one.
func (L *tlLayout) netShapes(tl *report.Timeline, lanesOf map[string][]int) {
	for _, f := range tl.NetFaults {
		lanes, label := L.faultLanes(f, lanesOf)
		for _, l := range lanes {
			ln := L.Lanes[l]
			L.span(shCut, l, f.Span, ln.Y-ln.H/2, ln.Y+ln.H/2, -1, label)
		}
	}
}

func (L *tlLayout) faultLanes(f report.NetFault, lanesOf map[string][]int) ([]int, string) {
	isNode := func(name string) bool {
		ls := lanesOf[name]
		return len(ls) > 0 && L.Lanes[ls[0]].Kind == laneNode
	}
	switch f.Kind {
	case "isolate":
		return lanesOf[f.A], "isolated"
	case "split":
		var all []int
		for i, l := range L.Lanes {
			if l.Kind != laneOracle {
				all = append(all, i)
			}
		}
		return all, f.Text
	case "cut":
		if isNode(f.B) {
			return lanesOf[f.B], "cut ↔ " + f.A
		}
		if isNode(f.A) {
			return lanesOf[f.A], "cut ↔ " + f.B
		}
		return lanesOf[f.A], "cut ↔ " + f.B
	case "block":
		if isNode(f.B) {
			return lanesOf[f.B], "cut from " + f.A + " (one way)"
		}
		return lanesOf[f.A], "cut to " + f.B + " (one way)"
	case "clog":
		return lanesOf[f.A], "clogged → " + f.B
	}
	return nil, ""
}

// violationShapes puts each violation on the oracle lane, named with its two clients, and
// for overlaps a band down through both clients' lanes. A validity and a usage overlap of
// the same two clients over the same interval are one band with one label; stale writes
// and fenced rejections close together in time are counted on one mark.
func (L *tlLayout) violationShapes(tl *report.Timeline, lanesOf map[string][]int) {
	if len(L.Lanes) == 0 || L.Lanes[0].Kind != laneOracle {
		return
	}
	oy := L.Lanes[0].Y
	type group struct {
		kinds         []string
		first, second string
		start, end    float64
		n             int
	}
	var gs []group
	near := (L.To - L.From) / 100
	for _, v := range tl.Violations {
		merged := false
		for i := range gs {
			g := &gs[i]
			if g.first != v.First || g.second != v.Second {
				continue
			}
			overlap := isOverlap(v.Kind) && isOverlap(g.kinds[0]) && g.start == v.StartS && g.end == v.EndS
			instant := !isOverlap(v.Kind) && g.kinds[0] == v.Kind && math.Abs(v.StartS-g.end) <= near
			if overlap || instant {
				if !slices.Contains(g.kinds, v.Kind) {
					g.kinds = append(g.kinds, v.Kind)
				}
				g.end = max(g.end, v.EndS)
				g.n++
				merged = true
				break
			}
		}
		if !merged {
			gs = append(gs, group{kinds: []string{v.Kind}, first: v.First, second: v.Second, start: v.StartS, end: v.EndS, n: 1})
		}
	}
	for _, g := range gs {
		switch g.kinds[0] {
		case oracle.KindStaleWrite:
			label := "stale write by " + g.first
			if g.n > 1 {
				label = strconv.Itoa(g.n) + " stale writes by " + g.first
			}
			L.add(shape{Kind: shStaleMark, Lane: 0, Y0: oy, Y1: oy, Client: -1, Label: label}, g.start, g.end)
		case oracle.KindFencedRejected:
			label := "fencing rejected " + g.first + "'s write"
			if g.n > 1 {
				label = "fencing rejected " + strconv.Itoa(g.n) + " writes by " + g.first
			}
			L.add(shape{Kind: shFencedMark, Lane: 0, Y0: oy, Y1: oy, Client: -1, Label: label}, g.start, g.end)
		default:
			bottom := oy - oracleH/2
			for _, name := range []string{g.first, g.second} {
				if ls := lanesOf[name]; len(ls) > 0 {
					l := L.Lanes[ls[0]]
					bottom = min(bottom, l.Y-l.H/2)
				}
			}
			var names []string
			for _, k := range []string{oracle.KindValidityOverlap, oracle.KindUsageOverlap} {
				if slices.Contains(g.kinds, k) {
					names = append(names, strings.TrimSuffix(k, "_overlap"))
				}
			}
			label := strings.Join(names, " + ") + " overlap: " + g.first + " & " + g.second
			L.add(shape{Kind: shViolation, Lane: -1, Y0: bottom, Y1: oy + oracleH/2, Client: -1, Label: label}, g.start, g.end)
		}
	}
}

func isOverlap(kind string) bool {
	return kind == oracle.KindValidityOverlap || kind == oracle.KindUsageOverlap
}

// timelineTitle names the run and gives its two verdicts: the lock's (did two clients
// hold it at once: validity or usage overlaps) and the protected resource's (did the
// storage accept a stale write). They differ when fencing works: the lock fails, the
// resource is safe because the storage rejected the late writes, and a single "UNSAFE"
// would say fencing did not help. counts are the whole run's; nil counts them from the
// timeline's violations, which keep only the first oracle.MaxViolations.
func timelineTitle(tl *report.Timeline, win report.Span, counts *experiments.Safety) string {
	name := tl.Scenario
	if name == "" {
		name = "run"
	}
	atLeast := false
	if counts == nil {
		c := countViolations(tl.Violations)
		counts, atLeast = &c, len(tl.Violations) >= oracle.MaxViolations
	}
	governs := "TTL " + roundDur(tl.TTL)
	if tl.Lock.Service != "" { // another service's lock lives by its own settings, not Redlock's ttl
		governs = strings.Join(tl.Lock.Settings, ", ")
	}
	return fmt.Sprintf("%s, seed %d — %s   [%s to %s of a %s run; %s]", name, tl.Seed, verdicts(*counts, atLeast),
		roundDur(win.From), roundDur(win.To), roundDur(tl.Duration), governs)
}

// countViolations counts violations by kind.
func countViolations(vs []oracle.Violation) experiments.Safety {
	var s experiments.Safety
	for _, v := range vs {
		switch v.Kind {
		case oracle.KindValidityOverlap:
			s.ValidityOverlaps++
		case oracle.KindUsageOverlap:
			s.UsageOverlaps++
		case oracle.KindStaleWrite:
			s.StaleWritesAccepted++
		case oracle.KindFencedRejected:
			s.FencedWritesRejected++
		}
	}
	return s
}

// verdicts says the lock's and the resource's verdicts with their counts, e.g.
// "lock: UNSAFE (1 usage overlap) · resource: SAFE (fencing rejected 2 writes)". atLeast
// says the counts are a lower bound (only the first violations were kept).
func verdicts(s experiments.Safety, atLeast bool) string {
	count := func(n int64, one, many string) string {
		pre := ""
		if atLeast {
			pre = "at least "
		}
		switch {
		case n == 0:
			return ""
		case n == 1:
			return pre + "1 " + one
		}
		return pre + strconv.FormatInt(n, 10) + " " + many
	}
	verdict := func(unsafe bool, notes ...string) string {
		var ns []string
		for _, n := range notes {
			if n != "" {
				ns = append(ns, n)
			}
		}
		v := "SAFE"
		if unsafe {
			v = "UNSAFE"
		}
		if len(ns) > 0 {
			v += " (" + strings.Join(ns, ", ") + ")"
		}
		return v
	}
	lock := verdict(s.ValidityOverlaps+s.UsageOverlaps > 0,
		count(s.ValidityOverlaps, "validity overlap", "validity overlaps"),
		count(s.UsageOverlaps, "usage overlap", "usage overlaps"))
	fenced := ""
	if n := count(s.FencedWritesRejected, "write", "writes"); n != "" {
		fenced = "fencing rejected " + n
	}
	resource := verdict(s.StaleWritesAccepted > 0, count(s.StaleWritesAccepted, "stale write accepted", "stale writes accepted"), fenced)
	return "lock: " + lock + " · resource: " + resource
}

// WriteTimeline draws tl as a space-time diagram in format to w.
func WriteTimeline(w io.Writer, format Format, tl *report.Timeline, opt TimelineOptions) error {
	f, err := timelineFigure(format, tl, opt)
	if err != nil {
		return err
	}
	return f.writeTo(w)
}

// Timeline draws tl as a space-time diagram into path, PNG or SVG by its extension.
func Timeline(tl *report.Timeline, path string, opt TimelineOptions) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	f, err := timelineFigure(format, tl, opt)
	if err != nil {
		return err
	}
	return f.save(path)
}

// ResolveWindow checks a requested window against the run and fills in its defaults.
func ResolveWindow(tl *report.Timeline, win *report.Span) (report.Span, error) {
	if win == nil {
		return DefaultWindow(tl), nil
	}
	w := *win
	if w.To == 0 {
		w.To = tl.Duration
	}
	if w.From < 0 || w.From >= w.To || w.From >= tl.Duration {
		return w, fmt.Errorf("window %s:%s: want 0 ≤ FROM < TO and FROM before the end of the run (%s)",
			w.From, w.To, tl.Duration)
	}
	w.To = min(w.To, tl.Duration)
	return w, nil
}

func timelineFigure(format Format, tl *report.Timeline, opt TimelineOptions) (*figure, error) {
	win, err := ResolveWindow(tl, opt.Window)
	if err != nil {
		return nil, err
	}
	wPx, hPx := opt.Width, opt.Height
	if wPx == 0 && hPx == 0 {
		wPx, hPx = DefaultWidth, DefaultHeight
	}
	f, err := newFigure(format, wPx, hPx)
	if err != nil {
		return nil, err
	}
	L := layoutTimelineAt(tl, win, opt.Subtitle, wPx)
	if opt.Counts != nil {
		L.Title = timelineTitle(tl, win, opt.Counts)
	}
	drawTimeline(f.dc, L)
	return f, nil
}
