package redlock

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// State is where the machine is in the life of one lock.
type State uint8

// The states.
const (
	StateIdle       State = iota // no lock; Acquire may start
	StateAcquiring               // the SET round of an attempt
	StateFencing                 // the INCR round after a won SET round
	StateCleaningUp              // compare-and-delete on all nodes after a lost attempt
	StateBackingOff              // waiting retry_delay ± retry_jitter before the next attempt
	StateHeld                    // acquired; Extend and Release may start
	StateExtending               // the compare-and-pexpire round
	StateReleasing               // the compare-and-delete round of Release
	// StateReleaseBackingOff: waiting retry_delay ± retry_jitter before another release
	// round (node-redlock 5 retries a release that no quorum confirmed).
	StateReleaseBackingOff
)

var stateNames = [...]string{StateIdle: "idle", StateAcquiring: "acquiring",
	StateFencing: "fencing", StateCleaningUp: "cleaning-up", StateBackingOff: "backing-off",
	StateHeld: "held", StateExtending: "extending", StateReleasing: "releasing",
	StateReleaseBackingOff: "release-backing-off"}

func (s State) String() string { return enumName(stateNames[:], int(s), "state") }

// slot is the machine's view of one node in the current round.
type slot struct {
	req lock.Req // the request awaited from this node; 0 when none
	// expiring: setnx-then-expire got OK for SET and now awaits its separate PEXPIRE.
	expiring bool
	// deleting: get-then-del's GET found the lock's value and now awaits its DEL.
	deleting bool
}

// round counts one command's fate across the nodes it went to.
type round struct {
	targets  int  // nodes the round contacts
	sent     int  // nodes contacted so far (Sequential contacts one at a time)
	done     int  // nodes that answered or timed out
	oks      int  // nodes whose answer counts as success
	replies  int  // nodes that answered at all
	need     int  // successes that decide the round in our favour
	refused  int  // nodes that answered no (not an error): redsync's "taken"
	errs     int  // nodes that answered an error reply
	failFast bool // end as soon as the outcome is decided
	// takenRule: fail fast the way redsync does, once `need` nodes refused, rather than
	// once a quorum is out of reach whatever the failures were.
	takenRule bool
	// againstRule: fail fast the way node-redlock 5 does, once `need` nodes voted against
	// (refused, erred or failed), which for an even N waits longer than "out of reach".
	againstRule bool
}

func (r *round) over() bool {
	switch {
	case r.done == r.targets:
		return true
	case !r.failFast:
		return false
	case r.oks >= r.need:
		return true
	case r.takenRule:
		return r.refused >= r.need
	case r.againstRule:
		return r.done-r.oks >= r.need
	}
	return r.done-r.oks > r.targets-r.need
}

// check asserts the round's counters are in step: no node answers twice, nobody succeeds,
// refuses or errs without answering, and no more nodes are asked than the round has. (A SET NX whose
// separate PEXPIRE is awaited counts its OK before its node is done, so successes are
// bounded by replies, not by nodes done.)
func (r *round) check() {
	if !(r.sent <= r.targets && r.done <= r.targets && r.oks <= r.replies &&
		r.replies <= r.targets && r.need <= r.targets && r.oks+r.refused+r.errs <= r.replies) {
		invariant.Check(false, "redlock: round counters out of step: %+v", *r)
	}
}

func (r *round) finish(rep resp.Reply, ok bool) {
	r.done++
	if rep.Kind != resp.ReplyNone {
		r.replies++
	}
	if ok {
		r.oks++
	} else if r.takenRule && refusal(rep) {
		r.refused++
	} else if rep.Kind == resp.ReplyError {
		r.errs++
	}
}

// failures counts the nodes that answered an error or never answered: redis-py's
// RedisErrors.
func (r *round) failures() int { return r.errs + r.done - r.replies }

// refusal reports whether a reply that did not succeed is a no rather than a failure:
// redsync counts a node as taken when SET NX answered nil or a script answered 0, but not
// for an error reply, a timeout, or its delete script's -1 (the key had already expired).
func refusal(rep resp.Reply) bool {
	switch rep.Kind {
	case resp.ReplyNone, resp.ReplyError:
		return false
	case resp.ReplyInt:
		return rep.Int >= 0
	}
	return true
}

