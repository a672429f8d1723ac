package search

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/model"
)

// YAML writes the case as a scenario file (docs/scenarios.md): its knobs and its schedule,
// with the words given. `run --scenario-file` replays it with `--seed` the case's seed;
// the search runs every case through this very text, so the file is the case.
func (c *Case) YAML(name, story, source, expect string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nstory: %s\nsource: %s\nexpect: %s\n", name, strconv.Quote(story), strconv.Quote(source), strconv.Quote(expect))
	if len(c.Knobs) > 0 {
		b.WriteString("knobs:\n")
		for _, kv := range c.Knobs {
			fmt.Fprintf(&b, "  %s: %s\n", kv.Name, yamlScalar(kv.Value))
		}
	}
	if len(c.Faults) > 0 {
		b.WriteString("schedule:\n")
	}
	for _, f := range c.Faults {
		if f.On != nil {
			fmt.Fprintf(&b, "  - on: {event: acquired, client: %s, nth: %d}\n", f.On.Client, f.On.Nth)
			if f.On.After > 0 {
				fmt.Fprintf(&b, "    after: %s\n", f.On.After)
			}
		} else {
			fmt.Fprintf(&b, "  - at: %s\n", f.At)
		}
		fmt.Fprintf(&b, "    %s: {%s}\n", f.Kind, actionYAML(f.Action))
	}
	return []byte(b.String())
}

// yamlScalar quotes a knob value that YAML would read as something else.
func yamlScalar(v string) string {
	if v == "" || strings.ContainsAny(v, ":#{}[]&*!|>'\"%@`") {
		return strconv.Quote(v)
	}
	return v
}

// actionYAML writes an action's fields as a YAML flow mapping's inside, in the order the
// scenario language lists them ("client: client1, for: 1.2s").
func actionYAML(a scenarios.Action) string {
	var kv []string
	add := func(k, v string) { kv = append(kv, k+": "+v) }
	list := func(names []string) string {
		if len(names) == 1 {
			return names[0]
		}
		return "[" + strings.Join(names, ", ") + "]"
	}
	if a.Client != "" {
		add("client", a.Client)
	}
	if a.Node != "" {
		add("node", a.Node)
	}
	if a.Endpoint != "" {
		add("endpoint", a.Endpoint)
	}
	if len(a.From) > 0 {
		add("from", list(a.From))
		add("to", list(a.To))
	}
	if a.Kind == "block" {
		add("both_ways", strconv.FormatBool(a.BothWays))
	}
	if len(a.Sides) > 0 {
		var sides []string
		for _, side := range a.Sides {
			sides = append(sides, "["+strings.Join(side, ", ")+"]")
		}
		add("sides", "["+strings.Join(sides, ", ")+"]")
	}
	if a.Latency != "" {
		add("latency", a.Latency)
	}
	if a.For.Set {
		add("for", a.For.Dur.String())
	}
	if a.Restart.Set {
		if a.Restart.Never {
			add("restart_after", "never")
		} else {
			add("restart_after", a.Restart.Dur.String())
		}
	}
	if a.By.Set {
		add("by", a.By.Dur.String())
	}
	if a.Kind == "clock_drift" {
		add("ppm", strconv.FormatFloat(a.RatePPM, 'g', -1, 64))
	}
	if a.Count.Set {
		add("count", strconv.Itoa(a.Count.N))
	}
	if a.TTL.Set {
		add("ttl", a.TTL.Dur.String())
	}
	return strings.Join(kv, ", ")
}

// scenario parses the case's file, as `run --scenario-file` does.
func (c *Case) scenario(name, story, source, expect string) (*scenarios.Scenario, error) {
	return scenarios.ParseFile(name+".yaml", c.YAML(name, story, source, expect))
}

// Scenario returns the case as the scenario its file parses to, built without writing and
// parsing the file: a search run does not pay for YAML (most of a short run's cost). A test
// holds the two to the same trace hash for every fault kind, and the command replays each
// shrunk case's file itself.
func (c *Case) Scenario(name string) *scenarios.Scenario {
	sc := &scenarios.Scenario{Name: name, Story: "a world drawn by redlock-sim search", Knobs: slices.Clone(c.Knobs)}
	for _, f := range c.Faults {
		st := scenarios.Step{Action: f.Action}
		if f.On != nil {
			st.On = &scenarios.Trigger{Event: model.EvAcquired, Client: f.On.Client, Nth: scenarios.Value{N: f.On.Nth, Set: true}}
			st.After = scenarios.Value{Dur: f.On.After, Set: f.On.After > 0}
		} else {
			st.At = dur(f.At)
		}
		sc.Steps = append(sc.Steps, st)
	}
	return sc
}

// run runs the case as `run --scenario-file FILE --seed SEED` runs its file.
func (c *Case) run(ctx context.Context) (*experiments.Record, error) {
	rec, err := experiments.RunScenario(ctx, c.Scenario("search-run"), nil, c.Seed, experiments.Options{})
	if err != nil {
		return nil, fmt.Errorf("search: a drawn world does not run (a bug): %w\n%s", err, c.YAML("search-run", "", "", ""))
	}
	return rec, nil
}
