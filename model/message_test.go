package model

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// testProtocol renders the process tests' protocol (see process_test.go) in its own words.
type testProtocol struct{}

func (testProtocol) Name() string { return "test" }

func (testProtocol) AppendRequest(dst []byte, p *lock.Payload) []byte {
	return append(dst, "GRANT "+p.Str+" to "+p.Str2...)
}

func (testProtocol) AppendReply(dst []byte, p *lock.Payload) []byte {
	return strconv.AppendInt(append(dst, "GRANTED "...), p.Int, 10)
}

func (testProtocol) AppendPush(dst []byte, p *lock.Payload) []byte {
	return append(dst, "PUSH "+p.Str...)
}

// render renders m as a network record's msg field does: packed by MessageParts (through
// Describe), unpacked and rendered by MessageFormat(p).
func render(m Message, p lock.Protocol) string {
	f := Describe(&m, p)
	return string(f.Format(&f, nil))
}

// TestMessageRendering: each kind of message as the trace shows it, with a payload in the
// protocol's words, or in the payload's own words without a protocol; Format and the
// packed field render alike.
func TestMessageRendering(t *testing.T) {
	body := lock.Payload{Word: 1, Int: 42, Str: "lock", Str2: "alice"}
	for _, tc := range []struct {
		m         Message
		nil, test string
	}{
		{Request(3, body), `req=3 word=1 int=42 str="lock" str2="alice"`, "req=3 GRANT lock to alice"},
		{Reply(3, body), `req=3 word=1 int=42 str="lock" str2="alice"`, "req=3 GRANTED 42"},
		{Message{Kind: MsgPush, Body: body}, `req=0 word=1 int=42 str="lock" str2="alice"`, "req=0 PUSH lock"},
		{Message{Kind: MsgWritten, ReqID: 9, Body: lock.Payload{Word: 1}}, "req=9 OK", "req=9 OK"},
		{Message{Kind: MsgWritten, ReqID: 9, Body: lock.Payload{Str: "ERR stale fencing token 3 (highest seen 5)"}},
			"req=9 (error) ERR stale fencing token 3 (highest seen 5)", "req=9 (error) ERR stale fencing token 3 (highest seen 5)"},
		{StorageWrite(9, "file1", "data", 34, true), `req=9 write file1 "data" token=34`, `req=9 write file1 "data" token=34`},
		{StorageWrite(9, "file1", "data", 34, false), `req=9 write file1 "data" unfenced`, `req=9 write file1 "data" unfenced`},
		{Probe(5, 0), "req=5 syn", "req=5 syn"},
		{Probe(5, 1), "req=5 probe boot=1", "req=5 probe boot=1"},
		{Message{Kind: MsgAck, ReqID: 5, Conn: 2}, "req=5 ack boot=2", "req=5 ack boot=2"},
		{Message{Kind: 9, ReqID: 1}, "req=1 kind(9)", "req=1 kind(9)"},
	} {
		assert.Equal(t, tc.nil, render(tc.m, nil))
		assert.Equal(t, tc.test, render(tc.m, testProtocol{}))
		assert.Equal(t, tc.nil, tc.m.Format(nil))
		assert.Equal(t, tc.test, tc.m.Format(testProtocol{}))
	}
}

// TestDescribedMessageRoundTrip: a message packed into a trace field comes back whole,
// but for its request id, cut to its low 32 bits, and its body's Word, cut to 28 (a write's
// and a probe's own fields are kept).
func TestDescribedMessageRoundTrip(t *testing.T) {
	long := uint64(1)<<lifeShift | 1<<32 | 7 // a second life's request 7, past 32 bits
	for _, tc := range []struct{ in, out Message }{
		{Request(long, lock.Payload{Word: 1<<28 | 5, Int: -9, Str: "a", Str2: "b"}),
			Request(7, lock.Payload{Word: 5, Int: -9, Str: "a", Str2: "b"})},
		{Reply(7, lock.Payload{Word: 1<<28 - 1, Int: 1 << 40}), Reply(7, lock.Payload{Word: 1<<28 - 1, Int: 1 << 40})},
		{Message{Kind: MsgPush, Body: lock.Payload{Word: 3, Str: "chan"}}, Message{Kind: MsgPush, Body: lock.Payload{Word: 3, Str: "chan"}}},
		{StorageWrite(long, "r", "d", 1<<40, true), StorageWrite(7, "r", "d", 1<<40, true)},
		{StorageWrite(7, "r", "d", 0, false), StorageWrite(7, "r", "d", 0, false)},
		{Message{Kind: MsgWritten, ReqID: 7, Body: lock.Payload{Str: "why"}}, Message{Kind: MsgWritten, ReqID: 7, Body: lock.Payload{Str: "why"}}},
		{Probe(7, 3), Probe(7, 3)},
		{Message{Kind: MsgAck, ReqID: 7, Conn: 4}, Message{Kind: MsgAck, ReqID: 7, Conn: 4}},
	} {
		f := Describe(&tc.in, nil)
		assert.Equal(t, "msg", f.Key)
		assert.Equal(t, sim.FieldCustom, f.Kind)
		assert.Equal(t, tc.out, DescribedMessage(&f), tc.in.Kind.String())
		i, i2, s1, s2 := MessageParts(&tc.in)
		assert.Equal(t, [4]any{f.Int, f.Int2, f.Str, f.Str2}, [4]any{i, i2, s1, s2}, "Describe carries MessageParts' words")
	}
}

func TestMsgKindNames(t *testing.T) {
	assert.Equal(t, []string{"command", "reply", "write", "push", "probe", "ack", "written", "kind(0)", "kind(8)"},
		[]string{MsgCommand.String(), MsgReply.String(), MsgWrite.String(), MsgPush.String(), MsgProbe.String(),
			MsgAck.String(), MsgWritten.String(), MsgKind(0).String(), MsgKind(8).String()})
}
