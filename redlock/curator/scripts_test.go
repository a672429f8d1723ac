package curator

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
)

// TestScripts runs the step scripts under testdata on the locktest harness, with
// ZooKeeper's replies and pushes typed as:
//
//	reply: created=PATH czxid=HEX | children=(A,B,...) | data czxid=HEX | exists czxid=HEX
//	       | deleted | err=CODE (CONNECTIONLOSS, NONODE, SESSIONEXPIRED, ...)
//	push:  event=NodeDeleted|NodeChildrenChanged path=PATH
//	       | state=SyncConnected|Disconnected|Expired [session=N]
//
// In these, $vN inside a value stands for the N-th protected id the script named.
func TestScripts(t *testing.T) {
	var cur *Mutex
	sub := func(s string) string {
		if cur == nil {
			return s
		}
		for i := len(cur.ids); i >= 1; i-- {
			s = strings.ReplaceAll(s, "$v"+strconv.Itoa(i), cur.ids[i-1])
		}
		return s
	}
	proto := locktest.Protocol{Protocol: zk.Protocol{},
		ParseReply: func(args []datadriven.CmdArg) (lock.Payload, error) { return parseReply(args, sub) },
		ParsePush:  func(args []datadriven.CmdArg) (lock.Payload, error) { return parsePush(args, sub) },
	}
	locktest.Run(t, "testdata", proto, locktest.Algorithm{Name: "curator",
		Build: func(t *testing.T, args []datadriven.CmdArg) (locktest.Instance, string, error) {
			m, out, err := build(args)
			if err != nil {
				return locktest.Instance{}, "", err
			}
			cur = m
			return locktest.Instance{Client: m, Values: m.Values}, out, nil
		}})
}

// build reads a mutex's settings from a new command.
func build(args []datadriven.CmdArg) (*Mutex, string, error) {
	cfg := DefaultConfig()
	cfg.Token = Czxid // the scripts read the token unless they say token=none or sequence
	for _, a := range args {
		if len(a.Vals) != 1 {
			return nil, "", fmt.Errorf("%s: want one value", a.Key)
		}
		v := a.Vals[0]
		var err error
		switch a.Key {
		case "session":
			cfg.SessionTimeout, err = time.ParseDuration(v)
		case "connection":
			cfg.ConnectionTimeout, err = time.ParseDuration(v)
		case "base":
			cfg.BaseSleep, err = time.ParseDuration(v)
		case "retries":
			cfg.MaxRetries, err = strconv.Atoi(v)
		case "acquire_timeout":
			cfg.AcquireTimeout, err = time.ParseDuration(v)
		case "on_suspended":
			cfg.OnSuspended = map[string]OnSuspended{"carry-on": CarryOn, "stop": Stop}[v]
		case "token":
			cfg.Token = map[string]Token{"none": NoToken, "czxid": Czxid, "sequence": Sequence}[v]
		case "recipe":
			cfg.Recipe = map[string]Recipe{"curator": Curator, "naive": Naive}[v]
		default:
			return nil, "", fmt.Errorf("%s: not a setting", a.Key)
		}
		if err != nil {
			return nil, "", fmt.Errorf("%s=%s: %w", a.Key, v, err)
		}
	}
	m, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		return nil, "", err
	}
	return m, fmt.Sprintf("session=%v connection=%v retry=ExponentialBackoffRetry(%v, %d) acquire_timeout=%v on_suspended=%v recipe=%v token=%v",
		cfg.SessionTimeout, cfg.ConnectionTimeout, cfg.BaseSleep, cfg.MaxRetries, cfg.AcquireTimeout, cfg.OnSuspended, cfg.Recipe, cfg.Token), nil
}

func parseHex(s string) (int64, error) {
	return strconv.ParseInt(strings.TrimPrefix(s, "0x"), 16, 64)
}

func parseReply(args []datadriven.CmdArg, sub func(string) string) (lock.Payload, error) {
	if len(args) == 0 {
		return lock.Payload{}, fmt.Errorf("reply needs created=, children=, data, exists, deleted or err=")
	}
	var czxid int64
	for _, a := range args[1:] {
		if a.Key == "czxid" && len(a.Vals) == 1 {
			var err error
			if czxid, err = parseHex(a.Vals[0]); err != nil {
				return lock.Payload{}, fmt.Errorf("czxid=%s: %w", a.Vals[0], err)
			}
		}
	}
	a := args[0]
	switch a.Key {
	case "created":
		m := zk.Msg{Op: zk.OpCreate, Str: sub(a.Vals[0]), Int: czxid}
		return m.Payload(), nil
	case "children":
		var names []string
		for _, v := range a.Vals {
			if v != "" {
				names = append(names, sub(v))
			}
		}
		m := zk.Msg{Op: zk.OpGetChildren, Str2: zk.Children(names)}
		return m.Payload(), nil
	case "data", "exists":
		op := map[string]zk.Op{"data": zk.OpGetData, "exists": zk.OpExists}[a.Key]
		m := zk.Msg{Op: op, Int: czxid}
		return m.Payload(), nil
	case "deleted":
		m := zk.Msg{Op: zk.OpDelete}
		return m.Payload(), nil
	case "err":
		for c := zk.OK; c <= zk.SessionMoved; c++ {
			if c.String() == a.Vals[0] {
				return zk.Err(zk.OpCreate, c), nil
			}
		}
		return lock.Payload{}, fmt.Errorf("err=%s: no such code", a.Vals[0])
	}
	return lock.Payload{}, fmt.Errorf("reply %s: unknown", a.Key)
}

func parsePush(args []datadriven.CmdArg, sub func(string) string) (lock.Payload, error) {
	var event, state, path string
	var session int64
	for _, a := range args {
		v := ""
		if len(a.Vals) == 1 {
			v = sub(a.Vals[0])
		}
		switch a.Key {
		case "event":
			event = v
		case "state":
			state = v
		case "path":
			path = v
		case "session":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return lock.Payload{}, fmt.Errorf("session=%s: %w", v, err)
			}
			session = n
		}
	}
	if state != "" {
		st := map[string]zk.KeeperState{"SyncConnected": zk.StateSyncConnected, "Disconnected": zk.StateDisconnected,
			"Expired": zk.StateExpired}
		s, ok := st[state]
		if !ok {
			return lock.Payload{}, fmt.Errorf("state=%s: want SyncConnected, Disconnected or Expired", state)
		}
		p := zk.Event(zk.EventNone, s, "")
		p.Int = session
		return p, nil
	}
	ev := map[string]zk.EventType{"NodeDeleted": zk.EventNodeDeleted, "NodeChildrenChanged": zk.EventNodeChildrenChanged,
		"NodeCreated": zk.EventNodeCreated}
	e, ok := ev[event]
	if !ok {
		return lock.Payload{}, fmt.Errorf("push needs event=NodeDeleted|NodeChildrenChanged|NodeCreated path= or state=")
	}
	return zk.Event(e, zk.StateSyncConnected, path), nil
}
