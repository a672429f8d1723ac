// Package locktest is the one datadriven harness every lock algorithm's tests run on, as
// etcd raft's rafttest.InteractionEnv serves every raft test: a script of inputs (start an
// acquire, extend or release; a server's reply or push; a timer) fed to any lock.Client,
// each followed by the outputs it produced, one per line, compared with the file's
// expected text (`go test -rewrite` regenerates them; read the diff before committing it).
//
// The harness knows no service's protocol: the caller gives it a Protocol, which renders
// the algorithm's requests (lock.Protocol) and parses the replies and pushes a script
// types (RESP's adapter is redlock/lock/locktest/resptest), and the algorithms a script
// may create, by name. It is imported by tests only.
//
// Commands (D is a duration such as 1.5s; inputs without now= happen at the current time):
//
//	new [algo=NAME] [args ...]       the algorithm NAME (the first registered by default),
//	                                 built from args by its Builder
//	acquire [now=D] [resource=K]     resource defaults to "lock"
//	extend [now=D]
//	release [now=D]
//	reply node=N|node=(N,M,...) [req=R|req=last] [now=D] REPLY...
//	                                 a reply to request R, by default the last one sent
//	                                 to that node; REPLY is parsed by Protocol.ParseReply
//	push node=N [now=D] PUSH...      what the server pushed on no request (lock.PushReq)
//	timer [now=D] [id=T]             fires timer T, by default the last one set
//	timer fire-next                  advances to the earliest pending timer and fires it
//	advance by=D                     advances the clock, firing every timer that falls due
//	                                 on the way, earliest first
//	pending                          the timers set and not yet fired or cancelled, and
//	                                 the sends not yet answered
//	NAME ...                         a command the current algorithm's Instance adds
//
// The random values an Instance names (lock values, lock names) print as $v1, $v2, ... in
// order of appearance, so expected outputs don't depend on random bytes; in a script's
// reply and push arguments, $vN stands for the value printed so and $v for the
// algorithm's current first value.
package locktest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// Protocol is a lock service's protocol as scripts use it: how its requests read in the
// expected outputs, and how a script's reply and push arguments become payloads.
type Protocol struct {
	lock.Protocol
	// ParseReply turns a reply command's arguments (all but node=, req= and now=) into a
	// reply payload, or says what it expected.
	ParseReply func(args []datadriven.CmdArg) (lock.Payload, error)
	// ParsePush turns a push command's arguments (all but node= and now=) into a push
	// payload. Nil if the protocol has no pushes.
	ParsePush func(args []datadriven.CmdArg) (lock.Payload, error)
}

// Instance is one algorithm a script created, with what the harness needs to know of it
// beyond lock.Client.
type Instance struct {
	Client lock.Client
	// Values returns the random values to anonymise in outputs, the current lock value
	// first; empty strings are skipped. Nil if the algorithm has none.
	Values func() []string
	// Anonymise, if set, rewrites what else in an output line is random (a key named by
	// random bytes, say) after the values are named.
	Anonymise func(line string) string
	// Commands are script commands of the algorithm's own (its state, say), run with the
	// script's arguments; what they return is the expected output.
	Commands map[string]func(t *testing.T, d *datadriven.TestData) string
}

// Builder builds an algorithm from a new command's arguments (all but algo=). What it
// returns besides the instance is new's output, such as the settings it resolved; an
// error is printed as `error: ...` and leaves no algorithm.
type Builder func(t *testing.T, args []datadriven.CmdArg) (Instance, string, error)

// Algorithm is an algorithm a script may create with new algo=Name.
type Algorithm struct {
	Name  string
	Build Builder
}

// NoOutput is what an input that produced nothing prints.
const NoOutput = "(no output)\n"

// Run runs every script under dir (a file, or a directory walked recursively), each on a
// fresh Env.
func Run(t *testing.T, dir string, p Protocol, algos ...Algorithm) {
	t.Helper()
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		e := NewEnv(p, algos...)
		datadriven.RunTest(t, path, e.Handle)
	})
}

// Env is one script's state: the algorithm under test, the clock, and the Driver that
// keeps what the algorithm asked for.
type Env struct {
	proto  Protocol
	algos  []Algorithm
	inst   Instance
	Driver *Driver
	names  map[string]string // value → $vN
	byName map[string]string // $vN → value
}

// NewEnv returns an Env with no algorithm yet: a script starts with new.
func NewEnv(p Protocol, algos ...Algorithm) *Env {
	return &Env{proto: p, algos: algos}
}

