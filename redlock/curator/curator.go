// Package curator is Apache Curator 5.4's InterProcessMutex as a lock.Client: the lock
// most services take on ZooKeeper, written against redlock/lock and ZooKeeper's protocol
// (redlock/zk) alone, so that it runs on the simulated ensemble (model/zookeeper) through a
// session connection, as Redlock runs on simulated Redis nodes.
//
// The recipe, as LockInternals and StandardLockInternalsDriver run it (docs/zookeeper.md
// has each rule with its source lines):
//
//   - the protected create: an EPHEMERAL_SEQUENTIAL node /<lock>/_c_<uuid>-lock-, whose
//     name carries a fresh UUID, so that after a CONNECTIONLOSS the next try first lists
//     the lock's children and takes a node with its prefix as its own, when the session
//     is the one that created it (one from an earlier session is deleted instead); the
//     parent is created when missing (creatingParentContainersIfNeeded; a persistent node
//     here: the ensemble has no containers);
//   - getChildren, sorted by the sequence after "lock-": the lowest holds the lock;
//     another sets a data watch on its immediate predecessor (getData) and waits for any
//     event, then looks again; a predecessor already gone means look again at once; its
//     own node missing (its session expired) starts over with a new create, as the retry
//     policy allows;
//   - an acquire's time limit (acquire(time, unit); 0: acquire()), checked after each
//     watch is set: once it has passed, the node is deleted and the acquire fails; an
//     error the retry policy does not retry deletes the node too;
//   - release: a guaranteed delete of the node (retried, and then tried again in the
//     background whenever the connection comes back, until it is gone);
//   - every request retried on CONNECTIONLOSS, SESSIONMOVED and SESSIONEXPIRED by
//     ExponentialBackoffRetry(base, retries): the k-th retry (from 0) sleeps base ×
//     max(1, rand[0, 2^(k+1))); a request sent while disconnected waits for the
//     connection up to the connection timeout, then fails with CONNECTIONLOSS.
//
// Curator's connection states come from the session's pushes: SUSPENDED on Disconnected,
// RECONNECTED on SyncConnected after it, LOST on Expired or when a whole session timeout
// passed after SUSPENDED (ConnectionStateManager's injected expiry). The mutex does not
// react to them: the application does. What it does is Config.OnSuspended: carry on
// until LOST, or stop at SUSPENDED as Curator's documentation recommends; the machine
// reports lock.Lost when the application stops relying on the lock. A held lock has no
// deadline of its own (its Deadline is far away): it is held until released or Lost.
//
// The fencing token, when the application takes one (Config.Token), is the lock node's
// czxid (the create's reply; a node found again by its prefix is read with exists for it,
// as an application wanting a token must) or its sequence number plus one (the name's
// suffix, from the parent's cversion: it grows with every child created or deleted). The recipe itself
// hands out none: an application without one reports its lock unfenced.
//
// Config.Recipe = Naive is the recipe without the predecessor watch: every waiter
// watches the lock's children (getChildren with a watch) and looks again at every change,
// the herd effect Curator's design avoids.
package curator

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
)

// OnSuspended is what the application does with a held lock when Curator reports
// SUSPENDED.
type OnSuspended uint8

// The applications.
const (
	// CarryOn keeps working through SUSPENDED and stops at LOST.
	CarryOn OnSuspended = iota
	// Stop stops relying on the lock at SUSPENDED, as Curator's documentation (the
	// "Error Handling" notes of its recipes) recommends.
	Stop
)

var onSuspendedNames = [...]string{"carry-on", "stop"}

func (o OnSuspended) String() string {
	if int(o) < len(onSuspendedNames) {
		return onSuspendedNames[o]
	}
	return fmt.Sprintf("on-suspended(%d)", int(o))
}

// OnSuspendeds returns every OnSuspended value, in order.
func OnSuspendeds() []OnSuspended { return []OnSuspended{CarryOn, Stop} }

// Recipe is the lock recipe: Curator's, or the naive one.
type Recipe uint8

// The recipes.
const (
	// Curator watches the immediate predecessor only: a release wakes one waiter.
	Curator Recipe = iota
	// Naive makes every waiter watch the lock's children: a release wakes them all.
	Naive
)