// Machine is the Redlock client algorithm for one lock at a time, as a deterministic state
// machine: inputs are method calls carrying the caller's local monotonic reading, outputs
// are appended to an outbox each input returns (and Outputs shows). It never reads a clock, sleeps,
// does I/O or draws randomness other than from the *rand.Rand it was given, so the
// simulator and the real-Redis driver run literally the same code, and a seeded run
// replays exactly.
type Machine struct {
	cfg     Config
	rng     *rand.Rand
	n       int
	quorum  int
	drift   time.Duration
	timeout time.Duration
	// extendTimeout and releaseTimeout are the per-node waits of extensions and releases.
	extendTimeout, releaseTimeout time.Duration
	// acquireCtx is the deadline of the context an acquire attempt's requests and its
	// cleanup's carry to the driver (Config.ContextFactor); 0: none.
	acquireCtx time.Duration
	// rules are the dialect's and the variant's, resolved once by New.
	rules      rules
	relAttempt int // release rounds so far (node-redlock 5 retries them)
	// extLoop: the cleanup or back-off under way belongs to an extension, which
	// node-redlock 4.2.0 retries like an acquire (unlocking after each lost round);
	// extAttempt counts that extension's rounds.
	extLoop    bool
	extAttempt int
	// extVotes and extReplies are the last lost extension round's, for its ExtendFailed.
	extVotes, extReplies int

	state       State
	now         time.Duration // the latest input's reading
	resource    string
	value       string
	fenceKey    string // FenceKey(fenceFor), kept so repeated acquires don't rebuild it
	fenceFor    string
	attempt     int
	extensions  int
	opStart     time.Duration // start of the current attempt, extension or release
	deadline    time.Duration // validity deadline of the attempt or the held lock
	newDeadline time.Duration // the deadline an extension in progress would give
	reason      lock.Reason   // why the last attempt failed
	setOKs      int           // OKs of the last SET round, for lock.AttemptEnded
	setReplies  int
	fenceMax    int64
	token       int64
	fenced      bool

	slots   []slot
	locked  []bool // VariantReleaseLockedOnly: the nodes that answered OK to this attempt's SET
	round   round
	timer   lock.TimerID // the live timer; 0 when none
	lastReq lock.Req
	lastTID lock.TimerID
	ignored uint64
	out     []lock.Output
}

// Machine is a lock.Client: the simulator and redlock/redisdriver drive it through that
// interface, like any other lock algorithm.
var _ lock.Client = (*Machine)(nil)

// Factory returns a lock.Factory that builds machines for cfg, the registration of Redlock
// as a lock algorithm. cfg is checked now, so a bad knob is reported before any client is
// built.
func Factory(cfg Config) (lock.Factory, error) {
	cfg = cfg.Effective()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return func(rng *rand.Rand) (lock.Client, error) { return New(cfg, rng) }, nil
}

// New returns an idle machine for cfg.Effective(), or the *ParamError of the first bad knob.
// rng supplies lock values and retry jitter; the simulator passes a seeded stream so runs
// replay, the real driver one seeded from crypto/rand so values are unguessable.
func New(cfg Config, rng *rand.Rand) (*Machine, error) {
	cfg = cfg.Effective()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("redlock: nil random source")
	}
	m := &Machine{
		cfg:     cfg,
		rng:     rng,
		n:       cfg.Nodes,
		quorum:  cfg.Quorum(),
		drift:   cfg.Drift(),
		timeout: cfg.NodeTimeout(),

		extendTimeout:  cfg.ExtendNodeTimeout(),
		releaseTimeout: cfg.ReleaseNodeTimeout(),
		acquireCtx:     cfg.AcquireContext(),
		rules:          resolveRules(cfg),
		slots:          make([]slot, cfg.Nodes),
		out:            make([]lock.Output, 0, 2*cfg.Nodes+4),
	}
	if cfg.Variant == VariantReleaseLockedOnly {
		m.locked = make([]bool, cfg.Nodes)
	}
	return m, nil
}

// Config returns the effective configuration.
func (m *Machine) Config() Config { return m.cfg }

// Quorum returns N/2+1.
func (m *Machine) Quorum() int { return m.quorum }

// State returns the current state.
func (m *Machine) State() State { return m.state }

