// Package redisson is Redisson's RLock as a lock.Client: the lock Java services take on
// one Redis master (with replicas for failover), modelled on Redisson 3.43.0's sources
// (RedissonLock, RedissonBaseLock, LockPubSub, RedisExecutor), with its own three Lua
// scripts run by the simulated node's Lua VM.
//
// It is not Redlock. The lock is a hash on one master whose field, the holder's lock name
// ("<client uuid>:<thread id>"), counts re-entries, with a lease (lockWatchdogTimeout,
// 30 s) that a watchdog renews every lease/3 while the holder lives. lock() tries once; if
// the lock is taken it subscribes to the lock's channel and then loops: try again, and
// if still taken wait for the holder's unlock message or for the lock's remaining time to
// live, whichever comes first. It never gives up. Every command waits a response timeout
// (3 s). The watchdog's renewal is then sent again after retryInterval (1.5 s), up to
// retryAttempts (3) more times; the trylock and unlock scripts are too when the master
// has replicas (they then go out in a batch that waits for them), never against a single
// server. A command that runs out of sends fails the operation.
//
// A master whose process is gone while its host is up (killed, shut down) refuses the
// connection: the driver reports it as resp.NoReply. Redisson fails no command at once
// for that. RedisExecutor cannot get a working connection (a pooled one whose channel
// closed fails the write, a new one the connect), leaves the attempt to the retry timer it
// armed retryInterval after the attempt began, and then tries again, retryAttempts times,
// whichever the command (the trylock and unlock's noRetry forbids only a resend after a
// response timeout). So a trylock, renewal or unlock against a refused master goes out at
// 0, 1.5, 3 and 4.5 s and fails with the fourth refusal, with a connection error rather
// than a response timeout; a master back in the meantime gets the next attempt.
//
// What the lock's holder believes: Redisson never computes a validity. This machine
// reports the lock as valid until the lease, counted from when the winning request was
// sent, and each renewal moves that to its own send time plus the lease: the latest
// moment the key could still be there if nothing but the lease removes it. Redisson's
// application is told neither when a renewal fails nor when that moment passes.
//
// With replicas, every lock script waits for them as 3.43.0's syncedEval does (INFO
// replication, then the script and WAIT in one batch, checkLockSyncedSlaves: see
// Config.SyncTimeout); WAIT_SUPPORTED's one-time probe (WAIT 0 0) is not sent.
//
// Not modelled: re-entrant acquisition (the simulated workload never re-enters),
// resubscription after a reconnect, the DEL of the unlock
// latch being a separate connection's command (it is sent like any other), a refused
// SUBSCRIBE (PublishSubscribeService's own retries), and the backoff on which Redisson's
// pooled connections reconnect to a master that came back (ConnectionWatchdog: a command
// may meet a connection still closed for a few seconds; here the next attempt reaches it).
package redisson

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// Config is an RLock client's settings, named as in Redisson's Config.
type Config struct {
	// Lease is lockWatchdogTimeout: the key's TTL, renewed every Lease/3 by the watchdog.
	Lease time.Duration
	// Timeout is the response timeout of one command send.
	Timeout time.Duration
	// RetryInterval is the wait before a command that timed out is sent again, and the
	// time from one attempt at a refused connection to the next.
	RetryInterval time.Duration
	// RetryAttempts is how many times a command that timed out is sent again (the
	// watchdog's renewal always; the trylock and unlock scripts only when Replicated),
	// and how many more attempts any of them makes at a refused connection. Both count
	// against the one budget, as RedisExecutor's one attempt counter does.
	RetryAttempts int
	// Replicated says the master has replicas (a Sentinel or master-replica config).
	// Redisson then sends the lock's scripts through a batch that waits for the replicas
	// (CommandAsyncService.syncedEval), and a batch is resent after a timeout like any
	// command, the trylock and unlock included. Against a single server (isSingleConfig)
	// they go out as evalWriteNoRetryAsync, never resent.
	Replicated bool
	// SyncTimeout is slavesSyncTimeout, the WAIT's timeout. With Replicated, the client
	// learns how many replicas the master has (availableSlaves) from INFO replication's
	// connected_slaves before its first lock script, and again after a WAIT that found
	// fewer; with at least one, each lock script goes out in a batch with WAIT
	// availableSlaves SyncTimeout after it, the batch waits Timeout + SyncTimeout for its
	// answer, and a WAIT that answers 0 is "None of slaves were synced"
	// (checkLockSyncedSlaves, on by default): the trylock is then unlocked and tried again
	// after RetryInterval, up to RetryAttempts times (handleNoSync,
	// ServiceManager.execute); a renewal fails; an unlock throws, its script having run.
	SyncTimeout time.Duration
}

