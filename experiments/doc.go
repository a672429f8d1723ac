// Package experiments assembles simulated worlds from a configuration, holds the scenario
// catalogue and the oracle that judges safety and liveness in true time, and turns a run
// into a record; package experiments/sweep runs many of them.
//
// Config holds every knob of a world (nodes, clients, clocks, network, persistence, faults,
// algorithm, workload), each with a snake_case name, unit, default, allowed range and help
// (Params), set and read as text (Config.Set, Config.Get; Canonical gives a value's
// canonical text). Plan lays a world out from a Config and a seed, a scenario's Configure
// may reshape it, Build creates the actors (model.Group per Redlock node, the fenced
// model.Storage, one model.Client per client) and attaches the Oracle, and a scenario's
// Setup schedules its faults. Every random draw comes from a stream named after its
// component ("redis3/clock-config", "client2/start", ...), so adding a client changes no
// node's draws. Run and RunKnobs do all of it and return a Record: the configuration, the
// trace hash, the safety and liveness figures, and a bounded list of violations with the
// faults in effect; Record.Metrics flattens it into the ordered columns of a sweep.
//
// The run path formats no text unless a trace is asked for (Options.Trace), allocates
// nothing per event in steady state, reads no machine clock except to measure wall_time_s,
// starts no goroutine and never lets map order reach its output.
package experiments