// Resource returns the key of the current or last lock.
func (m *Machine) Resource() string { return m.resource }

// Value returns the random value of the current or last acquire.
func (m *Machine) Value() string { return m.value }

// Deadline returns the validity deadline of the held lock on the local monotonic clock.
func (m *Machine) Deadline() time.Duration { return m.deadline }

// Ignored counts stale replies and timers the machine dropped: late answers from an earlier
// round, duplicates, timers already superseded.
func (m *Machine) Ignored() uint64 { return m.ignored }

// Outputs returns what the last input produced, in order. The slice is reused: it is
// valid until the next input method is called.
func (m *Machine) Outputs() []lock.Output { return m.out }

// begin clears the outbox and checks that time only moves forward: every expiry and
// validity computation below assumes it.
func (m *Machine) begin(now time.Duration) error {
	m.out = m.out[:0]
	if now < m.now {
		return fmt.Errorf("%w: now = %v after %v", lock.ErrTimeBackward, now, m.now)
	}
	m.now = now
	return nil
}

// Acquire starts acquiring resource with a fresh random value: step 1 of the Redlock page
// (note the start time) and the first attempt's SETs.
func (m *Machine) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	if m.state != StateIdle {
		return nil, fmt.Errorf("acquire %q in state %v: %w", resource, m.state, lock.ErrBusy)
	}
	m.resource = resource
	if m.cfg.Fencing != FenceNone && (m.fenceKey == "" || m.fenceFor != resource) {
		m.fenceKey, m.fenceFor = FenceKey(resource), resource
	}
	m.value = m.rules.newValue(m.rng)
	m.attempt = 0
	m.token, m.fenced = 0, false
	m.startAttempt(now)
	return m.out, nil
}

// Extend starts extending the held lock: compare-and-pexpire (or extend-or-set) on every
// node, with validity recomputed from now as redsync does.
func (m *Machine) Extend(now time.Duration) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	switch m.state {
	case StateHeld:
	case StateIdle:
		return nil, fmt.Errorf("extend: %w", lock.ErrNotHeld)
	default:
		return nil, fmt.Errorf("extend in state %v: %w", m.state, lock.ErrBusy)
	}
	// The page: "limit the number of extensions", else a holder can starve everyone.
	if m.extensions >= m.rules.maxExtensions {
		o := m.outcome(lock.ExtendFailed, lock.ReasonExtensionLimit, now, m.deadline)
		o.Attempt, o.Votes, o.Replies, o.Start = m.extensions, 0, 0, now
		m.emit(o)
		return m.out, nil
	}
	if m.rules.refuseExpiredExtend && m.deadline < now { // node-redlock: the lock has already expired
		o := m.outcome(lock.ExtendFailed, lock.ReasonValidityExpired, now, m.deadline)
		o.Attempt, o.Votes, o.Replies, o.Start = m.extensions, 0, 0, now
		m.emit(o)
		return m.out, nil
	}
	m.extensions++
	m.extAttempt = 0
	m.startExtendRound(now)
	return m.out, nil
}

// startExtendRound sends one round of the extension: the dialect's compare-and-pexpire
// (or extend-or-set) on every node, with validity recomputed from now as redsync does.
func (m *Machine) startExtendRound(now time.Duration) {
	m.extAttempt++
	m.state = StateExtending
	if !m.rules.validityFromStart || m.extAttempt == 1 { // node-redlock 5 counts from extend()'s start
		m.opStart = now
		m.newDeadline = now + m.cfg.TTL - m.drift
	}
	m.newRound(m.n, m.quorum, m.cfg.FailFast)
	c := m.rules.extend
	c.Key, c.Value = m.resource, m.value
	m.sendAll(c)
	m.arm(m.extendTimeout)
}

// Release compare-and-deletes the key on every node, whether or not this client holds it
// there. Called while an acquire or extend is in progress it aborts that operation first
// (reported as failed with ReasonAborted), so a driver whose caller gave up can clean up.
func (m *Machine) Release(now time.Duration) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	if m.state != StateHeld {
		if err := m.interrupt(now); err != nil {
			return nil, err
		}
	}
	m.disarm()
	m.state = StateReleasing
	m.opStart = now
	m.relAttempt = 1
	if !m.releaseRound() {
		m.endRound(now)
		return m.out, nil
	}
	m.arm(m.releaseTimeout)
	return m.out, nil
}

