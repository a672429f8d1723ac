// Package lock is the lock-client protocol: the one small interface through which a client
// process (the simulator's model.Client, or redlock/redisdriver against real Redis) drives any
// lock algorithm of any lock service, and the algorithm-neutral events the algorithm reports.
// It sits under redlock/ because the lock families live there (Redlock, Redisson, and next a
// ZooKeeper recipe), not because it knows Redis: an algorithm's requests and replies are
// Payloads in its service's own protocol, which this package never reads (RESP's are in
// redlock/resp), and the import-graph test forbids it to import any protocol.
//
// An algorithm is a deterministic state machine, the etcd-io/raft way: inputs are method
// calls carrying the caller's local monotonic reading (start an acquire, extend or release;
// a reply from server i to request r; a timer that fired), and each returns its outputs:
// requests to send to server i, timers to set in local time, and Events. Time, the
// network and randomness beyond the *rand.Rand a Factory is given belong to the caller.
//
// The Events are what an observer needs to judge any lock, whatever its algorithm: an
// attempt started, an attempt ended (with the votes it got and needed, and why it failed),
// the lock acquired (valid until a deadline on the caller's clock, with a fencing token if
// any), extended, released, lost. The simulator's oracle reads only these, never an
// algorithm's own types, so a new algorithm (node-redlock's acquire loop, Redisson's
// watchdog lock, a ZooKeeper recipe) needs no change to the client process or the oracle;
// experiments/lease_test.go runs one of a service that speaks no Redis.
package lock

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Errors for inputs that make no sense in an algorithm's state. They are the driver's
// mistakes, not the network's, so the algorithm refuses the input and changes nothing.
var (
	// ErrBusy: an operation is already in progress (Acquire while acquiring, Extend while
	// extending, Release while releasing, ...).
	ErrBusy = errors.New("lock: operation in progress")
	// ErrNotHeld: Extend or Release without a lock acquired or being acquired.
	ErrNotHeld = errors.New("lock: no lock held")
	// ErrTimeBackward: an input carried a monotonic reading earlier than the previous one.
	ErrTimeBackward = errors.New("lock: monotonic time went backward")
)

// Client is the client side of a lock algorithm, for one lock at a time, as a
// deterministic state machine. Every input carries now, the caller's local monotonic
// reading, which must never go backward, and returns what it produced, in order, for the
// caller to carry out: the slice may be reused, and is valid until the next input. An
// input that returns an error changed nothing and produced nothing. Servers are numbered
// 0..n-1 in the order the caller was configured with. The outputs come back from the input
// itself, not from a separate call, because the simulator's client calls through this
// interface for every reply and timer, and each call through it is an indirect one the
// compiler cannot inline: a second call per input cost 2 % of a whole run.
type Client interface {
	// Acquire starts acquiring resource.
	Acquire(now time.Duration, resource string) ([]Output, error)
	// Extend starts extending the held lock. ErrBusy while another operation (an earlier
	// extension) is under way: the caller may simply try again later.
	Extend(now time.Duration) ([]Output, error)
	// Release starts releasing the lock, aborting an acquire or extension in progress.
	Release(now time.Duration) ([]Output, error)
	// Reply feeds server's reply r to request req, in the service's protocol. Drivers
	// report a timeout or a connection error as the protocol says (RESP: resp.NoReply). A
	// reply the algorithm no longer awaits is ignored. Whatever the server pushes on no
	// request (a message on a subscribed channel, a watch or session event) comes as a
	// reply to PushReq.
	Reply(now time.Duration, server int, req Req, r Payload) ([]Output, error)
	// Timer reports that timer id fired. Stale timers are ignored.
	Timer(now time.Duration, id TimerID) ([]Output, error)
}

// Factory builds one algorithm instance for a client process. rng is the client's own
// stream for the algorithm (lock values, retry jitter): the simulator passes a seeded
// stream so runs replay, a real driver one seeded from crypto/rand.
type Factory func(rng *rand.Rand) (Client, error)

// Req identifies one request sent to one server. Its reply must come back with the same id;
// a reply whose id the algorithm no longer waits for (from an earlier attempt, or after a
// timeout) is ignored. Ids start at 1 and grow; 0 means none.
type Req uint64

// PushReq is the request id of what a server pushes on no request: a message on a channel
// the algorithm subscribed to (Redis pub/sub), a watch or session event. An algorithm that
// never asks for pushes ignores it like any reply it does not await.
const PushReq Req = 0

// TimerID identifies one timer the algorithm asked for. A fired timer the algorithm no
// longer waits for is stale and ignored. Ids start at 1; 0 means none.
type TimerID uint64

// OutputKind tags an Output.
type OutputKind uint8

