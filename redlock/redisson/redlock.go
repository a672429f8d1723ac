package redisson

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// PerMasterWait is what RedissonRedLock.lock() gives each master in one tryLock: its
// wait is (masters × 1.5 s), of which each master's RLock may spend wait/masters
// (calcLockWaitTime). Both are fixed in Redisson's code.
const PerMasterWait = 1500 * time.Millisecond

// RedLockConfig is a RedissonRedLock's settings: one RLock per master, each with the
// same Redisson settings, and the watchdog's period.
type RedLockConfig struct {
	Lock    Config // each master's RLock (its Redisson instance's settings)
	Masters int
	// Watchdog is how often each master's lock is renewed while held, from its own
	// acquisition: Redisson renews every lockWatchdogTimeout/3 (10 s). 0 turns the
	// watchdog off, as lock(leaseTime) would: the keys then expire a lease after they were
	// set.
	Watchdog time.Duration
}

// DefaultRedLockConfig returns Redisson 3.43.0's defaults for a RedissonRedLock over n
// masters.
func DefaultRedLockConfig(n int) RedLockConfig {
	d := DefaultConfig()
	return RedLockConfig{Lock: d, Masters: n, Watchdog: d.Lease / 3}
}

// Validate reports the first setting outside what RedissonRedLock accepts.
func (c RedLockConfig) Validate() error {
	if err := c.Lock.Validate(); err != nil {
		return err
	}
	switch {
	case c.Masters < 1:
		return fmt.Errorf("redisson-redlock: at least one master is needed; got %d", c.Masters)
	case c.Watchdog < 0:
		return fmt.Errorf("redisson-redlock: the watchdog period must not be negative; got %v", c.Watchdog)
	}
	return nil
}

// RedLockFactory returns the factory of RedissonRedLock clients for cfg, or cfg's error.
func RedLockFactory(cfg RedLockConfig) (lock.Factory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return func(rng *rand.Rand) (lock.Client, error) { return NewRedLock(cfg, rng) }, nil
}

// rlOp is what a RedLock is doing.
type rlOp uint8

const (
	rlIdle rlOp = iota
	rlAcquire
	rlHeld
	rlRelease // unlock(), or the unlocks after an aborted acquire
)

// rlStage is where an acquire stands.
type rlStage uint8

const (
	stTry       rlStage = iota + 1 // master idx's RLock is in tryLock
	stUnlockOne                    // unlocking master idx after its tryLock timed out
	stUnlockAll                    // unlocking the masters this attempt took
)

// master is one master's RLock inside a RedLock, with the timers it asked for.
type master struct {
	m *Machine
	// timer is the RLock's own timer (a response timeout, a retry interval, a wait) and
	// timerAt when it fires, on the client's clock; 0: none.
	timer   lock.TimerID
	timerAt time.Duration
	// dogAt is when this master's watchdog renews its lock next; 0: not held or off.
	dogAt    time.Duration
	held     bool
	deadline time.Duration // the lease's end as the holder last knew it
	// announced says this master's renewal under way was reported as an extension (it
	// began while the RedLock held the lock), so its end is reported too.
	announced bool
}

// subEvent is an event one master's RLock reported, queued for the RedLock to handle
// after it has taken the RLock's other outputs (its outbox is reused by its next input).
type subEvent struct {
	i  int
	ev lock.Event
}