// interrupt ends the operation under way when Release comes in any state but held, or
// refuses the Release. It is Release's cold path, kept out of line so that the release
// of a held lock, the one every cycle makes, stays small.
//
//go:noinline
func (m *Machine) interrupt(now time.Duration) error {
	switch m.state {
	case StateIdle:
		return fmt.Errorf("release: %w", lock.ErrNotHeld)
	case StateReleasing, StateReleaseBackingOff:
		return fmt.Errorf("release in state %v: %w", m.state, lock.ErrBusy)
	case StateAcquiring, StateFencing:
		if m.state == StateAcquiring {
			m.setOKs, m.setReplies = m.round.oks, m.round.replies
		}
		m.reason = lock.ReasonAborted
		m.emit(m.attemptEnded(now))
		m.emit(m.outcome(lock.AcquireFailed, lock.ReasonAborted, now, m.deadline))
	case StateCleaningUp, StateBackingOff:
		if m.extLoop {
			m.extLoop = false
			o := m.outcome(lock.ExtendFailed, lock.ReasonAborted, now, m.deadline)
			o.Attempt, o.Votes, o.Replies = m.extensions, 0, 0
			m.emit(o)
			break
		}
		m.emit(m.outcome(lock.AcquireFailed, lock.ReasonAborted, now, m.deadline))
	case StateExtending:
		m.extLoop = false // a later round of node-redlock's extend() loop ends here too
		o := m.outcome(lock.ExtendFailed, lock.ReasonAborted, now, m.deadline)
		o.Attempt, o.Votes, o.Replies = m.extensions, m.round.oks, m.round.replies
		m.emit(o)
	}
	return nil
}

// Reply feeds the reply r from node to request req. A reply to a request the machine no
// longer awaits is ignored: it belongs to an earlier round, or its node already timed out.
// Drivers report a timeout or connection error as NoReply. p carries a resp.Reply.
func (m *Machine) Reply(now time.Duration, node int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	if node < 0 || node >= m.n {
		return nil, fmt.Errorf("redlock: reply from node %d of %d", node, m.n)
	}
	s := &m.slots[node]
	if req == 0 || s.req != req {
		m.ignored++
		return m.out, nil
	}
	s.req = 0
	r := resp.ReplyOf(&p)
	switch m.state {
	case StateAcquiring:
		m.onSetReply(node, r)
	case StateFencing:
		ok := r.Kind == resp.ReplyInt
		if ok && (m.round.oks == 0 || r.Int > m.fenceMax) {
			m.fenceMax = r.Int
		}
		m.round.finish(r, ok)
	case StateExtending:
		// ScriptExtend answers PEXPIRE's 1; ScriptExtendOrSet may answer SET's OK instead.
		m.round.finish(r, (r.Kind == resp.ReplyInt && r.Int == 1) || r.IsOK())
	case StateCleaningUp, StateReleasing:
		if m.rules.getThenDel && !s.deleting {
			if r.Kind == resp.ReplyBulk && r.Str == m.value { // ours, as of the GET
				s.deleting = true
				m.send(node, resp.Command{Op: resp.OpDel, Key: m.resource})
				break
			}
			m.round.finish(r, false)
			break
		}
		s.deleting = false
		m.round.finish(r, r.Kind == resp.ReplyInt && r.Int >= 1)
	}
	m.advance(now)
	return m.out, nil
}

// Timer reports that timer id fired. Only the live timer counts; others are stale.
func (m *Machine) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	if id == 0 || id != m.timer {
		m.ignored++
		return m.out, nil
	}
	m.timer = 0
	if m.state == StateBackingOff {
		if m.extLoop {
			m.startExtendRound(now)
			return m.out, nil
		}
		m.startAttempt(now)
		return m.out, nil
	}
	if m.state == StateReleaseBackingOff {
		m.state = StateReleasing
		m.relAttempt++
		m.releaseRound()
		m.arm(m.releaseTimeout)
		return m.out, nil
	}
	// The per-node timeout ran out: every node still awaited is given up on. A SET may
	// still land there later, which is why a lost attempt releases on all nodes.
	for i := range m.slots {
		if m.slots[i].req != 0 {
			o := m.push(lock.OutAbandon)
			o.Node, o.Req = i, m.slots[i].req
			m.slots[i] = slot{}
			m.round.done++
		}
	}
	m.advance(now)
	return m.out, nil
}

