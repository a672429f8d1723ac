package redisson

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// The RLock's step-by-step behaviour (its commands, the channel wait, replicas, refused
// connections and timeouts sharing one attempt budget) is scripted in testdata/ and run
// by TestScripts; the tests here loop over configurations or check what a script can't.

// newRLock returns a driver of an RLock over cfg, and the RLock.
func newRLock(t *testing.T, cfg Config) (*locktest.Driver, *Machine) {
	t.Helper()
	m, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	return locktest.NewDriver(m), m
}

// TestLockNameIsAUUID: the lock name, which scripts print as $v1, is a random version 4
// UUID and thread 1, as Redisson's getLockName(threadId).
func TestLockNameIsAUUID(t *testing.T) {
	_, m := newRLock(t, DefaultConfig())
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:1$`, m.LockName())
	_, m2 := newRLock(t, DefaultConfig())
	assert.Equal(t, m.LockName(), m2.LockName(), "one seed, one name")
}

// timeouts runs out the command in flight, every send timing out: it fires the response
// timeout and, when the command is resent, the retry interval before it, until no timer
// is left, and returns the time then.
func timeouts(t *testing.T, d *locktest.Driver) time.Duration {
	t.Helper()
	for len(d.Timers) > 0 {
		require.Equal(t, 3*time.Second, d.Timers[0].At-d.Now, "the response timeout")
		must(t)(d.FireNext())
		if len(d.Timers) == 0 {
			break
		}
		require.Equal(t, 1500*time.Millisecond, d.Timers[0].At-d.Now, "the retry interval")
		must(t)(d.FireNext())
	}
	return d.Now
}

// TestResponseTimeouts: against a single server the trylock and unlock scripts are sent
// once and fail after their 3s response timeout, and a renewal is sent again
// retryInterval after each timeout, up to 3 more times; with replicas (a batch that waits
// for them) every script is resent so.
func TestResponseTimeouts(t *testing.T) {
	for _, replicated := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Replicated = replicated
		d, _ := newRLock(t, cfg)
		must(t)(d.Take(d.C.Acquire(0, "lock")))
		now := timeouts(t, d)
		assert.Equal(t, lock.AcquireFailed, d.LastEvent().Kind)
		trylockSends, want := 4, 4*3*time.Second+3*1500*time.Millisecond
		if !replicated {
			trylockSends, want = 1, 3*time.Second
		}
		assert.Len(t, d.Sent, trylockSends, "replicated=%v: sends (with replicas, of INFO replication, which comes first)", replicated)
		assert.Equal(t, want, now, "replicated=%v", replicated)

		must(t)(d.Take(d.C.Acquire(now, "lock")))
		if cmdOf(lastSent(d)).Op == resp.OpInfo { // replicated: INFO replication first
			must(t)(d.Reply(0, lastSent(d).Req, pl(infoReply(0))))
		}
		must(t)(d.Reply(0, lastSent(d).Req, pl(resp.Nil)))
		sends := len(d.Sent)
		must(t)(d.Take(d.C.Extend(now)))
		now = timeouts(t, d)
		assert.Len(t, d.Sent, sends+4, "replicated=%v: a renewal is resent", replicated)
		assert.Equal(t, lock.ExtendFailed, d.LastEvent().Kind)

		sends = len(d.Sent)
		must(t)(d.Take(d.C.Release(now)))
		timeouts(t, d)
		unlocks := 1
		if replicated {
			unlocks = 4
		}
		assert.Len(t, d.Sent, sends+unlocks+1, "replicated=%v: unlock sends, and the latch's DEL", replicated)
		assert.Equal(t, lock.Released, d.LastEvent().Kind)
		assert.Zero(t, d.LastEvent().Votes)
	}
}

func TestBadConfig(t *testing.T) {
	c := DefaultConfig()
	c.Lease = 1500 * time.Microsecond
	assert.ErrorContains(t, c.Validate(), "whole milliseconds")
	c = DefaultConfig()
	c.RetryAttempts = -1
	assert.ErrorContains(t, c.Validate(), "retry attempts")
	_, err := New(DefaultConfig(), nil)
	assert.Error(t, err)
}

// refuseAll answers every send of the command in flight with a refused connection
// (resp.NoReply) 1ms after it went out, firing each retry timer the machine sets, and
// returns when each send went out and when the machine stopped retrying.
func refuseAll(t *testing.T, d *locktest.Driver) (sends []time.Duration, end time.Duration) {
	t.Helper()
	for {
		sends = append(sends, d.Now)
		d.Now += ms
		must(t)(d.Reply(0, lastSent(d).Req, pl(resp.NoReply)))
		if len(d.Timers) == 0 {
			return sends, d.Now
		}
		must(t)(d.FireNext())
	}
}

// TestRefusedConnection: a trylock, a renewal and an unlock whose master refuses the
// connection are each tried again retryInterval after each attempt began, retryAttempts
// times, whether or not the command is resent after a timeout (noRetry) and with or
// without replicas, and fail with the fourth refusal, 4.5s after the first send: as a
// connection error, not a response timeout, and an unlock that failed so sends no DEL
// of its latch.
func TestRefusedConnection(t *testing.T) {
	every := []time.Duration{0, 1500 * ms, 3000 * ms, 4500 * ms}
	for _, replicated := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Replicated = replicated
		d, m := newRLock(t, cfg)

		must(t)(d.Take(d.C.Acquire(0, "lock")))
		sends, end := refuseAll(t, d)
		assert.Equal(t, every, sends, "replicated=%v: trylock", replicated)
		assert.Equal(t, 4501*ms, end)
		require.Equal(t, []lock.EventKind{lock.AttemptStarted, lock.AttemptEnded, lock.AcquireFailed}, d.Kinds(),
			"replicated=%v: one attempt, and the application hears only of its end", replicated)
		assert.False(t, m.timedOut, "a connection error, not a RedisResponseTimeoutException")
		for _, o := range d.Sent {
			if replicated { // INFO replication first, to learn how many replicas to WAIT for
				assert.Equal(t, resp.OpInfo, cmdOf(o).Op, "nothing but INFO replication goes out")
				continue
			}
			assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(o).Script, "nothing but the trylock goes out")
		}

		now := 10 * time.Second
		d.Now = now
		must(t)(d.Take(d.C.Acquire(now, "lock")))
		if cmdOf(lastSent(d)).Op == resp.OpInfo { // replicated: INFO replication first
			must(t)(d.Reply(0, lastSent(d).Req, pl(infoReply(0))))
		}
		must(t)(d.Reply(0, lastSent(d).Req, pl(resp.Nil)))
		must(t)(d.Take(d.C.Extend(now)))
		sends, end = refuseAll(t, d)
		assert.Equal(t, []time.Duration{now, now + 1500*ms, now + 3000*ms, now + 4500*ms}, sends, "replicated=%v: renewal", replicated)
		assert.Equal(t, lock.ExtendFailed, d.LastEvent().Kind)
		assert.Equal(t, now+4501*ms, end)

		now = 20 * time.Second
		d.Now = now
		must(t)(d.Take(d.C.Release(now)))
		before := len(d.Sent)
		sends, _ = refuseAll(t, d)
		assert.Equal(t, []time.Duration{now, now + 1500*ms, now + 3000*ms, now + 4500*ms}, sends, "replicated=%v: unlock", replicated)
		assert.Len(t, d.Sent, before+3, "three more unlocks and no DEL of the latch")
		assert.Equal(t, resp.ScriptRedissonUnlock, cmdOf(lastSent(d)).Script)
		assert.Equal(t, lock.Released, d.LastEvent().Kind)
		assert.Zero(t, d.LastEvent().Votes)
	}
}

// infoReply is INFO replication's answer for a master with n connected replicas.
func infoReply(n int) resp.Reply {
	return resp.Reply{Kind: resp.ReplyBulk, Str: "# Replication\r\nrole:master\r\nconnected_slaves:" + strconv.Itoa(n) + "\r\n"}
}