// RedLock is Redisson 3.43.0's RedissonRedLock (deprecated since 3.16, still shipped) as
// a lock.Client: an RLock on each of N independent masters, taken one after another by
// RedissonMultiLock.tryLock(waitTime, leaseTime) with RedissonRedLock's failure limit.
//
// lock() repeats tryLock(N × 1.5 s) until it succeeds; it never gives up. One tryLock
// (an attempt here) tries the masters in order, each with RLock.tryLock(min(1.5 s, time
// left)): one try, and if the lock is taken a wait on its channel for the holder's unlock
// or the key's time to live, bounded by that wait. A master that fails is allowed N −
// (N/2 + 1) times; one more failure unlocks what the attempt took and starts over from
// the first master, keeping the time left. Once N − taken equals that limit after a
// failure, it stops and has the lock: N/2 + 1 masters, and the rest never asked. A
// tryLock whose command timed out (a RedisResponseTimeoutException: after 3 s against a
// single server, after 16.5 s of resends with replicas) unlocks that master before going
// on. A master that refuses the connection (killed, shut down) fails its tryLock after
// retryAttempts × retryInterval (4.5 s) of attempts at a connection, with a connection
// error, which tryLock catches without an unlock. One such master spends the whole wait
// of a tryLock over three masters (4.5 s), two that of one over five (7.5 s): every
// tryLock then ends without the lock and lock() never returns, unless the refused master
// that spends it is last in the order (the failure limit ends the loop with the lock
// first). When the time left runs out, the attempt unlocks what it took and lock()
// starts another.
//
// It never computes a validity and never checks one: each master's lock has its own
// watchdog from its own acquisition, whatever the others do. What this machine reports
// as the deadline is the latest moment a majority of the locks taken could still exist if
// nothing but their leases removed them; each renewal moves it, and the application is
// told of none of it. unlock() runs the unlock script on every master, taken or not.
//
// Each master's RLock is a Machine; the RedLock maps their server 0 to its master, their
// request and timer ids into its own, and keeps the one timer its caller runs at the
// earliest of theirs and of the watchdogs. The RLocks share one lock name: in Redisson
// each master would have its own Redisson instance and so its own uuid, which no master
// can tell apart, since none sees another's keys.
type RedLock struct {
	cfg  RedLockConfig
	subs []master
	q    int // N/2 + 1
	out  []lock.Output
	now  time.Duration
	err  error
	evq  []subEvent

	op       rlOp
	stage    rlStage
	resource string
	attempt  int
	start    time.Duration // the attempt's (or the release's) start
	idx      int           // the master being tried
	remain   time.Duration // tryLock's remainTime
	lockWait time.Duration // tryLock's lockWaitTime: each master's share of its wait
	lastAt   time.Duration // when remain was last counted down
	failures int           // failedLocksLimit as the loop counts it down
	taken    int           // masters this attempt took
	tried    int           // masters this attempt asked
	replied  int           // of them, those that answered (not timed out)
	pending  int           // unlocks awaited
	votes    int           // masters whose unlock deleted the lock
	then     func()        // what follows when the unlocks awaited are in
	aborted  bool          // the unlocks under way end an acquire Release aborted
	deadline time.Duration
	renewals int

	timer lock.OneTimer
}

// NewRedLock returns an idle RedissonRedLock client over cfg.Masters masters.
func NewRedLock(cfg RedLockConfig, rng *rand.Rand) (*RedLock, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("redisson-redlock: nil random source")
	}
	r := &RedLock{cfg: cfg, subs: make([]master, cfg.Masters), q: cfg.Masters/2 + 1}
	name := newUUID(rng) + ":1"
	for i := range r.subs {
		r.subs[i].m = &Machine{cfg: cfg.Lock, rng: rng, name: name}
	}
	return r, nil
}

// failedLocksLimit is RedissonRedLock's: N − (N/2 + 1).
func (r *RedLock) failedLocksLimit() int { return len(r.subs) - r.q }

func (r *RedLock) begin(now time.Duration) error {
	r.out, r.err = r.out[:0], nil
	if now < r.now {
		return fmt.Errorf("%w: now = %v after %v", lock.ErrTimeBackward, now, r.now)
	}
	r.now = now
	return nil
}

// end handles the queued events, sets the timer, and returns the outputs.
func (r *RedLock) end() ([]lock.Output, error) {
	for k := 0; k < len(r.evq) && r.err == nil; k++ {
		e := r.evq[k] // a copy: handling it may queue more
		r.handle(e.i, &e.ev)
	}
	r.evq = r.evq[:0]
	if r.err != nil {
		return nil, r.err
	}
	r.rearm()
	return r.out, nil
}

// Acquire is lock(): tryLock(N × 1.5 s) until one succeeds.
func (r *RedLock) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	if err := r.begin(now); err != nil {
		return nil, err
	}
	if r.op != rlIdle {
		return nil, lock.ErrBusy
	}
	r.op, r.resource = rlAcquire, resource
	r.attempt = 0
	r.tryLock()
	return r.end()
}

