package resp

import (
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// A command's payload Word packs its one-byte fields as the trace has always packed them,
// so that a trace hash does not depend on whether a command went through a payload: the
// op (bits 0–7), the condition (8–15), EX-in-seconds (16) and the script (17–24).
const (
	condShift   = 8
	inSecsShift = 16
	scriptShift = 17
)

// Payload packs c for the lock interface and the network: Word its one-byte fields, Int
// its TTL, Str its key and Str2 its value.
func (c *Command) Payload() lock.Payload {
	return lock.Payload{Word: c.Word(), Int: int64(c.TTL), Str: c.Key, Str2: c.Value}
}

// Word packs c's one-byte fields as its payload's Word. A node packs every command it runs
// into its exec record with it, so it is kept small enough to inline.
func (c *Command) Word() uint64 {
	return uint64(c.Op) | uint64(c.Cond)<<condShift | b2u(c.InSecs)<<inSecsShift | uint64(c.Script)<<scriptShift
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// CommandOf unpacks the command p carries (see Command.Payload).
func CommandOf(p *lock.Payload) Command {
	w := p.Word
	return Command{Op: Op(w & 0xff), Cond: Cond(w >> condShift & 0xff), InSecs: w>>inSecsShift&1 == 1,
		Script: Script(w >> scriptShift & 0xff), TTL: time.Duration(p.Int), Key: p.Str, Value: p.Str2}
}

// Payload packs r: Word its kind, Int and Str as they are.
func (r Reply) Payload() lock.Payload {
	return lock.Payload{Word: uint64(r.Kind), Int: r.Int, Str: r.Str}
}

// ReplyOf unpacks the reply p carries (see Reply.Payload).
func ReplyOf(p *lock.Payload) Reply { return Reply{Kind: ReplyKind(p.Word), Int: p.Int, Str: p.Str} }

// Push returns the payload of a message published on channel, as a Redis server pushes it
// to a subscriber (the frame ["message", channel, payload]): the channel in Str, the
// message in Str2.
func Push(channel, message string) lock.Payload { return lock.Payload{Str: channel, Str2: message} }

// PushOf returns the channel and message of a pushed payload (see Push).
func PushOf(p *lock.Payload) (channel, message string) { return p.Str, p.Str2 }

// Protocol is RESP as traces show it (a lock.Protocol): commands in redis-cli syntax,
// replies as redis-cli prints them, pushes as `message channel payload`.
type Protocol struct{}

// Name returns "resp".
func (Protocol) Name() string { return "resp" }

// AppendRequest appends the command p carries, in redis-cli syntax.
func (Protocol) AppendRequest(dst []byte, p *lock.Payload) []byte {
	c := CommandOf(p)
	return append(dst, c.String()...)
}

// AppendReply appends the reply p carries, as redis-cli prints it.
func (Protocol) AppendReply(dst []byte, p *lock.Payload) []byte {
	return append(dst, ReplyOf(p).String()...)
}

// AppendPush appends a pushed message: `message channel payload`.
func (Protocol) AppendPush(dst []byte, p *lock.Payload) []byte {
	dst = append(dst, "message "...)
	dst = append(dst, quoteField(p.Str)...)
	dst = append(dst, ' ')
	return append(dst, quoteField(p.Str2)...)
}

// quoteField quotes s only when a reader could not tell where it ends.
func quoteField(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\") {
		return s
	}
	return strconv.Quote(s)
}
