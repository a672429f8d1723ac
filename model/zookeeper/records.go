package zookeeper

import (
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
)

// The kinds of the trace records a ZooKeeper server writes (its messages are the
// network's records, rendered by zk.Protocol). Readers switch on these constants and read
// the records with the decoders below, never a field by name.
const (
	RecLooking     = "looking"     // the server looks for a leader: fields reason, zxid (its vote)
	RecLeading     = "leading"     // it won an election: fields epoch, zxid
	RecEstablished = "established" // a quorum synced with the leader: fields epoch, followers
	RecFollowing   = "following"   // a follower synced and serves: fields leader, epoch
	RecSession     = "session"     // a session was created: fields session, timeout
	RecExpire      = "expire"      // the leader expired a session: fields session, timeout
	RecRefuse      = "refuse"      // a client that saw a newer zxid was refused: fields session, zxid
	RecStop        = "stop"        // the process stopped: fields how (crash, kill, shutdown), role, lost (writes not fsynced)
	RecRestart     = "restart"     // the process started again: fields zxid, log
	RecStall       = "stall"       // the process froze: field role
	RecThaw        = "thaw"        // it thawed: field queued
)

// Looking is a RecLooking record.
type Looking struct {
	Reason string
	Zxid   int64
}

// DecodeLooking decodes a RecLooking record.
func DecodeLooking(r *sim.Record) (Looking, error) {
	if r.Kind != RecLooking {
		return Looking{}, sim.WrongKind(r, RecLooking)
	}
	d := sim.ReadRecord(r)
	x := Looking{Reason: d.Str("reason"), Zxid: d.Int("zxid")}
	return x, d.End()
}

// Leading is a RecLeading or RecEstablished record.
type Leading struct {
	Epoch     uint32
	Zxid      int64 // RecLeading: the history it leads with
	Followers int   // RecEstablished: the followers that synced
}

// DecodeLeading decodes a RecLeading or RecEstablished record.
func DecodeLeading(r *sim.Record) (Leading, error) {
	if r.Kind != RecLeading && r.Kind != RecEstablished {
		return Leading{}, sim.WrongKind(r, RecLeading)
	}
	d := sim.ReadRecord(r)
	x := Leading{Epoch: uint32(d.Int("epoch"))}
	if r.Kind == RecLeading {
		x.Zxid = d.Int("zxid")
	} else {
		x.Followers = int(d.Int("followers"))
	}
	return x, d.End()
}

// Following is a RecFollowing record.
type Following struct {
	Leader string
	Epoch  uint32
}

// DecodeFollowing decodes a RecFollowing record.
func DecodeFollowing(r *sim.Record) (Following, error) {
	if r.Kind != RecFollowing {
		return Following{}, sim.WrongKind(r, RecFollowing)
	}
	d := sim.ReadRecord(r)
	x := Following{Leader: d.Str("leader"), Epoch: uint32(d.Int("epoch"))}
	return x, d.End()
}

// Session is a RecSession or RecExpire record.
type Session struct {
	Session int64
	Timeout time.Duration
}

// DecodeSession decodes a RecSession or RecExpire record.
func DecodeSession(r *sim.Record) (Session, error) {
	if r.Kind != RecSession && r.Kind != RecExpire {
		return Session{}, sim.WrongKind(r, RecSession)
	}
	d := sim.ReadRecord(r)
	x := Session{Session: d.Int("session"), Timeout: d.Dur("timeout")}
	return x, d.End()
}

// Stop is a RecStop record.
type Stop struct {
	How, Role string
	Lost      int
}

// DecodeStop decodes a RecStop record.
func DecodeStop(r *sim.Record) (Stop, error) {
	if r.Kind != RecStop {
		return Stop{}, sim.WrongKind(r, RecStop)
	}
	d := sim.ReadRecord(r)
	x := Stop{How: d.Str("how"), Role: d.Str("role"), Lost: int(d.Int("lost"))}
	return x, d.End()
}

// Restart is a RecRestart record.
type Restart struct {
	Zxid int64
	Log  int
}

// DecodeRestart decodes a RecRestart record.
func DecodeRestart(r *sim.Record) (Restart, error) {
	if r.Kind != RecRestart {
		return Restart{}, sim.WrongKind(r, RecRestart)
	}
	d := sim.ReadRecord(r)
	x := Restart{Zxid: d.Int("zxid"), Log: int(d.Int("log"))}
	return x, d.End()
}

// IsServerFault reports whether kind is the record of a server's fault (a stop, a
// restart, a stall or a thaw), which the timeline and the narration mark.
func IsServerFault(kind string) bool {
	return kind == RecStop || kind == RecRestart || kind == RecStall || kind == RecThaw
}
