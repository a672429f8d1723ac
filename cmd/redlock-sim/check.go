package main

import (
	"context"
	"fmt"
	"io"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// runCheck is `redlock-sim check`: a scenario's expectations (its file's check: rules)
// run over its seeds, each rule reported with the share of seeds that kept it; every
// built-in scenario when none is named. A broken rule exits 1.
func runCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	scenario := fs.String("scenario", "", "check the built-in scenario called `NAME` (default: every built-in scenario)")
	scenarioFile := fs.String("scenario-file", "", "check the scenario written in `FILE`")
	seeds := fs.Int("seeds", 0, "run seeds 1..`N` (default: the number the scenario's check names, 20 unless it says)")
	sets := fs.StringArray("set", nil, "set a knob or a scenario parameter, `name=value` (repeatable)")
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: check takes no arguments, got %q", errUsage, fs.Args())
	}
	if *scenario != "" && *scenarioFile != "" {
		return fmt.Errorf("%w: give --scenario or --scenario-file, not both", errUsage)
	}
	if *seeds < 0 || *seeds > scenarios.MaxCheckSeeds {
		return fmt.Errorf("%w: --seeds %d: allowed 1 to %d", errUsage, *seeds, scenarios.MaxCheckSeeds)
	}
	settings, err := parseSets(*sets)
	if err != nil {
		return err
	}
	var list []scenarios.Scenario
	switch {
	case *scenarioFile != "":
		sc, err := scenarios.LoadFile(*scenarioFile)
		if err != nil {
			return userError(err)
		}
		list = []scenarios.Scenario{*sc}
	case *scenario != "":
		sc, err := scenarios.LookupScenario(*scenario)
		if err != nil {
			return userError(err)
		}
		list = []scenarios.Scenario{*sc}
	default:
		list = scenarios.Scenarios()
	}
	broken, total := 0, 0
	for i := range list {
		sc := &list[i]
		if sc.Check == nil {
			fmt.Fprintf(stdout, "%s: no check: rules in its file, nothing to verify\n", sc.Name)
			continue
		}
		if err := experiments.CheckInert(sc, settings); err != nil {
			return userError(err)
		}
		n := *seeds
		if n == 0 {
			n = sc.Check.Seeds
		}
		results, err := experiments.CheckScenario(context.Background(), sc, settings, n)
		if err != nil {
			return userError(err)
		}
		fmt.Fprintf(stdout, "%s, seeds 1-%d:\n", sc.Name, n)
		for _, r := range results {
			fmt.Fprintf(stdout, "  %s\n", r)
			total++
			if !r.Held {
				broken++
			}
		}
	}
	if broken > 0 {
		return fmt.Errorf("check: %d of %d rules broken", broken, total)
	}
	fmt.Fprintf(stdout, "all %d rules held\n", total)
	return nil
}
