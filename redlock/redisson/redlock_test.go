package redisson

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

const ms = time.Millisecond

// RedissonRedLock's step-by-step behaviour (each master in turn, the majority that ends
// the loop, starting over, each master's share of the wait, the watchdogs, an abort
// while unlocking) is scripted in testdata/redlock and redlock-watchdog and run by
// TestScripts; the tests here run masters out by loops.

// newRedLock returns a driver of a RedLock over cfg, and the RedLock. The RedLock keeps one
// live timer, the earliest of its RLocks' timers and watchdogs, and supersedes it without
// cancelling the one before: the tests fire the last timer set (Driver.FireLast), never
// the earliest pending, which may be a superseded one.
func newRedLock(t *testing.T, cfg RedLockConfig) (*locktest.Driver, *RedLock) {
	t.Helper()
	r, err := NewRedLock(cfg, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	return locktest.NewDriver(r), r
}

// isLatchDel reports whether o is the DEL of an unlock latch, which follows an unlock
// and whose reply nobody waits for.
func isLatchDel(o lock.Output) bool { return cmdOf(o).Op == resp.OpDel }

// awaited returns the sends the RedLock awaits, oldest first: the driver's Waiting but
// the unlock latches' DELs, which stay there since no test answers them.
func awaited(d *locktest.Driver) []lock.Output {
	return slices.DeleteFunc(slices.Clone(d.Waiting), isLatchDel)
}

// answer replies to the oldest awaited send, after dt, with what reply gives for it, and
// returns that send.
func answer(t *testing.T, d *locktest.Driver, dt time.Duration, reply func(lock.Output) resp.Reply) lock.Output {
	t.Helper()
	o, ok := d.Oldest(func(o lock.Output) bool { return !isLatchDel(o) })
	require.True(t, ok, "nothing awaited")
	d.Now += dt
	must(t)(d.Reply(o.Node, o.Req, pl(reply(o))))
	return o
}

// free answers as a free master does: the trylock takes it (nil), the unlock deletes it.
func free(o lock.Output) resp.Reply {
	if cmdOf(o).Script == resp.ScriptRedissonUnlock {
		return resp.IntReply(1)
	}
	return resp.Nil
}

// sameSend returns whether a send is o: the same request to the same node.
func sameSend(o lock.Output) func(lock.Output) bool {
	return func(w lock.Output) bool { return w.Node == o.Node && w.Req == o.Req }
}

// latchDels returns the nodes of the unlock latches' DELs in Waiting, oldest first.
func latchDels(d *locktest.Driver) []int {
	var nodes []int
	for _, o := range d.Waiting {
		if isLatchDel(o) {
			nodes = append(nodes, o.Node)
		}
	}
	return nodes
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
		d, _ := newRedLock(t, cfg)
		must(t)(d.Take(d.C.Acquire(0, "lock")))
		trylocks, unlocks := 0, 0
		for len(awaited(d)) > 0 && unlocks < tc.unlocks+1 && d.Now < time.Minute {
			o := awaited(d)[0]
			switch cmdOf(o).Script {
			case resp.ScriptRedissonTryLock:
				trylocks++
			case resp.ScriptRedissonUnlock:
				unlocks++
				if unlocks == 1 {
					assert.Equal(t, tc.failedAt, d.Now, "replicated=%v: the tryLock fails", tc.replicated)
				}
				if unlocks == tc.unlocks {
					answer(t, d, ms, free) // the last unlock is answered
					unlocks++
					continue
				}
			}
			// o is never answered: it waits until its response timeout abandons it.
			must(t)(d.FireLast()) // the response timeout
			require.False(t, slices.ContainsFunc(d.Waiting, sameSend(o)), "replicated=%v: the timed-out send is abandoned", tc.replicated)
			if len(awaited(d)) == 0 {
				must(t)(d.FireLast()) // the retry interval
			}
		}
		assert.Equal(t, tc.sends, trylocks, "replicated=%v: trylock sends", tc.replicated)
		assert.Equal(t, tc.unlocks, unlocks-1, "replicated=%v: unlock sends", tc.replicated)
		next := awaited(d)
		require.Len(t, next, 1)
		assert.Equal(t, tc.nextNode, next[0].Node, "replicated=%v", tc.replicated)
		assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(next[0]).Script)
		assert.Equal(t, []int{0}, latchDels(d), "replicated=%v: the answered unlock deletes master 0's latch", tc.replicated)
		assert.Len(t, d.Events, tc.events, "replicated=%v: %v", tc.replicated, d.Kinds())
	}
}

// refuseNode answers master node's command in flight with a refused connection 1ms after
// each attempt, firing the retry its RLock sets in between, until the RLock gives up. It
// returns when each refused attempt went out.
func refuseNode(t *testing.T, d *locktest.Driver, r *RedLock, node int) (at []time.Duration) {
	t.Helper()
	for {
		o, ok := d.Oldest(func(o lock.Output) bool { return o.Node == node && !isLatchDel(o) })
		if !ok {
			return at
		}
		sent, ok := d.SentWhen(o.Node, o.Req)
		require.True(t, ok)
		at = append(at, sent)
		d.Now += ms
		must(t)(d.Reply(o.Node, o.Req, pl(resp.NoReply)))
		if !r.subs[node].m.retry {
			return at // it gave up
		}
		tm, ok := d.Pending(d.LastTimer)
		require.True(t, ok, "the RedLock's timer is set")
		require.Equal(t, r.subs[node].timerAt, tm.At, "the retry is the earliest timer")
		must(t)(d.FireLast())
	}
}

