package knobs

import (
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// RandomNodeFault is a kind of process fault a run draws at random on each server (a Redis
// group's master of the moment, or another service's server), as a Poisson process: the
// knobs that set its rate and how long each lasts, and the random stream it draws from. The world schedules it, Inert and the limits check read it, and
// the scenario checks name it, all from this one row.
type RandomNodeFault struct {
	Kind model.FaultKind // a kind that lasts (model.FaultDesc.Lasts)
	Rate string          // the knob of its rate, per node per second ("node_crash_rate")
	Len  string          // the knob of how long each lasts ("node_down")
	// Stream names the random stream it draws from, after the group's or server's name
	// ("/crashes"): renaming it changes every run that draws the fault.
	Stream  string
	Counted string // what its limit counts ("crashes per node")
	LenIs   string // what Len is, for Inert ("how long a randomly crashed node stays down")
	Own     string // what a scenario schedules instead, for the hint of a Len it makes inert ("restart")
	rate    func(*Config) float64
	length  func(*Config) dist.Dist
}

// RateOf returns the fault's rate in c.
func (r RandomNodeFault) RateOf(c *Config) float64 { return r.rate(c) }

// LenOf returns how long each of the faults lasts in c.
func (r RandomNodeFault) LenOf(c *Config) dist.Dist { return r.length(c) }

// RandomNodeFaults returns the process faults a run draws at random, in the order the world
// draws them.
func RandomNodeFaults() []RandomNodeFault {
	return []RandomNodeFault{
		{Kind: model.FaultCrash, Rate: "node_crash_rate", Len: "node_down", Stream: "/crashes",
			Counted: "crashes per node", LenIs: "how long a randomly crashed node stays down", Own: "restart",
			rate: func(c *Config) float64 { return c.NodeCrashRate }, length: func(c *Config) dist.Dist { return c.NodeDown }},
		{Kind: model.FaultPause, Rate: "node_pause_rate", Len: "node_pause_len", Stream: "/pauses",
			Counted: "stalls per node", LenIs: "how long a randomly stalled node stays stopped", Own: "node stall",
			rate: func(c *Config) float64 { return c.NodePauseRate }, length: func(c *Config) dist.Dist { return c.NodePauseLen }},
	}
}
