package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/sim"
)

// scenarioWorld assembles built-in scenario name for seed as `run --scenario` does for a
// scenario that names no client profile, and with no --set: its knobs on the defaults,
// its parameters at their defaults, its schedule.
func scenarioWorld(t *testing.T, name string, seed uint64) *world.World {
	t.Helper()
	sc, err := scenarios.LookupScenario(name)
	require.NoError(t, err)
	for _, kv := range sc.Knobs {
		require.NotEqual(t, "client", kv.Name, "a profile is applied first by experiments: pick another scenario")
	}
	params, _, err := sc.Bind(nil)
	require.NoError(t, err)
	cfg := knobs.DefaultConfig()
	require.NoError(t, cfg.Apply(sc.Knobs))
	w, err := world.Plan(cfg, seed)
	require.NoError(t, err)
	require.NoError(t, sc.Configure(w, params))
	require.NoError(t, w.Build())
	require.NoError(t, sc.Setup(w, params))
	return w
}

// sinks hands each record to several sinks in order.
type sinks []sim.Sink

func (s sinks) Record(r *sim.Record) {
	for _, k := range s {
		k.Record(r)
	}
}

// runWorld runs w to its end with the sinks attached, and lets the oracle finish.
func runWorld(t *testing.T, w *world.World, to ...sim.Sink) {
	t.Helper()
	w.Sim.SetSink(sinks(to))
	end := sim.Time(w.Config.Duration)
	require.NoError(t, w.Sim.RunUntil(end))
	w.Oracle.Finish(end)
}

// clientEvents keeps a copy of the client events of kind, with the true time of each.
type clientEvents struct {
	at  []sim.Time
	evs []model.ClientEvent
	lck []lockFacts
}

// lockFacts are what a client event's lock event said (the event itself is reused).
type lockFacts struct {
	attempt, votes int
	validity       time.Duration
}

func watch(w *world.World, kind model.ClientEventKind) *clientEvents {
	ce := &clientEvents{}
	w.OnEvent(func(now sim.Time, e *model.ClientEvent) {
		if e.Kind != kind {
			return
		}
		ce.at = append(ce.at, now)
		ce.evs = append(ce.evs, *e)
		lf := lockFacts{}
		if e.Lock != nil {
			lf = lockFacts{e.Lock.Attempt, e.Lock.Votes, e.Lock.Validity}
		}
		ce.lck = append(ce.lck, lf)
	})
	return ce
}