// The output kinds.
const (
	// OutSend asks the caller to send Request to server Node, tagged with Req.
	OutSend OutputKind = iota + 1
	// OutSetTimer asks the caller to fire Timer after After on its local monotonic clock,
	// counted from the `now` of the input that produced it.
	OutSetTimer
	// OutCancelTimer says Timer will not be needed. It is a hint: firing it anyway is
	// harmless, because algorithms ignore stale timers.
	OutCancelTimer
	// OutEvent reports an Event: the result of an operation, or a step an observer needs.
	OutEvent
	// OutAbandon says the algorithm stopped waiting for the reply to Req from Node: it
	// timed out. A driver whose connection cannot outlive a timed-out read (go-redis
	// closes it) drops that connection; one whose connection outlives timeouts ignores it.
	OutAbandon
)

// Output is one thing an algorithm asks of its caller or tells it. It is a tagged struct,
// not an interface, so that the outbox is a reusable slice and emitting allocates nothing.
type Output struct {
	Kind    OutputKind
	Node    int     // OutSend, OutAbandon: the server, 0..n-1
	Req     Req     // OutSend, OutAbandon
	Request Payload // OutSend
	Timer   TimerID // OutSetTimer, OutCancelTimer
	// After is, for OutSetTimer, when the timer fires; for OutSend, the deadline of the
	// context the library hands its driver with the request, counted from its sending (0:
	// none). A driver that reads contexts (go-redis's) heeds it; the algorithm itself
	// waits by its own timers.
	After time.Duration
	Event Event // OutEvent
}

// Format renders the output for traces and golden files, with requests in protocol p's
// words, e.g. `send node=2 req=3: SET lock v NX PX 10000`.
func (o Output) Format(p Protocol) string {
	if o.Kind == OutSend {
		return "send node=" + strconv.Itoa(o.Node) + " req=" + strconv.FormatUint(uint64(o.Req), 10) +
			o.context() + ": " + string(p.AppendRequest(nil, &o.Request))
	}
	return o.String()
}

// context renders a request's context deadline, when it has one.
func (o Output) context() string {
	if o.After == 0 {
		return ""
	}
	return " ctx=" + o.After.String()
}

// String renders the output as Format does, with a request shown as its payload's words:
// an output does not know its protocol.
func (o Output) String() string {
	switch o.Kind {
	case OutSend:
		return "send node=" + strconv.Itoa(o.Node) + " req=" + strconv.FormatUint(uint64(o.Req), 10) +
			o.context() + ": " + o.Request.String()
	case OutSetTimer:
		return "set-timer id=" + strconv.FormatUint(uint64(o.Timer), 10) + " after=" + o.After.String()
	case OutCancelTimer:
		return "cancel-timer id=" + strconv.FormatUint(uint64(o.Timer), 10)
	case OutEvent:
		return o.Event.String()
	case OutAbandon:
		return "abandon node=" + strconv.Itoa(o.Node) + " req=" + strconv.FormatUint(uint64(o.Req), 10)
	default:
		return "output(" + strconv.Itoa(int(o.Kind)) + ")"
	}
}

// EventKind says what an Event reports.
type EventKind uint8

// The event kinds. The first six are the results of the caller's operations and of each
// acquire attempt; the last three (an attempt's start, a loss, an unasked extension) are
// the steps an observer needs between them.
const (
	// AttemptEnded closes every acquire attempt, won or lost, with its votes and reason.
	AttemptEnded EventKind = iota + 1
	// Acquired: the lock is held until Deadline on the caller's local monotonic clock.
	Acquired
	// AcquireFailed: every try failed, or the acquire was aborted by Release.
	AcquireFailed
	// Extended: the lock is now held until the new Deadline.
	Extended
	// ExtendFailed: the lock keeps its previous Deadline, which may already have passed.
	ExtendFailed
	// Released: the release round is over; Votes counts the servers that let go.
	Released
	// AttemptStarted opens every acquire attempt, so that an observer knows when attempts
	// overlap without converting clocks. Start is its start.
	AttemptStarted
	// Lost: the algorithm learned that it no longer holds the lock before its Deadline (a
	// watchdog renewal refused, a session expired). The caller should stop relying on it.
	// Redlock never reports it: it learns nothing between its rounds.
	Lost
	// ExtendStarted: the algorithm began an extension of its own, unasked (a watchdog
	// renewing the lock); its Extended or ExtendFailed follows. An extension the caller
	// asked for with Extend is not announced: the caller knows it began.
	ExtendStarted
)

var eventNames = [...]string{AttemptEnded: "attempt-ended", Acquired: "acquired",
	AcquireFailed: "acquire-failed", Extended: "extended", ExtendFailed: "extend-failed",
	Released: "released", AttemptStarted: "attempt-started", Lost: "lost", ExtendStarted: "extend-started"}

func (k EventKind) String() string {
	if uint(k) < uint(len(eventNames)) && eventNames[k] != "" {
		return eventNames[k]
	}
	return unknownEnum("event", int(k))
}