// DefaultConfig returns Redisson 3.43.0's defaults.
func DefaultConfig() Config {
	return Config{Lease: 30 * time.Second, Timeout: 3 * time.Second, RetryInterval: 1500 * time.Millisecond,
		RetryAttempts: 3, SyncTimeout: time.Second}
}

// Validate reports the first setting outside what Redisson accepts.
func (c Config) Validate() error {
	switch {
	case c.Lease < 3*time.Millisecond || c.Lease%time.Millisecond != 0:
		return fmt.Errorf("redisson: the lease (ttl) must be whole milliseconds, at least 3ms (the watchdog renews every lease/3); got %v", c.Lease)
	case c.Timeout <= 0:
		return fmt.Errorf("redisson: the response timeout must be positive; got %v", c.Timeout)
	case c.RetryInterval < 0:
		return fmt.Errorf("redisson: the retry interval must not be negative; got %v", c.RetryInterval)
	case c.RetryAttempts < 0 || c.RetryAttempts > 1000:
		return fmt.Errorf("redisson: retry attempts must be in [0, 1000]; got %d", c.RetryAttempts)
	}
	return nil
}

// Factory returns the factory of RLock clients for cfg, or cfg's error.
func Factory(cfg Config) (lock.Factory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return func(rng *rand.Rand) (lock.Client, error) { return New(cfg, rng) }, nil
}

// op is the operation in progress.
type op uint8

const (
	opIdle op = iota
	opAcquire
	opHeld
	opRenew
	opRelease
)

// phase is where an acquire stands.
type phase uint8

const (
	phTry       phase = iota + 1 // the trylock script is out
	phSubscribe                  // SUBSCRIBE is out
	phWait                       // waiting for the unlock message or the key's time to live
)

// Machine is one RLock client for one lock at a time.
type Machine struct {
	cfg  Config
	rng  *rand.Rand
	name string // the lock name: this client's uuid and thread id
	out  []lock.Output
	now  time.Duration

	op       op
	ph       phase
	resource string
	attempt  int
	start    time.Duration // the acquire's start (or the extension's, the release's)
	sentAt   time.Duration // when the request in flight was (last) sent
	deadline time.Duration
	renewals int

	req     lock.Req
	lastReq lock.Req
	cmd     resp.Command // the request in flight, for resending
	sends   int          // sends of the request in flight so far
	retry   bool         // the timer is a retry interval, not a response timeout
	// waitReq is the WAIT sent after the script in flight (with replicas), whose answer
	// ends the batch; stash holds the script's answer meanwhile.
	waitReq lock.Req
	stash   resp.Reply
	// syncRetry: the timer is the retry interval after "None of slaves were synced";
	// noSyncLeft counts the retries left to this tryAcquire.
	syncRetry  bool
	noSyncLeft int
	// avail is availableSlaves: the replicas a WAIT waits for, -1 until INFO replication
	// (infoReq, in flight) told; waitFor is the count the WAIT in flight asked for.
	avail, waitFor int
	infoReq        lock.Req

	// waitEnd bounds a tryLock(waitTime): past it, a try that finds the lock taken gives
	// up instead of waiting on. 0 is lock(), which waits for ever.
	waitEnd time.Duration
	// timedOut says the last acquire failed because a command ran out of sends after a
	// response timeout (Redisson's RedisResponseTimeoutException), which RedissonRedLock
	// answers with an unlock; not after a refused connection.
	timedOut bool

	subscribed bool // to this resource's channel
	// permits counts unlock messages not yet waited for: Redisson's latch is a semaphore
	// the message releases, so a message that comes while a try is out ends the next
	// wait at once.
	permits int

	timer, lastTID lock.TimerID
}