// Handle runs one command of a script and returns its output: datadriven.RunTest's
// callback.
func (e *Env) Handle(t *testing.T, d *datadriven.TestData) string {
	if d.Cmd == "new" {
		return e.create(t, d)
	}
	if e.Driver == nil {
		t.Fatalf("%s: no algorithm; start with new", d.Pos)
	}
	if at, ok := e.maybeNow(t, d); ok {
		e.Driver.Now = at
	}
	var err error
	dr := e.Driver
	switch d.Cmd {
	case "acquire":
		resource := "lock"
		d.MaybeScanArgs(t, "resource", &resource)
		_, err = dr.Take(dr.C.Acquire(dr.Now, resource))
	case "extend":
		_, err = dr.Take(dr.C.Extend(dr.Now))
	case "release":
		_, err = dr.Take(dr.C.Release(dr.Now))
	case "reply":
		return e.reply(t, d)
	case "push":
		return e.push(t, d)
	case "timer":
		return e.timer(t, d)
	case "advance":
		return e.advance(t, d)
	case "pending":
		return e.pending()
	default:
		cmd, ok := e.inst.Commands[d.Cmd]
		if !ok {
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		}
		return cmd(t, d)
	}
	return e.render(dr.Last(), err)
}

func (e *Env) create(t *testing.T, d *datadriven.TestData) string {
	if len(e.algos) == 0 {
		t.Fatalf("%s: no algorithm registered", d.Pos)
	}
	algo := e.algos[0]
	var args []datadriven.CmdArg
	for _, a := range d.CmdArgs {
		if a.Key != "algo" {
			args = append(args, a)
			continue
		}
		name := a.SingleVal(t)
		i := slices.IndexFunc(e.algos, func(x Algorithm) bool { return x.Name == name })
		if i < 0 {
			var names []string
			for _, x := range e.algos {
				names = append(names, x.Name)
			}
			return fmt.Sprintf("error: algo=%s: no such algorithm; registered: %s", name, strings.Join(names, ", "))
		}
		algo = e.algos[i]
	}
	inst, out, err := algo.Build(t, args)
	if err != nil {
		return "error: " + err.Error()
	}
	e.inst, e.Driver = inst, NewDriver(inst.Client)
	e.names, e.byName = map[string]string{}, map[string]string{}
	return out
}

// maybeNow reads the command's now=, if it has one.
func (e *Env) maybeNow(t *testing.T, d *datadriven.TestData) (time.Duration, bool) {
	arg, ok := d.Arg("now")
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(arg.SingleVal(t))
	if err != nil {
		t.Fatalf("%s: now=%s: %v", d.Pos, arg.SingleVal(t), err)
	}
	return v, true
}

// rest returns the command's arguments but the harness's own, with $v and $vN replaced by
// the values they stand for.
func (e *Env) rest(d *datadriven.TestData, own ...string) []datadriven.CmdArg {
	var out []datadriven.CmdArg
	for _, a := range d.CmdArgs {
		if slices.Contains(own, a.Key) {
			continue
		}
		a.Vals = slices.Clone(a.Vals)
		for i, v := range a.Vals {
			a.Vals[i] = e.value(v)
		}
		out = append(out, a)
	}
	return out
}

// value returns what a script's $v or $vN stands for, or s itself.
func (e *Env) value(s string) string {
	if s == "$v" && e.inst.Values != nil {
		if vs := e.inst.Values(); len(vs) > 0 {
			return vs[0]
		}
	}
	if v, ok := e.byName[s]; ok {
		return v
	}
	return s
}

func (e *Env) nodes(t *testing.T, d *datadriven.TestData) []int {
	arg, ok := d.Arg("node")
	if !ok {
		t.Fatalf("%s: %s needs node=", d.Pos, d.Cmd)
	}
	var nodes []int
	for _, v := range arg.Vals {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s: node=%s: not a server number", d.Pos, v)
		}
		nodes = append(nodes, n)
	}
	return nodes
}

func (e *Env) reply(t *testing.T, d *datadriven.TestData) string {
	nodes := e.nodes(t, d)
	r, err := e.proto.ParseReply(e.rest(d, "node", "req", "now"))
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	var b strings.Builder
	for _, node := range nodes {
		req := e.Driver.LastReq[node]
		if a, ok := d.Arg("req"); ok && a.SingleVal(t) != "last" {
			n, err := strconv.ParseUint(a.SingleVal(t), 10, 64)
			if err != nil {
				t.Fatalf("%s: req=%s: want a request number or last", d.Pos, a.SingleVal(t))
			}
			req = lock.Req(n)
		}
		outs, err := e.Driver.Reply(node, req, r)
		if out := e.render(outs, err); out != NoOutput {
			b.WriteString(out)
		}
	}
	if b.Len() == 0 {
		return NoOutput
	}
	return b.String()
}