// tryLock starts one RedissonMultiLock.tryLock(N × 1.5 s, -1).
func (r *RedLock) tryLock() {
	r.remain = time.Duration(len(r.subs)) * PerMasterWait
	r.lockWait = max(r.remain/time.Duration(len(r.subs)), time.Millisecond) // calcLockWaitTime
	r.lastAt = r.now
	r.startAttempt()
	r.idx = 0
	r.tryNext()
}

func (r *RedLock) startAttempt() {
	r.attempt++
	r.start, r.failures, r.taken, r.tried, r.replied = r.now, r.failedLocksLimit(), 0, 0, 0
	r.emit(lock.Event{Kind: lock.AttemptStarted, Resource: r.resource, Attempt: r.attempt, Start: r.now})
}

// tryNext asks master idx, or has the lock when every master was asked.
func (r *RedLock) tryNext() {
	if r.idx >= len(r.subs) {
		r.won()
		return
	}
	wait := min(r.lockWait, r.remain)
	r.stage = stTry
	r.tried++
	m := r.subs[r.idx].m
	m.input(r.now)
	m.startAcquire(r.resource, wait)
	r.take(r.idx, m.out, nil)
}

// next counts the time left down after a master's tryLock, as the loop's tail does, and
// goes on to the next master or, with no time left, ends the attempt.
func (r *RedLock) next() {
	if r.remain > 0 {
		r.remain -= r.now - r.lastAt
		r.lastAt = r.now
		if r.remain <= 0 {
			r.endAttempt(lock.ReasonNoQuorum)
			r.unlockTaken(r.tryLock) // return false: lock() calls tryLock again
			return
		}
	}
	r.idx++
	r.tryNext()
}

// failed is the loop's answer to master idx's failed tryLock.
func (r *RedLock) failed() {
	if len(r.subs)-r.taken == r.failedLocksLimit() {
		r.won() // break: enough masters taken, the rest are not asked
		return
	}
	if r.failures == 0 {
		r.endAttempt(lock.ReasonNoQuorum)
		r.unlockTaken(r.restart)
		return
	}
	r.failures--
	r.next()
}

// restart starts over from the first master with the time left, or, with none left,
// ends the tryLock (false) for lock() to call the next.
func (r *RedLock) restart() {
	r.remain -= r.now - r.lastAt
	r.lastAt = r.now
	if r.remain <= 0 {
		r.tryLock()
		return
	}
	r.startAttempt()
	r.idx = 0
	r.tryNext()
}

func (r *RedLock) endAttempt(reason lock.Reason) {
	r.emit(lock.Event{Kind: lock.AttemptEnded, Reason: reason, Resource: r.resource, Attempt: r.attempt,
		Votes: r.taken, Needed: r.q, Replies: r.replied, Servers: r.tried, Start: r.start})
}

func (r *RedLock) won() {
	r.endAttempt(lock.ReasonNone)
	r.op, r.renewals = rlHeld, 0
	r.deadline = r.quorumDeadline()
	r.emit(r.event(lock.Acquired, lock.ReasonNone, r.taken))
}

// quorumDeadline is when fewer than N/2 + 1 of the locks held would remain if each
// lasted until its lease's end as the holder knows it.
func (r *RedLock) quorumDeadline() time.Duration {
	var ends []time.Duration
	for i := range r.subs {
		if r.subs[i].held {
			ends = append(ends, r.subs[i].deadline)
		}
	}
	if len(ends) < r.q {
		return r.now
	}
	slices.Sort(ends)
	return ends[len(ends)-r.q]
}

// unlockTaken unlocks every master this attempt took, all at once, and calls then when
// each has answered or timed out (unlockInner).
func (r *RedLock) unlockTaken(then func()) {
	r.stage, r.pending, r.then = stUnlockAll, 0, then
	for i := range r.subs {
		if r.subs[i].held {
			r.pending++
			r.unlock(i)
		}
	}
	if r.pending == 0 {
		r.then()
	}
}

// unlock runs master i's unlock script, whatever its RLock holds.
func (r *RedLock) unlock(i int) {
	s := &r.subs[i]
	s.held, s.dogAt, s.announced = false, 0, false
	s.m.input(r.now)
	s.m.unlock()
	r.take(i, s.m.out, nil)
}

