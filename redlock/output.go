package redlock

import (
	"strconv"
	"strings"
	"time"
)

// Req identifies one command sent to one node. Its reply must come back with the same id;
// a reply whose id the machine no longer waits for (from an earlier attempt, or after a
// timeout) is ignored. Ids start at 1 and grow; 0 means none.
type Req uint64

// TimerID identifies one timer the machine asked for. Only the most recently set timer is
// live; a fired timer with any other id is stale and ignored. Ids start at 1; 0 means none.
type TimerID uint64

// OutputKind tags an Output.
type OutputKind uint8

// The output kinds.
const (
	// OutSend asks the caller to send Command to Node, tagged with Req.
	OutSend OutputKind = iota + 1
	// OutSetTimer asks the caller to fire Timer after After on its local monotonic clock,
	// counted from the `now` of the input that produced it.
	OutSetTimer
	// OutCancelTimer says Timer will not be needed. It is a hint: firing it anyway is
	// harmless, because the machine ignores stale timers.
	OutCancelTimer
	// OutOutcome reports an Outcome: the result of an operation or an observability event.
	OutOutcome
)

// Output is one thing the machine asks of its caller or tells it. It is a tagged struct,
// not an interface, so that the outbox is a reusable slice and emitting allocates nothing.
type Output struct {
	Kind    OutputKind
	Node    int           // OutSend
	Req     Req           // OutSend
	Command Command       // OutSend
	Timer   TimerID       // OutSetTimer, OutCancelTimer
	After   time.Duration // OutSetTimer
	Outcome Outcome       // OutOutcome
}

// String renders the output for traces and golden files, e.g.
// `send node=2 req=3: SET lock v NX PX 10000`.
func (o Output) String() string {
	switch o.Kind {
	case OutSend:
		return "send node=" + strconv.Itoa(o.Node) + " req=" + strconv.FormatUint(uint64(o.Req), 10) +
			": " + o.Command.String()
	case OutSetTimer:
		return "set-timer id=" + strconv.FormatUint(uint64(o.Timer), 10) + " after=" + o.After.String()
	case OutCancelTimer:
		return "cancel-timer id=" + strconv.FormatUint(uint64(o.Timer), 10)
	case OutOutcome:
		return o.Outcome.String()
	default:
		return "output(" + strconv.Itoa(int(o.Kind)) + ")"
	}
}

// OutcomeKind says what an Outcome reports.
type OutcomeKind uint8

// The outcome kinds.
const (
	// AttemptEnded closes every acquire attempt, won or lost, with its OK count and reason:
	// the oracle counts split-brain rounds (nobody reached a quorum) from it.
	AttemptEnded OutcomeKind = iota + 1
	// Acquired: the lock is held until Deadline on the caller's local monotonic clock.
	Acquired
	// AcquireFailed: every try failed, or the acquire was aborted by Release.
	AcquireFailed
	// Extended: the lock is now held until the new Deadline.
	Extended
	// ExtendFailed: the lock keeps its previous Deadline, which may already have passed.
	ExtendFailed
	// Released: compare-and-delete went to every node; OKs counts the keys deleted.
	Released
)

var outcomeNames = [...]string{AttemptEnded: "attempt-ended", Acquired: "acquired",
	AcquireFailed: "acquire-failed", Extended: "extended", ExtendFailed: "extend-failed",
	Released: "released"}

func (k OutcomeKind) String() string { return enumName(outcomeNames[:], int(k), "outcome") }

// Reason says why an attempt, an acquire or an extend failed.
type Reason uint8

// The reasons.
const (
	ReasonNone Reason = iota
	// ReasonNoQuorum: fewer than N/2+1 nodes said OK (lost, refused or timed out).
	ReasonNoQuorum
	// ReasonValidityExpired: a quorum said OK, but ttl − elapsed − drift was not positive.
	ReasonValidityExpired
	// ReasonFenceFailed: the quorum was won but the fencing INCR did not give a token.
	ReasonFenceFailed
	// ReasonExtensionLimit: Extend was called more than max_extensions times.
	ReasonExtensionLimit
	// ReasonAborted: Release was called while the operation was in progress.
	ReasonAborted
)

var reasonNames = [...]string{ReasonNone: "none", ReasonNoQuorum: "no-quorum",
	ReasonValidityExpired: "validity-expired", ReasonFenceFailed: "fence-failed",
	ReasonExtensionLimit: "extension-limit", ReasonAborted: "aborted"}

func (r Reason) String() string { return enumName(reasonNames[:], int(r), "reason") }

// Outcome is the result of an operation, or an attempt's end. Times are on the caller's
// local monotonic clock, as it passed them in.
type Outcome struct {
	Kind     OutcomeKind
	Reason   Reason // ReasonNone on success
	Resource string
	Value    string // the lock value of this acquire
	// Attempt is the attempt number (AttemptEnded), the attempts used (Acquired,
	// AcquireFailed) or the extension number (Extended, ExtendFailed).
	Attempt int
	OKs     int // nodes that said yes in the deciding round (SET OK, extended, deleted)
	Replies int // nodes that answered at all in that round; N − Replies were lost or late
	// Start is when the attempt, extension or release began; elapsed time counts from it.
	Start time.Duration
	// Deadline is when validity ends: Start + ttl − drift (Acquired, Extended).
	Deadline time.Duration
	// Validity is Deadline − now at the decision. Positive unless the variant skips the check.
	Validity time.Duration
	Token    int64 // fencing token, when Fenced
	Fenced   bool
}

// String renders the outcome on one line for traces.
func (o Outcome) String() string {
	var b strings.Builder
	b.WriteString(o.Kind.String())
	field := func(k, v string) { b.WriteString(" " + k + "=" + v) }
	field("resource", o.Resource)
	if o.Kind != AttemptEnded {
		field("value", o.Value)
	}
	field("attempt", strconv.Itoa(o.Attempt))
	field("oks", strconv.Itoa(o.OKs))
	field("replies", strconv.Itoa(o.Replies))
	if o.Reason != ReasonNone || o.Kind == AttemptEnded {
		field("reason", o.Reason.String())
	}
	field("start", o.Start.String())
	if o.Kind == Acquired || o.Kind == Extended {
		field("deadline", o.Deadline.String())
		field("validity", o.Validity.String())
	}
	if o.Fenced {
		field("token", strconv.FormatInt(o.Token, 10))
	}
	return b.String()
}
