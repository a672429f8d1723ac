package knobs

import (
	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Service is a lock service other than Redis that an algorithm's clients talk to: its
// servers, the protocol they speak, and the connection its clients reach them by. An
// algorithm names its service (Algorithm.Service); a world built for that algorithm
// creates the service's servers where it would create Redis's groups, and changes nothing
// else: the client process carries the protocol's payloads without reading them, the
// oracle judges the algorithm's neutral lock events, and traces show the messages in the
// protocol's words. So a new service is its packages (its server, its protocol, its
// algorithm) plus the one registration of its algorithm.
type Service struct {
	Name string
	// ServerPrefix names its servers: ServerPrefix1, ServerPrefix2, ... ("zk" for
	// ZooKeeper's zk1…zkN), as scenario actions and search's drawn faults name them.
	ServerPrefix string
	Protocol     lock.Protocol
	// Conn builds a client's connection to the servers; nil: model.DirectConn.
	Conn model.NewConn
	// ConnFor, when set, replaces Conn with a connection built from the world's knobs (a
	// ZooKeeper session asks for the session_timeout knob's timeout).
	ConnFor func(cfg *Config) model.NewConn
	// Servers creates the service's servers on env's network. They must take the next
	// env.Servers endpoints, in the order the algorithm numbers its servers, and it
	// returns them, each with its process if it has one.
	Servers func(env ServiceEnv) ([]Server, error)
	// Count, when set, says the algorithm's clients address Redis masters beside the
	// service's servers (the hybrid lock): the world creates the masters as it would for
	// Redlock (the `nodes` knob's N of them), as servers 0..N−1 with the `connection`
	// knob's connection under the service's, and Count(cfg) servers of the service's
	// own after them.
	Count func(cfg *Config) int
}

// Server is one server a Service created: the endpoint its clients address, and its
// process, through which the world reaches it with process faults (the scenario actions
// crash_node, pause_node, ... naming it, and the node knobs' random draws) and the
// timeline and the replay read its state. A nil Process suffers no process faults: a
// scenario that schedules one on it is refused, and its timeline lane shows no spans.
type Server struct {
	Endpoint network.Endpoint
	Process  model.ServerProcess
}

// ServiceEnv is what a world gives a service to create its servers with.
type ServiceEnv struct {
	Sim    *sim.Sim
	Net    *network.Net[model.Message]
	Config *Config
	// Servers is how many servers the algorithm's clients address (Algorithm.Masters, or
	// the `nodes` knob).
	Servers int
	// Clock draws the clock of the process called name, as the world draws every
	// server's: drift and offset within the node knobs, from the stream
	// "<name>/clock-config".
	Clock func(name string) (clock.Config, error)
}