// New returns an idle RLock client. Its lock name is a random UUID (the Redisson
// instance's id) and thread 1, as in getLockName(threadId).
func New(cfg Config, rng *rand.Rand) (*Machine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("redisson: nil random source")
	}
	return &Machine{cfg: cfg, rng: rng, name: newUUID(rng) + ":1", avail: -1}, nil
}

// LockName returns the hash field this client holds the lock under.
func (m *Machine) LockName() string { return m.name }

func (m *Machine) begin(now time.Duration) error {
	m.out = m.out[:0]
	if now < m.now {
		return fmt.Errorf("%w: now = %v after %v", lock.ErrTimeBackward, now, m.now)
	}
	m.now = now
	return nil
}

// input starts an input the RedLock drives directly, at its own now, never earlier than
// this machine's.
func (m *Machine) input(now time.Duration) {
	m.out = m.out[:0]
	m.now = max(m.now, now)
}

// Acquire is lock(): the first try, then (if taken) subscribe and loop.
func (m *Machine) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	if m.op != opIdle {
		return nil, lock.ErrBusy
	}
	m.startAcquire(resource, 0)
	return m.out, nil
}

// startAcquire begins lock() (wait 0) or tryLock(wait): the first try.
func (m *Machine) startAcquire(resource string, wait time.Duration) {
	m.op, m.resource, m.attempt, m.start, m.subscribed, m.permits = opAcquire, resource, 0, m.now, false, 0
	m.waitEnd, m.timedOut = 0, false
	if wait > 0 {
		m.waitEnd = m.now + wait
	}
	m.try()
}

// waitOver reports whether a tryLock's wait is spent, as its `time <= 0` checks do.
func (m *Machine) waitOver() bool { return m.waitEnd > 0 && m.now >= m.waitEnd }

// try sends the trylock script: one attempt.
func (m *Machine) try() {
	m.noSyncLeft = m.cfg.RetryAttempts // ServiceManager.execute's budget, per tryAcquire
	m.tryAgain()
}

// tryAgain sends the trylock script once more within the same tryAcquire.
func (m *Machine) tryAgain() {
	m.attempt++
	m.ph = phTry
	m.emit(lock.Event{Kind: lock.AttemptStarted, Resource: m.resource, Attempt: m.attempt, Start: m.now})
	m.send(resp.Command{Op: resp.OpEval, Script: resp.ScriptRedissonTryLock, Key: m.resource, Value: m.name, TTL: m.cfg.Lease})
}

// Extend is one watchdog renewal.
func (m *Machine) Extend(now time.Duration) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	switch m.op {
	case opHeld:
	case opRenew, opAcquire:
		return nil, lock.ErrBusy
	default:
		return nil, lock.ErrNotHeld
	}
	m.op, m.start = opRenew, now
	m.send(resp.Command{Op: resp.OpEval, Script: resp.ScriptRedissonRenew, Key: m.resource, Value: m.name, TTL: m.cfg.Lease})
	return m.out, nil
}

// Release is unlock(), or the end of a lock() that is still waiting.
func (m *Machine) Release(now time.Duration) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	switch m.op {
	case opIdle, opRelease:
		return nil, lock.ErrNotHeld
	case opAcquire:
		m.abandonInFlight()
		m.endAcquire(lock.ReasonAborted)
		return m.out, nil
	}
	m.unlock()
	return m.out, nil
}

// unlock sends the unlock script, whatever the machine holds: RedissonRedLock unlocks a
// lock whose acquire timed out, and every lock of the set on unlock(), held or not.
func (m *Machine) unlock() {
	if m.op == opRenew || m.op == opAcquire {
		m.abandonInFlight()
	}
	m.op, m.start = opRelease, m.now
	raw := randomBytes(m.rng)
	id := hex.EncodeToString(raw[:])
	m.send(resp.Command{Op: resp.OpEval, Script: resp.ScriptRedissonUnlock, Key: m.resource,
		Value: resp.RedissonUnlockValue(m.name, id), TTL: m.cfg.Lease})
}