// Extend is refused: each master's watchdog renews its own lock, and reports it.
func (r *RedLock) Extend(now time.Duration) ([]lock.Output, error) {
	if err := r.begin(now); err != nil {
		return nil, err
	}
	if r.op != rlHeld {
		return nil, lock.ErrNotHeld
	}
	return nil, lock.ErrBusy
}

// Release is unlock(): the unlock script on every master, held or not. During an
// acquire it aborts it and unlocks what the attempt took.
func (r *RedLock) Release(now time.Duration) ([]lock.Output, error) {
	if err := r.begin(now); err != nil {
		return nil, err
	}
	switch r.op {
	case rlIdle, rlRelease:
		return nil, lock.ErrNotHeld
	case rlAcquire:
		r.emit(r.event(lock.AcquireFailed, lock.ReasonAborted, r.taken))
		r.op, r.start, r.pending, r.votes, r.then, r.aborted = rlRelease, now, 0, 0, nil, true
		for i := range r.subs {
			switch s := &r.subs[i]; {
			case s.held || s.m.op == opAcquire:
				r.pending++
				r.unlock(i)
			case s.m.op == opRelease: // an unlock of the attempt is under way: await it too
				r.pending++
			}
		}
		if r.pending == 0 {
			r.op = rlIdle
		}
		return r.end()
	}
	r.op, r.start, r.pending, r.votes, r.then, r.aborted = rlRelease, now, len(r.subs), 0, nil, false
	for i := range r.subs {
		r.unlock(i)
	}
	return r.end()
}

// Reply routes a master's reply, or a message it pushed, to that master's RLock.
func (r *RedLock) Reply(now time.Duration, server int, req lock.Req, rep lock.Payload) ([]lock.Output, error) {
	if err := r.begin(now); err != nil {
		return nil, err
	}
	n := lock.Req(len(r.subs))
	if server < 0 || server >= len(r.subs) {
		return nil, fmt.Errorf("redisson-redlock: reply from server %d of %d", server, len(r.subs))
	}
	local := lock.PushReq
	if req != lock.PushReq {
		if int((req-1)%n) != server {
			return r.out, nil // not a request this master was sent: nobody waits for it
		}
		local = (req-1)/n + 1
	}
	m := r.subs[server].m
	outs, err := m.Reply(now, 0, local, rep)
	r.take(server, outs, err)
	return r.end()
}

// Timer fires whatever was due among the RLocks' timers and the watchdogs.
func (r *RedLock) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	if err := r.begin(now); err != nil {
		return nil, err
	}
	if !r.timer.Fired(id) {
		return r.out, nil
	}
	for i := range r.subs {
		s := &r.subs[i]
		if s.timer != 0 && s.timerAt <= now {
			t := s.timer
			s.timer = 0
			outs, err := s.m.Timer(now, t)
			r.take(i, outs, err)
		}
		if s.dogAt != 0 && s.dogAt <= now {
			s.dogAt = 0
			if s.held && s.m.op == opHeld {
				s.announced = r.op == rlHeld
				if s.announced {
					r.emit(lock.Event{Kind: lock.ExtendStarted, Resource: r.resource, Attempt: r.renewals + 1, Start: now})
				}
				outs, err := s.m.Extend(now)
				r.take(i, outs, err)
			}
		}
	}
	return r.end()
}

// take maps master i's outputs into the RedLock's and queues its events.
func (r *RedLock) take(i int, outs []lock.Output, err error) {
	if err != nil {
		if r.err == nil {
			r.err = fmt.Errorf("redisson-redlock: master %d: %w", i, err)
		}
		return
	}
	n := lock.Req(len(r.subs))
	s := &r.subs[i]
	for _, o := range outs {
		switch o.Kind {
		case lock.OutSend, lock.OutAbandon:
			o.Node = i
			o.Req = (o.Req-1)*n + lock.Req(i) + 1
			r.out = append(r.out, o)
		case lock.OutSetTimer:
			s.timer, s.timerAt = o.Timer, r.now+o.After
		case lock.OutCancelTimer:
			if s.timer == o.Timer {
				s.timer = 0
			}
		case lock.OutEvent:
			r.evq = append(r.evq, subEvent{i, o.Event})
		}
	}
}

