package locktest_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
)

// lease is a tiny lock algorithm of a protocol of its own (not RESP), to test the harness
// with: Acquire asks every server for a lease under a value of the algorithm's own, with
// a timer of Timeout; a majority of "yes" replies wins, and a push "revoke" loses it.
type lease struct {
	servers int
	timeout time.Duration
	value   string
	seq     int
	req     lock.Req
	busy    bool // an acquire awaits its replies
	timer   lock.TimerID
	yes     int
	held    bool
	out     []lock.Output
}

// The fake protocol's words: a request is grant or drop of Str; a reply yes or no; a
// push revoke.
const (
	opGrant uint64 = iota + 1
	opDrop
	replyYes
	replyNo
	pushRevoke
)

type proto struct{}

func (proto) Name() string { return "lease" }
func (proto) AppendRequest(dst []byte, p *lock.Payload) []byte {
	op := map[uint64]string{opGrant: "GRANT", opDrop: "DROP"}[p.Word]
	return append(dst, op+" "+p.Str...)
}
func (proto) AppendReply(dst []byte, p *lock.Payload) []byte {
	return strconv.AppendUint(dst, p.Word, 10)
}
func (proto) AppendPush(dst []byte, p *lock.Payload) []byte { return append(dst, "revoke"...) }

var protocol = locktest.Protocol{
	Protocol: proto{},
	ParseReply: func(args []datadriven.CmdArg) (lock.Payload, error) {
		for _, a := range args {
			switch a.Key {
			case "yes":
				return lock.Payload{Word: replyYes}, nil
			case "no":
				return lock.Payload{Word: replyNo}, nil
			case "echo": // a reply carrying a value back, to test $v substitution
				return lock.Payload{Word: replyYes, Str: a.Vals[0]}, nil
			}
		}
		return lock.Payload{}, errors.New("reply needs yes, no or echo=")
	},
	ParsePush: func(args []datadriven.CmdArg) (lock.Payload, error) {
		return lock.Payload{Word: pushRevoke}, nil
	},
}

func (l *lease) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	l.out = l.out[:0]
	if l.held || l.busy {
		return nil, lock.ErrBusy
	}
	l.seq++
	l.value = fmt.Sprintf("secret-%d-%s", l.seq, resource)
	l.yes, l.busy = 0, true
	for i := range l.servers {
		l.req++
		l.out = append(l.out, lock.Output{Kind: lock.OutSend, Node: i, Req: l.req,
			Request: lock.Payload{Word: opGrant, Str: l.value}})
	}
	l.timer++
	l.out = append(l.out, lock.Output{Kind: lock.OutSetTimer, Timer: l.timer, After: l.timeout})
	return l.out, nil
}

func (l *lease) Extend(time.Duration) ([]lock.Output, error) { return nil, lock.ErrNotHeld }

func (l *lease) Release(now time.Duration) ([]lock.Output, error) {
	l.out = l.out[:0]
	if !l.held {
		return nil, lock.ErrNotHeld
	}
	l.held = false
	l.req++
	l.out = append(l.out, lock.Output{Kind: lock.OutSend, Node: 0, Req: l.req,
		Request: lock.Payload{Word: opDrop, Str: l.value}},
		lock.Output{Kind: lock.OutEvent, Event: lock.Event{Kind: lock.Released, Value: l.value}})
	return l.out, nil
}

func (l *lease) Reply(now time.Duration, server int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	l.out = l.out[:0]
	if req == lock.PushReq && p.Word == pushRevoke && l.held {
		l.held = false
		l.out = append(l.out, lock.Output{Kind: lock.OutEvent, Event: lock.Event{Kind: lock.Lost, Value: l.value}})
		return l.out, nil
	}
	if p.Word != replyYes || l.held || req == lock.PushReq || (p.Str != "" && p.Str != l.value) {
		return l.out, nil
	}
	if l.yes++; l.yes > l.servers/2 {
		l.held = true
		l.out = append(l.out, lock.Output{Kind: lock.OutCancelTimer, Timer: l.timer},
			lock.Output{Kind: lock.OutEvent, Event: lock.Event{Kind: lock.Acquired, Value: l.value, Votes: l.yes, Deadline: now + time.Second}})
		l.busy = false
	}
	return l.out, nil
}

