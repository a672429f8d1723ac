package zookeeper

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// world is an ensemble on a network of 1 ms FIFO links (TCP's order), with every trace
// line kept.
type world struct {
	t     testing.TB
	s     *sim.Sim
	net   *network.Net[model.Message]
	e     *Ensemble
	lines []string
}

type lineSink struct{ w *world }

func (k lineSink) Record(r *sim.Record) { k.w.lines = append(k.w.lines, r.String()) }

const lat = time.Millisecond

func newWorld(t testing.TB, cfg Config) *world {
	t.Helper()
	s, err := sim.New(sim.Config{Seed: 1})
	require.NoError(t, err)
	net, err := network.New[model.Message](s, network.Config{Default: network.Link{
		Latency: network.Latency{Fast: dist.Constant(lat)}, FIFO: true}}, s.Source("net"))
	require.NoError(t, err)
	net.SetMessage(model.MessageParts, model.MessageFormat(zk.Protocol{}))
	w := &world{t: t, s: s, net: net}
	s.SetSink(lineSink{w})
	w.e, err = New(s, net, cfg)
	require.NoError(t, err)
	return w
}

func (w *world) run(until time.Duration) {
	w.t.Helper()
	require.NoError(w.t, w.s.RunUntil(sim.Time(until)))
}

func (w *world) now() time.Duration { return w.s.Now().Duration() }

// runFor runs d more.
func (w *world) runFor(d time.Duration) { w.run(w.now() + d) }

// grep returns the trace lines containing every one of the words.
func (w *world) grep(words ...string) []string {
	var out []string
	for _, l := range w.lines {
		ok := true
		for _, word := range words {
			ok = ok && strings.Contains(l, word)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// leader waits up to 30 s for a serving leader and returns it.
func (w *world) leader() *Server {
	w.t.Helper()
	for i := 0; i < 3000 && w.e.Leader() < 0; i++ {
		w.runFor(10 * time.Millisecond)
	}
	l := w.e.Leader()
	require.GreaterOrEqual(w.t, l, 0, "no leader")
	return w.e.Server(l)
}

// settle runs until every running server serves.
func (w *world) settle() {
	w.t.Helper()
	for i := 0; i < 2000; i++ {
		all := true
		for _, sv := range w.e.Servers() {
			all = all && (!sv.Up() || sv.Serving())
		}
		if all {
			return
		}
		w.runFor(10 * time.Millisecond)
	}
	w.t.Fatal("the ensemble did not settle")
}

// raw is a test client speaking the protocol straight to one server at a time.
type raw struct {
	w      *world
	ep     network.Endpoint
	nextID uint64
	got    []msg
}

type msg struct {
	at   time.Duration
	from network.Endpoint
	kind model.MsgKind
	id   uint64
	m    zk.Msg
}

func (w *world) client(name string) *raw {
	c := &raw{w: w}
	var err error
	c.ep, err = w.net.AddEndpoint(name, c)
	require.NoError(w.t, err)
	return c
}

func (c *raw) Receive(now sim.Time, from, _ network.Endpoint, m *model.Message) {
	c.got = append(c.got, msg{at: now.Duration(), from: from, kind: m.Kind, id: m.ReqID, m: zk.Unpack(&m.Body)})
}

// send sends p to server i and returns its id.
func (c *raw) send(i int, p lock.Payload) uint64 {
	c.nextID++
	c.w.net.Send(c.ep, c.w.e.eps[i], model.Request(c.nextID, p))
	return c.nextID
}

// call sends p to server i and runs until its reply comes (at most 30 s).
func (c *raw) call(i int, p lock.Payload) zk.Msg {
	c.w.t.Helper()
	id := c.send(i, p)
	for k := 0; k < 3000; k++ {
		if r, ok := c.reply(id); ok {
			return r
		}
		c.w.runFor(10 * time.Millisecond)
	}
	c.w.t.Fatalf("no reply to %v", zk.Unpack(&p))
	return zk.Msg{}
}

func (c *raw) reply(id uint64) (zk.Msg, bool) {
	for _, g := range c.got {
		if g.kind == model.MsgReply && g.id == id {
			return g.m, true
		}
	}
	return zk.Msg{}, false
}

// session connects to server i with a new session of timeout.
func (c *raw) session(i int, timeout time.Duration) int64 {
	c.w.t.Helper()
	r := c.call(i, zk.Connect(0, timeout, 0))
	require.Equal(c.w.t, zk.OK, r.Code)
	return r.Int
}

// pushes returns the pushes received, in order.
func (c *raw) pushes() []msg {
	var out []msg
	for _, g := range c.got {
		if g.kind == model.MsgPush {
			out = append(out, g)
		}
	}
	return out
}
