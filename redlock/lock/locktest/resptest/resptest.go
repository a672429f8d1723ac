// Package resptest adapts the locktest harness to RESP, for the tests of every Redis lock
// algorithm (Redlock and its dialects, Redisson's RLock and RedissonRedLock): requests
// render as redis-cli lines (resp.Protocol), and a script's replies and pushes are typed
// as arguments. It is imported by tests only.
//
// Replies (one of):
//
//	ok | nil | none | array      +OK, a nil bulk, no reply (a timeout or a refused
//	                             connection: resp.NoReply), an empty array
//	int=N | status=S | err=S | bulk=S
//	info-replicas=N              INFO replication's answer for a master with N replicas
//
// Pushes: channel=C msg=M, a message published on channel C.
package resptest

import (
	"fmt"
	"strconv"

	"github.com/cockroachdb/datadriven"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// Protocol is RESP as the harness needs it.
var Protocol = locktest.Protocol{Protocol: resp.Protocol{}, ParseReply: ParseReply, ParsePush: ParsePush}

// ParseReply reads a reply from a script's arguments.
func ParseReply(args []datadriven.CmdArg) (lock.Payload, error) {
	for _, a := range args {
		val := func() (string, error) {
			if len(a.Vals) != 1 {
				return "", fmt.Errorf("reply %s= needs one value, got %d", a.Key, len(a.Vals))
			}
			return a.Vals[0], nil
		}
		var r resp.Reply
		switch a.Key {
		case "ok":
			r = resp.OK
		case "nil":
			r = resp.Nil
		case "none":
			r = resp.NoReply
		case "array":
			r = resp.ArrayReply()
		case "int", "info-replicas":
			s, err := val()
			if err != nil {
				return lock.Payload{}, err
			}
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return lock.Payload{}, fmt.Errorf("reply %s=%s: not an integer", a.Key, s)
			}
			r = resp.IntReply(n)
			if a.Key == "info-replicas" {
				r = resp.Reply{Kind: resp.ReplyBulk, Str: "# Replication\r\nrole:master\r\nconnected_slaves:" + s + "\r\n"}
			}
		case "status", "err", "bulk":
			s, err := val()
			if err != nil {
				return lock.Payload{}, err
			}
			kind := map[string]resp.ReplyKind{"status": resp.ReplyStatus, "err": resp.ReplyError, "bulk": resp.ReplyBulk}[a.Key]
			r = resp.Reply{Kind: kind, Str: s}
		default:
			continue
		}
		return r.Payload(), nil
	}
	return lock.Payload{}, fmt.Errorf("reply needs ok, nil, none, array, int=, status=, err=, bulk= or info-replicas=")
}

// ParsePush reads a pushed message from a script's channel= and msg=.
func ParsePush(args []datadriven.CmdArg) (lock.Payload, error) {
	var channel, msg string
	var seen int
	for _, a := range args {
		if len(a.Vals) != 1 {
			continue
		}
		switch a.Key {
		case "channel":
			channel, seen = a.Vals[0], seen+1
		case "msg":
			msg, seen = a.Vals[0], seen+1
		}
	}
	if seen != 2 {
		return lock.Payload{}, fmt.Errorf("push needs channel= and msg=")
	}
	return resp.Push(channel, msg), nil
}