func (m *Machine) startAttempt(now time.Duration) {
	m.attempt++
	m.state = StateAcquiring
	m.opStart = now
	if !m.rules.validityFromStart || m.attempt == 1 { // node-redlock 5 counts validity from the acquire's start
		m.deadline = now + m.cfg.TTL - m.drift
	}
	m.newRound(m.n, m.quorum, m.cfg.FailFast)
	if m.locked != nil {
		clear(m.locked)
	}
	o := m.push(lock.OutEvent)
	o.Event = lock.Event{Kind: lock.AttemptStarted, Resource: m.resource, Value: m.value,
		Attempt: m.attempt, Needed: m.quorum, Servers: m.n, Start: now}
	if m.cfg.Mode == Sequential {
		m.sendNextSet()
		return
	}
	m.sendAll(m.setCommand())
	m.arm(m.timeout)
}

// sendNextRelease asks the next node of a release round one after another, with its own
// timeout (redlock-py's unlock loop).
func (m *Machine) sendNextRelease() {
	m.disarm()
	m.send(m.round.sent, m.releaseCommand())
	m.round.sent++
	m.arm(m.releaseWait())
}

// releaseWait is the per-node wait of the release round under way: the cleanup after a
// lost attempt waits as an acquire does, a release as releases do.
func (m *Machine) releaseWait() time.Duration {
	if m.state == StateCleaningUp {
		return m.timeout
	}
	return m.releaseTimeout
}

func (m *Machine) sendNextSet() {
	m.disarm() // the previous node's timeout, when its reply beat it
	m.send(m.round.sent, m.setCommand())
	m.round.sent++
	m.arm(m.timeout)
}

// setCommand is the dialect's acquire (SET NX PX ttl, or the library's lock script), or
// for VariantSetNXThenExpire (its deviation) SET NX with no expiry, to be followed by a
// separate PEXPIRE.
func (m *Machine) setCommand() resp.Command {
	c := m.rules.acquire
	c.Key, c.Value = m.resource, m.value
	return c
}

// setOK reports whether r is a vote for the lock: SET's OK, or for node-redlock its lock
// script's 1 (the number of keys it took).
func (m *Machine) setOK(r resp.Reply) bool {
	if m.rules.voteIsOne {
		return r.Kind == resp.ReplyInt && r.Int == 1
	}
	return r.IsOK()
}

// releaseCommand is the dialect's compare-and-delete, or for VariantUnsafeRelease (its
// deviation) a plain DEL that deletes whoever's key is there, or for VariantGetThenDel
// (its deviation) the GET whose reply decides a separate DEL. Only a script carries the
// lock value.
func (m *Machine) releaseCommand() resp.Command {
	c := m.rules.release
	c.Key = m.resource
	if c.Script != resp.ScriptNone {
		c.Value = m.value
	}
	return c
}

// validAt reports whether validity is left at now, the page's step 3 condition. Skipping
// it is VariantNoValidityCheck's deviation.
func (m *Machine) validAt(now, deadline time.Duration) bool {
	return m.rules.unchecked || deadline > now
}

func (m *Machine) onSetReply(node int, r resp.Reply) {
	s := &m.slots[node]
	if s.expiring { // the PEXPIRE of setnx-then-expire: the resp.OK was counted already
		s.expiring = false
		m.round.done++
		return
	}
	if m.rules.expireSeparately && r.IsOK() {
		m.round.replies++
		m.round.oks++
		s.expiring = true
		m.send(node, resp.Command{Op: resp.OpPExpire, Key: m.resource, TTL: m.cfg.TTL})
		return
	}
	ok := m.setOK(r)
	if m.locked != nil && ok {
		m.locked[node] = true
	}
	m.round.finish(r, ok)
}

