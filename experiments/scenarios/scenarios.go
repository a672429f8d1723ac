// Package scenarios is the catalogue of named failure stories: each a set of knob values,
// a hook that shapes the planned world (clocks, start times, workloads) and one that
// schedules its faults once the world is built, a source for the story, and the outcome its
// golden trace for seed 1 shows. Knobs a user sets override a scenario's own.
package scenarios

import (
	"fmt"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Scenario is a named, seeded, reproducible story: base knob values, and hooks that shape
// the world (Configure, before the actors exist: clocks, start times, per-client
// workloads) and schedule its faults (Setup, after: node faults, partitions, event-driven
// hooks). Knobs given by the user override the scenario's.
type Scenario struct {
	Name   string
	Story  string // one line
	Source string // where the story comes from
	Expect string // the expected outcome, which the scenario's test asserts for seed 1
	Knobs  []knobs.KV
	// Window is the part of the run the golden trace shows (To = 0: to the end).
	Window    [2]time.Duration
	Configure func(w *world.World) error
	Setup     func(w *world.World) error
}

const (
	redlockPage = "Redlock page, https://redis.io/docs/latest/develop/use/patterns/distributed-locks/"
	kleppmann   = "Kleppmann, How to do distributed locking (2016)"
	singleInst  = "single-instance lock mistakes (Redis SETNX docs; the Redlock page's introduction)"
)

const ms = time.Millisecond

// Scenarios returns the catalogue, in a fixed order.
func Scenarios() []Scenario { return slices.Clone(scenarioTable) }

// scenarioTable is the catalogue, built once: it is read-only after package
// initialisation, and rebuilding it (closures and all) for every run's lookup was a tenth
// of what a short run in a sweep allocated.
var scenarioTable = catalogue()

func catalogue() []Scenario {
	return []Scenario{
		{
			Name:   "baseline",
			Story:  "five healthy nodes, three clients taking turns on one lock, clocks drifting ±50 ppm: nothing goes wrong",
			Source: "the Redlock page's algorithm with the common library defaults",
			Expect: "no safety violation; every client acquires",
			Knobs:  []knobs.KV{{Name: "client_clock_drift_ppm", Value: "50"}, {Name: "node_clock_drift_ppm", Value: "50"}},
			Window: [2]time.Duration{0, 110 * ms},
		},
		{
			Name:   "failover-race",
			Story:  "one master with an async replica: the master dies before the lock key replicates, the replica is promoted and grants the lock again",
			Source: redlockPage + " (why failover-based single-instance locks are unsafe)",
			Expect: "two holders: a validity overlap and a usage overlap",
			Knobs: []knobs.KV{{Name: "variant", Value: "single-instance-failover"}, {Name: "replicas", Value: "1"}, {Name: "replication_delay", Value: "50ms"},
				{Name: "failover_after", Value: "500ms"}, {Name: "clients", Value: "2"}, {Name: "ttl", Value: "5s"}, {Name: "hold", Value: "3s"},
				{Name: "think", Value: "100ms"}, {Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "4s"}},
			Window:    [2]time.Duration{0, 900 * ms},
			Configure: startAt(0, 100*ms),
			Setup: func(w *world.World) error {
				return onFirst(w, model.EvAcquired, "client1", func(now sim.Time) error {
					return w.NodeFault(w.Groups[0], now, model.Fault{Kind: model.FaultCrash, Node: model.CurrentMaster, Forever: true})
				})
			},
		},
		restartScenario("restart-no-persistence", "none", 10*ms,
			"client1 holds A, B, C (D, E unreachable); C restarts empty at once; client2 takes C, D, E (A, B unreachable)",
			"two holders: a validity overlap"),
		restartScenario("restart-delayed", "none", 2100*ms,
			"as restart-no-persistence, but C stays down longer than the TTL before it restarts empty",
			"safe: client2 acquires only after client1 released"),
		restartScenario("aof-everysec-power-loss", "aof-everysec", 10*ms,
			"as restart-no-persistence, with appendfsync everysec: C loses power before its next fsync and comes back without the key",
			"two holders: a validity overlap"),
		restartScenario("aof-always", "aof-always", 10*ms,
			"as aof-everysec-power-loss, with appendfsync always: the key was on disk before C answered OK",
			"safe: client2 acquires only after client1 released"),
		splitBrainScenario("split-brain-no-jitter", "0s",
			"five clients want the lock once; one node is down, so every attempt waits out its timeout and they retry in exact lockstep (no jitter): the votes split again and again",
			"many split-brain rounds (at least 5), far more than split-brain-jitter"),
		splitBrainScenario("split-brain-jitter", "100ms",
			"the same five contenders with retry_jitter 100ms: the first to retry takes every live node",
			"few split-brain rounds (at most half of split-brain-no-jitter's)"),
		{
			Name:   "partition-unavailability",
			Story:  "the holder is partitioned away right after acquiring: it cannot release, so the lock stays taken until its keys expire",
			Source: redlockPage + " (liveness: unavailability for one TTL)",
			Expect: "safe; the waiting client gets the lock about one TTL later (unheld while waiting ≈ TTL)",
			Knobs: []knobs.KV{{Name: "clients", Value: "2"}, {Name: "ttl", Value: "2s"}, {Name: "hold", Value: "100ms"}, {Name: "think", Value: "100ms"},
				{Name: "tries", Value: "100"}, {Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "4s"}},
			Window:    [2]time.Duration{0, 120 * ms},
			Configure: startAt(0, 50*ms),
			Setup: func(w *world.World) error {
				return onFirst(w, model.EvAcquired, "client1", func(now sim.Time) error {
					return w.Net.At(now, network.IsolateFault(w.Endpoint("client1"), 0))
				})
			},
		},
		{
			Name:   "extension",
			Story:  "work that takes longer than the TTL, kept safe by extending the lock every 300ms",
			Source: redlockPage + " (extending the lock)",
			Expect: "safe; extensions succeed; the second client acquires after the first releases",
			Knobs: []knobs.KV{{Name: "clients", Value: "2"}, {Name: "ttl", Value: "1s"}, {Name: "hold", Value: "2500ms"}, {Name: "extend_every", Value: "300ms"},
				{Name: "think", Value: "100ms"}, {Name: "tries", Value: "100"}, {Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "6s"}},
			Window:    [2]time.Duration{0, 700 * ms},
			Configure: startAt(0, 50*ms),
		},
		{
			Name:   "unlimited-extension",
			Story:  "a holder that extends forever (no limit on extensions) starves every other client",
			Source: redlockPage + " (limit the number of extensions)",
			Expect: "safe but unfair: one acquisition in the whole run, the other client never gets the lock",
			Knobs: []knobs.KV{{Name: "variant", Value: "unlimited-extension"}, {Name: "clients", Value: "2"}, {Name: "ttl", Value: "1s"}, {Name: "hold", Value: "1h"},
				{Name: "extend_every", Value: "300ms"}, {Name: "think", Value: "100ms"}, {Name: "duration", Value: "10s"}},
			Window:    [2]time.Duration{0, 700 * ms},
			Configure: startAt(0, 50*ms),
		},
		gcPauseScenario("gc-pause", "none",
			"client1 pauses (GC) past its lock's expiry; client2 acquires and writes; client1 wakes and writes too",
			"a stale write accepted and a usage overlap (no validity overlap: the algorithm kept its promise)"),
		gcPauseScenario("gc-pause-fenced", "one",
			"as gc-pause, with fencing tokens: the storage rejects client1's write, whose token is older",
			"fenced writes rejected; no stale write accepted"),
		{
			Name:   "delayed-packet",
			Story:  "client1's storage writes are held in the network past its lock; client2 acquires and writes; the old writes then arrive",
			Source: kleppmann,
			Expect: "stale writes accepted (with --set fencing=one: rejected instead); no overlap",
			Knobs: []knobs.KV{{Name: "clients", Value: "2"}, {Name: "ttl", Value: "1s"}, {Name: "hold", Value: "100ms"}, {Name: "think", Value: "100ms"},
				{Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "2s"}},
			Window:    [2]time.Duration{0, 0},
			Configure: startAt(0, 50*ms),
			Setup: func(w *world.World) error {
				return onFirst(w, model.EvAcquired, "client1", func(now sim.Time) error {
					return w.Net.At(now, network.ClogFault(w.Endpoint("client1"), w.Storage.Endpoint(), 1500*ms))
				})
			},
		},
		{
			Name:   "clock-jump",
			Story:  "client1 holds A, B, C (D, E unreachable); C's wall clock jumps forward and the key expires; client2 takes C, D, E",
			Source: kleppmann,
			Expect: "two holders: a validity overlap",
			Knobs:  append(twoSidedKnobs(), knobs.KV{Name: "persistence", Value: "aof-always"}),
			Window: [2]time.Duration{0, 520 * ms},
			Configure: func(w *world.World) error {
				if err := startAt(0, 200*ms)(w); err != nil {
					return err
				}
				n := &w.GroupCfgs[2].Nodes[0]
				n.Clock.Steps = append(n.Clock.Steps, clock.Step{At: sim.Time(150 * ms), By: 2 * time.Second})
				return nil
			},
			Setup: twoSidedPartition,
		},
		{
			Name:   "crash-restart-no-fsync",
			Story:  "client1 holds all five nodes; three of them lose power together before their everysec fsync and restart empty; client2 takes them",
			Source: kleppmann + " (crash-restart without fsync)",
			Expect: "two holders: a validity overlap",
			Knobs: []knobs.KV{{Name: "persistence", Value: "aof-everysec"}, {Name: "clients", Value: "2"}, {Name: "ttl", Value: "2s"}, {Name: "hold", Value: "1s"},
				{Name: "think", Value: "100ms"}, {Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "3s"}},
			Window:    [2]time.Duration{0, 0},
			Configure: startAt(0, 100*ms),
			Setup: func(w *world.World) error {
				return onFirst(w, model.EvAcquired, "client1", func(now sim.Time) error {
					for _, g := range w.Groups[:3] {
						f := model.Fault{Kind: model.FaultCrash, Node: model.CurrentMaster, For: 10 * ms}
						if err := w.NodeFault(g, now.Add(5*ms), f); err != nil {
							return err
						}
					}
					return nil
				})
			},
		},
		{
			Name:   "replies-in-flight",
			Story:  "client1 pauses right after sending its SETs, while the keys expire; it wakes to five OKs that are too old",
			Source: kleppmann + "; " + redlockPage + " (step 3: check the elapsed time)",
			Expect: "safe: the elapsed-time check fails the attempt (validity expired); with --set variant=no-validity-check: a usage overlap",
			Knobs: []knobs.KV{{Name: "clients", Value: "2"}, {Name: "ttl", Value: "1s"}, {Name: "hold", Value: "800ms"}, {Name: "think", Value: "100ms"},
				{Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "3s"}},
			Window:    [2]time.Duration{0, 0},
			Configure: startAt(0, 50*ms),
			Setup: func(w *world.World) error {
				return onFirst(w, model.EvAcquireStart, "client1", func(now sim.Time) error {
					w.Client("client1").PauseNow(1500 * ms)
					return nil
				})
			},
		},
		{
			Name:   "setnx-then-expire",
			Story:  "SETNX then EXPIRE as two commands: the client dies between them and the key never expires",
			Source: singleInst,
			Expect: "the lock is never freed: no acquisition at all, the waiting client waits the whole run",
			Knobs: []knobs.KV{{Name: "variant", Value: "setnx-then-expire"}, {Name: "nodes", Value: "1"}, {Name: "clients", Value: "2"}, {Name: "ttl", Value: "1s"},
				{Name: "latency", Value: "500µs"}, {Name: "hold", Value: "100ms"}, {Name: "think", Value: "100ms"}, {Name: "duration", Value: "3s"}},
			Window:    [2]time.Duration{0, 700 * ms},
			Configure: startAt(0, 50*ms),
			Setup: func(w *world.World) error {
				return onFirst(w, model.EvAcquireStart, "client1", func(now sim.Time) error {
					return w.Do(now.Add(750*time.Microsecond), func(sim.Time) { w.Client("client1").CrashNow() })
				})
			},
		},
		{
			Name:   "unsafe-release",
			Story:  "release by plain DEL: a contender that lost deletes the holder's key in its cleanup, and its retry takes the lock",
			Source: singleInst,
			Expect: "a validity overlap and a usage overlap (with --set variant=redlock: safe)",
			Knobs: []knobs.KV{{Name: "variant", Value: "unsafe-release"}, {Name: "nodes", Value: "1"}, {Name: "clients", Value: "2"}, {Name: "ttl", Value: "2s"},
				{Name: "hold", Value: "1s"}, {Name: "think", Value: "100ms"}, {Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "3s"}},
			Window:    [2]time.Duration{0, 300 * ms},
			Configure: startAt(0, 50*ms),
		},
	}
}

// restartScenario is the Redlock page's node-restart story: a two-sided partition lets
// client1 hold A, B, C and client2 reach only C, D, E; C crashes as client1 acquires and
// comes back after down, with the given persistence.
func restartScenario(name, persistence string, down time.Duration, story, expect string) Scenario {
	return Scenario{
		Name: name, Story: story, Source: redlockPage + " (performance, crash recovery and fsync)", Expect: expect,
		Knobs:     append(twoSidedKnobs(), knobs.KV{Name: "persistence", Value: persistence}),
		Window:    [2]time.Duration{0, 520 * ms},
		Configure: startAt(0, 200*ms),
		Setup: func(w *world.World) error {
			if err := twoSidedPartition(w); err != nil {
				return err
			}
			return onFirst(w, model.EvAcquired, "client1", func(now sim.Time) error {
				return w.NodeFault(w.Groups[2], now.Add(10*ms), model.Fault{Kind: model.FaultCrash, Node: model.CurrentMaster, For: down})
			})
		},
	}
}

func twoSidedKnobs() []knobs.KV {
	return []knobs.KV{{Name: "clients", Value: "2"}, {Name: "ttl", Value: "2s"}, {Name: "hold", Value: "1s"}, {Name: "think", Value: "100ms"},
		{Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "4s"}}
}

// twoSidedPartition cuts client1 off from redis4 and redis5, and client2 from redis1 and
// redis2, for the whole run: only redis3 is reachable by both.
func twoSidedPartition(w *world.World) error {
	cut := func(client string, nodes ...int) error {
		c := w.Endpoint(client)
		for _, i := range nodes {
			g := w.Groups[i].Endpoint()
			if err := w.Net.At(0, network.BlockFault(c, g, 0)); err != nil {
				return err
			}
			if err := w.Net.At(0, network.BlockFault(g, c, 0)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(w.Groups) != 5 {
		return fmt.Errorf("the two-sided partition needs 5 nodes, have %d", len(w.Groups))
	}
	if err := cut("client1", 3, 4); err != nil {
		return err
	}
	return cut("client2", 0, 1)
}

func splitBrainScenario(name, jitter, story, expect string) Scenario {
	return Scenario{
		Name: name, Story: story, Source: redlockPage + " (retry on failure: random delay against split brain)",
		Expect: expect,
		Knobs: []knobs.KV{{Name: "clients", Value: "5"}, {Name: "retry_jitter", Value: jitter}, {Name: "start_spread", Value: "0s"}, {Name: "hold", Value: "50ms"},
			{Name: "think", Value: "50ms"}, {Name: "ttl", Value: "2s"}, {Name: "tries", Value: "100"}, {Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "5s"}},
		Window: [2]time.Duration{0, 205 * ms},
		Setup: func(w *world.World) error { // redis5 is down: every attempt waits out its timeout
			return w.NodeFault(w.Groups[len(w.Groups)-1], 0, model.Fault{Kind: model.FaultCrash, Node: model.CurrentMaster, Forever: true})
		},
	}
}

func gcPauseScenario(name, fencing, story, expect string) Scenario {
	return Scenario{
		Name: name, Story: story, Source: kleppmann, Expect: expect,
		Knobs: []knobs.KV{{Name: "fencing", Value: fencing}, {Name: "clients", Value: "2"}, {Name: "ttl", Value: "1s"}, {Name: "hold", Value: "800ms"},
			{Name: "think", Value: "100ms"}, {Name: "max_cycles", Value: "1"}, {Name: "duration", Value: "3s"}},
		Window: [2]time.Duration{900 * ms, 0},
		Configure: func(w *world.World) error {
			if err := startAt(0, 50*ms)(w); err != nil {
				return err
			}
			w.ClientCfgs[0].Pauses = []model.Pause{{At: sim.Time(100 * ms), For: 1500 * ms}}
			return nil
		},
	}
}

// startAt makes client i start at true time at[i]; the others keep their drawn times.
func startAt(at ...time.Duration) func(w *world.World) error {
	return func(w *world.World) error {
		if len(at) > len(w.ClientCfgs) {
			return fmt.Errorf("the scenario needs %d clients, have %d", len(at), len(w.ClientCfgs))
		}
		for i, t := range at {
			w.ClientCfgs[i].StartAt = sim.Time(t)
		}
		return nil
	}
}

// onFirst runs f (as a kernel event of its own, at the same instant) the first time the
// named client reports an event of the given kind.
func onFirst(w *world.World, kind model.ClientEventKind, client string, f func(now sim.Time) error) error {
	if w.Client(client) == nil {
		return fmt.Errorf("no client %s", client)
	}
	done := false
	w.OnEvent(func(now sim.Time, e *model.ClientEvent) {
		if done || e.Kind != kind || e.Client.Name() != client {
			return
		}
		done = true
		if err := w.Do(now, func(now sim.Time) {
			if err := f(now); err != nil {
				w.Sim.Fail(err)
			}
		}); err != nil {
			w.Sim.Fail(err)
		}
	})
	return nil
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
			return &s, nil
		}
	}
	return nil, knobs.Unknown("scenario", name, ScenarioNames())
}
