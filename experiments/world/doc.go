// Package world assembles one simulated world from its knobs: the kernel, the network,
// the lock service's servers (Redis's: a redis.Group per node, replicas behind it; another
// service's: what its knobs.Service creates, named by the algorithm's registration), the
// fenced storage, the client processes running the lock algorithm the knobs name, and the
// oracle watching them.
// Plan lays the world out from a knobs.Config and a seed, a scenario may reshape the plan,
// Build creates the actors, and then faults and event hooks can be scheduled (NodeFault on
// a Redis group, ServerFault on another service's server that has a process,
// model.ServerProcess; OnEvent, Do). The node knobs' random process faults reach either. Every random draw comes from a stream named after its component
// ("redis3/clock-config", "client2/start", ...), so adding a client changes no node's draws.
package world
