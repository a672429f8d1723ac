package model

import (
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim"
)

// endpoint is the network receiver of every process of a world: a node group, a client or
// the storage registers one, not itself. The network delivers every message through one
// interface call, and PGO turns that call into a direct call to the hottest receiver type
// its profile shows; with three types sharing the traffic, which one won (and whose body
// was then inlined into the delivery path) changed from one profile to the next, and moved
// the bench by several percent. With one receiver type the choice cannot change, and the
// process is picked here by a branch that the hardware predicts.
type endpoint struct {
	g  *Group
	c  *Client
	st *Storage
}

// Receive hands the message to the endpoint's process. It is never inlined, so that the
// delivery path is the same size whatever the profile says about each process's Receive.
//
//go:noinline
func (e *endpoint) Receive(now sim.Time, from, to network.Endpoint, m *Message) {
	switch {
	case e.c != nil:
		e.c.Receive(now, from, to, m)
	case e.g != nil:
		e.g.Receive(now, from, to, m)
	default:
		e.st.Receive(now, from, to, m)
	}
}
