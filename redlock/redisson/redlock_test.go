package redisson

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

const ms = time.Millisecond

// RedissonRedLock's step-by-step behaviour (each master in turn, the majority that ends
// the loop, starting over, each master's share of the wait, the watchdogs, an abort
// while unlocking) is scripted in testdata/redlock and redlock-watchdog and run by
// TestScripts; the tests here run masters out by loops.

// rlDriver feeds a RedLock as a client process would: it runs the one timer the RedLock
// asks for and keeps what it sent and reported.
type rlDriver struct {
	t       *testing.T
	r       *RedLock
	now     time.Duration
	sent    []lock.Output   // every send, in order
	sentAt  []time.Duration // when each of sent went out
	waiting []lock.Output   // sends not yet answered
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
			d.sentAt = append(d.sentAt, d.now)
			if cmdOf(o).Op != resp.OpDel { // the unlock latch's DEL: nobody waits for it
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
	d.take(d.r.Reply(d.now, o.Node, o.Req, pl(reply(o))))
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
	if cmdOf(o).Script == resp.ScriptRedissonUnlock {
		return resp.IntReply(1)
	}
	return resp.Nil
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
			switch cmdOf(d.waiting[0]).Script {
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
		assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(d.waiting[0]).Script)
		assert.Len(t, d.evs, tc.events, "replicated=%v: %v", tc.replicated, d.kinds())
	}
}

// refuseNode answers master node's command in flight with a refused connection 1ms after
// each attempt, firing the retry its RLock sets in between, until the RLock gives up. It
// returns when each refused attempt went out.
func (d *rlDriver) refuseNode(node int) (at []time.Duration) {
	d.t.Helper()
	for {
		i := slices.IndexFunc(d.waiting, func(o lock.Output) bool { return o.Node == node })
		if i < 0 {
			return at
		}
		o := d.waiting[i]
		d.waiting = slices.Delete(d.waiting, i, i+1)
		at = append(at, d.sentAt[slices.IndexFunc(d.sent, func(s lock.Output) bool { return s.Req == o.Req })])
		d.now += ms
		d.take(d.r.Reply(d.now, o.Node, o.Req, pl(resp.NoReply)))
		if !d.r.subs[node].m.retry {
			return at // it gave up
		}
		require.Equal(d.t, d.r.subs[node].timerAt, d.fireAt, "the retry is the earliest timer")
		d.fire()
	}
}

// TestRedLockSkipsARefusedMaster: master 1 of five refuses the connection. Its tryLock
// makes four attempts, 1.5s apart, and fails with a connection error 4.5s after the
// first, which RedissonMultiLock.tryLock catches without unlocking it; the loop goes on
// to masters 2, 3 and 4, and the lock is four masters at 4.505s. unlock() waits for
// master 1's four attempts too: 4.5s.
func TestRedLockSkipsARefusedMaster(t *testing.T) {
	d := newRLDriver(t, DefaultRedLockConfig(5))
	d.take(d.r.Acquire(0, "lock"))
	d.answer(ms, free) // master 0 at 1ms
	at := d.refuseNode(1)
	assert.Equal(t, []time.Duration{ms, 1501 * ms, 3001 * ms, 4501 * ms}, at)
	assert.Equal(t, 4502*ms, d.now, "the fourth refusal ends master 1's tryLock")
	require.Len(t, d.waiting, 1)
	assert.Equal(t, 2, d.waiting[0].Node, "no unlock of master 1: master 2 is next")
	assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(d.waiting[0]).Script)
	for range 3 {
		d.answer(ms, free)
	}
	acq := d.lastEvent()
	require.Equal(t, lock.Acquired, acq.Kind, "%v", d.kinds())
	assert.Equal(t, 4, acq.Votes)
	assert.Equal(t, 4505*ms, d.now)
	assert.Equal(t, []lock.EventKind{lock.AttemptStarted, lock.AttemptEnded, lock.Acquired}, d.kinds(), "one attempt")
	for _, o := range d.sent {
		if o.Node == 1 {
			assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(o).Script, "master 1 is sent nothing but its trylock")
		}
	}

	start := d.now
	d.take(d.r.Release(start))
	require.Len(t, d.waiting, 5, "all at once")
	for _, o := range slices.Clone(d.waiting) {
		if o.Node != 1 { // the other four answer at once
			d.waiting = slices.DeleteFunc(d.waiting, func(w lock.Output) bool { return w.Req == o.Req })
			d.take(d.r.Reply(d.now, o.Node, o.Req, pl(free(o))))
		}
	}
	require.NotEqual(t, lock.Released, d.lastEvent().Kind)
	at = d.refuseNode(1)
	assert.Equal(t, []time.Duration{start, start + 1500*ms, start + 3000*ms, start + 4500*ms}, at)
	rel := d.lastEvent()
	require.Equal(t, lock.Released, rel.Kind)
	assert.Equal(t, 4, rel.Votes)
	assert.Equal(t, 4501*ms, d.now-start, "unlock() waits out master 1's attempts")
}

