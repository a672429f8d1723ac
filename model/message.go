package model

import (
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// MsgKind says what a Message carries.
type MsgKind uint8

// The message kinds.
const (
	// MsgCommand is a Redis command (Cmd) from a client to a Redis endpoint (a Group).
	MsgCommand MsgKind = iota + 1
	// MsgReply answers request ReqID with Reply: from a Redis endpoint, or from the storage.
	MsgReply
	// MsgWrite is a write to the fenced storage: Cmd.Key names the resource, Cmd.Value is
	// the data, and Token is the fencing token when Fenced.
	MsgWrite
	// MsgPush is a message a Redis endpoint pushes to a subscriber: published on channel
	// Cmd.Key with payload Cmd.Value. It answers no request (ReqID 0).
	MsgPush
	// MsgProbe is a TCP segment the client's kernel sends again because its host never
	// acknowledged it (a retransmission of data the client wrote on the connection bound
	// to boot Conn), or the first segment of a new connection (Conn 0, a SYN). It carries no
	// command: it only tells the client whether the server's host is there and still knows
	// the connection. The host answers MsgAck, a reset (MsgReply with resp.NoReply), or,
	// without power, nothing.
	MsgProbe
	// MsgAck is a host's acknowledgement of a MsgProbe ReqID: it is up and knows the
	// connection, or accepts the new one; Conn is its boot.
	MsgAck
)

func (k MsgKind) String() string {
	switch k {
	case MsgCommand:
		return "command"
	case MsgReply:
		return "reply"
	case MsgWrite:
		return "write"
	case MsgPush:
		return "push"
	case MsgProbe:
		return "probe"
	case MsgAck:
		return "ack"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Message is what travels on the simulated network between clients, Redis endpoints and
// the fenced storage. It is a plain value (no pointers of its own besides strings), so the
// network carries it unboxed and a request/reply round trip allocates nothing.
type Message struct {
	ReqID  uint64 // chosen by the requester, echoed in the reply
	Token  int64  // MsgWrite: the fencing token, when Fenced
	Cmd    resp.Command
	Reply  resp.Reply
	Kind   MsgKind
	Fenced bool // MsgWrite: the write carries a fencing token
	// Conn ties a message to a TCP connection's server host, for the clients that model
	// one (ConnOffline): on a request or a probe, the boot of the host the connection was
	// opened to, so that a host rebooted since (after a power loss) answers with a reset
	// (0: not checked); on a node's reply or ack, the boot of the host that answered.
	Conn uint32
}

// Probe returns the TCP probe id of a connection bound to host boot conn (0: a new
// connection's SYN); see MsgProbe.
func Probe(id uint64, conn uint32) Message {
	return Message{Kind: MsgProbe, ReqID: id, Conn: conn}
}

// Request returns the message that sends command c as request id.
func Request(id uint64, c resp.Command) Message {
	return Message{Kind: MsgCommand, ReqID: id, Cmd: c}
}

// StorageWrite returns the message that writes data to resource on the fenced storage,
// with fencing token token when fenced (the unsafe baseline sends fenced=false).
func StorageWrite(id uint64, resource, data string, token int64, fenced bool) Message {
	return Message{Kind: MsgWrite, ReqID: id, Token: token, Fenced: fenced,
		Cmd: resp.Command{Key: resource, Value: data}}
}

// String renders the message as the trace shows it.
func (m *Message) String() string {
	return string(appendMessage(nil, m))
}

// Describe returns the message as one trace field, the one network records carry (see
// MessageParts), for records a node or the storage writes about a message it refused.
func Describe(m *Message) sim.Field {
	i, i2, s1, s2 := MessageParts(m)
	return sim.Field{Key: "msg", Kind: sim.FieldCustom, Format: FormatMessage, Int: i, Int2: i2, Str: s1, Str2: s2}
}

// MessageParts packs a message into the four words of its trace field, without formatting
// anything, so a run without a trace sink pays only for folding a few words into the trace
// hash; FormatMessage renders them when a sink asks. It is the network's message writer
// (network.Net.SetMessage).
func MessageParts(m *Message) (i, i2 int64, s1, s2 string) {
	switch m.Kind {
	case MsgReply:
		return packMsg(m.Kind, uint64(m.Reply.Kind), m.ReqID), m.Reply.Int, m.Reply.Str, ""
	case MsgWrite:
		return packMsg(m.Kind, b2u(m.Fenced), m.ReqID), m.Token, m.Cmd.Key, m.Cmd.Value
	case MsgProbe, MsgAck:
		return packMsg(m.Kind, uint64(m.Conn), m.ReqID), 0, "", ""
	}
	return packMsg(m.Kind, packCmd(&m.Cmd), m.ReqID), int64(m.Cmd.TTL), m.Cmd.Key, m.Cmd.Value
}

// A described message's Int holds the kind (4 bits), 28 bits of detail (the command's
// op, condition, unit and script; the reply's kind; the write's fenced flag; a probe's or
// ack's boot) and the low
// 32 bits of the request id (ids only need to be told apart within a trace window).
func packMsg(k MsgKind, detail uint64, id uint64) int64 {
	return int64(uint64(k)<<60 | (detail&(1<<28-1))<<32 | id&(1<<32-1))
}

// DescribedKind returns the kind of the message a Describe field (a network record's msg)
// carries, so a reader tells a TCP probe from a command without parsing the text.
func DescribedKind(f *sim.Field) MsgKind {
	k, _, _ := unpackMsg(f.Int)
	return k
}

func unpackMsg(v int64) (k MsgKind, detail uint64, id uint64) {
	u := uint64(v)
	return MsgKind(u >> 60), u >> 32 & (1<<28 - 1), u & (1<<32 - 1)
}

func packCmd(c *resp.Command) uint64 {
	return uint64(c.Op) | uint64(c.Cond)<<8 | b2u(c.InSecs)<<16 | uint64(c.Script)<<17
}

func unpackCmd(v uint64, ttl int64, key, value string) resp.Command {
	return resp.Command{Op: resp.Op(v & 0xff), Cond: resp.Cond(v >> 8 & 0xff), InSecs: v>>16&1 == 1,
		Script: resp.Script(v >> 17 & 0xff), TTL: time.Duration(ttl), Key: key, Value: value}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// FormatMessage renders a message's trace field: "req=3 SET lock v NX PX 10000",
// "req=3 OK", "req=9 write file1 data token=34", "req=5 probe boot=1", "req=5 ack boot=2".
func FormatMessage(f *sim.Field, dst []byte) []byte {
	k, detail, id := unpackMsg(f.Int)
	m := Message{Kind: k, ReqID: id}
	switch k {
	case MsgReply:
		m.Reply = resp.Reply{Kind: resp.ReplyKind(detail), Int: f.Int2, Str: f.Str}
	case MsgWrite:
		m.Fenced, m.Token, m.Cmd = detail == 1, f.Int2, resp.Command{Key: f.Str, Value: f.Str2}
	case MsgProbe, MsgAck:
		m.Conn = uint32(detail)
	default:
		m.Cmd = unpackCmd(detail, f.Int2, f.Str, f.Str2)
	}
	return appendMessage(dst, &m)
}

func appendMessage(dst []byte, m *Message) []byte {
	dst = append(dst, "req="...)
	dst = strconv.AppendUint(dst, m.ReqID, 10)
	dst = append(dst, ' ')
	switch m.Kind {
	case MsgReply:
		return append(dst, m.Reply.String()...)
	case MsgWrite:
		dst = append(dst, "write "...)
		dst = append(dst, m.Cmd.Key...)
		dst = append(dst, ' ')
		dst = append(dst, strconv.Quote(m.Cmd.Value)...)
		if !m.Fenced {
			return append(dst, " unfenced"...)
		}
		dst = append(dst, " token="...)
		return strconv.AppendInt(dst, m.Token, 10)
	case MsgCommand:
		return append(dst, m.Cmd.String()...)
	case MsgProbe:
		if m.Conn == 0 {
			return append(dst, "syn"...)
		}
		dst = append(dst, "probe boot="...)
		return strconv.AppendUint(dst, uint64(m.Conn), 10)
	case MsgAck:
		dst = append(dst, "ack boot="...)
		return strconv.AppendUint(dst, uint64(m.Conn), 10)
	case MsgPush:
		dst = append(dst, "message "...)
		dst = append(dst, quoteField(m.Cmd.Key)...)
		dst = append(dst, ' ')
		return append(dst, quoteField(m.Cmd.Value)...)
	}
	return append(dst, m.Kind.String()...)
}

// quoteField quotes s only when a reader could not tell where it ends.
func quoteField(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\") {
		return s
	}
	return strconv.Quote(s)
}

// cmdField is the trace field of a command a node dropped, packed like Describe's so that
// nothing is formatted without a sink (an executed command's record is emitExec's).
func cmdField(c *resp.Command) sim.Field {
	return sim.Field{Key: "cmd", Kind: sim.FieldCustom, Int: int64(packCmd(c)), Int2: int64(c.TTL),
		Str: c.Key, Str2: c.Value, Format: formatCmd}
}

// execInt is the Int of an exec record's command field: the packed command and, when
// the reply is one of the common ones (OK, nil, a 32-bit integer), the reply, with
// compact true.
func execInt(c *resp.Command, r resp.Reply) (int64, bool) {
	v := int64(packCmd(c))
	switch {
	case r.Kind == resp.ReplyNil, r.Kind == resp.ReplyStatus && r.Str == "OK",
		r.Kind == resp.ReplyInt && r.Int == int64(int32(r.Int)):
		return v | int64(1<<compactBit|uint64(r.Kind)<<replyKindShift|uint64(uint32(r.Int))<<32), true
	}
	return v, false
}

// Bits of a command field's Int above packCmd's 25: the compact flag, the reply kind, and
// (from bit 32) the reply's integer.
const (
	compactBit     = 25
	replyKindShift = 26
)

func formatCmd(f *sim.Field, dst []byte) []byte {
	v := uint64(f.Int)
	c := unpackCmd(v&(1<<compactBit-1), f.Int2, f.Str, f.Str2)
	dst = append(dst, c.String()...)
	if v>>compactBit&1 == 0 {
		return dst
	}
	r := compactReply(v)
	dst = append(dst, " reply="...)
	return append(dst, r.String()...)
}

func formatReply(f *sim.Field, dst []byte) []byte {
	r := resp.Reply{Kind: resp.ReplyKind(f.Int), Int: f.Int2, Str: f.Str}
	return append(dst, r.String()...)
}

// traceName is an actor's name and its most frequent record kind, with their trace
// digests worked out once (see sim.Hasher.Begin).
type traceName struct {
	actor, kind sim.Name
}

func newTraceName(actor, kind string) traceName {
	return traceName{sim.NewName(actor), sim.NewName(kind)}
}