func (l *lease) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	l.out = l.out[:0]
	if id != l.timer || l.held {
		return l.out, nil
	}
	l.busy = false
	l.out = append(l.out, lock.Output{Kind: lock.OutEvent, Event: lock.Event{Kind: lock.AcquireFailed, Reason: lock.ReasonNoQuorum, Value: l.value, Votes: l.yes}})
	return l.out, nil
}

func buildLease(t *testing.T, args []datadriven.CmdArg) (locktest.Instance, string, error) {
	l := &lease{servers: 3, timeout: 100 * time.Millisecond}
	for _, a := range args {
		switch a.Key {
		case "servers":
			n, err := strconv.Atoi(a.SingleVal(t))
			if err != nil || n < 1 {
				return locktest.Instance{}, "", fmt.Errorf("servers=%s: want a positive count", a.SingleVal(t))
			}
			l.servers = n
		default:
			return locktest.Instance{}, "", fmt.Errorf("%s: unknown setting", a.Key)
		}
	}
	held := func(*testing.T, *datadriven.TestData) string { return fmt.Sprintf("held=%v yes=%d", l.held, l.yes) }
	return locktest.Instance{
		Client:   l,
		Values:   func() []string { return []string{l.value} },
		Commands: map[string]func(*testing.T, *datadriven.TestData) string{"held": held},
	}, fmt.Sprintf("servers=%d", l.servers), nil
}

// TestHarness runs the harness's own scripts under testdata/ on the fake lease algorithm:
// every command, the default and explicit request and timer ids, $vN both ways, timers
// fired by advance and fire-next in order, pending state, algorithm commands and errors.
func TestHarness(t *testing.T) {
	locktest.Run(t, "testdata", protocol,
		locktest.Algorithm{Name: "lease", Build: buildLease},
		locktest.Algorithm{Name: "lease5", Build: func(t *testing.T, args []datadriven.CmdArg) (locktest.Instance, string, error) {
			return buildLease(t, append(args, datadriven.CmdArg{Key: "servers", Vals: []string{"5"}}))
		}})
}

// TestDriverTracksTimersAndSends: the Driver keeps timers earliest first, forgets a
// cancelled one and a fired one, and drops an answered send from Waiting.
func TestDriverTracksTimersAndSends(t *testing.T) {
	d := locktest.NewDriver(&lease{servers: 3, timeout: time.Second})
	_, err := d.Take(d.C.Acquire(0, "r"))
	require.NoError(t, err)
	require.Len(t, d.Sent, 3)
	require.Len(t, d.Waiting, 3)
	assert.Equal(t, []locktest.Timer{{ID: 1, At: time.Second}}, d.Timers)
	d.Now = 5 * time.Millisecond
	_, err = d.Reply(1, d.LastReq[1], lock.Payload{Word: replyYes})
	require.NoError(t, err)
	assert.Len(t, d.Waiting, 2, "node 1 answered")
	_, err = d.Reply(2, d.LastReq[2], lock.Payload{Word: replyYes})
	require.NoError(t, err)
	assert.Empty(t, d.Timers, "the timer was cancelled")
	assert.Equal(t, []lock.EventKind{lock.Acquired}, d.Kinds())
	assert.Equal(t, 5*time.Millisecond+time.Second, d.LastEvent().Deadline)
	_, err = d.Take(d.C.Acquire(d.Now, "r"))
	assert.ErrorIs(t, err, lock.ErrBusy)
	assert.Empty(t, d.Last(), "a refused input leaves no outputs")
}

// TestHandleReturnsEveryOutput: Env.Handle, run outside a script file, returns every
// output of an input in order, with the value anonymised, and the error of a refused one.
func TestHandleReturnsEveryOutput(t *testing.T) {
	script := "new servers=2\n----\n\nacquire resource=r\n----\n\nacquire\n----\n"
	e := locktest.NewEnv(protocol, locktest.Algorithm{Name: "lease", Build: buildLease})
	var got []string
	datadriven.RunTestFromString(t, script, func(t *testing.T, d *datadriven.TestData) string {
		got = append(got, e.Handle(t, d))
		return d.Expected // compared below
	})
	assert.Equal(t, []string{"servers=2",
		"send node=0 req=1: GRANT $v1\nsend node=1 req=2: GRANT $v1\nset-timer id=1 after=100ms\n",
		"error: lock: operation in progress\n"}, got)
}
