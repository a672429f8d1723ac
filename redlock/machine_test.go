package redlock_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// TestMachine runs the scripted interactions under testdata/. Each file is a sequence of
// inputs and the outputs they produce; `go test ./redlock -rewrite` regenerates the
// expected outputs (read the diff before committing it).
//
// Commands:
//
//	new [seed=N] [knob=value ...]       a machine from DefaultConfig plus knobs (redlock.Knobs)
//	acquire now=D [resource=K]
//	extend now=D
//	release now=D
//	reply node=N|node=(N,M,...) [req=R] now=D ok|nil|int=N|status=S|err=S|none
//	timer now=D [id=T]                  fires the last timer set unless id is given
//	state
//
// Lock values print as $v1, $v2, ... in order of appearance, so the golden files don't
// depend on the random bytes.
func TestMachine(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{}
		datadriven.RunTest(t, path, h.run)
	})
}

type harness struct {
	m         *redlock.Machine
	values    map[string]string
	lastReq   map[int]lock.Req
	lastTimer lock.TimerID
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd != "new" && h.m == nil {
		t.Fatalf("%s: no machine; start with new", d.Pos)
	}
	var err error
	switch d.Cmd {
	case "new":
		return h.new(t, d)
	case "acquire":
		resource := "lock"
		d.MaybeScanArgs(t, "resource", &resource)
		_, err = h.m.Acquire(now(t, d), resource)
	case "extend":
		_, err = h.m.Extend(now(t, d))
	case "release":
		_, err = h.m.Release(now(t, d))
	case "reply":
		return h.reply(t, d)
	case "timer":
		id := h.lastTimer
		if arg, ok := d.Arg("id"); ok {
			n, _ := strconv.ParseUint(arg.SingleVal(t), 10, 64)
			id = lock.TimerID(n)
		}
		_, err = h.m.Timer(now(t, d), id)
	case "state":
		return fmt.Sprintf("state=%v deadline=%v ignored=%d", h.m.State(), h.m.Deadline(), h.m.Ignored())
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
	return h.render(err)
}

func (h *harness) new(t *testing.T, d *datadriven.TestData) string {
	cfg := redlock.DefaultConfig()
	seed := uint64(1)
	for _, arg := range d.CmdArgs {
		if arg.Key == "seed" {
			seed, _ = strconv.ParseUint(arg.SingleVal(t), 10, 64)
			continue
		}
		if err := cfg.Set(arg.Key, arg.SingleVal(t)); err != nil {
			return "error: " + err.Error()
		}
	}
	m, err := redlock.New(cfg, rand.New(rand.NewPCG(seed, 0)))
	if err != nil {
		return "error: " + err.Error()
	}
	h.m, h.values, h.lastReq, h.lastTimer = m, map[string]string{}, map[int]lock.Req{}, 0
	c := m.Config()
	return fmt.Sprintf("nodes=%d quorum=%d drift=%v timeout=%v", c.Nodes, m.Quorum(), c.Drift(), c.NodeTimeout())
}

func (h *harness) reply(t *testing.T, d *datadriven.TestData) string {
	arg, ok := d.Arg("node")
	if !ok {
		t.Fatalf("%s: reply needs node=", d.Pos)
	}
	r := parseReply(t, d)
	if r.Kind == resp.ReplyBulk && r.Str == "$v" { // the current lock value, however it is named
		r.Str = h.m.Value()
	}
	at := now(t, d)
	var b strings.Builder
	for _, v := range arg.Vals {
		node, err := strconv.Atoi(v)
		require.NoError(t, err)
		req := h.lastReq[node]
		if a, ok := d.Arg("req"); ok {
			n, _ := strconv.ParseUint(a.SingleVal(t), 10, 64)
			req = lock.Req(n)
		}
		if out := h.render(errOf(h.m.Reply(at, node, req, pl(r)))); out != noOutput {
			b.WriteString(out)
		}
	}
	if b.Len() == 0 {
		return noOutput
	}
	return b.String()
}

const noOutput = "(no output)\n"

func parseReply(t *testing.T, d *datadriven.TestData) resp.Reply {
	for _, a := range d.CmdArgs {
		switch a.Key {
		case "ok":
			return resp.OK
		case "nil":
			return resp.Nil
		case "none":
			return resp.NoReply
		case "int":
			n, err := strconv.ParseInt(a.SingleVal(t), 10, 64)
			require.NoError(t, err)
			return resp.IntReply(n)
		case "status":
			return resp.Reply{Kind: resp.ReplyStatus, Str: a.SingleVal(t)}
		case "err":
			return resp.Reply{Kind: resp.ReplyError, Str: a.SingleVal(t)}
		case "bulk": // bulk=$v is the machine's current lock value
			return resp.Reply{Kind: resp.ReplyBulk, Str: a.SingleVal(t)}
		}
	}
	t.Fatalf("%s: reply needs ok, nil, none, int=, status=, bulk= or err=", d.Pos)
	return resp.Reply{}
}

func now(t *testing.T, d *datadriven.TestData) time.Duration {
	arg, ok := d.Arg("now")
	if !ok {
		t.Fatalf("%s: %s needs now=", d.Pos, d.Cmd)
	}
	v, err := time.ParseDuration(arg.SingleVal(t))
	require.NoError(t, err)
	return v
}

// render prints the outputs of the last input, one per line, and remembers the request
// and timer ids so later commands can refer to them implicitly.
func (h *harness) render(err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for _, o := range h.m.Outputs() {
		switch o.Kind {
		case lock.OutSend:
			h.lastReq[o.Node] = o.Req
		case lock.OutSetTimer:
			h.lastTimer = o.Timer
		}
		b.WriteString(h.anonymise(o.Format(resp.Protocol{})))
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return noOutput
	}
	return b.String()
}

func (h *harness) anonymise(s string) string {
	v := h.m.Value()
	if v == "" {
		return s
	}
	name, ok := h.values[v]
	if !ok {
		name = "$v" + strconv.Itoa(len(h.values)+1)
		h.values[v] = name
	}
	return strings.ReplaceAll(s, v, name)
}

// errOf is an input's error, for tests that read its outputs from Machine.Outputs.
func errOf(_ []lock.Output, err error) error { return err }
