package redisson

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// driver feeds a machine and keeps what it asked for.
type driver struct {
	t     *testing.T
	m     *Machine
	sent  []lock.Output
	evs   []lock.Event
	timer lock.TimerID
	after time.Duration
}

func newDriver(t *testing.T) *driver {
	m, err := New(DefaultConfig(), rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	return &driver{t: t, m: m}
}

func (d *driver) take(outs []lock.Output, err error) {
	require.NoError(d.t, err)
	for _, o := range outs {
		switch o.Kind {
		case lock.OutSend:
			d.sent = append(d.sent, o)
		case lock.OutEvent:
			d.evs = append(d.evs, o.Event)
		case lock.OutSetTimer:
			d.timer, d.after = o.Timer, o.After
		case lock.OutCancelTimer:
			if o.Timer == d.timer {
				d.timer = 0
			}
		}
	}
}

func (d *driver) last() lock.Output { return d.sent[len(d.sent)-1] }

func (d *driver) kinds() []lock.EventKind {
	var ks []lock.EventKind
	for _, e := range d.evs {
		ks = append(ks, e.Kind)
	}
	return ks
}

// TestCommandsAreRedissons: the trylock, renew and unlock commands carry Redisson's
// KEYS and ARGV, in its order, and the unlock latch is deleted after the unlock.
func TestCommandsAreRedissons(t *testing.T) {
	d := newDriver(t)
	name := d.m.LockName()
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:1$`, name)
	d.take(d.m.Acquire(0, "lock"))
	assert.Equal(t, []string{"EVAL", resp.ScriptRedissonTryLock.Source(), "1", "lock", "30000", name}, cmdOf(d.last()).Args())
	d.take(d.m.Reply(time.Millisecond, 0, d.last().Req, pl(resp.Nil)))
	require.Equal(t, []lock.EventKind{lock.AttemptStarted, lock.AttemptEnded, lock.Acquired}, d.kinds())
	assert.Equal(t, 30*time.Second, d.evs[2].Deadline, "the lease from the send")

	d.take(d.m.Extend(10 * time.Second))
	assert.Equal(t, []string{"EVAL", resp.ScriptRedissonRenew.Source(), "1", "lock", "30000", name}, cmdOf(d.last()).Args())
	d.take(d.m.Reply(10*time.Second+time.Millisecond, 0, d.last().Req, pl(resp.IntReply(1))))
	assert.Equal(t, lock.Extended, d.evs[len(d.evs)-1].Kind)
	assert.Equal(t, 40*time.Second, d.evs[len(d.evs)-1].Deadline)

	d.take(d.m.Release(11 * time.Second))
	args := cmdOf(d.last()).Args()
	require.Len(t, args, 11)
	assert.Equal(t, []string{"EVAL", resp.ScriptRedissonUnlock.Source(), "3", "lock", "redisson_lock__channel:{lock}"}, args[:5])
	assert.Regexp(t, `^redisson_unlock_latch:\{lock\}:[0-9a-f]{32}$`, args[5])
	assert.Equal(t, []string{"0", "30000", name, "PUBLISH", "13500"}, args[6:])
	d.take(d.m.Reply(11*time.Second+time.Millisecond, 0, d.last().Req, pl(resp.IntReply(1))))
	assert.Equal(t, lock.Released, d.evs[len(d.evs)-1].Kind)
	assert.Equal(t, []string{"DEL", args[5]}, cmdOf(d.last()).Args())
}

// TestWaitsOnTheChannel: a taken lock makes lock() subscribe, try again, and wait for the
// unlock message or the PTTL; a message that comes while a try is out ends the next wait
// at once (Redisson's latch is a semaphore).
func TestWaitsOnTheChannel(t *testing.T) {
	d := newDriver(t)
	d.take(d.m.Acquire(0, "lock"))
	d.take(d.m.Reply(1, 0, d.last().Req, pl(resp.IntReply(5000))))
	assert.Equal(t, []string{"SUBSCRIBE", "redisson_lock__channel:{lock}"}, cmdOf(d.last()).Args())
	d.take(d.m.Reply(2, 0, d.last().Req, pl(resp.ArrayReply())))
	try2 := d.last()
	assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(try2).Script)
	d.take(d.m.Reply(3, 0, try2.Req, pl(resp.IntReply(4000))))
	assert.Equal(t, 4*time.Second, d.after, "waits the PTTL it was told")
	sends := len(d.sent)
	d.take(d.m.Reply(4, 0, lock.PushReq, resp.Push("other", "0")))
	assert.Len(t, d.sent, sends, "a message on another channel wakes nothing")
	d.take(d.m.Reply(5, 0, lock.PushReq, resp.Push("redisson_lock__channel:{lock}", "0")))
	require.Len(t, d.sent, sends+1, "the unlock message wakes it")
	try3 := d.last()
	// The message comes again while try 3 is out: try 3 loses, and try 4 follows at once.
	d.take(d.m.Reply(6, 0, lock.PushReq, resp.Push("redisson_lock__channel:{lock}", "0")))
	d.take(d.m.Reply(7, 0, try3.Req, pl(resp.IntReply(3000))))
	require.Len(t, d.sent, sends+2)
	d.take(d.m.Reply(8, 0, d.last().Req, pl(resp.Nil)))
	assert.Equal(t, lock.Acquired, d.evs[len(d.evs)-1].Kind)
	assert.Equal(t, 4, d.evs[len(d.evs)-1].Attempt)
	assert.Equal(t, []string{"UNSUBSCRIBE", "redisson_lock__channel:{lock}"}, cmdOf(d.last()).Args(), "finally unsubscribe")
}

// TestResponseTimeouts: against a single server the trylock and unlock scripts are sent
// once and fail after their 3s response timeout, and a renewal is sent again
// retryInterval after each timeout, up to 3 more times; with replicas (a batch that waits
// for them) every script is resent so.
func TestResponseTimeouts(t *testing.T) {
	// timeouts runs out the command in flight: every send times out.
	timeouts := func(d *driver, now time.Duration) time.Duration {
		for d.timer != 0 {
			require.Equal(t, 3*time.Second, d.after)
			now += 3 * time.Second
			id := d.timer
			d.timer = 0 // spent; the machine arms the next one
			d.take(d.m.Timer(now, id))
			if d.timer == 0 {
				break
			}
			require.Equal(t, 1500*time.Millisecond, d.after)
			now += 1500 * time.Millisecond
			id, d.timer = d.timer, 0
			d.take(d.m.Timer(now, id))
		}
		return now
	}
	for _, replicated := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Replicated = replicated
		m, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
		require.NoError(t, err)
		d := &driver{t: t, m: m}
		d.take(d.m.Acquire(0, "lock"))
		now := timeouts(d, 0)
		assert.Equal(t, lock.AcquireFailed, d.evs[len(d.evs)-1].Kind)
		trylockSends, want := 4, 4*3*time.Second+3*1500*time.Millisecond
		if !replicated {
			trylockSends, want = 1, 3*time.Second
		}
		assert.Len(t, d.sent, trylockSends, "replicated=%v: sends (with replicas, of INFO replication, which comes first)", replicated)
		assert.Equal(t, want, now, "replicated=%v", replicated)

		d.take(d.m.Acquire(now, "lock"))
		if cmdOf(d.last()).Op == resp.OpInfo { // replicated: INFO replication first
			d.take(d.m.Reply(now, 0, d.last().Req, pl(infoReply(0))))
		}
		d.take(d.m.Reply(now, 0, d.last().Req, pl(resp.Nil)))
		sends := len(d.sent)
		d.take(d.m.Extend(now))
		now = timeouts(d, now)
		assert.Len(t, d.sent, sends+4, "replicated=%v: a renewal is resent", replicated)
		assert.Equal(t, lock.ExtendFailed, d.evs[len(d.evs)-1].Kind)

		sends = len(d.sent)
		d.take(d.m.Release(now))
		timeouts(d, now)
		unlocks := 1
		if replicated {
			unlocks = 4
		}
		assert.Len(t, d.sent, sends+unlocks+1, "replicated=%v: unlock sends, and the latch's DEL", replicated)
		assert.Equal(t, lock.Released, d.evs[len(d.evs)-1].Kind)
		assert.Zero(t, d.evs[len(d.evs)-1].Votes)
	}
}

// TestRenewalRefused: a renewal whose field is gone fails quietly (ExtendFailed), and the
// holder keeps its lock as far as the application knows.
func TestRenewalRefused(t *testing.T) {
	d := newDriver(t)
	d.take(d.m.Acquire(0, "lock"))
	d.take(d.m.Reply(1, 0, d.last().Req, pl(resp.Nil)))
	d.take(d.m.Extend(10 * time.Second))
	d.take(d.m.Reply(10*time.Second, 0, d.last().Req, pl(resp.IntReply(0))))
	assert.Equal(t, lock.ExtendFailed, d.evs[len(d.evs)-1].Kind)
	_, err := d.m.Release(11 * time.Second)
	assert.NoError(t, err, "still held")
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

func bulk(s string) resp.Reply { return resp.Reply{Kind: resp.ReplyBulk, Str: s} }

// refuseAll answers every send of the command in flight with a refused connection
// (resp.NoReply) 1ms after it went out, firing each retry timer the machine sets, and
// returns when each send went out and when the machine stopped retrying.
func refuseAll(d *driver, now time.Duration) (sends []time.Duration, end time.Duration) {
	d.t.Helper()
	for {
		sends = append(sends, now)
		now += ms
		d.take(d.m.Reply(now, 0, d.last().Req, pl(resp.NoReply)))
		if d.timer == 0 {
			return sends, now
		}
		now += d.after
		id := d.timer
		d.timer = 0
		d.take(d.m.Timer(now, id))
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
		m, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
		require.NoError(t, err)
		d := &driver{t: t, m: m}

		d.take(d.m.Acquire(0, "lock"))
		sends, end := refuseAll(d, 0)
		assert.Equal(t, every, sends, "replicated=%v: trylock", replicated)
		assert.Equal(t, 4501*ms, end)
		require.Equal(t, []lock.EventKind{lock.AttemptStarted, lock.AttemptEnded, lock.AcquireFailed}, d.kinds(),
			"replicated=%v: one attempt, and the application hears only of its end", replicated)
		assert.False(t, d.m.timedOut, "a connection error, not a RedisResponseTimeoutException")
		for _, o := range d.sent {
			if replicated { // INFO replication first, to learn how many replicas to WAIT for
				assert.Equal(t, resp.OpInfo, cmdOf(o).Op, "nothing but INFO replication goes out")
				continue
			}
			assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(o).Script, "nothing but the trylock goes out")
		}

		now := 10 * time.Second
		d.take(d.m.Acquire(now, "lock"))
		if cmdOf(d.last()).Op == resp.OpInfo { // replicated: INFO replication first
			d.take(d.m.Reply(now, 0, d.last().Req, pl(infoReply(0))))
		}
		d.take(d.m.Reply(now, 0, d.last().Req, pl(resp.Nil)))
		d.take(d.m.Extend(now))
		sends, end = refuseAll(d, now)
		assert.Equal(t, []time.Duration{now, now + 1500*ms, now + 3000*ms, now + 4500*ms}, sends, "replicated=%v: renewal", replicated)
		assert.Equal(t, lock.ExtendFailed, d.evs[len(d.evs)-1].Kind)
		assert.Equal(t, now+4501*ms, end)

		now = 20 * time.Second
		d.take(d.m.Release(now))
		before := len(d.sent)
		sends, _ = refuseAll(d, now)
		assert.Equal(t, []time.Duration{now, now + 1500*ms, now + 3000*ms, now + 4500*ms}, sends, "replicated=%v: unlock", replicated)
		assert.Len(t, d.sent, before+3, "three more unlocks and no DEL of the latch")
		assert.Equal(t, resp.ScriptRedissonUnlock, cmdOf(d.last()).Script)
		assert.Equal(t, lock.Released, d.evs[len(d.evs)-1].Kind)
		assert.Zero(t, d.evs[len(d.evs)-1].Votes)
	}
}

// TestRefusedMasterBackInTime: a master that is back before the third attempt gets it:
// the trylock sent at 3s takes the lock, its lease counted from that send.
func TestRefusedMasterBackInTime(t *testing.T) {
	d := newDriver(t)
	d.take(d.m.Acquire(0, "lock"))
	for range 2 {
		d.take(d.m.Reply(d.m.sentAt+ms, 0, d.last().Req, pl(resp.NoReply)))
		id := d.timer
		d.take(d.m.Timer(d.m.sentAt+1500*ms, id))
	}
	require.Len(t, d.sent, 3)
	assert.Equal(t, 3*time.Second, d.m.sentAt)
	d.take(d.m.Reply(3*time.Second+ms, 0, d.last().Req, pl(resp.Nil)))
	require.Equal(t, []lock.EventKind{lock.AttemptStarted, lock.AttemptEnded, lock.Acquired}, d.kinds())
	assert.Equal(t, 33*time.Second, d.evs[2].Deadline)
}

// TestRefusalsAndTimeoutsShareTheAttempts: RedisExecutor counts attempts at a connection
// and resends after a response timeout in one counter. A renewal refused, then timed out,
// then refused twice has used its four sends: it fails at the last refusal, 7.5s after
// the first send. A trylock refused and then timed out fails at the timeout (noRetry: no
// resend after a timeout), as a RedisResponseTimeoutException.
func TestRefusalsAndTimeoutsShareTheAttempts(t *testing.T) {
	d := newDriver(t)
	d.take(d.m.Acquire(0, "lock"))
	d.take(d.m.Reply(ms, 0, d.last().Req, pl(resp.Nil)))
	sends := len(d.sent)
	d.take(d.m.Extend(10 * time.Second))
	now := 10 * time.Second
	step := func(refuse bool) {
		t.Helper()
		if refuse {
			now += ms
			d.take(d.m.Reply(now, 0, d.last().Req, pl(resp.NoReply)))
		} else {
			require.Equal(t, 3*time.Second, d.after, "the response timeout")
			now += d.after
			id := d.timer
			d.take(d.m.Timer(now, id))
		}
	}
	retry := func() {
		t.Helper()
		require.NotZero(t, d.timer)
		now += d.after
		id := d.timer
		d.take(d.m.Timer(now, id))
	}
	step(true) // refused at 10.001s; the next attempt at 11.5s
	retry()
	step(false) // timed out at 14.5s; resent after 1.5s
	retry()
	step(true) // 16.001s
	retry()
	step(true) // 17.501s: the fourth send's refusal
	assert.Len(t, d.sent, sends+4)
	assert.Zero(t, d.timer)
	assert.Equal(t, lock.ExtendFailed, d.evs[len(d.evs)-1].Kind)
	assert.Equal(t, 17501*ms, now)

	d = newDriver(t)
	d.take(d.m.Acquire(0, "lock"))
	d.take(d.m.Reply(ms, 0, d.last().Req, pl(resp.NoReply)))
	id := d.timer
	d.take(d.m.Timer(1500*ms, id))
	require.Len(t, d.sent, 2)
	require.Equal(t, 3*time.Second, d.after)
	id = d.timer
	d.take(d.m.Timer(4500*ms, id))
	assert.Equal(t, lock.AcquireFailed, d.evs[len(d.evs)-1].Kind)
	assert.True(t, d.m.timedOut, "the timeout, not the refusal, ended it")
	assert.Len(t, d.sent, 2)
}

// infoReply is INFO replication's answer for a master with n connected replicas.
func infoReply(n int) resp.Reply {
	return resp.Reply{Kind: resp.ReplyBulk, Str: "# Replication\r\nrole:master\r\nconnected_slaves:" + strconv.Itoa(n) + "\r\n"}
}

// TestWaitForReplicas: with replicas, the client learns their number from INFO
// replication, then sends each lock script with WAIT after it and decides on the WAIT's
// answer; a WAIT that found no replica synced unlocks the trylock and tries again after
// the retry interval, asking INFO replication again first.
func TestWaitForReplicas(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Replicated = true
	m, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	d := &driver{t: t, m: m}
	d.take(d.m.Acquire(0, "lock"))
	require.Len(t, d.sent, 1)
	assert.Equal(t, []string{"INFO", "replication"}, cmdOf(d.last()).Args())
	d.take(d.m.Reply(ms, 0, d.last().Req, pl(infoReply(2))))
	require.Len(t, d.sent, 3)
	script, wait := d.sent[1], d.sent[2]
	assert.Equal(t, resp.ScriptRedissonTryLock, cmdOf(script).Script)
	assert.Equal(t, []string{"WAIT", "2", "1000"}, cmdOf(wait).Args())
	assert.Equal(t, 4*time.Second, d.after, "the batch waits timeout + slavesSyncTimeout")
	d.take(d.m.Reply(2*ms, 0, script.Req, pl(resp.Nil)))
	assert.NotContains(t, d.kinds(), lock.Acquired, "not before the WAIT's answer")
	d.take(d.m.Reply(50*ms, 0, wait.Req, pl(resp.IntReply(1))))
	assert.Equal(t, lock.Acquired, d.evs[len(d.evs)-1].Kind, "one replica of two is enough")

	// Another client: its WAIT finds none synced.
	m2, err := New(cfg, rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	d2 := &driver{t: t, m: m2}
	d2.take(d2.m.Acquire(0, "lock"))
	d2.take(d2.m.Reply(ms, 0, d2.last().Req, pl(infoReply(1))))
	script, wait = d2.sent[1], d2.sent[2]
	d2.take(d2.m.Reply(2*ms, 0, script.Req, pl(resp.Nil)))
	d2.take(d2.m.Reply(1002*ms, 0, wait.Req, pl(resp.IntReply(0))))
	assert.Equal(t, resp.ScriptRedissonUnlock, cmdOf(d2.last()).Script, "handleNoSync unlocks")
	assert.NotContains(t, d2.kinds(), lock.Acquired)
	assert.Equal(t, 1500*time.Millisecond, d2.after, "then tries again after the retry interval")
	d2.take(d2.m.Timer(2502*ms, d2.timer))
	assert.Equal(t, resp.OpInfo, cmdOf(d2.last()).Op, "after a WAIT that found fewer, INFO replication again")
}
