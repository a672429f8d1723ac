package search

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
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
		fmt.Fprintf(&b, "    %s: {%s}\n", f.Kind, f.Args)
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

// scenario parses the case's file, as `run --scenario-file` does.
func (c *Case) scenario(name, story, source, expect string) (*scenarios.Scenario, error) {
	return scenarios.ParseFile(name+".yaml", c.YAML(name, story, source, expect))
}

// run runs the case through the scenario file's path, the same code as
// `run --scenario-file FILE --seed SEED`.
func (c *Case) run(ctx context.Context) (*experiments.Record, error) {
	sc, err := c.scenario("search-run", "a world drawn by redlock-sim search", "redlock-sim search", "")
	if err != nil {
		return nil, fmt.Errorf("search: a drawn world does not read back as a scenario (a bug): %w\n%s", err, c.YAML("search-run", "", "", ""))
	}
	return experiments.RunScenario(ctx, sc, nil, c.Seed, experiments.Options{})
}