var recipeNames = [...]string{"curator", "naive"}

func (r Recipe) String() string {
	if int(r) < len(recipeNames) {
		return recipeNames[r]
	}
	return fmt.Sprintf("recipe(%d)", int(r))
}

// Recipes returns every Recipe, in order.
func Recipes() []Recipe { return []Recipe{Curator, Naive} }

// Token is the fencing token an application takes from the lock node it holds, to send
// with its writes; InterProcessMutex offers none of its own.
type Token uint8

// The tokens.
const (
	// NoToken: the application writes without a token, as most do.
	NoToken Token = iota
	// Czxid is the zxid of the node's create: unique and growing across the ensemble.
	Czxid
	// Sequence is the node's sequence number: growing within the lock's parent.
	Sequence
)

var tokenNames = [...]string{"none", "czxid", "sequence"}

func (t Token) String() string {
	if int(t) < len(tokenNames) {
		return tokenNames[t]
	}
	return fmt.Sprintf("token(%d)", int(t))
}

// Tokens returns every Token, in order.
func Tokens() []Token { return []Token{NoToken, Czxid, Sequence} }

// Config is an InterProcessMutex client's settings.
type Config struct {
	// SessionTimeout is the session's negotiated timeout: what Curator asked for (60s by
	// default, CuratorFrameworkFactory) clamped by the ensemble. A SUSPENDED that lasts it
	// is LOST.
	SessionTimeout time.Duration
	// ConnectionTimeout is how long a request waits for a connection (15s by default).
	ConnectionTimeout time.Duration
	// BaseSleep and MaxRetries are ExponentialBackoffRetry's baseSleepTimeMs and
	// maxRetries (Curator's documentation's example: 1s and 3; at most 29).
	BaseSleep  time.Duration
	MaxRetries int
	// AcquireTimeout bounds an acquire (acquire(time, unit)); 0 waits for ever (acquire()).
	AcquireTimeout time.Duration
	OnSuspended    OnSuspended
	Recipe         Recipe
	Token          Token
}

// MaxRetries is ExponentialBackoffRetry's MAX_RETRIES_LIMIT.
const MaxRetries = 29

// DefaultConfig returns Curator's defaults against ZooKeeper's: a 60s session clamped to
// the default ensemble's 40s (20 ticks of 2s), a 15s connection timeout,
// ExponentialBackoffRetry(1000, 3), acquire() without a limit, carrying on until LOST.
func DefaultConfig() Config {
	return Config{SessionTimeout: 40 * time.Second, ConnectionTimeout: 15 * time.Second,
		BaseSleep: time.Second, MaxRetries: 3}
}

// Validate checks the settings.
func (c Config) Validate() error {
	switch {
	case c.SessionTimeout <= 0:
		return fmt.Errorf("curator: session timeout %v: want more than 0s", c.SessionTimeout)
	case c.ConnectionTimeout <= 0:
		return fmt.Errorf("curator: connection timeout %v: want more than 0s", c.ConnectionTimeout)
	case c.BaseSleep < 0:
		return fmt.Errorf("curator: base sleep %v: want 0s or more", c.BaseSleep)
	case c.MaxRetries < 0 || c.MaxRetries > MaxRetries:
		return fmt.Errorf("curator: max retries %d: want 0 to %d", c.MaxRetries, MaxRetries)
	case c.AcquireTimeout < 0:
		return fmt.Errorf("curator: acquire timeout %v: want 0s or more", c.AcquireTimeout)
	case int(c.OnSuspended) >= len(onSuspendedNames):
		return fmt.Errorf("curator: %v: want carry-on or stop", c.OnSuspended)
	case int(c.Recipe) >= len(recipeNames):
		return fmt.Errorf("curator: %v: want curator or naive", c.Recipe)
	case int(c.Token) >= len(tokenNames):
		return fmt.Errorf("curator: %v: want none, czxid or sequence", c.Token)
	}
	return nil
}

// Factory returns the factory of InterProcessMutex clients with cfg.
func Factory(cfg Config) (lock.Factory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return func(rng *rand.Rand) (lock.Client, error) { return New(cfg, rng) }, nil
}

