package network

import (
	"testing"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// relay forwards every message it receives to another endpoint, so each delivery
// triggers exactly one send, as a request triggers a reply.
type relay struct {
	n     *Net[int]
	peers int
}

func (r *relay) Receive(now sim.Time, from, to Endpoint, m *int) {
	msg := *m
	next := (int(to) + 1 + msg%(r.peers-1)) % r.peers // never to itself
	r.n.Send(to, Endpoint(next), msg+1)
}

// BenchmarkNetwork measures one message (a delivery event, its trace record, and the
// send it triggers: loss and latency draws, slab slot, kernel event) among 6 endpoints
// with uniform latency and 1% loss, keeping 100 messages in flight: lost ones are
// replaced. Target: ≤ 200 ns and 0 allocs per message.
func BenchmarkNetwork(b *testing.B) {
	const peers, population = 6, 100
	s, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Default: Link{Latency: Latency{Fast: dist.Uniform(100_000, 2_000_000)}, Loss: 0.01}}
	n, err := New[int](s, cfg, s.Source("net"))
	if err != nil {
		b.Fatal(err)
	}
	n.SetMessage(intParts, formatInt)
	r := &relay{n: n, peers: peers}
	for i := 0; i < peers; i++ {
		if _, err := n.AddEndpoint(string(rune('a'+i)), r); err != nil {
			b.Fatal(err)
		}
	}
	inject := func() {
		for k := 0; n.InFlight() < population; k++ {
			n.Send(Endpoint(k%peers), Endpoint((k+1)%peers), k)
		}
	}
	step := func() {
		s.Step()
		inject()
	}
	inject()
	for i := 0; i < 100_000; i++ { // warm up: slab and heap at their steady-state size
		step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.StopTimer()
	if n.InFlight() != population || s.Err() != nil {
		b.Fatalf("in flight %d, err %v", n.InFlight(), s.Err())
	}
	b.ReportMetric(float64(n.Stats().Lost)/float64(n.Stats().Sent), "loss")
}