// advance ends the round when it is over, or in Sequential mode moves on to the next node
// once the current one is done.
func (m *Machine) advance(now time.Duration) {
	if invariant.Enabled {
		m.round.check()
	}
	if m.round.over() {
		m.endRound(now)
		return
	}
	if m.state == StateAcquiring && m.cfg.Mode == Sequential && m.round.done == m.round.sent {
		m.sendNextSet()
	}
	if m.rules.seqRelease && (m.state == StateCleaningUp || m.state == StateReleasing) && m.round.done == m.round.sent {
		m.sendNextRelease()
	}
}

func (m *Machine) endRound(now time.Duration) {
	m.clearSlots() // replies still on their way are now stale
	m.disarm()
	switch m.state {
	case StateAcquiring:
		m.endSetRound(now)
	case StateFencing:
		m.endFenceRound(now)
	case StateCleaningUp:
		m.endCleanup(now)
	case StateExtending:
		m.endExtend(now)
	case StateReleasing:
		if m.rules.retryRelease && m.round.oks < m.round.need && m.relAttempt < m.cfg.Tries {
			m.state = StateReleaseBackingOff // node-redlock 5's release retries like an acquire
			m.arm(m.retryDelay())
			return
		}
		m.state = StateIdle
		o := m.outcome(lock.Released, lock.ReasonNone, now, m.deadline)
		o.Votes, o.Needed, o.Replies = m.round.oks, m.round.need, m.round.replies
		m.emit(o)
	}
}

// endSetRound is the page's step 3: a quorum of OKs and validity left, else the attempt is
// lost.
func (m *Machine) endSetRound(now time.Duration) {
	m.setOKs, m.setReplies = m.round.oks, m.round.replies
	switch {
	case m.round.oks < m.quorum:
		m.failAttempt(now, lock.ReasonNoQuorum)
	case !m.validAt(now, m.deadline):
		m.failAttempt(now, lock.ReasonValidityExpired)
	case m.rules.giveUpOnServerError && m.round.failures() > 0:
		m.giveUp(now, lock.ReasonServerError)
	case m.cfg.Fencing != FenceNone:
		m.startFence()
	default:
		m.win(now)
	}
}

// giveUp ends the acquire at once, releasing nothing: redlock-py raises when a won
// attempt saw a server error, and its keys stay until they expire.
func (m *Machine) giveUp(now time.Duration, reason lock.Reason) {
	m.reason = reason
	m.emit(m.attemptEnded(now))
	m.state = StateIdle
	m.emit(m.outcome(lock.AcquireFailed, reason, now, m.deadline))
}

// startFence takes the fencing token only once the quorum is won, so a lost attempt does
// not burn counter values.
func (m *Machine) startFence() {
	m.state = StateFencing
	m.fenceMax = 0
	incr := resp.Command{Op: resp.OpIncr, Key: m.fenceKey}
	if m.cfg.Fencing == FenceOne {
		m.newRound(1, 1, false)
		m.send(0, incr)
	} else {
		m.newRound(m.n, m.quorum, m.cfg.FailFast)
		m.sendAll(incr)
	}
	m.arm(m.timeout)
}

// endFenceRound treats a missing token as a lost attempt (release everywhere, retry if
// tries remain) rather than handing out an unfenced lock: the caller asked for fencing
// because the storage checks tokens, and a lock it would reject is no lock. Validity is
// checked again because the INCR round took time.
func (m *Machine) endFenceRound(now time.Duration) {
	switch {
	case m.round.oks < m.round.need:
		m.failAttempt(now, lock.ReasonFenceFailed)
	case !m.validAt(now, m.deadline):
		m.failAttempt(now, lock.ReasonValidityExpired)
	default:
		m.token, m.fenced = m.fenceMax, true
		m.win(now)
	}
}

func (m *Machine) win(now time.Duration) {
	m.reason = lock.ReasonNone
	m.emit(m.attemptEnded(now))
	m.state = StateHeld
	m.extensions = 0
	m.emit(m.outcome(lock.Acquired, lock.ReasonNone, now, m.deadline))
}

// failAttempt is the page's step 4: unlock all instances, also those that never answered,
// because a lost reply may hide a SET that succeeded.
func (m *Machine) failAttempt(now time.Duration, reason lock.Reason) {
	m.reason = reason
	m.emit(m.attemptEnded(now))
	if m.rules.noCleanupBetweenAttempts && m.attempt < m.cfg.Tries { // node-redlock 5 cleans up only after the last
		m.state = StateBackingOff
		m.arm(m.retryDelay())
		return
	}
	m.state = StateCleaningUp
	if !m.releaseRound() {
		m.endRound(now)
		return
	}
	m.arm(m.timeout)
}

