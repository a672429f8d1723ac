package hybrid_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/curator"
	"github.com/redlock-sim/redlock-sim/redlock/hybrid"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest/resptest"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
)

// sidesProtocol renders a hybrid client's requests in the words of the side that sent
// them: Curator's requests all name a znode path ("/lock/..."), Redlock's a key ("lock"),
// which is how these scripts tell them apart (a world tells them by request id:
// model.SplitProtocol).
type sidesProtocol struct{}

func (sidesProtocol) Name() string { return "resp+zookeeper" }

func (sidesProtocol) AppendRequest(dst []byte, p *lock.Payload) []byte {
	if strings.HasPrefix(p.Str, "/") {
		return zk.Protocol{}.AppendRequest(dst, p)
	}
	return resp.Protocol{}.AppendRequest(dst, p)
}

func (sidesProtocol) AppendReply(dst []byte, p *lock.Payload) []byte {
	return resp.Protocol{}.AppendReply(dst, p)
}

func (sidesProtocol) AppendPush(dst []byte, p *lock.Payload) []byte {
	return zk.Protocol{}.AppendPush(dst, p)
}

// TestScripts runs the step scripts under testdata on the locktest harness. Servers
// 0..masters−1 are Redis masters, answered as resptest types RESP (ok, nil, none,
// int=N, ...); server `masters` is the ZooKeeper ensemble, answered with
//
//	reply: created=PATH czxid=HEX | children=(A,B,...) | deleted | zkerr=CODE
//	push:  state=SyncConnected|Disconnected|Expired [session=N]
//
// where $vN inside a value stands for the N-th random value the script named (Redlock's
// lock value first, then Curator's protected ids).
func TestScripts(t *testing.T) {
	var cur *hybrid.Lock
	var values func() []string
	sub := func(s string) string {
		if values == nil {
			return s
		}
		vs := values()
		for i := len(vs); i >= 1; i-- {
			s = strings.ReplaceAll(s, "$v"+strconv.Itoa(i), vs[i-1])
		}
		return s
	}
	proto := locktest.Protocol{Protocol: sidesProtocol{},
		ParseReply: func(args []datadriven.CmdArg) (lock.Payload, error) {
			if p, ok, err := parseZK(args, sub); ok {
				return p, err
			}
			return resptest.ParseReply(args)
		},
		ParsePush: func(args []datadriven.CmdArg) (lock.Payload, error) { return parsePush(args) },
	}
	locktest.Run(t, "testdata", proto, locktest.Algorithm{Name: "hybrid",
		Build: func(t *testing.T, args []datadriven.CmdArg) (locktest.Instance, string, error) {
			h, named, out, err := build(args)
			if err != nil {
				return locktest.Instance{}, "", err
			}
			cur, values = h, named
			side := func(*testing.T, *datadriven.TestData) string { return "on=" + cur.On().String() }
			return locktest.Instance{Client: h, Values: named,
				Commands: map[string]func(*testing.T, *datadriven.TestData) string{"side": side}}, out, nil
		}})
}

// build makes a hybrid lock from a new command's settings: masters=N, tries=N (Redlock's
// tries, and Curator's retries + 1), fence_zk=true (Curator's client takes the czxid as
// its token).
func build(args []datadriven.CmdArg) (*hybrid.Lock, func() []string, string, error) {
	rc := redlock.DefaultConfig()
	cc := curator.DefaultConfig()
	masters := 3
	for _, a := range args {
		v := a.Vals[0]
		var err error
		switch a.Key {
		case "masters":
			masters, err = strconv.Atoi(v)
		case "tries":
			var n int
			n, err = strconv.Atoi(v)
			cc.MaxRetries = n - 1
			if err == nil {
				err = rc.Set("tries", v)
			}
		case "fence_zk":
			if v == "true" {
				cc.Token = curator.Czxid
			}
		default:
			err = fmt.Errorf("%s: not a setting", a.Key)
		}
		if err != nil {
			return nil, nil, "", err
		}
	}
	if err := rc.Set("nodes", strconv.Itoa(masters)); err != nil {
		return nil, nil, "", err
	}
	rf, err := redlock.Factory(rc)
	if err != nil {
		return nil, nil, "", err
	}
	zf, err := curator.Factory(cc)
	if err != nil {
		return nil, nil, "", err
	}
	h, err := hybrid.New(hybrid.Config{Masters: masters, Redis: rf, ZooKeeper: zf},
		rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		return nil, nil, "", err
	}
	r := h.Client(hybrid.Redis).(*redlock.Machine)
	m := h.Client(hybrid.ZooKeeper).(*curator.Mutex)
	named := func() []string {
		ids := m.Values()
		out := []string{r.Value()}
		for i := len(ids) - 1; i >= 0; i-- { // oldest first, as they appear
			out = append(out, ids[i])
		}
		return out
	}
	return h, named, fmt.Sprintf("masters=%d zookeeper=server %d tries=%d", masters, masters, rc.Tries), nil
}