func (e *Env) push(t *testing.T, d *datadriven.TestData) string {
	if e.proto.ParsePush == nil {
		t.Fatalf("%s: protocol %s has no pushes", d.Pos, e.proto.Name())
	}
	p, err := e.proto.ParsePush(e.rest(d, "node", "now"))
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	var b strings.Builder
	for _, node := range e.nodes(t, d) {
		outs, err := e.Driver.Reply(node, lock.PushReq, p)
		if out := e.render(outs, err); out != NoOutput {
			b.WriteString(out)
		}
	}
	if b.Len() == 0 {
		return NoOutput
	}
	return b.String()
}

func (e *Env) timer(t *testing.T, d *datadriven.TestData) string {
	dr := e.Driver
	if d.HasArg("fire-next") {
		if len(dr.Timers) == 0 {
			return "error: no timer pending\n"
		}
		outs, err := dr.FireNext()
		return e.render(outs, err)
	}
	id := dr.LastTimer
	if arg, ok := d.Arg("id"); ok {
		n, err := strconv.ParseUint(arg.SingleVal(t), 10, 64)
		if err != nil {
			t.Fatalf("%s: id=%s: not a timer id", d.Pos, arg.SingleVal(t))
		}
		id = lock.TimerID(n)
	}
	return e.render(dr.Fire(id))
}

func (e *Env) advance(t *testing.T, d *datadriven.TestData) string {
	var by string
	d.ScanArgs(t, "by", &by)
	dt, err := time.ParseDuration(by)
	if err != nil || dt < 0 {
		t.Fatalf("%s: by=%s: want a duration, not negative", d.Pos, by)
	}
	end := e.Driver.Now + dt
	var b strings.Builder
	for len(e.Driver.Timers) > 0 && e.Driver.Timers[0].At <= end {
		fmt.Fprintf(&b, "fire id=%d at=%v\n", e.Driver.Timers[0].ID, e.Driver.Timers[0].At)
		outs, err := e.Driver.FireNext()
		b.WriteString(e.render(outs, err))
	}
	e.Driver.Now = end
	if b.Len() == 0 {
		return NoOutput
	}
	return b.String()
}

func (e *Env) pending() string {
	var b strings.Builder
	fmt.Fprintf(&b, "now=%v\n", e.Driver.Now)
	for _, tm := range e.Driver.Timers {
		fmt.Fprintf(&b, "timer id=%d at=%v\n", tm.ID, tm.At)
	}
	for _, o := range e.Driver.Waiting {
		b.WriteString(e.anonymise("waiting " + o.Format(e.proto.Protocol)))
		b.WriteByte('\n')
	}
	return b.String()
}

// render prints one input's outputs, one per line, or its error.
func (e *Env) render(outs []lock.Output, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for _, o := range outs {
		b.WriteString(e.anonymise(o.Format(e.proto.Protocol)))
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return NoOutput
	}
	return b.String()
}

// anonymise names the instance's values $v1, $v2, ... in order of appearance, and prints
// every value named so far by its name.
func (e *Env) anonymise(s string) string {
	if e.inst.Values != nil {
		for _, v := range e.inst.Values() {
			if _, ok := e.names[v]; !ok && v != "" {
				name := "$v" + strconv.Itoa(len(e.names)+1)
				e.names[v], e.byName[name] = name, v
			}
		}
	}
	// Every value named so far, the latest first, so that an earlier value still in
	// flight prints as its name too.
	for i := len(e.byName); i >= 1; i-- {
		name := "$v" + strconv.Itoa(i)
		s = strings.ReplaceAll(s, e.byName[name], name)
	}
	if e.inst.Anonymise != nil {
		s = e.inst.Anonymise(s)
	}
	return s
}

// Driver feeds a lock.Client as a client process would, on a clock of its own, and keeps
// what it asked for: every send, the sends not yet answered, the events, the timers
// pending. Go tests that drive an algorithm by hand (property tests, loops over
// configurations) use it directly; a script's Env uses one too.
type Driver struct {
	C   lock.Client
	Now time.Duration
	// Sent is every send, in order; SentAt when each went out.
	Sent   []lock.Output
	SentAt []time.Duration
	// Waiting is the sends not yet answered or abandoned, oldest first.
	Waiting []lock.Output
	Events  []lock.Event
	// Timers are the timers set and not yet fired or cancelled, earliest first.
	Timers []Timer
	// LastReq is the last request sent to each node; LastTimer the last timer set.
	LastReq   map[int]lock.Req
	LastTimer lock.TimerID
	last      []lock.Output
}

