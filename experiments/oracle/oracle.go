// Package oracle judges a simulated run in true time, which only the simulation knows: the
// lock's safety (validity and usage overlaps), the protected resource's (stale writes), and
// the liveness figures. It reads only the client processes' algorithm-neutral lock events
// (package redlock/lock, through model.ClientEvent) and the storage's reports, so it judges
// any lock algorithm and imports none.
package oracle

import (
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The violation kinds, as records and traces name them.
const (
	// KindValidityOverlap: two clients' validity windows for one resource overlap in true
	// time. The algorithm broke its promise.
	KindValidityOverlap = "validity_overlap"
	// KindUsageOverlap: two clients worked on one resource at the same true time.
	KindUsageOverlap = "usage_overlap"
	// KindStaleWrite: the storage accepted a write from a client that was no longer the
	// latest to acquire the resource. The protected resource's failure, whoever caused it:
	// the lock (a holder that outlived its lock) or the workload (a client that releases as
	// it sends its last write, which can then land after the next holder acquired;
	// release_after_ack removes those).
	KindStaleWrite = "stale_write"
	// KindFencedRejected: the storage rejected a fenced write. Not a violation but its
	// prevention; listed so the trace and the timeline can point at it.
	KindFencedRejected = "fenced_write_rejected"
)

// Limits of what one oracle keeps.
const (
	// MaxClients is the most clients one oracle judges: it keeps the clients of one
	// contention round in a 64-bit set. knobs.MaxClients, the clients knob's bound, states
	// the same number without importing the oracle (experiments/world's tests tie them).
	MaxClients = 64
	// MaxViolations bounds the violations kept in a record; all are counted.
	MaxViolations = 64
)

// Bounds of the time-to-acquire histogram: 1µs resolution, values above an hour clamp.
const (
	histMinUs = 1
	histMaxUs = int64(time.Hour / time.Microsecond)
	histSig   = 3
)

// Oracle judges a run in true time, which only the simulation knows. It watches every
// client event and every write the storage judges, and keeps O(clients + resources) state:
// nothing grows with the length of the run except counters and a bounded list of
// violations. Definitions (all in true time):
//
// Validity window of a lock: from Acquired to the earlier of its validity deadline
// (ValidUntil, moved by each Extended) and the start of its release. An Extended that comes
// after the window closed opens a new one.
//
// Usage interval: from Acquired to WorkEnd (a crash ends it; a pause does not, since the
// process is frozen mid-operation).
//
// Validity overlap: a window opens on a resource while another client's window on it is
// open. Each such pair counts once, when the later window opens; the interval recorded
// runs from that moment to the end of the first of the two windows to close.
//
// Usage overlap: a client starts working on a resource while another works on it; the
// interval ends when the first of the two stops.
//
// Stale write accepted: the storage accepts a write whose writer is not the client that
// acquired the resource last (another client acquired it after the writer did). A fenced
// write rejected is counted separately: fencing at work. The faults listed with either
// are those from the writer's acquisition (or the write's send time, if earlier) to its
// arrival: a pause that ended as the write left is the cause even if it was over when
// the storage judged the write.
//
// The two verdicts (Safety): the lock's counts validity and usage overlaps, the
// resource's counts stale writes accepted.
//
// The oracle reads only the algorithm-neutral lock events (package redlock/lock) that the
// client processes pass on, and the storage's reports: it judges any lock algorithm, and
// imports none.
//
// Attempts and failures: every attempt ends with an AttemptEnded; failed attempts count by
// reason. A lost vote is a "timeout" when the servers that never answered could have made
// up the votes it lacked (votes + unanswered ≥ needed), and "no_quorum" when refusals
// decided it. Failed counts acquires that gave up after all their tries.
//
// Time to acquire: from the first acquire start of a wait (the first AcquireStart after the
// client's previous lock, or after it switched resource) to Acquired, so failed acquires
// and the rests between them count: it is what the caller waits.
//
// Split-brain round: attempts on one resource are clustered by overlap in true time: each
// attempt spans its AttemptStarted to its AttemptEnded, and a cluster is a maximal run of
// attempts each of which started while an earlier one of the run was in progress or at
// the instant the run's latest attempt ended (so the clusters do not depend on the order
// in which attempts end). A cluster is a split-brain round when at least two clients took
// part, none won, and the votes they collected (each client's best vote count in the
// cluster, summed) reached the votes needed: the lock was there to take, and the
// contenders split it. Clusters that failed because someone held the lock collect fewer
// votes than needed and do not count.
//
// Unheld while waiting: per resource, the true time during which at least one client was
// waiting (as for time to acquire) and no live client's validity window was open; summed
// over resources.
// A holder partitioned away or crashed makes this about one TTL: its key blocks everyone
// while nobody holds a valid lock.
//
// Reacquire after a holder's crash: when a client crashes while its validity window is
// open, the time from the crash to the resource's next acquisition by anyone (the
// restarted client included), its percentiles over the run and the number of such
// crashes. It is what a long TTL costs when holders die.
type Oracle struct {
	s       *sim.Sim
	names   []string // client names
	resName []string
	resIdx  map[string]int32

	cl       []oClient
	res      []oResource
	epClient []int32 // network endpoint → client index, -1 for others

	hist    *hdrhistogram.Histogram
	maxWait time.Duration // exact, where the histogram rounds
	// reacq holds the times from a holder's crash to the next acquisition (from the pool at
	// the first one); maxReacq is exact.
	reacq    *hdrhistogram.Histogram
	maxReacq time.Duration
	st       oracleStats

	violations []Violation
	openUsage  int // recorded usage overlaps whose end is not known yet
	// describe lists the faults in effect during [since, now]; nil in unit tests.
	describe func(since, now sim.Time) []string
}

type oClient struct {
	res        int32 // resource of the current or last lock; -1 before the first
	holding    bool  // validity window open unless ValidUntil has passed
	validFrom  sim.Time
	validUntil sim.Time
	working    bool
	workFrom   sim.Time
	waiting    bool
	waitRes    int32
	waitFrom   sim.Time
	attempting bool // an acquire attempt is in progress, on attemptRes
	attemptRes int32
	paused     bool
	pauseFrom  sim.Time
	lastPause  [2]sim.Time // the latest finished pause
	pauses     int
	dead       bool
	deadAt     sim.Time
	crashed    bool     // ever: a restarted client's crash still explains what followed
	restartAt  sim.Time // its latest restart

	// The incidents this client's current session has been counted in: its validity
	// window (validityIncident) or its work (usageIncident) overlapped by another's, or
	// its writes accepted stale (staleIncident). Reset as a session begins.
	validityIncident, usageIncident, staleIncident bool

	// sent holds the send times of the client's latest writes, by write id modulo its
	// length: a write in flight is judged against faults since it was sent.
	sent [4]sentWrite
}

// sentWrite is one storage write a client sent: its request id and true send time.
type sentWrite struct {
	id uint64
	at sim.Time
}

type oResource struct {
	latest int32 // latest acquirer, -1 before the first

	holderCrashed bool     // a holder crashed with its window open; nobody acquired since
	holderCrashAt sim.Time // when

	waiting   int      // clients waiting for it
	heldUntil sim.Time // the latest end among open validity windows
	last      sim.Time // unheld time accounted up to here
	unheld    time.Duration

	// working and holding count the clients whose res is this one and whose flag of that
	// name is set (see setRes), so that an acquisition looks for overlaps, and a release
	// recomputes heldUntil, by scanning the clients only when another one is there.
	working, holding int

	clActive bool
	clOpen   int // attempts of the cluster still in progress
	clNeed   int // the most votes any attempt of the cluster needed
	clEnd    sim.Time
	clMask   uint64
	clWon    bool
	clOKs    [MaxClients]uint8
}

type oracleStats struct {
	attempts, acquired, failed   int64
	noQuorum, timeout, expired   int64
	fenceFailed, aborted, other  int64
	serverError                  int64
	splitBrain                   int64
	extTried, extOK              int64
	validity, usage, stale, rejd int64
	writesSent, released         int64
	holderCrashes                int64

	// The incidents behind them: one per client session that another overlapped (see
	// incident), however many overlapping pairs it made.
	validityIncidents, usageIncidents, staleIncidents int64
}

// Violation is one safety violation (or one fenced write rejected), with what was going
// on when it happened.
type Violation struct {
	Kind     string   `json:"kind"`
	Resource string   `json:"resource"`
	First    string   `json:"first"`  // the earlier holder (for a stale write: the writer)
	Second   string   `json:"second"` // the later one (for a stale write: the latest acquirer)
	StartS   float64  `json:"start_s"`
	EndS     float64  `json:"end_s"`
	Faults   []string `json:"faults"`
	start    sim.Time
	end      sim.Time // sim.Never while unknown (usage overlap still going on)
	a, b     int32
}

// New returns an oracle for the given clients and resources. describe, when not nil,
// lists the world's faults in effect during [since, now] (network, nodes, clocks) for the
// violations' reports; the oracle adds the clients' own pauses and crashes.
func New(s *sim.Sim, clients, resources []string, describe func(since, now sim.Time) []string) *Oracle {
	o := &Oracle{s: s, names: clients, resName: resources,
		resIdx: make(map[string]int32, len(resources)),
		cl:     make([]oClient, len(clients)), res: make([]oResource, len(resources)),
		hist: histograms.Get().(*hdrhistogram.Histogram)}
	for i, r := range resources {
		o.resIdx[r] = int32(i)
		o.res[i].latest = -1
	}
	for i := range o.cl {
		o.cl[i].res, o.cl[i].waitRes = -1, -1
	}
	o.describe = describe
	return o
}

// SetClientEndpoints tells the oracle which network endpoint is which client's (index in
// the clients New was given), so it can attribute the storage's writes.
func (o *Oracle) SetClientEndpoints(eps []network.Endpoint) {
	top := network.Endpoint(-1)
	for _, e := range eps {
		top = max(top, e)
	}
	o.epClient = make([]int32, top+1)
	for i := range o.epClient {
		o.epClient[i] = -1
	}
	for j, e := range eps {
		o.epClient[e] = int32(j)
	}
}

// histograms recycles the oracle's latency histograms between runs. Each is a 176 KB
// counts array and a sweep made one per run: 70 % of all it allocated, in large objects whose
// freeing set the sweep's peak memory. A histogram goes back Reset, which restores exactly
// the state hdrhistogram.New returns, so reuse never changes a result. The pool is a cache
// shared by concurrent sweep workers; sync.Pool is safe for that.
var histograms = sync.Pool{New: func() any { return hdrhistogram.New(histMinUs, histMaxUs, histSig) }}

// ReleaseHistogram returns the histogram to the pool once the record has read it; the
// oracle must not record latencies after that.
func (o *Oracle) ReleaseHistogram() {
	for _, h := range []**hdrhistogram.Histogram{&o.hist, &o.reacq} {
		if *h != nil {
			(*h).Reset()
			histograms.Put(*h)
			*h = nil
		}
	}
}

// reacquired records one time from a holder's crash to the next acquisition.
func (o *Oracle) reacquired(d time.Duration) {
	if o.reacq == nil {
		o.reacq = histograms.Get().(*hdrhistogram.Histogram)
	}
	o.maxReacq = max(o.maxReacq, d)
	_ = o.reacq.RecordValue(min(max(d.Microseconds(), histMinUs), histMaxUs))
}

// ReacquireAfterCrash returns the percentiles p (each in [0, 100]) in milliseconds of the
// times from a holder's crash to the resource's next acquisition, never above the exact
// maximum, and the maximum; ok is false when no holder crashed and was followed by an
// acquisition. Call it before ReleaseHistogram.
func (o *Oracle) ReacquireAfterCrash(ps ...float64) (qs []float64, maxMs float64, ok bool) {
	if o.reacq == nil || o.reacq.TotalCount() == 0 {
		return nil, 0, false
	}
	maxMs = toMs(o.maxReacq)
	for _, p := range ps {
		qs = append(qs, min(float64(o.reacq.ValueAtQuantile(p))/1000, maxMs))
	}
	return qs, maxMs, true
}

// ClientEvent is the model.Observer side of the oracle.
func (o *Oracle) ClientEvent(now sim.Time, e *model.ClientEvent) {
	c := int32(e.Client.Index())
	r, ok := o.resource(e.Resource)
	if !ok {
		r = -1
	}
	switch e.Kind {
	case model.EvAcquireStart:
		o.acquireStart(now, c, r)
	case model.EvAttemptStarted:
		o.attemptStarted(now, c, r)
	case model.EvAttemptEnded:
		o.attemptEnded(now, c, r, e.Lock)
	case model.EvAcquired:
		o.acquired(now, c, r, e.ValidUntil)
	case model.EvAcquireFailed:
		o.st.failed++
	case model.EvWrite:
		o.wrote(now, c, e.WriteID)
	case model.EvWorkEnd:
		o.workEnd(now, c)
	case model.EvReleaseStart:
		o.releaseStart(now, c)
	case model.EvLost:
		o.closeWindow(now, c)
	case model.EvReleased:
		o.st.released++
	case model.EvExtendStart:
		o.st.extTried++
	case model.EvExtended:
		o.extended(now, c, e.ValidUntil)
	case model.EvPause:
		o.pause(now, c)
	case model.EvResume:
		o.resume(now, c)
	case model.EvCrash:
		o.crash(now, c)
	case model.EvRestart:
		cs := &o.cl[c]
		cs.dead, cs.restartAt = false, now
	}
	if invariant.Enabled {
		o.checkCounts()
	}
}

// wrote notes that client c sent storage write id.
func (o *Oracle) wrote(now sim.Time, c int32, id uint64) {
	o.st.writesSent++
	o.cl[c].sent[id%uint64(len(o.cl[c].sent))] = sentWrite{id, now}
}

func (o *Oracle) pause(now sim.Time, c int32) {
	cs := &o.cl[c]
	cs.paused, cs.pauseFrom = true, now
	cs.pauses++
}

func (o *Oracle) resume(now sim.Time, c int32) {
	cs := &o.cl[c]
	cs.paused, cs.lastPause = false, [2]sim.Time{cs.pauseFrom, now}
}

// resource returns the index of the named resource. A world has one lock or a few, and a
// scan of a few names is cheaper than hashing one; the map serves the many.
func (o *Oracle) resource(name string) (int32, bool) {
	if len(o.resName) > 8 {
		r, ok := o.resIdx[name]
		return r, ok
	}
	for i, n := range o.resName {
		if n == name {
			return int32(i), true
		}
	}
	return 0, false
}

// StorageWrite is the model.StorageObserver side of the oracle.
func (o *Oracle) StorageWrite(now sim.Time, w *model.StoredWrite) {
	o.storageWrite(now, o.clientOf(w.From), w.ReqID, w.Resource, w.Fenced, w.Accepted)
}

// clientOf maps an endpoint to a client index; set by the world.
func (o *Oracle) clientOf(ep network.Endpoint) int32 {
	if ep >= 0 && int(ep) < len(o.epClient) {
		return o.epClient[ep]
	}
	return -1
}

func (o *Oracle) acquireStart(now sim.Time, c, r int32) {
	cs := &o.cl[c]
	if cs.waiting && cs.waitRes == r {
		return
	}
	o.stopWaiting(now, c)
	if r < 0 {
		return
	}
	o.account(now, r)
	o.res[r].waiting++
	cs.waiting, cs.waitRes, cs.waitFrom = true, r, now
}

func (o *Oracle) stopWaiting(now sim.Time, c int32) {
	cs := &o.cl[c]
	if !cs.waiting {
		return
	}
	o.account(now, cs.waitRes)
	o.res[cs.waitRes].waiting--
	cs.waiting = false
}

// account adds the unheld-while-waiting time of resource r up to now.
func (o *Oracle) account(now sim.Time, r int32) {
	rs := &o.res[r]
	if rs.waiting > 0 {
		if from := max(rs.last, rs.heldUntil); now > from {
			rs.unheld += now.Sub(from)
		}
	}
	rs.last = now
}

// attemptStarted opens client c's attempt on r, and a new cluster of attempts when none of
// the current one's is in progress and its latest ended before now.
func (o *Oracle) attemptStarted(now sim.Time, c, r int32) {
	o.endAttempt(c)
	if r < 0 {
		return
	}
	rs := &o.res[r]
	if rs.clActive && rs.clOpen == 0 && now > rs.clEnd {
		o.closeCluster(rs)
	}
	if !rs.clActive {
		rs.openCluster(now)
	}
	rs.clOpen++
	cs := &o.cl[c]
	cs.attempting, cs.attemptRes = true, r
}

// endAttempt closes client c's attempt in progress, if any, in its cluster's count.
func (o *Oracle) endAttempt(c int32) {
	cs := &o.cl[c]
	if cs.attempting {
		o.res[cs.attemptRes].clOpen--
		cs.attempting = false
	}
}

func (o *Oracle) attemptEnded(now sim.Time, c, r int32, out *lock.Event) {
	o.st.attempts++
	switch out.Reason {
	case lock.ReasonNone:
	case lock.ReasonNoQuorum:
		if out.Unanswered() {
			o.st.timeout++
		} else {
			o.st.noQuorum++
		}
	case lock.ReasonValidityExpired:
		o.st.expired++
	case lock.ReasonFenceFailed:
		o.st.fenceFailed++
	case lock.ReasonAborted:
		o.st.aborted++
	case lock.ReasonServerError:
		o.st.serverError++
	default:
		o.st.other++
	}
	o.endAttempt(c)
	if r < 0 {
		return
	}
	rs := &o.res[r]
	if !rs.clActive { // an attempt whose start the oracle was not told of
		rs.openCluster(now)
	}
	rs.clEnd = max(rs.clEnd, now)
	rs.clNeed = max(rs.clNeed, out.Needed)
	if rs.clMask&(1<<uint(c)) == 0 {
		rs.clOKs[c] = 0
	}
	rs.clMask |= 1 << uint(c)
	rs.clOKs[c] = max(rs.clOKs[c], uint8(min(out.Votes, 255)))
	if out.Reason == lock.ReasonNone {
		rs.clWon = true
	}
}

// openCluster starts a new cluster of attempts on the resource at now.
func (rs *oResource) openCluster(now sim.Time) {
	rs.clActive, rs.clEnd, rs.clMask, rs.clWon, rs.clNeed = true, now, 0, false, 0
}

func (o *Oracle) closeCluster(rs *oResource) {
	rs.clActive = false
	if rs.clWon || bits.OnesCount64(rs.clMask) < 2 {
		return
	}
	votes := 0
	for m := rs.clMask; m != 0; m &= m - 1 {
		votes += int(rs.clOKs[bits.TrailingZeros64(m)])
	}
	if votes >= rs.clNeed {
		o.st.splitBrain++
	}
}

func (o *Oracle) acquired(now sim.Time, c, r int32, validUntil sim.Time) {
	o.st.acquired++
	cs := &o.cl[c]
	if cs.waiting && cs.waitRes == r {
		wait := now.Sub(cs.waitFrom)
		o.maxWait = max(o.maxWait, wait)
		us := wait.Microseconds()
		_ = o.hist.RecordValue(min(max(us, histMinUs), histMaxUs))
	}
	o.stopWaiting(now, c)
	if r < 0 {
		return
	}
	if rs := &o.res[r]; rs.holderCrashed {
		rs.holderCrashed = false
		o.reacquired(now.Sub(rs.holderCrashAt))
	}
	if self := cs.working && cs.res == r; o.res[r].working > b2i(self) {
		for d := range o.cl {
			ds := &o.cl[d]
			if int32(d) == c || ds.res != r {
				continue
			}
			if ds.working {
				o.violation(now, KindUsageOverlap, r, int32(d), c, ds.workFrom, sim.Never)
				incident(&ds.usageIncident, &o.st.usageIncidents)
			}
		}
	}
	o.setRes(cs, r)
	o.setWorking(cs, true)
	cs.workFrom = now
	cs.usageIncident, cs.staleIncident = false, false
	o.res[r].latest = c
	o.openWindow(now, c, r, validUntil)
}

// incident counts an incident unless the session behind it (counted) already was: a
// holder paused past its validity that lets two others in is one incident and two
// overlapping pairs. Per-pair counts grow with how many got in; incidents count how
// often the lock failed, the rate a per-year target is about.
func incident(counted *bool, n *int64) {
	if !*counted {
		*counted = true
		*n++
	}
}

// openWindow opens c's validity window on r until validUntil, checking it against the
// other clients' open windows. An already expired deadline (a variant that skips the
// validity check) opens no window at all.
func (o *Oracle) openWindow(now sim.Time, c, r int32, validUntil sim.Time) {
	cs := &o.cl[c]
	o.setHolding(cs, false)
	cs.validFrom, cs.validUntil = now, validUntil
	cs.validityIncident = false
	if validUntil <= now {
		return
	}
	for d := 0; o.res[r].holding > 0 && d < len(o.cl); d++ { // c is not holding: others are
		ds := &o.cl[d]
		if int32(d) == c || ds.res != r || !ds.holding || ds.validUntil <= now {
			continue
		}
		o.violation(now, KindValidityOverlap, r, int32(d), c, ds.validFrom, min(ds.validUntil, validUntil))
		incident(&ds.validityIncident, &o.st.validityIncidents)
	}
	o.account(now, r)
	o.setHolding(cs, true)
	o.res[r].heldUntil = max(o.res[r].heldUntil, validUntil)
}

func (o *Oracle) extended(now sim.Time, c int32, validUntil sim.Time) {
	o.st.extOK++
	cs := &o.cl[c]
	if cs.res < 0 {
		return
	}
	if !cs.holding || cs.validUntil <= now {
		o.openWindow(now, c, cs.res, validUntil)
		return
	}
	o.account(now, cs.res)
	cs.validUntil = validUntil
	o.res[cs.res].heldUntil = max(o.res[cs.res].heldUntil, validUntil)
}

func (o *Oracle) workEnd(now sim.Time, c int32) {
	cs := &o.cl[c]
	if !cs.working {
		return
	}
	o.setWorking(cs, false)
	if o.openUsage == 0 {
		return
	}
	for i := range o.violations {
		v := &o.violations[i]
		if v.Kind == KindUsageOverlap && v.end == sim.Never && (v.a == c || v.b == c) {
			v.end = now
			o.openUsage--
		}
	}
}

func (o *Oracle) releaseStart(now sim.Time, c int32) { o.closeWindow(now, c) }

// closeWindow ends client c's validity window now: it released, its algorithm reported
// the lock lost, or it crashed (a dead process holds nothing, though its keys live on).
func (o *Oracle) closeWindow(now sim.Time, c int32) {
	cs := &o.cl[c]
	if !cs.holding || cs.res < 0 {
		o.setHolding(cs, false)
		return
	}
	r := cs.res
	o.account(now, r)
	o.setHolding(cs, false)
	cs.validUntil = min(cs.validUntil, now)
	o.recomputeHeld(r)
	for i := range o.violations { // a recorded overlap ends no later than this window
		if v := &o.violations[i]; v.Kind == KindValidityOverlap && (v.a == c || v.b == c) && v.end > now {
			v.end = now
		}
	}
}

func (o *Oracle) recomputeHeld(r int32) {
	var until sim.Time
	for d := 0; o.res[r].holding > 0 && d < len(o.cl); d++ {
		if ds := &o.cl[d]; ds.res == r && ds.holding {
			until = max(until, ds.validUntil)
		}
	}
	o.res[r].heldUntil = until
}

// setRes moves client cs to resource r, and its working and holding flags from its old
// resource's counts to r's.
func (o *Oracle) setRes(cs *oClient, r int32) {
	if cs.res == r {
		return
	}
	if cs.res >= 0 {
		rs := &o.res[cs.res]
		rs.working -= b2i(cs.working)
		rs.holding -= b2i(cs.holding)
	}
	cs.res = r
	if r >= 0 {
		rs := &o.res[r]
		rs.working += b2i(cs.working)
		rs.holding += b2i(cs.holding)
	}
}

// setWorking sets client cs's working flag, counted on its resource.
func (o *Oracle) setWorking(cs *oClient, w bool) {
	if cs.working != w && cs.res >= 0 {
		o.res[cs.res].working += 2*b2i(w) - 1
	}
	cs.working = w
}

// setHolding sets client cs's holding flag, counted on its resource.
func (o *Oracle) setHolding(cs *oClient, h bool) {
	if cs.holding != h && cs.res >= 0 {
		o.res[cs.res].holding += 2*b2i(h) - 1
	}
	cs.holding = h
}

// checkCounts asserts, in invariants builds, that every resource's working and holding
// counts are what a scan of the clients finds.
func (o *Oracle) checkCounts() {
	for r := range o.res {
		var working, holding int
		for d := range o.cl {
			if ds := &o.cl[d]; ds.res == int32(r) {
				working += b2i(ds.working)
				holding += b2i(ds.holding)
			}
		}
		if rs := &o.res[r]; rs.working != working || rs.holding != holding {
			invariant.Check(false, "oracle: resource %s counts %d working and %d holding, the clients %d and %d",
				o.resName[r], rs.working, rs.holding, working, holding)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (o *Oracle) crash(now sim.Time, c int32) {
	cs := &o.cl[c]
	if cs.holding && cs.validUntil > now && cs.res >= 0 {
		rs := &o.res[cs.res]
		rs.holderCrashed, rs.holderCrashAt = true, now
		o.st.holderCrashes++
	}
	o.closeWindow(now, c)
	o.endAttempt(c)
	o.workEnd(now, c)
	o.stopWaiting(now, c)
	cs.dead, cs.deadAt, cs.crashed = true, now, true
}

func (o *Oracle) storageWrite(now sim.Time, c int32, id uint64, resource string, fenced, accepted bool) {
	r, ok := o.resource(resource)
	if !ok || c < 0 {
		return
	}
	latest := o.res[r].latest
	switch {
	case fenced && !accepted:
		o.st.rejd++
		o.violation(now, KindFencedRejected, r, c, latest, o.writeSince(c, id, now), now)
	case accepted && latest != c:
		o.st.stale++
		o.violation(now, KindStaleWrite, r, c, latest, o.writeSince(c, id, now), now)
		incident(&o.cl[c].staleIncident, &o.st.staleIncidents)
	}
}

// writeSince returns the start of the window whose faults explain client c's write id
// judged now: from the writer's acquisition of the lock it wrote under (as a usage
// overlap counts from the first holder's start), or from the write's send time if that
// is earlier. So a pause that ended just as the write left (a resumed client writes at
// once), a clog that held it in flight, or a partition during the writer's hold is
// listed. A write not among the client's latest few counts from the writer's acquisition.
func (o *Oracle) writeSince(c int32, id uint64, now sim.Time) sim.Time {
	cs := &o.cl[c]
	since := min(cs.workFrom, now)
	if sw := cs.sent[id%uint64(len(cs.sent))]; sw.id == id && id != 0 {
		since = min(since, sw.at)
	}
	return since
}

// violation counts a violation, records it while the list has room, and marks it in the
// trace.
func (o *Oracle) violation(now sim.Time, kind string, r, a, b int32, since, end sim.Time) {
	switch kind {
	case KindValidityOverlap:
		o.st.validity++
	case KindUsageOverlap:
		o.st.usage++
	}
	second := ""
	if b >= 0 {
		second = o.names[b]
	}
	o.s.Trace(Actor, RecViolation, sim.Str("kind", kind), sim.Str("resource", o.resName[r]),
		sim.Str("first", o.names[a]), sim.Str("second", second))
	if len(o.violations) >= MaxViolations {
		return
	}
	v := Violation{Kind: kind, Resource: o.resName[r], First: o.names[a], Second: second,
		start: now, end: end, a: a, b: b}
	if kind == KindUsageOverlap {
		o.openUsage++
	}
	v.Faults = o.faultsFor(since, now, a, b)
	o.violations = append(o.violations, v)
}

// faultsFor lists the faults in effect during [since, now]: the world's (network, nodes,
// clocks) and the two clients' pauses and crashes.
func (o *Oracle) faultsFor(since, now sim.Time, a, b int32) []string {
	var fs []string
	if o.describe != nil {
		fs = o.describe(since, now)
	}
	for _, c := range []int32{a, b} {
		if c < 0 {
			continue
		}
		cs := &o.cl[c]
		switch {
		case cs.paused:
			fs = append(fs, o.names[c]+" paused since "+FmtTime(cs.pauseFrom))
		case cs.pauses > 0 && cs.lastPause[1] >= since:
			fs = append(fs, o.names[c]+" paused "+FmtTime(cs.lastPause[0])+" to "+FmtTime(cs.lastPause[1]))
		}
		switch {
		case cs.dead:
			fs = append(fs, o.names[c]+" crashed at "+FmtTime(cs.deadAt))
		case cs.crashed && cs.restartAt >= since:
			fs = append(fs, o.names[c]+" crashed at "+FmtTime(cs.deadAt)+", restarted at "+FmtTime(cs.restartAt))
		}
	}
	if fs == nil {
		fs = []string{}
	}
	return fs
}

// Finish closes the books at the end of the run.
func (o *Oracle) Finish(end sim.Time) {
	for r := range o.res {
		o.account(end, int32(r))
		if o.res[r].clActive {
			o.closeCluster(&o.res[r])
		}
	}
	for i := range o.violations {
		v := &o.violations[i]
		if v.end == sim.Never || v.end > end {
			v.end = end
		}
		v.StartS, v.EndS = seconds(v.start), seconds(v.end)
	}
	o.openUsage = 0
}

// Unheld returns the time the lock sat unheld while someone waited, summed over
// resources.
func (o *Oracle) Unheld() time.Duration {
	var d time.Duration
	for r := range o.res {
		d += o.res[r].unheld
	}
	return d
}

// FmtTime renders a true time for fault lists and summaries, to the microsecond.
func FmtTime(t sim.Time) string {
	if t == sim.Never {
		return "never"
	}
	return t.Duration().Round(time.Microsecond).String()
}

// seconds converts a true time to seconds, rounded to the microsecond so JSON shows
// 1.600558 rather than 1.6005575890000001.
func seconds(t sim.Time) float64 { return math.Round(float64(t)/1e3) / 1e6 }

// Counts are the oracle's counters at the end of a run; the definitions are on Oracle.
type Counts struct {
	Attempts, Acquired, Failed                int64
	NoQuorum, Timeout, ValidityExpired        int64
	FenceFailed, Aborted, Other               int64
	ServerError                               int64
	SplitBrainRounds                          int64
	ExtensionsTried, ExtensionsSucceeded      int64
	ValidityOverlaps, UsageOverlaps           int64
	StaleWritesAccepted, FencedWritesRejected int64
	// The incidents behind the three violation counts: client sessions another
	// overlapped, each counted once however many pairs it made.
	ValidityIncidents, UsageIncidents, StaleIncidents int64
	WritesSent, Released                              int64
	HolderCrashes                                     int64 // clients that crashed holding a valid lock
}

// Counts returns the counters.
func (o *Oracle) Counts() Counts {
	st := &o.st
	return Counts{Attempts: st.attempts, Acquired: st.acquired, Failed: st.failed,
		NoQuorum: st.noQuorum, Timeout: st.timeout, ValidityExpired: st.expired,
		FenceFailed: st.fenceFailed, Aborted: st.aborted, Other: st.other, ServerError: st.serverError, SplitBrainRounds: st.splitBrain,
		ExtensionsTried: st.extTried, ExtensionsSucceeded: st.extOK,
		ValidityOverlaps: st.validity, UsageOverlaps: st.usage,
		StaleWritesAccepted: st.stale, FencedWritesRejected: st.rejd,
		ValidityIncidents: st.validityIncidents, UsageIncidents: st.usageIncidents, StaleIncidents: st.staleIncidents,
		WritesSent: st.writesSent, Released: st.released, HolderCrashes: st.holderCrashes}
}

// Violations returns the violations recorded so far (at most MaxViolations), in order of
// detection. After Finish their ends and times in seconds are final.
func (o *Oracle) Violations() []Violation { return o.violations }

// AcquireLatency returns the time-to-acquire percentiles p (each in [0, 100]) in
// milliseconds, never above the exact maximum, and the maximum; ok is false when nothing
// was acquired. Call it before ReleaseHistogram.
func (o *Oracle) AcquireLatency(ps ...float64) (qs []float64, maxMs float64, ok bool) {
	if o.hist == nil || o.hist.TotalCount() == 0 {
		return nil, 0, false
	}
	maxMs = toMs(o.maxWait)
	for _, p := range ps { // the histogram rounds up; never past the exact max
		qs = append(qs, min(float64(o.hist.ValueAtQuantile(p))/1000, maxMs))
	}
	return qs, maxMs, true
}

// LatestAcquirer returns the index of the client that acquired resource last, or -1.
func (o *Oracle) LatestAcquirer(resource string) int {
	r, ok := o.resource(resource)
	if !ok {
		return -1
	}
	return int(o.res[r].latest)
}

// toMs converts a duration to milliseconds, to the microsecond.
func toMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