// handle is the RedLock's answer to an event of master i's RLock.
func (r *RedLock) handle(i int, ev *lock.Event) {
	s := &r.subs[i]
	atTry := r.op == rlAcquire && r.idx == i
	switch ev.Kind {
	case lock.Acquired:
		s.held, s.deadline = true, ev.Deadline
		if r.cfg.Watchdog > 0 {
			s.dogAt = r.now + r.cfg.Watchdog
		}
		if atTry && r.stage == stTry {
			r.taken++
			r.replied++
			r.next()
		}
	case lock.AcquireFailed:
		if !atTry || r.stage != stTry || ev.Reason == lock.ReasonAborted {
			return
		}
		// RedissonMultiLock.tryLock unlocks a master whose tryLock threw a
		// RedisResponseTimeoutException and catches any other exception (a refused
		// connection's) without one.
		if s.m.timedOut {
			r.stage = stUnlockOne
			r.unlock(i)
			return
		}
		r.replied++
		r.failed()
	case lock.Extended:
		s.deadline = ev.Deadline
		if r.cfg.Watchdog > 0 {
			s.dogAt = r.now + r.cfg.Watchdog
		}
		if s.announced && r.op == rlHeld {
			s.announced = false
			r.renewals++
			r.deadline = max(r.deadline, r.quorumDeadline())
			r.emit(r.event(lock.Extended, lock.ReasonNone, r.held()))
		}
	case lock.ExtendFailed: // the field is gone: this master's watchdog stops
		if s.announced && r.op == rlHeld {
			s.announced = false
			r.emit(r.event(lock.ExtendFailed, lock.ReasonNoQuorum, r.held()))
		}
	case lock.Released:
		r.released(i, ev.Votes)
	}
}

// released counts master i's unlock in whatever awaited it.
func (r *RedLock) released(i, votes int) {
	switch {
	case r.op == rlAcquire && r.stage == stUnlockOne && r.idx == i:
		r.failed()
	case r.op == rlAcquire && r.stage == stUnlockAll:
		if r.pending--; r.pending == 0 {
			r.then()
		}
	case r.op == rlRelease:
		r.votes += votes
		if r.pending--; r.pending == 0 {
			r.op = rlIdle
			if !r.aborted { // an aborted acquire reported its end already
				r.emit(r.event(lock.Released, lock.ReasonNone, r.votes))
			}
		}
	}
}

func (r *RedLock) held() int {
	n := 0
	for i := range r.subs {
		if r.subs[i].held {
			n++
		}
	}
	return n
}

func (r *RedLock) event(kind lock.EventKind, reason lock.Reason, votes int) lock.Event {
	ev := lock.Event{Kind: kind, Reason: reason, Resource: r.resource, Value: r.subs[0].m.name,
		Attempt: r.attempt, Votes: votes, Needed: r.q, Replies: votes, Servers: len(r.subs), Start: r.start}
	switch kind {
	case lock.Acquired:
		ev.Replies, ev.Servers = r.replied, r.tried
		ev.Deadline, ev.Validity = r.deadline, r.deadline-r.now
	case lock.Extended:
		ev.Attempt, ev.Deadline, ev.Validity = r.renewals, r.deadline, r.deadline-r.now
	case lock.ExtendFailed:
		ev.Attempt = r.renewals + 1
	}
	return ev
}

func (r *RedLock) emit(ev lock.Event) {
	r.out = append(r.out, lock.Output{Kind: lock.OutEvent, Event: ev})
}

// rearm keeps the caller's one timer at the earliest of the RLocks' timers and the
// watchdogs.
func (r *RedLock) rearm() {
	var at time.Duration
	found := false
	for i := range r.subs {
		s := &r.subs[i]
		if s.timer != 0 && (!found || s.timerAt < at) {
			at, found = s.timerAt, true
		}
		if s.dogAt != 0 && (!found || s.dogAt < at) {
			at, found = s.dogAt, true
		}
	}
	r.out = r.timer.Arm(r.out, r.now, at, found)
}