// EventKinds returns every event kind, in declaration order.
func EventKinds() []EventKind {
	ks := make([]EventKind, 0, len(eventNames)-1)
	for k := range eventNames[1:] {
		ks = append(ks, EventKind(k+1))
	}
	return ks
}

// Reason says why an attempt, an acquire or an extension failed.
type Reason uint8

// The reasons.
const (
	ReasonNone Reason = iota
	// ReasonNoQuorum: fewer servers said yes than the round needed (lost, refused or timed
	// out).
	ReasonNoQuorum
	// ReasonValidityExpired: enough servers said yes, but no validity was left after the
	// round's elapsed time and the clock-drift allowance.
	ReasonValidityExpired
	// ReasonFenceFailed: the votes were won but no fencing token could be taken.
	ReasonFenceFailed
	// ReasonExtensionLimit: Extend was called more often than the algorithm allows.
	ReasonExtensionLimit
	// ReasonAborted: Release was called while the operation was in progress.
	ReasonAborted
	// ReasonServerError: the votes were won with validity left, but a server answered
	// an error or never answered, and the library gives up on the lock without releasing
	// it (redlock-py raises MultipleRedlockException).
	ReasonServerError
	// ReasonEscalated is no failure but a note on an Acquired event: the lock was taken
	// through a fallback after the first service gave the acquire up (the hybrid lock's
	// ZooKeeper after Redis), so that a trace says which path took it. No attempt ends
	// with it: an observer counts the winning attempt as won.
	ReasonEscalated
)

var reasonNames = [...]string{ReasonNone: "none", ReasonNoQuorum: "no-quorum",
	ReasonValidityExpired: "validity-expired", ReasonFenceFailed: "fence-failed",
	ReasonExtensionLimit: "extension-limit", ReasonAborted: "aborted",
	ReasonServerError: "server-error", ReasonEscalated: "escalated"}

// String returns the reason's name. Its fast path inlines: the client folds a reason into
// the trace hash with every lock event.
func (r Reason) String() string {
	if uint(r) < uint(len(reasonNames)) && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return unknownEnum("reason", int(r))
}

// Event is what an algorithm tells its caller and, through it, any observer: the result of
// an operation, or an attempt's start or end. Times are on the caller's local monotonic
// clock, as it passed them in.
type Event struct {
	Kind     EventKind
	Reason   Reason // ReasonNone on success
	Resource string
	Value    string // the lock's owner value for this acquire, if the algorithm has one
	// Attempt is the attempt number (AttemptStarted, AttemptEnded), the attempts used
	// (Acquired, AcquireFailed) or the extension number (Extended, ExtendFailed).
	Attempt int
	Votes   int // servers that said yes in the deciding round (lock taken, extended, deleted)
	Needed  int // yes votes the round needed to succeed
	Replies int // servers that answered at all in that round
	Servers int // servers the round asked; Servers − Replies were lost, late or down
	// Start is when the attempt, extension or release began; elapsed time counts from it.
	Start time.Duration
	// Deadline is when validity ends (Acquired, Extended).
	Deadline time.Duration
	// Validity is Deadline − now at the decision. Positive unless a variant skips the check.
	Validity time.Duration
	Token    int64 // fencing token, when Fenced
	Fenced   bool
}

// Unanswered reports whether the servers that did not answer could have given the round
// the votes it lacked: a loss to timeouts rather than to refusals.
func (e *Event) Unanswered() bool { return e.Votes+(e.Servers-e.Replies) >= e.Needed }

// String renders the event on one line for traces and golden files.
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	field := func(k, v string) { b.WriteString(" " + k + "=" + v) }
	field("resource", e.Resource)
	if e.Kind == AttemptStarted || e.Kind == ExtendStarted {
		field("attempt", strconv.Itoa(e.Attempt))
		field("start", e.Start.String())
		return b.String()
	}
	if e.Kind != AttemptEnded {
		field("value", e.Value)
	}
	field("attempt", strconv.Itoa(e.Attempt))
	field("oks", strconv.Itoa(e.Votes))
	field("replies", strconv.Itoa(e.Replies))
	if e.Reason != ReasonNone || e.Kind == AttemptEnded {
		field("reason", e.Reason.String())
	}
	field("start", e.Start.String())
	if e.Kind == Acquired || e.Kind == Extended {
		field("deadline", e.Deadline.String())
		field("validity", e.Validity.String())
	}
	if e.Fenced {
		field("token", strconv.FormatInt(e.Token, 10))
	}
	return b.String()
}

// unknownEnum names a value outside its enum's table: what(i). It is kept out of line
// so that the String methods calling it stay within the inliner's budget.
//
//go:noinline
func unknownEnum(what string, i int) string { return what + "(" + strconv.Itoa(i) + ")" }