// Reply feeds a reply, or a message pushed on the lock's channel (lock.PushReq).
func (m *Machine) Reply(now time.Duration, server int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	if server != 0 {
		return nil, fmt.Errorf("redisson: reply from server %d; the lock lives on server 0 alone", server)
	}
	if req == lock.PushReq {
		m.message(resp.PushOf(&p))
		return m.out, nil
	}
	r := resp.ReplyOf(&p)
	if m.infoReq != 0 && req == m.infoReq {
		m.infoReq = 0
		m.disarm()
		if r.Kind == resp.ReplyNone { // refused: retried like the script would be
			m.refused()
			return m.out, nil
		}
		m.avail, m.sends = connectedSlaves(r), 0 // the script has a budget of its own
		m.resend()
		return m.out, nil
	}
	if m.waitReq != 0 && req != 0 {
		switch {
		case req == m.req && r.Kind != resp.ReplyNone: // the script's answer: the batch ends with WAIT's
			m.stash, m.req = r, 0
			return m.out, nil
		case req == m.req: // refused: so will the WAIT be
			m.waitReq = 0
		case req == m.waitReq:
			m.waitReq = 0
			m.disarm()
			if r.Kind == resp.ReplyNone {
				m.refused()
				return m.out, nil
			}
			if r.Kind == resp.ReplyInt && r.Int < int64(m.waitFor) {
				m.avail = -1 // e.setAvailableSlaves(-1): INFO replication again next time
			}
			if r.Kind == resp.ReplyInt && r.Int == 0 {
				m.noSync()
				return m.out, nil
			}
			req, m.req, r = 0, 0, m.stash
			m.answered(r)
			return m.out, nil
		default:
			return m.out, nil
		}
	}
	if req != m.req || req == 0 {
		return m.out, nil // late, or a reply nobody waits for (UNSUBSCRIBE's, the latch's DEL)
	}
	m.req = 0
	m.disarm()
	m.answered(r)
	return m.out, nil
}

// answered takes the answer to the command in flight.
func (m *Machine) answered(r resp.Reply) {
	if r.Kind == resp.ReplyNone && (m.op != opAcquire || m.ph == phTry) {
		m.refused()
		return
	}
	switch m.op {
	case opAcquire:
		m.onAcquireReply(r)
	case opRenew:
		ok := r.Kind == resp.ReplyInt && r.Int == 1
		if ok {
			m.deadline = m.sentAt + m.cfg.Lease
			m.renewals++
			m.op = opHeld
			m.emit(m.event(lock.Extended, lock.ReasonNone, 1))
			return
		}
		// The field is gone (the key expired, or another client holds it): Redisson's
		// watchdog stops, logging nothing the application sees.
		m.op = opHeld
		m.emit(m.event(lock.ExtendFailed, lock.ReasonNoQuorum, 0))
	case opRelease:
		// 1: deleted and published; 0: a re-entry counted down; nil: not ours (an
		// IllegalMonitorStateException). The latch key is deleted without waiting.
		votes := 0
		if r.Kind == resp.ReplyInt {
			votes = 1
		}
		m.released(votes, true)
	}
}

// noSync is "None of slaves were synced": the script ran on the master, but its WAIT
// found no replica with it. A trylock is unlocked (handleNoSync) and tried again after
// the retry interval while ServiceManager.execute's attempts last, then lock() throws; a
// renewal fails, which stops the watchdog; an unlock throws after its script ran.
func (m *Machine) noSync() {
	switch m.op {
	case opAcquire:
		ev := m.event(lock.AttemptEnded, lock.ReasonNoQuorum, 0)
		ev.Validity = 0
		m.emit(ev)
		raw := randomBytes(m.rng)
		m.fire(resp.Command{Op: resp.OpEval, Script: resp.ScriptRedissonUnlock, Key: m.resource,
			Value: resp.RedissonUnlockValue(m.name, hex.EncodeToString(raw[:])), TTL: m.cfg.Lease})
		if m.noSyncLeft > 0 {
			m.noSyncLeft--
			m.syncRetry = true
			m.arm(m.cfg.RetryInterval)
			return
		}
		m.endAcquire(lock.ReasonNoQuorum)
	case opRenew:
		m.op = opHeld
		m.emit(m.event(lock.ExtendFailed, lock.ReasonNoQuorum, 0))
	case opRelease:
		votes := 0
		if m.stash.Kind == resp.ReplyInt {
			votes = 1
		}
		m.released(votes, false)
	}
}