// New returns one client's mutex.
func New(cfg Config, rng *rand.Rand) (*Mutex, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil {
		return nil, errors.New("curator: nil random source")
	}
	return &Mutex{cfg: cfg, rng: rng}, nil
}

// phase is the step an operation is at: the request awaited, a retry's sleep or a wait.
type phase uint8

const (
	phIdle         phase = iota
	phCreateParent       // create the missing parent, then the lock node again
	phCreate             // the protected create
	phFind               // after a failed create: list the children for our prefix
	phChildren           // getSortedChildren
	phWatch              // the watch on the predecessor (Naive: on the children, set by phChildren)
	phWaiting            // waiting for the watch, a state change or the acquire's limit
	phToken              // exists on a node found again, for its czxid
	phSleep              // a retry's sleep, then retryOf again
	phAbandon            // the acquire failed: delete the node, then report it
	phHeld
	phDelete // release: the guaranteed delete
	phAgain  // after a sleep: attemptLock's next pass, a new create
)

// connState is Curator's connection state as the recipe's application sees it.
type connState uint8

const (
	csNever     connState = iota // not yet connected
	csConnected                  // CONNECTED or RECONNECTED
	csSuspended                  // SUSPENDED
	csLost                       // LOST
)

// forever is a held lock's deadline: ZooKeeper's lock has none, it is held until its
// holder learns otherwise.
const forever = 100000 * time.Hour

// Mutex is one client's InterProcessMutex, a deterministic state machine (lock.Client).
type Mutex struct {
	cfg Config
	rng *rand.Rand
	out []lock.Output

	ph, retryOf phase
	req, lastID lock.Req
	retries     int // of the operation in progress (RetryLoop's retryCount)
	loopRetries int // attemptLock's retries after its node went missing

	resource, parent string
	start            time.Duration
	attempt          int
	id               string // the protected id of the current create
	ids              []string
	ourPath          string
	czxid            int64
	createSession    int64
	watchPath        string
	lost             bool // Lost reported for the lock held

	conn        connState
	session     int64
	suspendedAt time.Duration

	// The timers: the operation's (a sleep, a wait for the connection, the acquire's
	// limit) and LOST's after SUSPENDED; the caller keeps one, set for the earlier.
	opDue, lostDue time.Duration
	timer          lock.TimerID
	armed          time.Duration // when the timer set falls due; 0: none set

	// The guaranteed deletes left to the background, and the one in flight.
	bgPaths []string
	bgReq   lock.Req
}

// Values returns the protected ids of the mutex's creates, the current first (for tests
// that name random values): the current one and the first keptIDs.
func (l *Mutex) Values() []string {
	out := make([]string, 0, len(l.ids)+1)
	if n := len(l.ids); l.id != "" && (n == 0 || l.ids[n-1] != l.id) {
		out = append(out, l.id)
	}
	for i := len(l.ids) - 1; i >= 0; i-- {
		out = append(out, l.ids[i])
	}
	return out
}

// keptIDs bounds the protected ids a mutex remembers for Values: enough for any step
// script, and a long run's mutex does not grow by one string per attempt (it did: 45 MiB
// an hour in the ZooKeeper bench).
const keptIDs = 64

// Path returns the lock node the mutex holds or waits with ("" when none).
func (l *Mutex) Path() string { return l.ourPath }

// Acquire starts acquiring resource: the lock /<resource>.
func (l *Mutex) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	l.out = l.out[:0]
	if l.ph != phIdle {
		return nil, lock.ErrBusy
	}
	l.resource, l.parent, l.start = resource, "/"+resource, now
	l.attempt, l.loopRetries = 0, 0
	l.newAttempt(now)
	l.arm(now)
	return l.out, nil
}

// Extend is refused: the mutex has no lease to extend.
func (l *Mutex) Extend(time.Duration) ([]lock.Output, error) { return nil, lock.ErrBusy }

