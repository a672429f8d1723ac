package redis

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// world is a small simulated world for tests: a kernel, a network of Messages, and a
// sink that keeps every trace line.
type world struct {
	t     testing.TB
	s     *sim.Sim
	net   *network.Net[model.Message]
	lines []string
}

type lineSink struct{ w *world }

func (k lineSink) Record(r *sim.Record) { k.w.lines = append(k.w.lines, r.String()) }

func newWorld(t testing.TB, seed uint64, link network.Link) *world {
	s, err := sim.New(sim.Config{Seed: seed})
	require.NoError(t, err)
	net, err := network.New[model.Message](s, network.Config{Default: link}, s.Source("net"))
	require.NoError(t, err)
	net.SetMessage(model.MessageParts, FormatMessage)
	w := &world{t: t, s: s, net: net}
	s.SetSink(lineSink{w})
	return w
}

func (w *world) group(cfg GroupConfig) *Group {
	g, err := NewGroup(w.s, w.net, cfg)
	require.NoError(w.t, err)
	return g
}

func (w *world) run(until time.Duration) {
	require.NoError(w.t, w.s.RunUntil(sim.Time(until)))
}

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

// client is a test process: it sends commands at planned true times and records replies.
type client struct {
	w       *world
	ep      network.Endpoint
	plans   []plan
	replies map[uint64]got
}

type plan struct {
	to  network.Endpoint
	msg model.Message
}

type got struct {
	at    sim.Time
	reply resp.Reply
}

func (w *world) client(name string) *client {
	c := &client{w: w, replies: map[uint64]got{}}
	ep, err := w.net.AddEndpoint(name, c)
	require.NoError(w.t, err)
	c.ep = ep
	return c
}

// at plans command cmd to be sent to endpoint to at true time t and returns its id.
func (c *client) at(t time.Duration, to network.Endpoint, cmd resp.Command) uint64 {
	return c.send(t, to, model.Request(0, cmd.Payload()))
}

func (c *client) send(t time.Duration, to network.Endpoint, m model.Message) uint64 {
	m.ReqID = uint64(len(c.plans) + 1)
	c.plans = append(c.plans, plan{to: to, msg: m})
	_, err := c.w.s.Schedule(sim.Time(t), c, 0, uint64(len(c.plans)-1))
	require.NoError(c.w.t, err)
	return m.ReqID
}

func (c *client) HandleEvent(_ sim.Time, _ int, arg uint64) {
	p := c.plans[arg]
	c.w.net.Send(c.ep, p.to, p.msg)
}

func (c *client) Receive(now sim.Time, _, _ network.Endpoint, m *model.Message) {
	r := resp.ReplyOf(&m.Body)
	if m.Kind == model.MsgWritten { // the storage's verdict, read as the reply it once was
		r = resp.OK
		if m.Body.Word == 0 {
			r = errReply(m.Body.Str)
		}
	}
	c.replies[m.ReqID] = got{at: now, reply: r}
}

// reply returns the reply to request id, failing the test if none came.
func (c *client) reply(id uint64) resp.Reply {
	g, ok := c.replies[id]
	require.Truef(c.w.t, ok, "no reply to request %d", id)
	return g.reply
}

func (c *client) answered(id uint64) bool {
	_, ok := c.replies[id]
	return ok
}

func set(key, val string, cond resp.Cond, ttl time.Duration) resp.Command {
	return resp.Set(key, val, cond, ttl)
}

func get(key string) resp.Command  { return resp.Command{Op: resp.OpGet, Key: key} }
func pttl(key string) resp.Command { return resp.Command{Op: resp.OpPTTL, Key: key} }
func bulkOf(s string) resp.Reply   { return resp.Reply{Kind: resp.ReplyBulk, Str: s} }

const ms = time.Millisecond
