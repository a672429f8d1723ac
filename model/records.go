package model

import (
	"fmt"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The record writers (emitEvent, emitExec, emitWrite: generic over sim.Emitter) are copied
// for each concrete emitter into emit_gen.go; see internal/cmd/emitgen.
//
//go:generate go run ../internal/cmd/emitgen

// The kinds of the trace records a node or a group writes. Consumers of the trace (the
// narration, the timeline) switch on these constants, never on spelled-out strings, so a
// renamed record cannot silently fall out of a picture. A node's crash, kill and shutdown
// records are named by their kind's descriptor (FaultDesc.Record).
const (
	RecExec         = "exec"          // a command ran: fields cmd (and reply when it did not fit; see DecodeExec)
	RecDrop         = "drop"          // a command was not run: fields reason, cmd
	RecExpire       = "expire"        // a key expired: field key
	RecFsync        = "fsync"         // the AOF reached the disk: field writes
	RecRestart      = "restart"       // the process started again: field keys
	RecPause        = "pause"         // the process froze (SIGSTOP): field queued
	RecResume       = "resume"        // the process thawed: field queued
	RecReplOverflow = "repl-overflow" // a replica's backlog overflowed: field backlog
	RecApply        = "apply"         // a replica applied a write: fields key, offset
	RecSync         = "sync"          // a replica resynchronised from its master: fields from, keys
	RecFailover     = "failover"      // a group promoted a replica: fields from, to, lost_writes
	RecStorageWrite = "write"         // the storage judged a write: fields resource, token, fenced, accepted
	// RecPauseMerged is a client's pause that began while it was paused already (told to
	// readers only, see sim.Sim.Aside): fields mono, for, until. A client's other records
	// are named by its ClientEventKind (EvAcquired.String(), ...).
	RecPauseMerged = "pause-merged"
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
	Msg    Message // when !HasCmd
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
		m, err := DecodeMessageField(f)
		if err != nil {
			d.Fail("%v", err)
		}
		x.Msg = m
	}
	return x, d.End()
}

// StorageVerdict is the storage's write record: its verdict on one write.
type StorageVerdict struct {
	Resource string
	Token    int64
	Fenced   bool
	Accepted bool
}

// DecodeStorageWrite decodes the storage's write record (emitWrite).
func DecodeStorageWrite(r *sim.Record) (StorageVerdict, error) {
	if r.Kind != RecStorageWrite {
		return StorageVerdict{}, sim.WrongKind(r, RecStorageWrite)
	}
	d := sim.ReadRecord(r)
	x := StorageVerdict{Resource: d.Str("resource"), Token: d.Int("token"), Fenced: d.Bool("fenced"),
		Accepted: d.Bool("accepted")}
	return x, d.End()
}

// ClientRecord is a client event's record (emitEvent): what the trace keeps of a
// ClientEvent. Which fields it has follows the writer: a lock event's attempt, votes,
// reason, validity and token (HasLock); a write's id, token and fencing; a pause's length;
// every other event's resource.
type ClientRecord struct {
	Kind     ClientEventKind
	Mono     time.Duration // the client's monotonic reading
	Resource string        // all but a pause
	HasLock  bool          // the event came from the algorithm: Attempt to Validity hold
	Attempt  int
	OKs      int
	Reason   lock.Reason
	Validity time.Duration
	Token    int64  // a lock event's or a write's fencing token
	WriteID  uint64 // EvWrite
	Fenced   bool   // EvWrite
	For      time.Duration
}

// DecodeClientEvent decodes a client event's record. A client's pause that merged into
// the one in progress is another record (DecodePauseMerged).
func DecodeClientEvent(r *sim.Record) (ClientRecord, error) {
	var x ClientRecord
	for k := range len(clientEventNames) {
		if k > 0 && clientEventNames[k] == r.Kind {
			x.Kind = ClientEventKind(k)
		}
	}
	if x.Kind == 0 {
		return x, sim.RecordError(r, "not a client event")
	}
	d := sim.ReadRecord(r)
	x.Mono = d.Dur("mono")
	switch { // as emitEvent chooses
	case d.Has("attempt"):
		x.HasLock, x.Resource = true, d.Str("resource")
		x.Attempt, x.OKs = int(d.Int("attempt")), int(d.Int("oks"))
		x.Reason = decodeReason(&d, d.Str("reason"))
		x.Validity, x.Token = d.Dur("validity"), d.Int("token")
	case x.Kind == EvWrite:
		x.Resource, x.WriteID, x.Token, x.Fenced = d.Str("resource"), uint64(d.Int("id")), d.Int("token"), d.Bool("fenced")
	case x.Kind == EvPause:
		x.For = d.Dur("for")
	default:
		x.Resource = d.Str("resource")
	}
	return x, d.End()
}

// decodeReason is the lock.Reason whose name s is, the inverse of its String.
func decodeReason(d *sim.RecordReader, s string) lock.Reason {
	for r := range lock.Reason(64) {
		if r.String() == s {
			return r
		}
	}
	d.Fail("field \"reason\" = %q is no lock.Reason", s)
	return 0
}

// PauseMerged is a client's pause that began while it was paused already (RecPauseMerged).
type PauseMerged struct {
	Mono  time.Duration // the client's monotonic reading
	For   time.Duration // the pause asked for
	Until time.Duration // true time the client resumes, after the merge
}

// DecodePauseMerged decodes a RecPauseMerged record.
func DecodePauseMerged(r *sim.Record) (PauseMerged, error) {
	if r.Kind != RecPauseMerged {
		return PauseMerged{}, sim.WrongKind(r, RecPauseMerged)
	}
	d := sim.ReadRecord(r)
	x := PauseMerged{Mono: d.Dur("mono"), For: d.Dur("for"), Until: d.Dur("until")}
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

// DecodeMessageField decodes a message's trace field (Describe's, the msg of the network's
// records) into the message. Only the low 32 bits of its request id are kept (packMsg).
func DecodeMessageField(f *sim.Field) (Message, error) {
	if f.Kind != sim.FieldCustom {
		return Message{}, fmt.Errorf("field %q is %s, want a packed message", f.Key, f.Kind)
	}
	m := DescribedMessage(f)
	if m.Kind < MsgCommand || m.Kind > MsgWritten {
		return Message{}, fmt.Errorf("field %q holds no message (kind %d)", f.Key, m.Kind)
	}
	return m, nil
}

// MessageText is m as the trace shows it, with its body in protocol p's words, without
// the request id FormatMessage puts first: "SET lock v NX PX 10000", "OK",
// "write file1 "data" token=34".
func MessageText(m *Message, p lock.Protocol) string {
	head := len(strconv.AppendUint([]byte("req="), m.ReqID, 10)) + 1
	return string(appendMessage(nil, p, m)[head:])
}

// IsRelease reports whether c releases a lock: the release script, or a plain DEL (a
// careless client's).
func IsRelease(c *resp.Command) bool {
	return (c.Op == resp.OpEval || c.Op == resp.OpEvalSHA) && c.Script == resp.ScriptRelease || c.Op == resp.OpDel
}