// TestRedLockOfThreeNeverLocksPastARefusedFirstMaster: of three masters, the first
// refuses the connection. Its 4.5s of attempts spend the whole of tryLock's wait (3 ×
// 1.5s), so the attempt ends there, with nothing taken and masters 1 and 2 never asked,
// and lock()'s next tryLock starts again from master 0: while master 0 stays down,
// lock() never returns, though two of three masters are free.
func TestRedLockOfThreeNeverLocksPastARefusedFirstMaster(t *testing.T) {
	d := newRLDriver(t, DefaultRedLockConfig(3))
	d.take(d.r.Acquire(0, "lock"))
	for round := range 3 {
		at := d.refuseNode(0)
		require.Len(t, at, 4, "round %d", round)
		ended := d.evs[len(d.evs)-2]
		assert.Equal(t, lock.AttemptEnded, ended.Kind)
		assert.Equal(t, lock.ReasonNoQuorum, ended.Reason)
		assert.Equal(t, 1, ended.Servers, "masters 1 and 2 never asked")
		assert.Equal(t, lock.AttemptStarted, d.lastEvent().Kind)
		assert.Equal(t, round+2, d.lastEvent().Attempt)
		require.Len(t, d.waiting, 1)
		assert.Equal(t, 0, d.waiting[0].Node, "the next tryLock starts from master 0")
	}
	assert.Equal(t, 3*4501*ms, d.now)
	assert.NotContains(t, d.kinds(), lock.Acquired)
}

// TestRedLockOfFiveWithTwoRefusedMasters: two refused masters of five spend a tryLock's
// 7.5s. With masters 1 and 3 refused, master 3's failure at 9s finds the time gone: the
// attempt unlocks masters 0 and 2 and the next starts from master 0. With masters 1 and
// 4 refused, master 4's failure comes with three masters taken, which ends the loop with
// the lock before the time is counted.
func TestRedLockOfFiveWithTwoRefusedMasters(t *testing.T) {
	for _, tc := range []struct {
		second int
		won    bool
		end    time.Duration // the second refusal's
	}{{second: 3, won: false, end: 9004 * ms}, {second: 4, won: true, end: 9005 * ms}} {
		d := newRLDriver(t, DefaultRedLockConfig(5))
		d.take(d.r.Acquire(0, "lock"))
		for i := range 5 {
			if i == 1 || i == tc.second {
				require.Len(t, d.refuseNode(i), 4)
				continue
			}
			if i == 4 && !tc.won {
				break // the attempt is over: master 4 is not asked
			}
			d.answer(ms, free)
		}
		assert.Equal(t, tc.end, d.now, "second=%d: the second refusal", tc.second)
		if tc.won {
			require.Equal(t, lock.Acquired, d.lastEvent().Kind, "%v", d.kinds())
			assert.Equal(t, 3, d.lastEvent().Votes)
			continue
		}
		assert.NotContains(t, d.kinds(), lock.Acquired)
		var nodes []int
		for _, o := range d.waiting {
			assert.Equal(t, resp.ScriptRedissonUnlock, cmdOf(o).Script)
			nodes = append(nodes, o.Node)
		}
		assert.Equal(t, []int{0, 2}, nodes, "what the attempt took is unlocked")
		d.answer(ms, free)
		d.answer(ms, free)
		require.Len(t, d.waiting, 1)
		assert.Equal(t, 0, d.waiting[0].Node)
		assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(d.waiting[0]).Script, "and lock() tries again from master 0")
		assert.Equal(t, 2, d.lastEvent().Attempt)
	}
}