// TestRedLockSkipsARefusedMaster: master 1 of five refuses the connection. Its tryLock
// makes four attempts, 1.5s apart, and fails with a connection error 4.5s after the
// first, which RedissonMultiLock.tryLock catches without unlocking it; the loop goes on
// to masters 2, 3 and 4, and the lock is four masters at 4.505s. unlock() waits for
// master 1's four attempts too: 4.5s.
func TestRedLockSkipsARefusedMaster(t *testing.T) {
	d, r := newRedLock(t, DefaultRedLockConfig(5))
	must(t)(d.Take(d.C.Acquire(0, "lock")))
	answer(t, d, ms, free) // master 0 at 1ms
	at := refuseNode(t, d, r, 1)
	assert.Equal(t, []time.Duration{ms, 1501 * ms, 3001 * ms, 4501 * ms}, at)
	assert.Equal(t, 4502*ms, d.Now, "the fourth refusal ends master 1's tryLock")
	next := awaited(d)
	require.Len(t, next, 1)
	assert.Equal(t, 2, next[0].Node, "no unlock of master 1: master 2 is next")
	assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(next[0]).Script)
	for range 3 {
		answer(t, d, ms, free)
	}
	acq := d.LastEvent()
	require.Equal(t, lock.Acquired, acq.Kind, "%v", d.Kinds())
	assert.Equal(t, 4, acq.Votes)
	assert.Equal(t, 4505*ms, d.Now)
	assert.Equal(t, []lock.EventKind{lock.AttemptStarted, lock.AttemptEnded, lock.Acquired}, d.Kinds(), "one attempt")
	for _, o := range d.Sent {
		if o.Node == 1 {
			assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(o).Script, "master 1 is sent nothing but its trylock")
		}
	}
	assert.Empty(t, d.Waiting, "nothing unlocked yet, so no latch to delete")

	start := d.Now
	must(t)(d.Take(d.C.Release(start)))
	unlocks := awaited(d)
	require.Len(t, unlocks, 5, "all at once")
	for _, o := range unlocks {
		if o.Node != 1 { // the other four answer at once
			must(t)(d.Reply(o.Node, o.Req, pl(free(o))))
		}
	}
	require.NotEqual(t, lock.Released, d.LastEvent().Kind)
	assert.Equal(t, []int{0, 2, 3, 4}, latchDels(d), "each answered unlock deletes its latch")
	at = refuseNode(t, d, r, 1)
	assert.Equal(t, []time.Duration{start, start + 1500*ms, start + 3000*ms, start + 4500*ms}, at)
	rel := d.LastEvent()
	require.Equal(t, lock.Released, rel.Kind)
	assert.Equal(t, 4, rel.Votes)
	assert.Equal(t, 4501*ms, d.Now-start, "unlock() waits out master 1's attempts")
	assert.Equal(t, []int{0, 2, 3, 4}, latchDels(d), "a refused unlock deletes no latch")
}

// TestRedLockOfThreeNeverLocksPastARefusedFirstMaster: of three masters, the first
// refuses the connection. Its 4.5s of attempts spend the whole of tryLock's wait (3 ×
// 1.5s), so the attempt ends there, with nothing taken and masters 1 and 2 never asked,
// and lock()'s next tryLock starts again from master 0: while master 0 stays down,
// lock() never returns, though two of three masters are free.
func TestRedLockOfThreeNeverLocksPastARefusedFirstMaster(t *testing.T) {
	d, r := newRedLock(t, DefaultRedLockConfig(3))
	must(t)(d.Take(d.C.Acquire(0, "lock")))
	for round := range 3 {
		at := refuseNode(t, d, r, 0)
		require.Len(t, at, 4, "round %d", round)
		ended := d.Events[len(d.Events)-2]
		assert.Equal(t, lock.AttemptEnded, ended.Kind)
		assert.Equal(t, lock.ReasonNoQuorum, ended.Reason)
		assert.Equal(t, 1, ended.Servers, "masters 1 and 2 never asked")
		assert.Equal(t, lock.AttemptStarted, d.LastEvent().Kind)
		assert.Equal(t, round+2, d.LastEvent().Attempt)
		require.Len(t, d.Waiting, 1, "nothing taken, nothing unlocked, no latch to delete")
		assert.Equal(t, 0, d.Waiting[0].Node, "the next tryLock starts from master 0")
	}
	assert.Equal(t, 3*4501*ms, d.Now)
	assert.NotContains(t, d.Kinds(), lock.Acquired)
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
		d, r := newRedLock(t, DefaultRedLockConfig(5))
		must(t)(d.Take(d.C.Acquire(0, "lock")))
		for i := range 5 {
			if i == 1 || i == tc.second {
				require.Len(t, refuseNode(t, d, r, i), 4)
				continue
			}
			if i == 4 && !tc.won {
				break // the attempt is over: master 4 is not asked
			}
			answer(t, d, ms, free)
		}
		assert.Equal(t, tc.end, d.Now, "second=%d: the second refusal", tc.second)
		if tc.won {
			require.Equal(t, lock.Acquired, d.LastEvent().Kind, "%v", d.Kinds())
			assert.Equal(t, 3, d.LastEvent().Votes)
			continue
		}
		assert.NotContains(t, d.Kinds(), lock.Acquired)
		var nodes []int
		for _, o := range d.Waiting {
			assert.Equal(t, resp.ScriptRedissonUnlock, cmdOf(o).Script)
			nodes = append(nodes, o.Node)
		}
		assert.Equal(t, []int{0, 2}, nodes, "what the attempt took is unlocked")
		answer(t, d, ms, free)
		answer(t, d, ms, free)
		assert.Equal(t, []int{0, 2}, latchDels(d), "the answered unlocks delete their latches")
		next := awaited(d)
		require.Len(t, next, 1)
		assert.Equal(t, 0, next[0].Node)
		assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(next[0]).Script, "and lock() tries again from master 0")
		assert.Equal(t, 2, d.LastEvent().Attempt)
	}
}
