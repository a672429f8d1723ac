package model

import (
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim"
)

// endpoint is the network receiver of every process of a world: a client, the storage or
// a lock service's server registers one, not itself. The network delivers every message
// through one interface call, and PGO turns that call into a direct call to the hottest
// receiver type its profile shows; with several types sharing the traffic, which one won
// (and whose body was then inlined into the delivery path) changed from one profile to the
// next, and moved the bench by several percent. With one receiver type the choice cannot
// change, and the process is picked here by a branch that the hardware predicts; each
// branch's call sees one type, which PGO makes direct too.
type endpoint struct {
	c   *Client
	st  *Storage
	srv network.Receiver[Message] // a lock service's server (a Redis node group, ...)
}

// ServerEndpoint returns the receiver a lock service's server registers with the network
// (network.Net.AddEndpoint) in place of itself: see endpoint.
func ServerEndpoint(srv network.Receiver[Message]) network.Receiver[Message] {
	return &endpoint{srv: srv}
}

// Receive hands the message to the endpoint's process. It is never inlined, so that the
// delivery path is the same size whatever the profile says about each process's Receive.
//
//go:noinline
func (e *endpoint) Receive(now sim.Time, from, to network.Endpoint, m *Message) {
	switch {
	case e.c != nil:
		e.c.Receive(now, from, to, m)
	case e.srv != nil:
		e.srv.Receive(now, from, to, m)
	default:
		e.st.Receive(now, from, to, m)
	}
}