func (m *Machine) onAcquireReply(r resp.Reply) {
	switch m.ph {
	case phSubscribe:
		if r.Kind == resp.ReplyError {
			m.endAcquire(lock.ReasonNoQuorum)
			return
		}
		m.subscribed = true
		if m.waitOver() {
			m.endAcquire(lock.ReasonNoQuorum)
			return
		}
		m.try()
	case phTry:
		switch r.Kind {
		case resp.ReplyNil: // taken (or re-entered)
			m.deadline = m.sentAt + m.cfg.Lease
			ev := m.event(lock.AttemptEnded, lock.ReasonNone, 1)
			ev.Validity = 0
			m.emit(ev)
			m.op, m.renewals = opHeld, 0
			acq := m.event(lock.Acquired, lock.ReasonNone, 1)
			m.emit(acq)
			m.unsubscribe()
		case resp.ReplyInt: // taken by another: its PTTL
			ev := m.event(lock.AttemptEnded, lock.ReasonNoQuorum, 0)
			ev.Validity = 0
			m.emit(ev)
			if m.waitOver() {
				m.endAcquire(lock.ReasonNoQuorum)
				return
			}
			if !m.subscribed {
				m.ph = phSubscribe
				m.send(resp.Command{Op: resp.OpSubscribe, Key: resp.RedissonChannel(m.resource)})
				return
			}
			if m.permits > 0 { // an unlock message came while the try was out
				m.permits--
				m.try()
				return
			}
			m.ph = phWait
			wait := time.Duration(r.Int) * time.Millisecond
			if left := m.waitEnd - m.now; m.waitEnd > 0 && (r.Int < 0 || left < wait) {
				wait = left
			}
			if wait >= 0 && (r.Int >= 0 || m.waitEnd > 0) { // else no TTL, no bound: only a message ends the wait
				m.arm(wait)
			}
		default: // an error reply: lock() throws
			ev := m.event(lock.AttemptEnded, lock.ReasonNoQuorum, 0)
			ev.Validity = 0
			m.emit(ev)
			m.endAcquire(lock.ReasonNoQuorum)
		}
	}
}

// message handles a pushed message: the unlock message on the channel a waiting lock()
// listens on wakes it for another try.
func (m *Machine) message(channel, message string) {
	if m.op != opAcquire || !m.subscribed || channel != resp.RedissonChannel(m.resource) ||
		message != resp.RedissonUnlockMessage {
		return
	}
	if m.ph != phWait {
		m.permits++
		return
	}
	m.disarm()
	if m.waitOver() {
		m.endAcquire(lock.ReasonNoQuorum)
		return
	}
	m.try()
}

// Timer handles a response timeout, the end of a retry interval, or the end of a wait.
func (m *Machine) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	if err := m.begin(now); err != nil {
		return nil, err
	}
	if id != m.timer || id == 0 {
		return m.out, nil
	}
	m.timer = 0
	switch {
	case m.op == opAcquire && m.ph == phWait:
		if m.waitOver() {
			m.endAcquire(lock.ReasonNoQuorum)
			return m.out, nil
		}
		m.try()
	case m.op == opAcquire && m.ph == phSubscribe && m.waitOver(): // subscribeFuture.get(time)
		m.abandonInFlight()
		m.endAcquire(lock.ReasonNoQuorum)
	case m.syncRetry: // ServiceManager.execute's retry after "None of slaves were synced"
		m.syncRetry = false
		m.tryAgain()
	case m.retry: // the retry interval is over: send again
		m.retry = false
		m.resend()
	case m.req != 0 || m.waitReq != 0 || m.infoReq != 0: // no response in time
		m.abandonInFlight()
		if m.sends <= m.cfg.RetryAttempts && m.resendable() {
			m.retry = true
			m.arm(m.cfg.RetryInterval)
			return m.out, nil
		}
		m.fail(true)
	}
	return m.out, nil
}

