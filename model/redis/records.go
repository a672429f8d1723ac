package redis

import (
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The record writers (emitExec and the others generic over sim.Emitter) are copied for each
// concrete emitter into emit_gen.go; see internal/cmd/emitgen.
//
//go:generate go run ../../internal/cmd/emitgen

// The kinds of the trace records a Redis node or a group writes. Consumers of the trace
// (the narration, the timeline) switch on these constants, never on spelled-out strings, so
// a renamed record cannot silently fall out of a picture. A node's crash, kill and shutdown
// records are named by their kind's descriptor (FaultDesc.Record).
const (
	RecExec         = "exec"           // a command ran: fields cmd (and reply when it did not fit; see DecodeExec)
	RecDrop         = "drop"           // a command was not run: fields reason, cmd
	RecExpire       = "expire"         // a key expired: field key
	RecFsync        = "fsync"          // the AOF reached the disk: field writes
	RecRestart      = model.RecRestart // the process started again: field keys
	RecPause        = model.RecPause   // the process froze (SIGSTOP): field queued
	RecResume       = model.RecResume  // the process thawed: field queued
	RecReplOverflow = "repl-overflow"  // a replica's backlog overflowed: field backlog
	RecApply        = "apply"          // a replica applied a write: fields key, offset
	RecSync         = "sync"           // a replica resynchronised from its master: fields from, keys
	RecFailover     = "failover"       // a group promoted a replica: fields from, to, lost_writes
)

// NodeFaultRecords returns the kinds of every fault record a node or group can write, one
// for each FaultKind (its FaultDesc.Record), in kind order. The timeline must draw each
// and the narration must mark each (a test holds them to it).
func NodeFaultRecords() []string {
	var out []string
	for _, d := range FaultKinds() {
		out = append(out, d.Record)
	}
	return out
}

// The decoders below read the records of this package's writers back into typed values,
// for the narration, the timeline and the viewer's replay, which never read a field by
// name themselves. Each returns an error naming the record and the field when a field is
// missing or of another kind: a record that does not decode is a writer and its reader
// gone apart, a bug to show, never a zero to read on with. Each is tested against its
// writer in records_test.go.

// Exec is an exec record: the command a node ran and its reply (packed into the command's
// field when it is a common one, see execInt, else in a field of its own).
type Exec struct {
	Cmd      resp.Command
	Reply    resp.Reply
	HasReply bool // always, for a record that decodes; false only with an error
}

// DecodeExec decodes an exec record (emitExec).
func DecodeExec(r *sim.Record) (Exec, error) {
	if r.Kind != RecExec {
		return Exec{}, sim.WrongKind(r, RecExec)
	}
	d := sim.ReadRecord(r)
	var x Exec
	f := d.Custom("cmd")
	if f == nil {
		return x, d.End()
	}
	v := uint64(f.Int)
	x.Cmd = unpackCmd(v&(1<<compactBit-1), f.Int2, f.Str, f.Str2)
	validCmd(&d, &x.Cmd)
	if v>>compactBit&1 == 1 {
		x.Reply, x.HasReply = compactReply(v), true
	} else if f := d.Custom("reply"); f != nil { // a reply that did not fit has a field of its own
		x.Reply, x.HasReply = resp.Reply{Kind: resp.ReplyKind(f.Int), Int: f.Int2, Str: f.Str}, true
	}
	return x, d.End()
}

// validCmd fails d when a command field unpacked into no command at all.
func validCmd(d *sim.RecordReader, c *resp.Command) {
	if c.Op == 0 {
		d.Fail("field \"cmd\" holds no command")
	}
}

// compactReply unpacks the reply execInt packed into a command field's Int.
func compactReply(v uint64) resp.Reply {
	r := resp.Reply{Kind: resp.ReplyKind(v >> replyKindShift & 7)}
	switch r.Kind {
	case resp.ReplyStatus:
		r.Str = "OK"
	case resp.ReplyInt:
		r.Int = int64(int32(uint32(v >> 32)))
	}
	return r
}

// Drop is a drop record: a message a node, a group or the storage did not act on, and
// why. A node names the command it dropped (HasCmd); a group or the storage, handed
// something that is no command or no write, names the message (Msg).
type Drop struct {
	Reason string // "down", "refused", "queue-full", "reset", "not-a-command", "not-a-write"
	Cmd    resp.Command
	HasCmd bool
	Msg    model.Message // when !HasCmd
}

// DecodeDrop decodes a drop record of a node, a group or the storage.
func DecodeDrop(r *sim.Record) (Drop, error) {
	if r.Kind != RecDrop {
		return Drop{}, sim.WrongKind(r, RecDrop)
	}
	d := sim.ReadRecord(r)
	x := Drop{Reason: d.Str("reason")}
	if d.Has("cmd") {
		if f := d.Custom("cmd"); f != nil {
			x.Cmd, x.HasCmd = unpackCmd(uint64(f.Int), f.Int2, f.Str, f.Str2), true
			validCmd(&d, &x.Cmd)
		}
		return x, d.End()
	}
	if f := d.Custom("msg"); f != nil {
		m, err := model.DecodeMessageField(f)
		if err != nil {
			d.Fail("%v", err)
		}
		x.Msg = m
	}
	return x, d.End()
}

// Restart is a node's restart record: the keys it came back with.
type Restart struct{ Keys int }

// DecodeRestart decodes a RecRestart record.
func DecodeRestart(r *sim.Record) (Restart, error) {
	if r.Kind != RecRestart {
		return Restart{}, sim.WrongKind(r, RecRestart)
	}
	d := sim.ReadRecord(r)
	x := Restart{Keys: int(d.Int("keys"))}
	return x, d.End()
}

// Failover is a group's failover record: the node it promoted (To) in place of From, and
// the writes the promoted replica had not received.
type Failover struct {
	From, To   string
	LostWrites int
}

// DecodeFailover decodes a RecFailover record.
func DecodeFailover(r *sim.Record) (Failover, error) {
	if r.Kind != RecFailover {
		return Failover{}, sim.WrongKind(r, RecFailover)
	}
	d := sim.ReadRecord(r)
	x := Failover{From: d.Str("from"), To: d.Str("to"), LostWrites: int(d.Int("lost_writes"))}
	return x, d.End()
}

// IsNodeFault reports whether kind is one of NodeFaultRecords, without making the list.
func IsNodeFault(kind string) bool {
	return IsNodeStop(kind) || kind == RecRestart || kind == RecPause || kind == RecResume || kind == RecFailover
}

// IsNodeStop reports whether kind is the record of a node's process ending (a crash, a
// kill, a shutdown), which loses what it held in memory.
func IsNodeStop(kind string) bool {
	return kind == FaultCrash.String() || kind == FaultKill.String() || kind == FaultShutdown.String()
}

// IsRelease reports whether c releases a lock: the release script, or a plain DEL (a
// careless client's).
func IsRelease(c *resp.Command) bool {
	return (c.Op == resp.OpEval || c.Op == resp.OpEvalSHA) && c.Script == resp.ScriptRelease || c.Op == resp.OpDel
}
func packCmd(c *resp.Command) uint64 { return c.Word() }

func unpackCmd(v uint64, ttl int64, key, value string) resp.Command {
	return resp.CommandOf(&lock.Payload{Word: v, Int: ttl, Str: key, Str2: value})
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

// FormatMessage renders a Redis world's message field: model.MessageFormat for RESP, as a
// function of its own so that tests and tools need no closure.
func FormatMessage(f *sim.Field, dst []byte) []byte {
	m := model.DescribedMessage(f)
	return model.AppendMessage(dst, resp.Protocol{}, &m)
}
