package lock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// echoProtocol is a protocol of the test's own: a request reads as its Str and Int, so a
// Format that uses it can be told from String, which knows no protocol.
type echoProtocol struct{}

func (echoProtocol) Name() string { return "echo" }
func (echoProtocol) AppendRequest(dst []byte, p *lock.Payload) []byte {
	return append(append(append(dst, "ECHO "...), p.Str...), '!')
}
func (echoProtocol) AppendReply(dst []byte, p *lock.Payload) []byte { return append(dst, "reply"...) }
func (echoProtocol) AppendPush(dst []byte, p *lock.Payload) []byte  { return append(dst, "push"...) }

// TestOutputStringAndFormat: every output kind has its one-line shape; only a send differs
// between Format, which renders its request in the protocol's words, and String, which
// shows the payload's raw words.
func TestOutputStringAndFormat(t *testing.T) {
	send := lock.Output{Kind: lock.OutSend, Node: 2, Req: 3,
		Request: lock.Payload{Str: "lock", Str2: "v", Int: 10, Word: 7}}
	assert.Equal(t, `send node=2 req=3: word=7 int=10 str="lock" str2="v"`, send.String())
	assert.Equal(t, "send node=2 req=3: ECHO lock!", send.Format(echoProtocol{}))

	for _, tc := range []struct {
		out  lock.Output
		want string
	}{
		{lock.Output{Kind: lock.OutSetTimer, Timer: 4, After: 1500 * time.Millisecond}, "set-timer id=4 after=1.5s"},
		{lock.Output{Kind: lock.OutCancelTimer, Timer: 4}, "cancel-timer id=4"},
		{lock.Output{Kind: lock.OutAbandon, Node: 1, Req: 9}, "abandon node=1 req=9"},
		{lock.Output{Kind: lock.OutEvent, Event: lock.Event{Kind: lock.Released, Resource: "r", Value: "v", Votes: 3, Replies: 3}},
			"released resource=r value=v attempt=0 oks=3 replies=3 start=0s"},
		{lock.Output{Kind: 99}, "output(99)"},
	} {
		assert.Equal(t, tc.want, tc.out.String())
		assert.Equal(t, tc.want, tc.out.Format(echoProtocol{}), "only a send reads the protocol")
	}
}

// TestEventString: each kind's line carries the fields that kind has: an attempt's start
// only its number and start, an attempt's end its votes and always a reason, an acquire
// its deadline, validity and, when fenced, its token.
func TestEventString(t *testing.T) {
	for _, tc := range []struct {
		ev   lock.Event
		want string
	}{
		{lock.Event{Kind: lock.AttemptStarted, Resource: "r", Value: "v", Attempt: 2, Votes: 1, Start: 5 * time.Millisecond},
			"attempt-started resource=r attempt=2 start=5ms"},
		{lock.Event{Kind: lock.ExtendStarted, Resource: "r", Attempt: 1, Start: time.Second},
			"extend-started resource=r attempt=1 start=1s"},
		{lock.Event{Kind: lock.AttemptEnded, Resource: "r", Value: "v", Attempt: 1, Votes: 3, Replies: 5, Start: time.Millisecond},
			"attempt-ended resource=r attempt=1 oks=3 replies=5 reason=none start=1ms"},
		{lock.Event{Kind: lock.AttemptEnded, Resource: "r", Attempt: 2, Votes: 1, Replies: 2, Reason: lock.ReasonNoQuorum},
			"attempt-ended resource=r attempt=2 oks=1 replies=2 reason=no-quorum start=0s"},
		{lock.Event{Kind: lock.Acquired, Resource: "r", Value: "v", Attempt: 1, Votes: 3, Replies: 3,
			Start: time.Millisecond, Deadline: 10 * time.Second, Validity: 9 * time.Second, Token: 42, Fenced: true},
			"acquired resource=r value=v attempt=1 oks=3 replies=3 start=1ms deadline=10s validity=9s token=42"},
		{lock.Event{Kind: lock.Acquired, Resource: "r", Value: "v", Attempt: 1, Votes: 3, Replies: 3,
			Deadline: 10 * time.Second, Validity: 9 * time.Second, Token: 42},
			"acquired resource=r value=v attempt=1 oks=3 replies=3 start=0s deadline=10s validity=9s"},
		{lock.Event{Kind: lock.Extended, Resource: "r", Value: "v", Attempt: 2, Votes: 2, Replies: 3, Deadline: 20 * time.Second, Validity: 8 * time.Second},
			"extended resource=r value=v attempt=2 oks=2 replies=3 start=0s deadline=20s validity=8s"},
		{lock.Event{Kind: lock.AcquireFailed, Resource: "r", Value: "v", Attempt: 3, Reason: lock.ReasonValidityExpired, Deadline: time.Second},
			"acquire-failed resource=r value=v attempt=3 oks=0 replies=0 reason=validity-expired start=0s"},
		{lock.Event{Kind: lock.Lost, Resource: "r", Value: "v"},
			"lost resource=r value=v attempt=0 oks=0 replies=0 start=0s"},
	} {
		assert.Equal(t, tc.want, tc.ev.String())
	}
}