// Release deletes the held node, or aborts an acquire in progress (its node, if any, is
// left to the background's guaranteed delete).
func (l *Mutex) Release(now time.Duration) ([]lock.Output, error) {
	l.out = l.out[:0]
	switch l.ph {
	case phHeld:
		l.start = now
		l.begin(now, phDelete)
	case phIdle, phDelete, phAbandon:
		return nil, lock.ErrNotHeld
	default:
		l.abandonReq()
		l.opDue = 0
		if l.ourPath != "" {
			l.background(now, l.ourPath)
		}
		l.failAcquire(lock.ReasonAborted, 0)
	}
	l.arm(now)
	return l.out, nil
}

// Reply takes a server's answer, or a push (a watch event, a state change).
func (l *Mutex) Reply(now time.Duration, _ int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	l.out = l.out[:0]
	m := zk.Unpack(&p)
	switch {
	case req == lock.PushReq:
		l.pushed(now, &m)
	case req == l.bgReq && req != 0:
		l.bgDone(now, &m)
	case req == l.req && req != 0:
		l.req, l.opDue = 0, 0
		l.answer(now, &m)
	}
	l.arm(now)
	return l.out, nil
}

// Timer runs the timers that fell due.
func (l *Mutex) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	l.out = l.out[:0]
	if id != l.timer || l.armed == 0 {
		return l.out, nil
	}
	l.armed = 0
	if l.lostDue != 0 && now >= l.lostDue {
		l.lostDue = 0
		l.conn = csLost // ConnectionStateManager injects an expiry
		l.loseHeld()
	}
	if l.opDue != 0 && now >= l.opDue {
		l.opDue = 0
		l.opTimer(now)
	}
	l.arm(now)
	return l.out, nil
}

// opTimer: a retry's sleep ended, a wait's limit came, or a request sent while
// disconnected found no connection within the connection timeout.
func (l *Mutex) opTimer(now time.Duration) {
	switch l.ph {
	case phSleep:
		if l.retryOf == phAgain {
			l.newAttempt(now)
			return
		}
		l.run(now, l.retryOf)
	case phWaiting:
		l.begin(now, phChildren) // wait() returned: look again; the limit is checked after the watch
	default:
		if l.req != 0 {
			l.abandonReq()
			l.answer(now, &zk.Msg{Op: l.opOf(), Code: zk.ConnectionLoss})
		}
	}
}

// opOf returns the op of the request the phase sends.
func (l *Mutex) opOf() zk.Op {
	switch l.ph {
	case phCreate, phCreateParent:
		return zk.OpCreate
	case phFind, phChildren:
		return zk.OpGetChildren
	case phWatch:
		return zk.OpGetData
	case phToken:
		return zk.OpExists
	}
	return zk.OpDelete
}

func (l *Mutex) abandonReq() {
	if l.req != 0 {
		l.out = append(l.out, lock.Output{Kind: lock.OutAbandon, Node: 0, Req: l.req})
		l.req = 0
	}
}

// newAttempt starts one pass of attemptLock: a new protected id and its create.
func (l *Mutex) newAttempt(now time.Duration) {
	l.attempt++
	l.id = newUUID(l.rng)
	if len(l.ids) < keptIDs {
		l.ids = append(l.ids, l.id)
	}
	l.ourPath, l.czxid, l.createSession = "", 0, 0
	l.event(lock.Event{Kind: lock.AttemptStarted})
	l.begin(now, phCreate)
}

// begin starts an operation with a fresh retry count.
func (l *Mutex) begin(now time.Duration, ph phase) {
	l.retries = 0
	l.run(now, ph)
}

// run sends the request of phase ph.
func (l *Mutex) run(now time.Duration, ph phase) {
	l.ph = ph
	switch ph {
	case phCreateParent:
		l.send(now, zk.Create(l.parent, "", 0))
	case phCreate:
		l.createSession = l.session
		l.send(now, zk.Create(l.parent+"/_c_"+l.id+"-lock-", "", zk.FlagEphemeral|zk.FlagSequential))
	case phFind:
		l.send(now, zk.Read(zk.OpGetChildren, l.parent, false))
	case phChildren:
		l.send(now, zk.Read(zk.OpGetChildren, l.parent, l.cfg.Recipe == Naive))
	case phWatch:
		l.send(now, zk.Read(zk.OpGetData, l.watchPath, true))
	case phToken:
		l.send(now, zk.Read(zk.OpExists, l.ourPath, false))
	case phDelete, phAbandon:
		l.send(now, zk.Delete(l.ourPath, zk.AnyVersion))
	}
}

