package network

import (
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
)

// The decoders below read the network's records back into typed values, for the
// narration and the viewer's replay, which never read a field by name themselves. Each
// returns an error naming the record and the field when one is missing or of another
// kind (a writer and its reader gone apart: a bug to show, never a zero to read on with).
// records_test.go holds each against its writer.

// MsgRecord is a deliver, drop, dup or hold record: what happened to one message
// (emitDeliver, emitMsgRecord).
type MsgRecord struct {
	Kind     string // RecDeliver, RecDrop, RecDup or RecHold
	From, To string // endpoint names
	ID       uint64 // the network's id of the message; a duplicate shares its original's
	// Msg is the message as the network's message writer packed it (SetMessage), for the
	// message's own package to unpack; nil when the network has no writer. It points into
	// the record and is valid as long as the record is.
	Msg     *sim.Field
	Latency time.Duration // RecDeliver: from send to delivery
	Reason  string        // RecDrop: why it was lost ("loss", "partition", ...); RecHold on a TCP link: why it waits for a retransmission ("partition", "loss", "queued"), "" for a clog's
}

// DecodeMsgRecord decodes a deliver, drop, dup or hold record.
func DecodeMsgRecord(r *sim.Record) (MsgRecord, error) {
	switch r.Kind {
	case RecDeliver, RecDrop, RecDup, RecHold:
	default:
		return MsgRecord{}, sim.WrongKind(r, RecDeliver, RecDrop, RecDup, RecHold)
	}
	d := sim.ReadRecord(r)
	x := MsgRecord{Kind: r.Kind, From: d.Str("from"), To: d.Str("to"), ID: uint64(d.Int("id"))}
	if d.Has("msg") {
		x.Msg = d.Custom("msg")
	}
	switch r.Kind {
	case RecDeliver:
		x.Latency = d.Dur("latency")
	case RecDrop:
		x.Reason = d.Str("reason")
	case RecHold:
		if d.Has("reason") { // a TCP link's hold says why; a clog's does not
			x.Reason = d.Str("reason")
		}
	}
	return x, d.End()
}

// LinkRecord is a clog or an unclog record: the one-way link it is about, and for a clog
// its fault id and length, for an unclog the messages it released.
type LinkRecord struct {
	Kind     string // RecClog or RecUnclog
	Fault    int    // RecClog
	From, To string
	For      time.Duration // RecClog
	Held     int           // RecUnclog
}

// DecodeLink decodes a clog or an unclog record.
func DecodeLink(r *sim.Record) (LinkRecord, error) {
	d := sim.ReadRecord(r)
	x := LinkRecord{Kind: r.Kind}
	switch r.Kind {
	case RecClog:
		x.Fault, x.From, x.To, x.For = int(d.Int("fault")), d.Str("from"), d.Str("to"), d.Dur("for")
	case RecUnclog:
		x.From, x.To, x.Held = d.Str("from"), d.Str("to"), int(d.Int("held"))
	default:
		return LinkRecord{}, sim.WrongKind(r, RecClog, RecUnclog)
	}
	return x, d.End()
}

// PartitionRecord is a partition record: the fault's id and kind and what it cuts: a
// node (FaultIsolate), a link (FaultBlock), or sides (FaultSplit, as text).
type PartitionRecord struct {
	Fault    int
	Kind     FaultKind
	Node     string // FaultIsolate
	From, To string // FaultBlock
	Groups   string // FaultSplit: "[a b] [c] [rest]"
	For      time.Duration
}

// DecodePartition decodes a partition record (tracePartition).
func DecodePartition(r *sim.Record) (PartitionRecord, error) {
	if r.Kind != RecPartition {
		return PartitionRecord{}, sim.WrongKind(r, RecPartition)
	}
	d := sim.ReadRecord(r)
	x := PartitionRecord{Fault: int(d.Int("fault"))}
	kind := d.Str("kind")
	for k := range FaultKind(len(faultNames)) {
		if k > 0 && faultNames[k] == kind {
			x.Kind = k
		}
	}
	switch x.Kind {
	case FaultIsolate:
		x.Node = d.Str("node")
	case FaultBlock:
		x.From, x.To = d.Str("from"), d.Str("to")
	case FaultSplit:
		x.Groups = d.Str("groups")
	default:
		d.Fail("field \"kind\" = %q is no partition", kind)
	}
	if d.Has("for") {
		x.For = d.Dur("for")
	}
	return x, d.End()
}
