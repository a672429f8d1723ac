package model

import (
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
	RecExec         = "exec"          // a command ran: fields cmd (and reply when it did not fit; see ExecParts)
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

// ExecParts decodes an exec record's fields into the command that ran and, when the record
// carries it, its reply, so a reader never parses the printed text.
func ExecParts(fields []sim.Field) (cmd resp.Command, reply resp.Reply, hasReply bool) {
	for i := range fields {
		f := &fields[i]
		switch f.Key {
		case "cmd":
			v := uint64(f.Int)
			cmd = unpackCmd(v&(1<<compactBit-1), f.Int2, f.Str, f.Str2)
			if v>>compactBit&1 == 1 {
				reply, hasReply = compactReply(v), true
			}
		case "reply":
			reply, hasReply = resp.Reply{Kind: resp.ReplyKind(f.Int), Int: f.Int2, Str: f.Str}, true
		}
	}
	return cmd, reply, hasReply
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
