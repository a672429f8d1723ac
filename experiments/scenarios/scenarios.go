// Package scenarios is the catalogue of named failure stories, each a scenario file: a
// set of knob values, client start times and a fault schedule (steps at a true time or on
// a client's event), with named parameters that are knobs of the scenario, a source for
// the story, and the outcome its golden trace for seed 1 shows. The built-in stories are
// files embedded in the binary (builtin/*.yaml); a user's file reads and runs the same
// way (LoadFile). Knobs a user sets override a scenario's own. A step's node field names
// a server of whatever lock service the world runs, by its name (redis3, or lease1 for
// another service's), or last: a process fault's action (crash_node, pause_node, ...)
// stops or stalls a Redis group's master or the named server's process alike; what only
// Redis has (failover, outside_lock) is refused on another service's server.
package scenarios

import (
	"embed"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
)

// Scenario is a named, seeded, reproducible story, as its file states it: base knob
// values, client start times (Start), and a fault schedule (Steps) whose numbers may name
// parameters (Params), which a user sets like knobs. Configure applies what is planned
// before the actors exist, Setup the rest.
type Scenario struct {
	Name   string
	Story  string // one line
	Source string // where the story comes from
	Expect string // the expected outcome, in words
	Check  *Check // the expected outcome as rules over seeds; nil when the file has none
	Knobs  []knobs.KV
	// Window is the part of the run the golden trace shows (To = 0: to the end).
	Window [2]time.Duration
	Params []Param
	Start  []ClientStart
	// Workloads are the clients' own workloads where they differ from the knobs'.
	Workloads []ClientWorkload
	Steps     []Step
	File      string // where it was read from: builtin/NAME.yaml, or the user's path
	Text      string // the file as written
}

//go:embed builtin/*.yaml
var builtin embed.FS

// order is the catalogue's order: the safe baseline, then the stories roughly as the
// debate tells them, then the same faults told of Curator's lock on ZooKeeper, then the
// hybrid lock of both.
var order = []string{"baseline", "failover-race", "restart-no-persistence", "restart-delayed",
	"aof-everysec-power-loss", "aof-always", "split-brain-no-jitter", "split-brain-jitter",
	"partition-unavailability", "extension", "unlimited-extension", "watchdog-pause", "gc-pause", "gc-pause-fenced",
	"fencing-reset", "delayed-packet", "clock-jump", "clock-slew", "crash-restart-no-fsync", "replies-in-flight",
	"slow-replies", "careless-client", "holder-crash", "lost-release", "release-locked-only", "get-then-del", "setnx-then-expire", "unsafe-release",
	"zk-gc-pause", "zk-gc-pause-fenced", "zk-partitioned-holder", "zk-partitioned-holder-stop", "zk-leader-crash", "zk-clock-jump", "zk-herd",
	"hybrid-split", "hybrid-arbiter"}

// Scenarios returns the catalogue, in a fixed order.
func Scenarios() []Scenario { return slices.Clone(scenarioTable) }

// scenarioTable is the catalogue, parsed once at package initialisation: it is read-only
// after that, and a lookup per run in a sweep must not reparse files.
var scenarioTable = catalogue()

// catalogue parses the embedded files in order. A built-in file that does not parse, or
// a file the order does not name, is a bug in the binary, so it panics (a test parses them
// all).
func catalogue() []Scenario {
	entries, err := builtin.ReadDir("builtin")
	if err != nil {
		panic(err)
	}
	if len(entries) != len(order) {
		panic("scenarios: the builtin folder and the catalogue's order disagree")
	}
	out := make([]Scenario, 0, len(order))
	for _, name := range order {
		path := "builtin/" + name + ".yaml"
		data, err := builtin.ReadFile(path)
		if err != nil {
			panic(err)
		}
		sc, err := ParseFile(path, data)
		if err != nil {
			panic(err)
		}
		if sc.Name != name {
			panic(path + " names itself " + sc.Name)
		}
		out = append(out, *sc)
	}
	return out
}

// ScenarioNames returns the scenario names in catalogue order.
func ScenarioNames() []string {
	var out []string
	for _, s := range scenarioTable {
		out = append(out, s.Name)
	}
	return out
}

// LookupScenario returns the scenario called name; "" is the baseline. An unknown name is
// an *UnknownError with close matches.
func LookupScenario(name string) (*Scenario, error) {
	if name == "" {
		name = "baseline"
	}
	for _, s := range scenarioTable {
		if s.Name == name {
			s.Knobs = slices.Clone(s.Knobs) // the caller's copy: the table stays untouched
			s.Start, s.Steps, s.Params = slices.Clone(s.Start), slices.Clone(s.Steps), slices.Clone(s.Params)
			s.Workloads = slices.Clone(s.Workloads)
			return &s, nil
		}
	}
	return nil, knobs.Unknown("scenario", name, ScenarioNames())
}
