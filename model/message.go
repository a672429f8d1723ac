package model

import (
	"strconv"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// MsgKind says what a Message carries.
type MsgKind uint8

// The message kinds.
const (
	// MsgCommand is a request (Body, in the lock service's protocol) from a client to a
	// server endpoint.
	MsgCommand MsgKind = iota + 1
	// MsgReply answers request ReqID with Body, in the lock service's protocol.
	MsgReply
	// MsgWrite is a write to the fenced storage: Body.Str names the resource, Body.Str2 is
	// the data, and Token is the fencing token when Fenced.
	MsgWrite
	// MsgPush is what a server pushes to a client on no request (ReqID 0), in the lock
	// service's protocol: a message published on a channel the client subscribed to, a
	// watch or session event.
	MsgPush
	// MsgProbe is a TCP segment the client's kernel sends again because its host never
	// acknowledged it (a retransmission of data the client wrote on the connection bound
	// to boot Conn), or the first segment of a new connection (Conn 0, a SYN). It carries no
	// request: it only tells the client whether the server's host is there and still knows
	// the connection. The host answers MsgAck, a reset (a MsgReply the protocol reads as a
	// connection error), or, without power, nothing.
	MsgProbe
	// MsgAck is a host's acknowledgement of a MsgProbe ReqID: it is up and knows the
	// connection, or accepts the new one; Conn is its boot.
	MsgAck
	// MsgWritten is the fenced storage's verdict on write ReqID, sent when it acknowledges
	// writes: Body.Word is 1 when it took the write, 0 when it refused it, with the reason
	// in Body.Str. It is a kind of its own, not a MsgReply, because the storage speaks no
	// lock service's protocol.
	MsgWritten
)

var msgKindNames = [...]string{MsgCommand: "command", MsgReply: "reply", MsgWrite: "write", MsgPush: "push",
	MsgProbe: "probe", MsgAck: "ack", MsgWritten: "written"}

func (k MsgKind) String() string {
	if int(k) < len(msgKindNames) && msgKindNames[k] != "" {
		return msgKindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Message is what travels on the simulated network between clients, servers and the
// fenced storage. It is a plain value (no pointers of its own besides strings), so the
// network carries it unboxed and a request/reply round trip allocates nothing. What a
// request, reply or push says is its Body, in the lock service's protocol, which nothing
// but the service's server and the client's algorithm and connection reads.
type Message struct {
	ReqID  uint64 // chosen by the requester, echoed in the reply
	Token  int64  // MsgWrite: the fencing token, when Fenced
	Body   lock.Payload
	Kind   MsgKind
	Fenced bool // MsgWrite: the write carries a fencing token
	// Conn ties a message to a TCP connection's server host, for the connections that
	// model one: on a request or a probe, the boot of the host the connection was opened
	// to, so that a host rebooted since (after a power loss) answers with a reset (0: not
	// checked); on a server's reply or ack, the boot of the host that answered.
	Conn uint32
}

// Probe returns the TCP probe id of a connection bound to host boot conn (0: a new
// connection's SYN); see MsgProbe.
func Probe(id uint64, conn uint32) Message {
	return Message{Kind: MsgProbe, ReqID: id, Conn: conn}
}

// Request returns the message that sends request body as request id.
func Request(id uint64, body lock.Payload) Message {
	return Message{Kind: MsgCommand, ReqID: id, Body: body}
}

// Reply returns the message that answers request id with body.
func Reply(id uint64, body lock.Payload) Message {
	return Message{Kind: MsgReply, ReqID: id, Body: body}
}

// StorageWrite returns the message that writes data to resource on the fenced storage,
// with fencing token token when fenced (the unsafe baseline sends fenced=false).
func StorageWrite(id uint64, resource, data string, token int64, fenced bool) Message {
	return Message{Kind: MsgWrite, ReqID: id, Token: token, Fenced: fenced,
		Body: lock.Payload{Str: resource, Str2: data}}
}

// Format renders the message as the trace shows it, with its body in protocol p's words
// (nil: as the payload's words).
func (m *Message) Format(p lock.Protocol) string {
	return string(AppendMessage(nil, p, m))
}

// Describe returns the message as one trace field, the one network records carry (see
// MessageParts), rendered in protocol p's words (nil: a payload as its words), for records
// a server or the storage writes about a message it refused.
func Describe(m *Message, p lock.Protocol) sim.Field {
	i, i2, s1, s2 := MessageParts(m)
	return sim.Field{Key: "msg", Kind: sim.FieldCustom, Format: MessageFormat(p), Int: i, Int2: i2, Str: s1, Str2: s2}
}

// MessageParts packs a message into the four words of its trace field, without formatting
// anything, so a run without a trace sink pays only for folding a few words into the trace
// hash; MessageFormat's function renders them when a sink asks. It is the network's
// message writer (network.Net.SetMessage). A body's Word keeps its low 28 bits.
func MessageParts(m *Message) (i, i2 int64, s1, s2 string) {
	switch m.Kind {
	case MsgWrite:
		return packMsg(m.Kind, b2u(m.Fenced), m.ReqID), m.Token, m.Body.Str, m.Body.Str2
	case MsgProbe, MsgAck:
		return packMsg(m.Kind, uint64(m.Conn), m.ReqID), 0, "", ""
	}
	return packMsg(m.Kind, m.Body.Word, m.ReqID), m.Body.Int, m.Body.Str, m.Body.Str2
}

// A described message's Int holds the kind (4 bits), 28 bits of detail (the body's Word;
// the write's fenced flag; a probe's or ack's boot) and the low 32 bits of the request id
// (ids only need to be told apart within a trace window).
func packMsg(k MsgKind, detail uint64, id uint64) int64 {
	return int64(uint64(k)<<60 | (detail&(1<<28-1))<<32 | id&(1<<32-1))
}

// DescribedMessage unpacks the message a Describe field carries (its request id cut to 32
// bits, its body's Word to 28).
func DescribedMessage(f *sim.Field) Message {
	k, detail, id := unpackMsg(f.Int)
	m := Message{Kind: k, ReqID: id}
	switch k {
	case MsgWrite:
		m.Fenced, m.Token, m.Body = detail == 1, f.Int2, lock.Payload{Str: f.Str, Str2: f.Str2}
	case MsgProbe, MsgAck:
		m.Conn = uint32(detail)
	default:
		m.Body = lock.Payload{Word: detail, Int: f.Int2, Str: f.Str, Str2: f.Str2}
	}
	return m
}

func unpackMsg(v int64) (k MsgKind, detail uint64, id uint64) {
	u := uint64(v)
	return MsgKind(u >> 60), u >> 32 & (1<<28 - 1), u & (1<<32 - 1)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// MessageFormat returns the function that renders a message's trace field with its body
// in protocol p's words (nil: as the payload's words): "req=3 SET lock v NX PX 10000",
// "req=3 OK", "req=9 write file1 data token=34", "req=5 probe boot=1", "req=5 ack boot=2".
// It is the network's message renderer (network.Net.SetMessage), called only when a sink
// asks for text.
func MessageFormat(p lock.Protocol) func(f *sim.Field, dst []byte) []byte {
	return func(f *sim.Field, dst []byte) []byte {
		m := DescribedMessage(f)
		return AppendMessage(dst, p, &m)
	}
}

// AppendMessage appends m as the trace shows it, with its body in protocol p's words (nil:
// as the payload's words), and returns the extended slice.
func AppendMessage(dst []byte, p lock.Protocol, m *Message) []byte {
	dst = append(dst, "req="...)
	dst = strconv.AppendUint(dst, m.ReqID, 10)
	dst = append(dst, ' ')
	if sp, ok := p.(SplitProtocol); ok {
		p = sp.Of(m.ReqID)
	}
	switch m.Kind {
	case MsgReply, MsgCommand, MsgPush:
		if p == nil {
			return append(dst, m.Body.String()...)
		}
	}
	switch m.Kind {
	case MsgReply:
		return p.AppendReply(dst, &m.Body)
	case MsgWrite:
		dst = append(dst, "write "...)
		dst = append(dst, m.Body.Str...)
		dst = append(dst, ' ')
		dst = append(dst, strconv.Quote(m.Body.Str2)...)
		if !m.Fenced {
			return append(dst, " unfenced"...)
		}
		dst = append(dst, " token="...)
		return strconv.AppendInt(dst, m.Token, 10)
	case MsgWritten:
		if m.Body.Word == 1 {
			return append(dst, "OK"...)
		}
		return append(append(dst, "(error) "...), m.Body.Str...)
	case MsgCommand:
		return p.AppendRequest(dst, &m.Body)
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
		return p.AppendPush(dst, &m.Body)
	}
	return append(dst, m.Kind.String()...)
}

// TraceName is an actor's name and its most frequent record kind, with their trace
// digests worked out once (see sim.Hasher.Begin), for the record writers of every actor.
type TraceName struct {
	Actor, Kind sim.Name
}

// NewTraceName returns actor's TraceName for its records of kind.
func NewTraceName(actor, kind string) TraceName {
	return TraceName{sim.NewName(actor), sim.NewName(kind)}
}
