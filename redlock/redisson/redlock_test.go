package redisson

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

const ms = time.Millisecond

// rlDriver feeds a RedLock as a client process would: it runs the one timer the RedLock
// asks for and keeps what it sent and reported.
type rlDriver struct {
	t       *testing.T
	r       *RedLock
	now     time.Duration
	sent    []lock.Output // every send, in order
	waiting []lock.Output // sends not yet answered
	evs     []lock.Event
	timer   lock.TimerID
	fireAt  time.Duration
}

func newRLDriver(t *testing.T, cfg RedLockConfig) *rlDriver {
	r, err := NewRedLock(cfg, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	return &rlDriver{t: t, r: r}
}

func (d *rlDriver) take(outs []lock.Output, err error) {
	d.t.Helper()
	require.NoError(d.t, err)
	for _, o := range outs {
		switch o.Kind {
		case lock.OutSend:
			d.sent = append(d.sent, o)
			if o.Command.Op != resp.OpDel { // the unlock latch's DEL: nobody waits for it
				d.waiting = append(d.waiting, o)
			}
		case lock.OutEvent:
			d.evs = append(d.evs, o.Event)
		case lock.OutSetTimer:
			d.timer, d.fireAt = o.Timer, d.now+o.After
		case lock.OutCancelTimer:
			if o.Timer == d.timer {
				d.timer = 0
			}
		}
	}
}

// answer replies to the oldest unanswered send, after dt, with what reply gives for it.
func (d *rlDriver) answer(dt time.Duration, reply func(lock.Output) resp.Reply) lock.Output {
	d.t.Helper()
	require.NotEmpty(d.t, d.waiting, "nothing was sent")
	o := d.waiting[0]
	d.waiting = d.waiting[1:]
	d.now += dt
	d.take(d.r.Reply(d.now, o.Node, o.Req, reply(o)))
	return o
}

// drop forgets the oldest unanswered send: its node never answers.
func (d *rlDriver) drop() lock.Output {
	o := d.waiting[0]
	d.waiting = d.waiting[1:]
	return o
}

// fire advances to the timer and fires it.
func (d *rlDriver) fire() {
	d.t.Helper()
	require.NotZero(d.t, d.timer, "no timer set")
	d.now = max(d.now, d.fireAt)
	id := d.timer
	d.timer = 0
	d.take(d.r.Timer(d.now, id))
}

func (d *rlDriver) kinds() []lock.EventKind {
	var ks []lock.EventKind
	for _, e := range d.evs {
		ks = append(ks, e.Kind)
	}
	return ks
}

func (d *rlDriver) lastEvent() lock.Event { return d.evs[len(d.evs)-1] }

// free answers as a free master does: the trylock takes it (nil), the unlock deletes it.
func free(o lock.Output) resp.Reply {
	if o.Command.Script == resp.ScriptRedissonUnlock {
		return resp.IntReply(1)
	}
	return resp.Nil
}

// taken answers as a master another client holds: its PTTL; nil to an unlock (not ours).
func taken(o lock.Output) resp.Reply {
	switch {
	case o.Command.Op == resp.OpSubscribe:
		return resp.ArrayReply(resp.Reply{Kind: resp.ReplyBulk, Str: "subscribe"})
	case o.Command.Script == resp.ScriptRedissonUnlock:
		return resp.Nil
	}
	return resp.IntReply(20000)
}

func failing(lock.Output) resp.Reply {
	return resp.Reply{Kind: resp.ReplyError, Str: "ERR server error"}
}

// TestRedLockTakesEveryMasterInTurn: a free set is taken one master after another, each
// trylock sent when the previous one answered, to masters 0..4 in order; the deadline is
// when fewer than three of the five leases would remain, and unlock() goes to every master.
func TestRedLockTakesEveryMasterInTurn(t *testing.T) {
	d := newRLDriver(t, DefaultRedLockConfig(5))
	d.take(d.r.Acquire(0, "lock"))
	for i := range 5 {
		require.Len(t, d.waiting, 1, "one master at a time")
		o := d.answer(ms, free)
		assert.Equal(t, i, o.Node)
		assert.Equal(t, resp.ScriptRedissonTryLock, o.Command.Script)
		assert.Equal(t, d.r.subs[0].m.LockName(), o.Command.Value, "one lock name on every master")
	}
	require.Equal(t, []lock.EventKind{lock.AttemptStarted, lock.AttemptEnded, lock.Acquired}, d.kinds())
	acq := d.lastEvent()
	assert.Equal(t, 5, acq.Votes)
	assert.Equal(t, 3, acq.Needed)
	// Leases run from the sends at 0, 1, 2, 3 and 4ms: the third from last ends at 30.002s.
	assert.Equal(t, 30*time.Second+2*ms, acq.Deadline)
	assert.Equal(t, 30*time.Second+2*ms-5*ms, acq.Validity)

	d.take(d.r.Release(d.now))
	var nodes []int
	for _, o := range d.waiting {
		assert.Equal(t, resp.ScriptRedissonUnlock, o.Command.Script)
		nodes = append(nodes, o.Node)
	}
	assert.Equal(t, []int{0, 1, 2, 3, 4}, nodes, "all at once")
	for range 5 {
		d.answer(0, free)
	}
	// Each unlock is followed by the DEL of its latch, which nobody waits for.
	assert.Equal(t, lock.Released, d.lastEvent().Kind)
	assert.Equal(t, 5, d.lastEvent().Votes)
}

// TestRedLockStopsAtAMajority: after a failure, N − taken = N − (N/2 + 1) ends the loop
// with the lock: master 4 is never asked, though it was free, and unlock() still goes to
// it.
func TestRedLockStopsAtAMajority(t *testing.T) {
	d := newRLDriver(t, DefaultRedLockConfig(5))
	d.take(d.r.Acquire(0, "lock"))
	d.answer(ms, free)    // 0
	d.answer(ms, free)    // 1
	d.answer(ms, failing) // 2: failure allowed (limit 2 → 1)
	d.answer(ms, free)    // 3: three taken
	o := d.answer(ms, failing)
	assert.Equal(t, 4, o.Node)
	require.Equal(t, lock.Acquired, d.lastEvent().Kind)
	assert.Equal(t, 3, d.lastEvent().Votes)
	assert.Empty(t, d.waiting, "master 4 not asked")
	d.take(d.r.Release(d.now))
	assert.Len(t, d.waiting, 5)
}

// TestRedLockStartsOverAfterTooManyFailures: a third failure out of five unlocks what the
// attempt took and starts over from master 0 in a new attempt.
func TestRedLockStartsOverAfterTooManyFailures(t *testing.T) {
	d := newRLDriver(t, DefaultRedLockConfig(5))
	d.take(d.r.Acquire(0, "lock"))
	d.answer(ms, free)    // 0 taken
	d.answer(ms, failing) // 1
	d.answer(ms, failing) // 2
	d.answer(ms, failing) // 3: the third failure
	require.Len(t, d.waiting, 1)
	assert.Equal(t, 0, d.waiting[0].Node)
	assert.Equal(t, resp.ScriptRedissonUnlock, d.waiting[0].Command.Script, "the taken master is unlocked first")
	assert.Equal(t, lock.AttemptEnded, d.lastEvent().Kind)
	assert.Equal(t, lock.ReasonNoQuorum, d.lastEvent().Reason)
	d.answer(ms, free)
	require.Len(t, d.waiting, 1)
	assert.Equal(t, 0, d.waiting[0].Node)
	assert.Equal(t, resp.ScriptRedissonTryLock, d.waiting[0].Command.Script, "then master 0 again")
	assert.Equal(t, lock.AttemptStarted, d.lastEvent().Kind)
	assert.Equal(t, 2, d.lastEvent().Attempt)
}

// TestRedLockWaitsEachMastersShare: a taken master is waited on for its share of the
// tryLock's wait (5 × 1.5s / 5 = 1.5s, counted from its tryLock), then the next master is
// asked.
func TestRedLockWaitsEachMastersShare(t *testing.T) {
	d := newRLDriver(t, DefaultRedLockConfig(5))
	d.take(d.r.Acquire(0, "lock"))
	d.answer(ms, taken) // the try: taken, 20s left
	o := d.answer(ms, taken)
	assert.Equal(t, resp.OpSubscribe, o.Command.Op)
	d.answer(ms, taken) // the second try, after subscribing: still taken
	require.NotZero(t, d.timer)
	assert.Equal(t, 1500*ms, d.fireAt, "the wait ends with the master's share, not the key's 20s")
	d.fire()
	require.NotEmpty(t, d.waiting)
	var next lock.Output
	for _, w := range d.waiting {
		if w.Command.Script == resp.ScriptRedissonTryLock {
			next = w
		}
	}
	assert.Equal(t, 1, next.Node, "master 1 is asked next")
}

// TestRedLockUnlocksAMasterThatTimedOut: a master that never answers fails its tryLock
// with a RedisResponseTimeoutException, and is unlocked before the loop goes on. Against
// a single server the trylock is sent once (3s) and the loop goes on to master 1 with the
// time left; with replicas it is resent three times (16.5s), the unlock too (3s + 1.5s +
// 3s), and with the tryLock's 7.5s spent a new attempt starts from master 0.
func TestRedLockUnlocksAMasterThatTimedOut(t *testing.T) {
	for _, tc := range []struct {
		replicated       bool
		sends, unlocks   int
		failedAt         time.Duration
		nextNode, events int
	}{
		{replicated: false, sends: 1, unlocks: 1, failedAt: 3 * time.Second, nextNode: 1, events: 1},
		{replicated: true, sends: 4, unlocks: 2, failedAt: 16500 * ms, nextNode: 0, events: 3},
	} {
		cfg := DefaultRedLockConfig(5)
		cfg.Lock.Replicated = tc.replicated
		d := newRLDriver(t, cfg)
		d.take(d.r.Acquire(0, "lock"))
		trylocks, unlocks := 0, 0
		for len(d.waiting) > 0 && unlocks < tc.unlocks+1 && d.now < time.Minute {
			switch d.waiting[0].Command.Script {
			case resp.ScriptRedissonTryLock:
				trylocks++
			case resp.ScriptRedissonUnlock:
				unlocks++
				if unlocks == 1 {
					assert.Equal(t, tc.failedAt, d.now, "replicated=%v: the tryLock fails", tc.replicated)
				}
				if unlocks == tc.unlocks {
					d.answer(ms, free) // the last unlock is answered
					unlocks++
					continue
				}
			}
			d.drop()
			d.fire() // the response timeout
			if len(d.waiting) == 0 {
				d.fire() // the retry interval
			}
		}
		assert.Equal(t, tc.sends, trylocks, "replicated=%v: trylock sends", tc.replicated)
		assert.Equal(t, tc.unlocks, unlocks-1, "replicated=%v: unlock sends", tc.replicated)
		require.Len(t, d.waiting, 1)
		assert.Equal(t, tc.nextNode, d.waiting[0].Node, "replicated=%v", tc.replicated)
		assert.Equal(t, resp.ScriptRedissonTryLock, d.waiting[0].Command.Script)
		assert.Len(t, d.evs, tc.events, "replicated=%v: %v", tc.replicated, d.kinds())
	}
}

// TestRedLockWatchdogs: each master's lock is renewed a watchdog period after it was
// taken, on its own; each renewal is announced and reported with the majority's deadline.
func TestRedLockWatchdogs(t *testing.T) {
	d := newRLDriver(t, DefaultRedLockConfig(3))
	d.take(d.r.Acquire(0, "lock"))
	for range 3 {
		d.answer(ms, free) // taken at 1, 2 and 3ms
	}
	require.Equal(t, lock.Acquired, d.lastEvent().Kind)
	assert.Equal(t, 30*time.Second+ms, d.lastEvent().Deadline, "two of three leases: the second from last, sent at 1ms")
	assert.Equal(t, 10*time.Second+ms, d.fireAt, "master 0's watchdog first")
	d.fire()
	require.Len(t, d.waiting, 1)
	assert.Equal(t, 0, d.waiting[0].Node)
	assert.Equal(t, resp.ScriptRedissonRenew, d.waiting[0].Command.Script)
	assert.Equal(t, lock.ExtendStarted, d.lastEvent().Kind)
	d.answer(ms, func(lock.Output) resp.Reply { return resp.IntReply(1) })
	ext := d.lastEvent()
	require.Equal(t, lock.Extended, ext.Kind)
	// Leases now end at 40.001 (master 0, renewed at 10.001s), 30.001 and 30.002s.
	assert.Equal(t, 30*time.Second+2*ms, ext.Deadline)
	assert.Equal(t, 10*time.Second+2*ms, d.fireAt, "master 1's watchdog next")

	_, err := d.r.Extend(d.now)
	assert.ErrorIs(t, err, lock.ErrBusy, "the watchdogs extend; the caller never does")
}