// releaseRound sends the release to every node, as the page says (a lost reply may hide
// a SET that succeeded), or for VariantReleaseLockedOnly (its deviation) only to the nodes
// that answered OK. It reports false when it sent nothing.
func (m *Machine) releaseRound() bool {
	if m.locked == nil {
		if m.rules.releaseFailsFast { // redsync's and node-redlock 5's fail fast like their acquire
			m.newRound(m.n, m.quorum, m.cfg.FailFast)
		} else {
			m.newRound(m.n, m.n, false)
		}
		if m.rules.seqRelease {
			m.send(0, m.releaseCommand())
			m.round.sent = 1
			return true
		}
		m.sendAll(m.releaseCommand())
		return true
	}
	k := 0
	for _, l := range m.locked {
		if l {
			k++
		}
	}
	m.newRound(k, k, false)
	for i, l := range m.locked {
		if l {
			m.send(i, m.releaseCommand())
		}
	}
	m.round.sent = k
	return k > 0
}

// endCleanup backs off only once the cleanup round is over, as redsync does (it waits for
// every node's release before its retry delay), so the next attempt's SETs are less likely
// to overtake this attempt's deletes (the value is the same across attempts of one
// acquire), and so does node-redlock 4.2.0 (lock.unlock before its delay).
// node-redlock 5.0.0-beta.2 differs (DialectNodeRedlock5, see failAttempt): it does not
// clean up between attempts at all, and its acquire script then finds its own leftover
// key taken.
func (m *Machine) endCleanup(now time.Duration) {
	if m.extLoop {
		if m.extAttempt >= m.cfg.Tries {
			m.extLoop = false
			m.state = StateHeld // as far as the caller knows: its lock keeps its old deadline
			o := m.outcome(lock.ExtendFailed, m.reason, now, m.deadline)
			o.Attempt, o.Votes, o.Replies = m.extensions, m.extVotes, m.extReplies
			m.emit(o)
			return
		}
		m.state = StateBackingOff
		m.arm(m.retryDelay())
		return
	}
	if m.attempt >= m.cfg.Tries {
		m.state = StateIdle
		m.emit(m.outcome(lock.AcquireFailed, m.reason, now, m.deadline))
		return
	}
	m.state = StateBackingOff
	m.arm(m.retryDelay())
}

// endExtend ends the extension with its round's outcome; the lock keeps its old deadline
// unless the round won.
//
// node-redlock 5.0.0-beta.2's extend() (DialectNodeRedlock5) is its acquire's retry loop
// (_execute) without a cleanup: a round without a quorum for backs off and sends the
// extend script again, up to tries rounds, releasing nothing, and then fails; the lock
// keeps its old deadline, and a later round that wins counts the new one from extend()'s
// start, as the library does (start + duration − drift).
func (m *Machine) endExtend(now time.Duration) {
	if m.rules.retryExtend {
		m.extLoop = m.round.oks < m.quorum && m.extAttempt < m.cfg.Tries
		if m.extLoop {
			m.state = StateBackingOff
			m.arm(m.retryDelay())
			return
		}
	}
	m.state = StateHeld
	var o lock.Event
	switch {
	case m.rules.extendUnlocksOnLoss && (m.round.oks < m.quorum || !m.validAt(now, m.newDeadline)):
		// node-redlock 4.2.0 extends with its acquire loop: a lost round unlocks the lock
		// it meant to extend on every node, then retries (in vain: the extend script needs
		// the value there), while the caller's lock keeps its old expiration.
		m.reason = lock.ReasonNoQuorum
		if m.round.oks >= m.quorum {
			m.reason = lock.ReasonValidityExpired
		}
		m.extVotes, m.extReplies = m.round.oks, m.round.replies
		m.extLoop = true
		m.state = StateCleaningUp
		m.releaseRound()
		m.arm(m.timeout)
		return
	case m.round.oks < m.quorum:
		o = m.outcome(lock.ExtendFailed, lock.ReasonNoQuorum, now, m.deadline)
	case !m.validAt(now, m.newDeadline):
		o = m.outcome(lock.ExtendFailed, lock.ReasonValidityExpired, now, m.deadline)
	default:
		m.deadline = m.newDeadline
		o = m.outcome(lock.Extended, lock.ReasonNone, now, m.deadline)
	}
	o.Attempt, o.Votes, o.Replies = m.extensions, m.round.oks, m.round.replies
	m.emit(o)
}