// TestEventKinds: EventKinds lists every kind once, in declaration order, each with a name
// of its own, and a value past the table is named as unknown rather than as a neighbour.
func TestEventKinds(t *testing.T) {
	assert.Equal(t, []lock.EventKind{lock.AttemptEnded, lock.Acquired, lock.AcquireFailed, lock.Extended,
		lock.ExtendFailed, lock.Released, lock.AttemptStarted, lock.Lost, lock.ExtendStarted}, lock.EventKinds())
	var names []string
	for _, k := range lock.EventKinds() {
		names = append(names, k.String())
	}
	assert.Equal(t, []string{"attempt-ended", "acquired", "acquire-failed", "extended", "extend-failed",
		"released", "attempt-started", "lost", "extend-started"}, names)
	assert.Equal(t, "event(0)", lock.EventKind(0).String())
	assert.Equal(t, "event(10)", lock.EventKind(10).String())
}

// TestReasonString: every reason has its name, and one outside the table is named as
// unknown with its number.
func TestReasonString(t *testing.T) {
	for r, want := range map[lock.Reason]string{
		lock.ReasonNone: "none", lock.ReasonNoQuorum: "no-quorum", lock.ReasonValidityExpired: "validity-expired",
		lock.ReasonFenceFailed: "fence-failed", lock.ReasonExtensionLimit: "extension-limit",
		lock.ReasonAborted: "aborted", lock.ReasonServerError: "server-error", lock.ReasonEscalated: "escalated",
		lock.ReasonEscalated + 1: "reason(8)",
		200:                      "reason(200)",
	} {
		assert.Equal(t, want, r.String())
	}
}

// TestEventUnanswered: a round lost to timeouts is one the silent servers could have won
// (votes plus the unanswered reach the quorum); one lost to refusals is not.
func TestEventUnanswered(t *testing.T) {
	for _, tc := range []struct {
		votes, replies, servers, needed int
		want                            bool
	}{
		{votes: 1, replies: 1, servers: 5, needed: 3, want: true},  // 4 silent: could have won
		{votes: 1, replies: 4, servers: 5, needed: 3, want: false}, // 3 refused, 1 silent: 2 < 3
		{votes: 2, replies: 4, servers: 5, needed: 3, want: true},  // exactly enough with the silent one
		{votes: 0, replies: 5, servers: 5, needed: 3, want: false}, // everyone answered no
	} {
		e := lock.Event{Votes: tc.votes, Replies: tc.replies, Servers: tc.servers, Needed: tc.needed}
		assert.Equal(t, tc.want, e.Unanswered(), "%+v", tc)
	}
}

// TestPayloadString: a payload shows its four words, its strings quoted so that empty or
// odd ones stay visible.
func TestPayloadString(t *testing.T) {
	assert.Equal(t, `word=0 int=0 str="" str2=""`, lock.Payload{}.String())
	assert.Equal(t, `word=18446744073709551615 int=-5 str="a b" str2="\r\n"`,
		lock.Payload{Word: ^uint64(0), Int: -5, Str: "a b", Str2: "\r\n"}.String())
}