// send sends p as the operation's request; one sent while disconnected waits for the
// connection at most the connection timeout.
func (l *Mutex) send(now time.Duration, p lock.Payload) {
	l.lastID++
	l.req = l.lastID
	l.out = append(l.out, lock.Output{Kind: lock.OutSend, Node: 0, Req: l.req, Request: p})
	l.opDue = 0
	if l.conn != csConnected {
		l.opDue = now + l.cfg.ConnectionTimeout
	}
}

// retryable reports whether RetryPolicy.allowRetry(exception) retries code.
func retryable(c zk.Code) bool {
	return c == zk.ConnectionLoss || c == zk.SessionMoved || c == zk.SessionExpired
}

// retry sleeps ExponentialBackoffRetry's time before sending the phase's request again,
// and reports false when the policy allows no more.
func (l *Mutex) retry(now time.Duration, ph phase) bool {
	if l.retries >= l.cfg.MaxRetries {
		return false
	}
	l.sleep(now, ph, l.retries)
	l.retries++
	return true
}

// sleep waits ExponentialBackoffRetry.getSleepTimeMs(k) and then runs ph.
func (l *Mutex) sleep(now time.Duration, ph phase, k int) {
	d := l.cfg.BaseSleep * time.Duration(max(1, l.rng.IntN(1<<(k+1))))
	l.ph, l.retryOf, l.opDue = phSleep, ph, now+d
}

// answer takes the reply to the operation's request.
func (l *Mutex) answer(now time.Duration, m *zk.Msg) {
	ph := l.ph
	if m.Code != zk.OK && retryable(m.Code) {
		next := ph
		if ph == phCreate {
			next = phFind // the protected create looks for its node before creating again
		}
		if l.retry(now, next) {
			return
		}
		l.exhausted(now, ph)
		return
	}
	switch ph {
	case phCreateParent:
		if m.Code == zk.OK || m.Code == zk.NodeExists {
			l.run(now, phCreate)
			return
		}
		l.abandon(now)
	case phCreate:
		switch m.Code {
		case zk.OK:
			l.ourPath, l.czxid = m.Str, m.Int
			l.begin(now, phChildren)
		case zk.NoNode:
			l.run(now, phCreateParent)
		default:
			l.abandon(now)
		}
	case phFind:
		l.found(now, m)
	case phChildren:
		if m.Code != zk.OK && m.Code != zk.NoNode {
			l.abandon(now)
			return
		}
		l.children(now, m)
	case phWatch:
		switch m.Code {
		case zk.OK:
			l.wait(now)
		case zk.NoNode:
			l.begin(now, phChildren) // the predecessor is gone: look again
		default:
			l.abandon(now)
		}
	case phToken:
		switch m.Code {
		case zk.OK:
			l.czxid = m.Int
			l.acquired()
		case zk.NoNode:
			l.begin(now, phChildren)
		default:
			l.abandon(now)
		}
	case phDelete:
		l.ph = phIdle
		l.event(lock.Event{Kind: lock.Released, Votes: b2i(m.Code == zk.OK), Replies: 1})
	case phAbandon:
		l.failAcquire(lock.ReasonNoQuorum, 1)
	}
}

// exhausted: the retry policy gave up on the request of phase ph.
func (l *Mutex) exhausted(now time.Duration, ph phase) {
	switch ph {
	case phDelete:
		l.background(now, l.ourPath) // guaranteed: the background tries again
		l.ph = phIdle
		l.event(lock.Event{Kind: lock.Released, Replies: 0})
	case phAbandon:
		l.background(now, l.ourPath)
		l.failAcquire(lock.ReasonNoQuorum, 0)
	default:
		l.abandon(now)
	}
}