// retryDelay draws retry_delay + U[−retry_jitter, +retry_jitter], clamped at 0 because a
// negative pause means "now", not an error.
func (m *Machine) retryDelay() time.Duration {
	d := m.cfg.RetryDelay
	if j := m.cfg.RetryJitter; j > 0 {
		d += time.Duration(m.rng.Int64N(2*int64(j)+1)) - j
	}
	return max(d, 0)
}

func (m *Machine) attemptEnded(now time.Duration) lock.Event {
	o := m.outcome(lock.AttemptEnded, m.reason, now, m.deadline)
	o.Validity = 0
	return o
}

func (m *Machine) outcome(kind lock.EventKind, reason lock.Reason, now, deadline time.Duration) lock.Event {
	return lock.Event{Kind: kind, Reason: reason, Resource: m.resource, Value: m.value,
		Attempt: m.attempt, Votes: m.setOKs, Needed: m.quorum, Replies: m.setReplies, Servers: m.n,
		Start: m.opStart, Deadline: deadline, Validity: deadline - now, Token: m.token, Fenced: m.fenced}
}

func (m *Machine) newRound(targets, need int, failFast bool) {
	m.clearSlots()
	m.round = round{targets: targets, need: need, failFast: failFast, takenRule: m.rules.takenRule,
		againstRule: m.rules.againstRule}
}

func (m *Machine) clearSlots() { clear(m.slots) }

func (m *Machine) sendAll(c resp.Command) {
	p := c.Payload()
	for i := range m.n {
		m.sendPayload(i, &p)
	}
	m.round.sent = m.n
}

func (m *Machine) send(node int, c resp.Command) {
	p := c.Payload()
	m.sendPayload(node, &p)
}

func (m *Machine) sendPayload(node int, p *lock.Payload) {
	m.lastReq++
	m.slots[node].req = m.lastReq
	o := m.grow()
	if o.Kind == lock.OutEvent {
		o.Event = lock.Event{}
	}
	o.Kind, o.Node, o.Req, o.Request, o.Timer, o.After = lock.OutSend, node, m.lastReq, *p, 0, m.requestContext()
}

// requestContext returns the deadline of the context a request sent now carries to the
// driver: an acquire attempt's (its fencing round's too) and its cleanup's, as redsync's
// lockContext gives them; an extension's and a release's carry none.
func (m *Machine) requestContext() time.Duration {
	if m.acquireCtx == 0 {
		return 0
	}
	switch m.state {
	case StateAcquiring, StateFencing, StateCleaningUp:
		return m.acquireCtx
	}
	return 0
}

// push appends a zeroed output of the given kind and returns it for filling in place:
// cheaper than appending a whole 200-byte literal, on the hottest path of the simulator.
func (m *Machine) push(kind lock.OutputKind) *lock.Output {
	o := m.grow()
	*o = lock.Output{Kind: kind}
	return o
}

// grow appends an output slot and returns it as the last input left it: zero when new,
// else holding an earlier output. Only an OutOutcome leaves its Outcome set, which lets
// send, most outputs of a round, write its own fields and skip clearing the 100-byte
// Outcome.
func (m *Machine) grow() *lock.Output {
	if len(m.out) == cap(m.out) {
		m.out = append(m.out, lock.Output{})
	} else {
		m.out = m.out[:len(m.out)+1]
	}
	return &m.out[len(m.out)-1]
}

// arm sets the one live timer, superseding any other.
func (m *Machine) arm(after time.Duration) {
	m.disarm()
	m.lastTID++
	m.timer = m.lastTID
	o := m.push(lock.OutSetTimer)
	o.Timer, o.After = m.timer, after
}

func (m *Machine) disarm() {
	if m.timer != 0 {
		m.push(lock.OutCancelTimer).Timer = m.timer
		m.timer = 0
	}
}

func (m *Machine) emit(o lock.Event) { m.push(lock.OutEvent).Event = o }
