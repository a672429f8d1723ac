package redis

import (
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// benchClient runs a closed loop against one group: SET lock v NX PX 10000, then
// EVALSHA <release> 1 lock v on the reply, and again, until it has sent limit commands.
type benchClient struct {
	tr      transport
	ep, to  network.Endpoint
	sent    int
	limit   int
	acquire lock.Payload // packed once, as a lock algorithm packs each command once
	release lock.Payload
	bad     int
}

func (c *benchClient) Receive(_ sim.Time, _, _ network.Endpoint, m *model.Message) {
	if r := resp.ReplyOf(&m.Body); r.Kind == resp.ReplyError || r.Kind == resp.ReplyNil {
		c.bad++
	}
	c.next(m.ReqID)
}

func (c *benchClient) next(prev uint64) {
	if c.sent >= c.limit {
		return
	}
	c.sent++
	cmd := c.acquire
	if prev%2 == 1 {
		cmd = c.release
	}
	c.tr.Send(c.ep, c.to, model.Request(prev+1, cmd))
}

// loopback is a bare transport for the node benchmark: a message arrives after a fixed
// latency through one kernel event, with no loss, no partitions and no trace record, so
// the benchmark measures the node's request path rather than the network's (which has
// its own benchmark).
type loopback struct {
	s       *sim.Sim
	latency time.Duration
	rx      []network.Receiver[model.Message]
	slab    []flight
	free    []uint64
}

type flight struct {
	from, to network.Endpoint
	msg      model.Message
}

func (l *loopback) Send(from, to network.Endpoint, m model.Message) {
	var i uint64
	if n := len(l.free); n > 0 {
		i, l.free = l.free[n-1], l.free[:n-1]
	} else {
		l.slab = append(l.slab, flight{})
		i = uint64(len(l.slab) - 1)
	}
	f := &l.slab[i]
	f.from, f.to, f.msg = from, to, m
	if _, err := l.s.After(l.latency, l, 0, i); err != nil {
		l.s.Fail(err)
	}
}

func (l *loopback) HandleEvent(now sim.Time, _ int, i uint64) {
	// As in the network, the slot is freed once Receive, which reads it in place, returns.
	f := &l.slab[i]
	l.rx[f.to].Receive(now, f.from, f.to, &f.msg)
	l.free = append(l.free, i)
}

// BenchmarkNodeCommands measures one command through a node's whole request path in the
// simulator: the request's arrival event, the group handing it to the master's queue, the
// service-time event when there is one, execution on the node's wall clock, the trace
// record (hashed, no sink), and the reply handed to the transport. The client runs a
// closed loop of SET lock v NX PX 10000 / EVALSHA <release> 1 lock v. ns/op and
// allocs/op are per command.
func BenchmarkNodeCommands(b *testing.B) {
	for _, service := range []time.Duration{0, 10 * time.Microsecond} {
		b.Run("service="+service.String(), func(b *testing.B) {
			s, err := sim.New(sim.Config{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			lb := &loopback{s: s, latency: 100 * time.Microsecond}
			g, err := newGroup(s, lb, GroupConfig{Name: "redis1", Nodes: []NodeConfig{{ServiceTime: service, PreloadScripts: true}}})
			if err != nil {
				b.Fatal(err)
			}
			c := newBenchClient(lb, 0, b.N)
			g.ep, c.ep = 0, 1
			lb.rx = []network.Receiver[model.Message]{g, c}
			runBench(b, s, g, c)
		})
	}
}

// BenchmarkNodeCommandsOverNetwork is the same loop over the real network package
// (constant 100us latency, every delivery traced), the cost of a command in a full world.
func BenchmarkNodeCommandsOverNetwork(b *testing.B) {
	s, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	net, err := network.New[model.Message](s, network.Config{Default: network.Link{
		Latency: network.Latency{Fast: dist.Constant(100 * time.Microsecond)}}}, s.Source("net"))
	if err != nil {
		b.Fatal(err)
	}
	net.SetMessage(model.MessageParts, FormatMessage)
	g, err := NewGroup(s, net, GroupConfig{Name: "redis1", Nodes: []NodeConfig{{PreloadScripts: true}}})
	if err != nil {
		b.Fatal(err)
	}
	c := newBenchClient(net, g.Endpoint(), b.N)
	if c.ep, err = net.AddEndpoint("client1", c); err != nil {
		b.Fatal(err)
	}
	runBench(b, s, g, c)
}

func newBenchClient(tr transport, to network.Endpoint, n int) *benchClient {
	return &benchClient{tr: tr, to: to, limit: n,
		acquire: pay(resp.Set("lock", "7f3a9c", resp.CondNX, 10*time.Second)),
		release: pay(resp.EvalSHA(resp.ScriptRelease, "lock", "7f3a9c", 0))}
}

func runBench(b *testing.B, s *sim.Sim, g *Group, c *benchClient) {
	b.ReportAllocs()
	b.ResetTimer()
	c.next(0)
	if err := s.Run(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if c.bad != 0 || g.Node(0).Stats().Commands != uint64(b.N) {
		b.Fatalf("%d bad replies, %d commands executed of %d", c.bad, g.Node(0).Stats().Commands, b.N)
	}
}