// refused answers a refused connection (resp.NoReply) to the trylock, renewal or unlock
// in flight as RedisExecutor (redisson-3.43.0) answers a connection it cannot get or
// write to: tryComplete leaves the attempt open while attempts remain, and the retry
// timer that execute armed retryInterval after the attempt began starts the next one
// (scheduleRetryTimeout); noRetry plays no part. The last attempt's refusal fails the
// command at once, with a connection error (not a RedisResponseTimeoutException, so
// RedissonRedLock sends no unlock for it). SUBSCRIBE goes through PublishSubscribeService
// instead, which is not modelled; its NoReply is taken as before.
func (m *Machine) refused() {
	if m.sends > m.cfg.RetryAttempts {
		m.fail(false)
		return
	}
	wait := m.sentAt + m.cfg.RetryInterval - m.now
	if wait <= 0 { // no retry interval: tryComplete starts the next attempt at once
		m.resend()
		return
	}
	m.retry = true
	m.arm(wait)
}

// resendable reports whether the command in flight is sent again after a timeout:
// renewals are (syncedEval), and so are SUBSCRIBE and, with replicas, every script; the
// trylock and unlock scripts on a single server are not (syncedEvalNoRetry).
func (m *Machine) resendable() bool {
	return m.cfg.Replicated || m.op == opRenew || (m.op == opAcquire && m.ph == phSubscribe)
}

// fail ends the operation whose command ran out of sends: after a response timeout
// (timedOut: a RedisResponseTimeoutException) or a refused connection.
func (m *Machine) fail(timedOut bool) {
	switch m.op {
	case opAcquire:
		if m.ph == phTry {
			ev := m.event(lock.AttemptEnded, lock.ReasonNoQuorum, 0)
			ev.Validity = 0
			m.emit(ev)
		}
		m.timedOut = timedOut
		m.endAcquire(lock.ReasonNoQuorum)
	case opRenew:
		m.op = opHeld
		m.emit(m.event(lock.ExtendFailed, lock.ReasonNoQuorum, 0))
	case opRelease:
		m.released(0, timedOut)
	}
}

func (m *Machine) endAcquire(reason lock.Reason) {
	m.disarm()
	m.emit(m.event(lock.AcquireFailed, reason, 0))
	m.unsubscribe()
	m.op = opIdle
}

// released ends an unlock. latch says whether the DEL of the unlock latch follows: after
// a refused unlock it does not, since Redisson deletes the latch in a thenApply on the
// unlock's result (RedissonBaseLock.unlockInnerAsync), which a failed unlock skips.
func (m *Machine) released(votes int, latch bool) {
	m.op = opIdle
	m.emit(m.event(lock.Released, lock.ReasonNone, votes))
	if c := m.cmd; latch && c.Script == resp.ScriptRedissonUnlock {
		_, id := cutUnlock(c.Value)
		m.fire(resp.Command{Op: resp.OpDel, Key: resp.RedissonLatch(m.resource, id)})
	}
}

// unsubscribe ends the subscription a waiting lock() took (its finally block); nothing
// waits for the confirmation.
func (m *Machine) unsubscribe() {
	if m.subscribed {
		m.subscribed = false
		m.fire(resp.Command{Op: resp.OpUnsubscribe, Key: resp.RedissonChannel(m.resource)})
	}
}

// send sends c as the request in flight, with its response timeout.
func (m *Machine) send(c resp.Command) {
	m.cmd, m.sends = c, 0
	m.resend()
}

func (m *Machine) resend() {
	if m.cfg.Replicated && m.cmd.Op == resp.OpEval && m.avail < 0 { // how many replicas?
		m.sends++
		m.sentAt = m.now
		m.lastReq++
		m.infoReq = m.lastReq
		m.push(lock.Output{Kind: lock.OutSend, Node: 0, Req: m.infoReq, Request: (&resp.Command{Op: resp.OpInfo}).Payload()})
		m.arm(m.cfg.Timeout)
		return
	}
	m.sends++
	m.sentAt = m.now
	m.lastReq++
	m.req = m.lastReq
	m.push(lock.Output{Kind: lock.OutSend, Node: 0, Req: m.req, Request: m.cmd.Payload()})
	wait := m.cfg.Timeout
	if m.cfg.Replicated && m.avail > 0 && m.cmd.Op == resp.OpEval { // syncedEval's batch
		m.lastReq++
		m.waitReq, m.waitFor = m.lastReq, m.avail
		w := resp.Wait(m.avail, m.cfg.SyncTimeout)
		m.push(lock.Output{Kind: lock.OutSend, Node: 0, Req: m.waitReq, Request: w.Payload()})
		wait += m.cfg.SyncTimeout
	}
	if left := m.waitEnd - m.now; m.op == opAcquire && m.ph == phSubscribe && m.waitEnd > 0 && left < wait {
		wait = max(left, 0) // subscribeFuture.get(time): the subscription waits no longer than the tryLock
	}
	m.arm(wait)
}