func parseZK(args []datadriven.CmdArg, sub func(string) string) (lock.Payload, bool, error) {
	if len(args) == 0 {
		return lock.Payload{}, false, nil
	}
	var czxid int64
	for _, a := range args[1:] {
		if a.Key == "czxid" {
			n, err := strconv.ParseInt(strings.TrimPrefix(a.Vals[0], "0x"), 16, 64)
			if err != nil {
				return lock.Payload{}, true, fmt.Errorf("czxid=%s: %w", a.Vals[0], err)
			}
			czxid = n
		}
	}
	a := args[0]
	switch a.Key {
	case "created":
		m := zk.Msg{Op: zk.OpCreate, Str: sub(a.Vals[0]), Int: czxid}
		return m.Payload(), true, nil
	case "children":
		var names []string
		for _, v := range a.Vals {
			names = append(names, sub(v))
		}
		m := zk.Msg{Op: zk.OpGetChildren, Str2: zk.Children(names)}
		return m.Payload(), true, nil
	case "deleted":
		m := zk.Msg{Op: zk.OpDelete}
		return m.Payload(), true, nil
	case "zkerr":
		for c := zk.OK; c <= zk.SessionMoved; c++ {
			if c.String() == a.Vals[0] {
				return zk.Err(zk.OpCreate, c), true, nil
			}
		}
		return lock.Payload{}, true, fmt.Errorf("zkerr=%s: no such code", a.Vals[0])
	}
	return lock.Payload{}, false, nil
}

func parsePush(args []datadriven.CmdArg) (lock.Payload, error) {
	var state string
	var session int64
	for _, a := range args {
		switch a.Key {
		case "state":
			state = a.Vals[0]
		case "session":
			n, err := strconv.ParseInt(a.Vals[0], 10, 64)
			if err != nil {
				return lock.Payload{}, err
			}
			session = n
		}
	}
	st, ok := map[string]zk.KeeperState{"SyncConnected": zk.StateSyncConnected,
		"Disconnected": zk.StateDisconnected, "Expired": zk.StateExpired}[state]
	if !ok {
		return lock.Payload{}, fmt.Errorf("push needs state=SyncConnected|Disconnected|Expired")
	}
	p := zk.Event(zk.EventNone, st, "")
	p.Int = session
	return p, nil
}

// TestConfigIsChecked: a hybrid without masters or without one of its clients is refused.
func TestConfigIsChecked(t *testing.T) {
	rf, err := redlock.Factory(redlock.DefaultConfig())
	require.NoError(t, err)
	zf, err := curator.Factory(curator.DefaultConfig())
	require.NoError(t, err)
	_, err = hybrid.Factory(hybrid.Config{Masters: 0, Redis: rf, ZooKeeper: zf})
	assert.ErrorContains(t, err, "0 Redis masters")
	_, err = hybrid.Factory(hybrid.Config{Masters: 3, Redis: rf})
	assert.ErrorContains(t, err, "both needed")
	h, err := hybrid.New(hybrid.Config{Masters: 3, Redis: rf, ZooKeeper: zf}, rand.New(rand.NewPCG(1, 0)))
	require.NoError(t, err)
	_, err = h.Reply(0, 4, 1, lock.Payload{})
	assert.ErrorContains(t, err, "reply from server 4 of 4")
	_, err = h.Release(0)
	assert.ErrorIs(t, err, lock.ErrNotHeld)
	_, err = h.Acquire(time.Second, "lock")
	require.NoError(t, err)
	_, err = h.Acquire(2*time.Second, "lock")
	assert.ErrorIs(t, err, lock.ErrBusy)
	_, err = h.Timer(time.Millisecond, 1)
	assert.ErrorIs(t, err, lock.ErrTimeBackward)
}
