package model

import (
	"fmt"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The record writers (emitEvent, emitExec, emitWrite: generic over sim.Emitter) are copied
// for each concrete emitter into emit_gen.go; see internal/cmd/emitgen.
//
//go:generate go run ../internal/cmd/emitgen

// The kinds of the trace records the storage and the clients write (a client's are named
// by its ClientEventKind, EvAcquired.String(), ...), besides the Redis servers' (package
// redis). Consumers of the trace switch on these constants, never on spelled-out strings.
const (
	RecStorageWrite = "write" // the storage judged a write: fields resource, token, fenced, accepted
	// RecPauseMerged is a client's pause that began while it was paused already (told to
	// readers only, see sim.Sim.Aside): fields mono, for, until.
	RecPauseMerged = "pause-merged"
)

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
// the request id AppendMessage puts first: "SET lock v NX PX 10000", "OK",
// "write file1 "data" token=34".
func MessageText(m *Message, p lock.Protocol) string {
	head := len(strconv.AppendUint([]byte("req="), m.ReqID, 10)) + 1
	return string(AppendMessage(nil, p, m)[head:])
}