// found takes the children listed after a failed create: a node with the create's
// protected prefix is ours when the session is the one that created it.
func (l *Mutex) found(now time.Duration, m *zk.Msg) {
	if m.Code != zk.OK && m.Code != zk.NoNode {
		l.abandon(now)
		return
	}
	prefix := "_c_" + l.id + "-"
	var name string
	for _, c := range zk.ChildrenOf(nil, m.Str2) {
		if strings.HasPrefix(c, prefix) {
			name = c
			break
		}
	}
	if name != "" && l.createSession != 0 && l.createSession != l.session {
		l.background(now, l.parent+"/"+name) // an earlier session's: deleted, not used
		name = ""
	}
	if name == "" {
		l.run(now, phCreate) // still the create's retry loop
		return
	}
	l.ourPath, l.czxid = l.parent+"/"+name, 0
	l.begin(now, phChildren)
}

// children takes getSortedChildren's answer: hold, watch the predecessor, or start over
// when the node is gone.
func (l *Mutex) children(now time.Duration, m *zk.Msg) {
	kids := zk.ChildrenOf(nil, m.Str2)
	slices.SortStableFunc(kids, func(a, b string) int { return strings.Compare(sortKey(a), sortKey(b)) })
	i := slices.Index(kids, strings.TrimPrefix(l.ourPath, l.parent+"/"))
	switch {
	case i < 0:
		// validateOurIndex's NoNodeException: attemptLock creates anew if the policy allows.
		l.event(lock.Event{Kind: lock.AttemptEnded, Reason: lock.ReasonNoQuorum, Replies: 1})
		if l.loopRetries >= l.cfg.MaxRetries {
			l.ph = phIdle
			l.event(lock.Event{Kind: lock.AcquireFailed, Reason: lock.ReasonNoQuorum, Replies: 1})
			return
		}
		l.sleep(now, phAgain, l.loopRetries)
		l.loopRetries++
	case i == 0 && l.czxid == 0 && l.cfg.Token == Czxid:
		l.begin(now, phToken)
	case i == 0:
		l.acquired()
	case l.cfg.Recipe == Naive:
		l.watchPath = l.parent // the getChildren just answered left the watch
		l.wait(now)
	default:
		l.watchPath = l.parent + "/" + kids[i-1]
		l.begin(now, phWatch)
	}
}

// sortKey is StandardLockInternalsDriver.fixForSorting: what follows "lock-", or the
// whole name.
func sortKey(name string) string {
	if i := strings.LastIndex(name, "lock-"); i >= 0 {
		return name[i+len("lock-"):]
	}
	return name
}

// wait waits for the watch, or gives up when the acquire's limit has passed.
func (l *Mutex) wait(now time.Duration) {
	l.ph, l.opDue = phWaiting, 0
	if l.cfg.AcquireTimeout == 0 {
		return
	}
	left := l.start + l.cfg.AcquireTimeout - now
	if left <= 0 {
		l.abandon(now)
		return
	}
	l.opDue = now + left
}

// abandon ends a failed acquire: its node, if it has one, is deleted first.
func (l *Mutex) abandon(now time.Duration) {
	if l.ourPath == "" {
		l.failAcquire(lock.ReasonNoQuorum, 1)
		return
	}
	l.begin(now, phAbandon)
}

func (l *Mutex) failAcquire(r lock.Reason, replies int) {
	l.ph, l.opDue = phIdle, 0
	l.event(lock.Event{Kind: lock.AttemptEnded, Reason: r, Replies: replies})
	l.event(lock.Event{Kind: lock.AcquireFailed, Reason: r, Replies: replies})
}

func (l *Mutex) acquired() {
	l.ph, l.lost = phHeld, false
	l.event(lock.Event{Kind: lock.AttemptEnded, Votes: 1, Replies: 1})
	ev := lock.Event{Kind: lock.Acquired, Votes: 1, Replies: 1, Deadline: l.start + forever, Validity: forever}
	switch l.cfg.Token {
	case Czxid:
		ev.Token, ev.Fenced = l.czxid, true
	case Sequence:
		ev.Token, ev.Fenced = sequenceOf(l.ourPath)+1, true
	}
	l.event(ev)
}

