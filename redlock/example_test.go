package redlock_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// ExampleMachine acquires a lock on five nodes. The caller plays the network: it reads
// the commands to send, and feeds back each node's reply with its own monotonic reading.
func ExampleMachine() {
	cfg := redlock.DefaultConfig() // five nodes, ttl 10s, drift 1% + 2ms
	m, err := redlock.New(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	outs, _ := m.Acquire(0, "orders")
	var sends []lock.Output // the outputs are reused by the next input: keep copies
	for _, o := range outs {
		if o.Kind == lock.OutSend {
			fmt.Printf("node %d: %s\n", o.Node, resp.CommandOf(&o.Request).Op)
			sends = append(sends, o)
		}
	}
	// Nodes 0-3 answer OK after 3ms; node 4 is held by someone else.
	for _, o := range sends[:5] {
		r := resp.OK
		if o.Node == 4 {
			r = resp.Nil
		}
		outs, _ = m.Reply(3*time.Millisecond, o.Node, o.Req, r.Payload())
	}
	for _, o := range outs {
		if o.Kind == lock.OutEvent && o.Event.Kind == lock.Acquired {
			a := o.Event
			fmt.Printf("acquired %s with %d of 5, valid until %v (validity %v)\n",
				a.Resource, a.Votes, a.Deadline, a.Validity)
		}
	}
	// Output:
	// node 0: SET
	// node 1: SET
	// node 2: SET
	// node 3: SET
	// node 4: SET
	// acquired orders with 4 of 5, valid until 9.898s (validity 9.895s)
}
