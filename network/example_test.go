package network_test

import (
	"fmt"
	"time"

	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// printer prints what it receives.
type printer struct{ n *network.Net[string] }

func (p printer) Receive(now sim.Time, from, to network.Endpoint, msg *string) {
	fmt.Printf("%s got %q from %s at %v\n", p.n.Name(to), *msg, p.n.Name(from), now)
}

func Example() {
	s, _ := sim.New(sim.Config{Seed: 1})
	cfg := network.Config{Default: network.Link{Latency: network.Latency{Fast: dist.Constant(3 * time.Millisecond)}}}
	n, _ := network.New[string](s, cfg, s.Source("net"))
	client, _ := n.AddEndpoint("client1", printer{n})
	node, _ := n.AddEndpoint("node1", printer{n})

	n.Send(client, node, "SET lock 7f3a NX PX 10000")
	_ = s.Run()
	// Output: node1 got "SET lock 7f3a NX PX 10000" from client1 at 3ms
}