// sequenceOf returns the sequence number a sequential node's name ends with (ten
// digits), or -1 when it has none. The token is one more: the first node's sequence is 0,
// and a token of 0 is none to the client process.
func sequenceOf(path string) int64 {
	if len(path) < 10 {
		return -1
	}
	n, err := strconv.ParseInt(path[len(path)-10:], 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// pushed takes a watch event or a change of the session's state.
func (l *Mutex) pushed(now time.Duration, m *zk.Msg) {
	if m.Op != zk.OpWatch {
		return
	}
	if m.Event != zk.EventNone {
		if l.ph == phWaiting && m.Str == l.watchPath {
			l.begin(now, phChildren)
		}
		return
	}
	switch m.State {
	case zk.StateSyncConnected: // CONNECTED, or RECONNECTED
		l.session, l.conn, l.lostDue = m.Int, csConnected, 0
		if l.createSession == 0 && l.ph != phIdle && l.ph != phHeld {
			l.createSession = m.Int
		}
		if l.req != 0 {
			l.opDue = 0 // the request waiting for the connection goes out now
		}
		l.sendBackground()
	case zk.StateDisconnected: // SUSPENDED
		if l.conn != csConnected {
			break
		}
		l.conn, l.suspendedAt, l.lostDue = csSuspended, now, now+l.cfg.SessionTimeout
		if l.cfg.OnSuspended == Stop {
			l.loseHeld()
		}
	case zk.StateExpired: // LOST
		l.conn, l.session, l.lostDue = csLost, 0, 0
		l.bgReq = 0 // its request failed with the session
		l.loseHeld()
	default:
		return
	}
	if l.ph == phWaiting { // the lock's watcher wakes its waiter on any event
		l.begin(now, phChildren)
	}
}

// loseHeld reports the held lock lost, once: the application stops relying on it.
func (l *Mutex) loseHeld() {
	if l.ph == phHeld && !l.lost {
		l.lost = true
		l.event(lock.Event{Kind: lock.Lost})
	}
}

// background leaves the guaranteed delete of path to the background.
func (l *Mutex) background(_ time.Duration, path string) {
	if path != "" && !slices.Contains(l.bgPaths, path) {
		l.bgPaths = append(l.bgPaths, path)
	}
	l.sendBackground()
}

// sendBackground sends the next background delete when connected and none is in flight.
func (l *Mutex) sendBackground() {
	if l.bgReq != 0 || len(l.bgPaths) == 0 || l.conn != csConnected {
		return
	}
	l.lastID++
	l.bgReq = l.lastID
	l.out = append(l.out, lock.Output{Kind: lock.OutSend, Node: 0, Req: l.bgReq,
		Request: zk.Delete(l.bgPaths[0], zk.AnyVersion)})
}

// bgDone takes a background delete's answer: done when the node is gone, tried again at
// the next connection otherwise.
func (l *Mutex) bgDone(_ time.Duration, m *zk.Msg) {
	l.bgReq = 0
	if m.Code == zk.OK || m.Code == zk.NoNode || !retryable(m.Code) {
		l.bgPaths = l.bgPaths[1:]
		l.sendBackground()
	}
}

// arm sets the caller's one timer for the earlier of the operation's and LOST's.
func (l *Mutex) arm(now time.Duration) {
	due := l.opDue
	if l.lostDue != 0 && (due == 0 || l.lostDue < due) {
		due = l.lostDue
	}
	if due == l.armed {
		return
	}
	if due == 0 {
		l.out = append(l.out, lock.Output{Kind: lock.OutCancelTimer, Timer: l.timer})
		l.armed = 0
		return
	}
	l.timer++
	l.armed = due
	l.out = append(l.out, lock.Output{Kind: lock.OutSetTimer, Timer: l.timer, After: max(due-now, 0)})
}

func (l *Mutex) event(e lock.Event) {
	e.Resource, e.Value, e.Attempt, e.Start = l.resource, l.id, l.attempt, l.start
	e.Needed, e.Servers = 1, 1
	l.out = append(l.out, lock.Output{Kind: lock.OutEvent, Event: e})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// newUUID returns a random version-4 UUID in its text form, as java.util.UUID.randomUUID,
// from the client's stream.
func newUUID(rng *rand.Rand) string {
	var raw [16]byte
	binary.LittleEndian.PutUint64(raw[:8], rng.Uint64())
	binary.LittleEndian.PutUint64(raw[8:], rng.Uint64())
	u, _ := uuid.NewRandomFromReader(bytes.NewReader(raw[:])) // cannot fail: the 16 bytes are there
	return u.String()
}