// fire sends c without waiting for its reply.
func (m *Machine) fire(c resp.Command) {
	m.lastReq++
	m.push(lock.Output{Kind: lock.OutSend, Node: 0, Req: m.lastReq, Request: c.Payload()})
}

// abandonInFlight stops waiting for the request in flight; the connection stays (Netty
// discards the late reply).
func (m *Machine) abandonInFlight() {
	if m.req != 0 {
		m.push(lock.Output{Kind: lock.OutAbandon, Node: 0, Req: m.req})
		m.req = 0
	}
	if m.waitReq != 0 {
		m.push(lock.Output{Kind: lock.OutAbandon, Node: 0, Req: m.waitReq})
		m.waitReq = 0
	}
	if m.infoReq != 0 {
		m.push(lock.Output{Kind: lock.OutAbandon, Node: 0, Req: m.infoReq})
		m.infoReq = 0
	}
	m.disarm()
	m.retry, m.syncRetry = false, false
}

func (m *Machine) event(kind lock.EventKind, reason lock.Reason, votes int) lock.Event {
	ev := lock.Event{Kind: kind, Reason: reason, Resource: m.resource, Value: m.name, Attempt: m.attempt,
		Votes: votes, Needed: 1, Replies: votes, Servers: 1, Start: m.start}
	switch kind {
	case lock.AttemptEnded:
		ev.Start = m.sentAt
		if reason != lock.ReasonNone || votes > 0 {
			ev.Replies = 1
		}
	case lock.Acquired:
		ev.Deadline, ev.Validity = m.deadline, m.deadline-m.now
	case lock.Extended:
		ev.Attempt, ev.Deadline, ev.Validity = m.renewals, m.deadline, m.deadline-m.now
	case lock.ExtendFailed:
		ev.Attempt = m.renewals + 1
	}
	return ev
}

func (m *Machine) push(o lock.Output) { m.out = append(m.out, o) }

func (m *Machine) emit(ev lock.Event) { m.push(lock.Output{Kind: lock.OutEvent, Event: ev}) }

// arm sets the one live timer, superseding any other.
func (m *Machine) arm(after time.Duration) {
	m.disarm()
	m.lastTID++
	m.timer = m.lastTID
	m.push(lock.Output{Kind: lock.OutSetTimer, Timer: m.timer, After: after})
}

func (m *Machine) disarm() {
	if m.timer != 0 {
		m.push(lock.Output{Kind: lock.OutCancelTimer, Timer: m.timer})
		m.timer = 0
	}
}

// randomBytes draws 16 bytes from the machine's stream, as the redlock machine draws its
// values: two little-endian words.
func randomBytes(rng *rand.Rand) (raw [16]byte) {
	binary.LittleEndian.PutUint64(raw[:8], rng.Uint64())
	binary.LittleEndian.PutUint64(raw[8:], rng.Uint64())
	return raw
}

// uuid returns a random version-4 UUID in its text form, as java.util.UUID.randomUUID.
func newUUID(rng *rand.Rand) string {
	raw := randomBytes(rng)
	u, _ := uuid.NewRandomFromReader(bytes.NewReader(raw[:])) // cannot fail: the 16 bytes are there
	return u.String()
}

func cutUnlock(v string) (name, id string) {
	for i := 0; i < len(v); i++ {
		if v[i] == 0 {
			return v[:i], v[i+1:]
		}
	}
	return v, ""
}

// connectedSlaves reads connected_slaves from INFO replication's answer; 0 when the
// answer is not one (an error, a refused connection).
func connectedSlaves(r resp.Reply) int {
	const field = "connected_slaves:"
	s := r.Str
	i := strings.Index(s, field)
	if r.Kind != resp.ReplyBulk || i < 0 {
		return 0
	}
	s = s[i+len(field):]
	n := 0
	for j := 0; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
		n = n*10 + int(s[j]-'0')
	}
	return n
}