// Timer is a pending timer: it falls due At on the driver's clock.
type Timer struct {
	ID lock.TimerID
	At time.Duration
}

// NewDriver returns a driver of c at time 0.
func NewDriver(c lock.Client) *Driver { return &Driver{C: c, LastReq: map[int]lock.Req{}} }

// Take records one input's outputs and returns them with its error.
func (d *Driver) Take(outs []lock.Output, err error) ([]lock.Output, error) {
	d.last = outs
	if err != nil {
		d.last = nil
		return nil, err
	}
	for _, o := range outs {
		switch o.Kind {
		case lock.OutSend:
			d.Sent = append(d.Sent, o)
			d.SentAt = append(d.SentAt, d.Now)
			d.Waiting = append(d.Waiting, o)
			d.LastReq[o.Node] = o.Req
		case lock.OutAbandon:
			d.answered(o.Node, o.Req)
		case lock.OutEvent:
			d.Events = append(d.Events, o.Event)
		case lock.OutSetTimer:
			d.LastTimer = o.Timer
			d.cancel(o.Timer)
			d.Timers = append(d.Timers, Timer{ID: o.Timer, At: d.Now + o.After})
			slices.SortStableFunc(d.Timers, func(a, b Timer) int { return cmp.Compare(a.At, b.At) })
		case lock.OutCancelTimer:
			d.cancel(o.Timer)
		}
	}
	return outs, nil
}

// Last returns the outputs of the last input taken.
func (d *Driver) Last() []lock.Output { return d.last }

func (d *Driver) cancel(id lock.TimerID) {
	d.Timers = slices.DeleteFunc(d.Timers, func(t Timer) bool { return t.ID == id })
}

func (d *Driver) answered(node int, req lock.Req) {
	d.Waiting = slices.DeleteFunc(d.Waiting, func(o lock.Output) bool { return o.Node == node && o.Req == req })
}

// Reply feeds node's reply p to req at the current time.
func (d *Driver) Reply(node int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	if req != lock.PushReq {
		d.answered(node, req)
	}
	return d.Take(d.C.Reply(d.Now, node, req, p))
}

// Fire fires timer id at the current time, whether or not it is pending.
func (d *Driver) Fire(id lock.TimerID) ([]lock.Output, error) {
	d.cancel(id)
	return d.Take(d.C.Timer(d.Now, id))
}

// FireNext advances the clock to the earliest pending timer (never backward) and fires
// it. There must be one.
func (d *Driver) FireNext() ([]lock.Output, error) {
	tm := d.Timers[0]
	d.Now = max(d.Now, tm.At)
	return d.Fire(tm.ID)
}

// FireLast advances the clock to the last timer set (never backward) and fires it: the
// live one for an algorithm that keeps one timer and supersedes it without cancelling
// the one before, which stays in Timers, possibly earlier. It fails if that timer is not
// pending (fired or cancelled).
func (d *Driver) FireLast() ([]lock.Output, error) {
	tm, ok := d.Pending(d.LastTimer)
	if !ok {
		return nil, fmt.Errorf("locktest: the last timer set (id %d) is not pending", d.LastTimer)
	}
	d.Now = max(d.Now, tm.At)
	return d.Fire(tm.ID)
}

// Pending returns timer id if it is pending.
func (d *Driver) Pending(id lock.TimerID) (Timer, bool) {
	i := slices.IndexFunc(d.Timers, func(t Timer) bool { return t.ID == id })
	if i < 0 {
		return Timer{}, false
	}
	return d.Timers[i], true
}

// Oldest returns the oldest waiting send that match accepts, so that a test can answer
// the sends it cares about in order and leave the others (a send no one waits for, say)
// unanswered.
func (d *Driver) Oldest(match func(lock.Output) bool) (lock.Output, bool) {
	i := slices.IndexFunc(d.Waiting, match)
	if i < 0 {
		return lock.Output{}, false
	}
	return d.Waiting[i], true
}

// SentWhen returns when node's request req went out.
func (d *Driver) SentWhen(node int, req lock.Req) (time.Duration, bool) {
	i := slices.IndexFunc(d.Sent, func(o lock.Output) bool { return o.Node == node && o.Req == req })
	if i < 0 {
		return 0, false
	}
	return d.SentAt[i], true
}

// Kinds returns the kinds of the events so far, in order.
func (d *Driver) Kinds() []lock.EventKind {
	ks := make([]lock.EventKind, 0, len(d.Events))
	for _, e := range d.Events {
		ks = append(ks, e.Kind)
	}
	return ks
}

// LastEvent returns the latest event; there must be one.
func (d *Driver) LastEvent() lock.Event { return d.Events[len(d.Events)-1] }
