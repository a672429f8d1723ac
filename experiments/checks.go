package experiments

import (
	"fmt"
	"slices"
	"strings"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/model/redis"
)

// CheckKnobs checks one world given as knob settings the way the sweep engine passes
// them (the pseudo-knob "scenario" first wherever it appears, then the rest in order):
// every value, every limit the values reach together (see LimitError), and the
// scenario's schedule against the world the values make (a step naming redis5 in a world
// of three nodes), by assembling the world without running anything. A sweep calls it for
// every point before its first run, so that --dry-run refuses a point that would abort
// the sweep part way through.
func CheckKnobs(kvs []knobs.KV) error {
	scenario, rest := splitScenario(kvs)
	sc, err := scenarios.LookupScenario(scenario)
	if err != nil {
		return err
	}
	cfg, _, _, err := scenarioConfig(sc, rest)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	_, err = AssembleScenario(sc, rest, 1)
	return err
}

// CheckSpec runs CheckKnobs on every point of a sweep (its base settings, then the
// point's axis settings, as each run gets them), and names the first point that fails
// by its axis settings; and it refuses a knob the spec sets that cannot change any of its
// runs (knobs.Config.Inert: pause_len without pause_rate, ...), while one that is inert
// at some points only is a comparison and passes. It runs nothing, so --dry-run can call
// it.
func CheckSpec(spec *sweep.Spec) error {
	inertAt := map[string]int{}
	first := map[string]*knobs.InertError{}
	for i := range spec.Points() {
		point := spec.Point(i)
		kvs := make([]knobs.KV, 0, len(spec.Base)+len(point))
		for _, kv := range append(append([]sweep.KV{}, spec.Base...), point...) {
			kvs = append(kvs, knobs.KV{Name: kv.Name, Value: kv.Value})
		}
		if err := CheckKnobs(kvs); err != nil {
			at := make([]string, len(point))
			for j, kv := range point {
				at[j] = kv.Name + "=" + kv.Value
			}
			return fmt.Errorf("sweep point %d of %d (%s): %w", i+1, spec.Points(), strings.Join(at, " "), err)
		}
		scenario, rest := splitScenario(kvs)
		sc, err := scenarios.LookupScenario(scenario)
		if err != nil {
			return err
		}
		inert, err := inertKnobs(sc, rest)
		if err != nil {
			return err
		}
		for _, e := range inert {
			inertAt[e.Knob]++
			if first[e.Knob] == nil {
				first[e.Knob] = e
			}
		}
	}
	// A knob that changes nothing at some points is a comparison (replicas 0 and 1, say);
	// one that changes nothing at every point is a mistake.
	for _, kv := range spec.Base {
		if inertAt[kv.Name] == spec.Points() {
			return fmt.Errorf("sweep: %w", first[kv.Name])
		}
	}
	for _, a := range spec.Axes {
		if inertAt[a.Knob] == spec.Points() {
			return fmt.Errorf("sweep: axis %s: %w", a.Knob, first[a.Knob])
		}
	}
	return nil
}

// CheckInert refuses a knob the user set that cannot change a run of scenario sc (see
// knobs.Config.Inert): the run would silently be the one without it. When the scenario
// schedules its own version of what the knob tunes (its own pause, its own restart), the
// error names the parameter to set instead.
func CheckInert(sc *scenarios.Scenario, settings []knobs.KV) error {
	inert, err := inertKnobs(sc, settings)
	if err != nil || len(inert) == 0 {
		return err
	}
	return inert[0]
}

// inertKnobs lists the knobs among settings that cannot change a run of sc, in order.
func inertKnobs(sc *scenarios.Scenario, settings []knobs.KV) ([]*knobs.InertError, error) {
	cfg, _, rest, err := scenarioConfig(sc, settings)
	if err != nil {
		return nil, err
	}
	var out []*knobs.InertError
	for _, kv := range rest {
		if why := cfg.Inert(kv.Name); why != "" {
			out = append(out, &knobs.InertError{Knob: kv.Name, Value: kv.Value, Why: why, Hint: ownVersion(sc, kv.Name)})
		}
	}
	return out, nil
}

// nodeFaultOwn returns, for the length knob of a random process fault (node_down), what a
// scenario schedules in its stead and the actions that do it: every node fault's action
// whose fault does what the random one does (a crash's node_down: crash_node, kill_node,
// shutdown_node). It returns nil actions for any other knob.
func nodeFaultOwn(name string) (string, []string) {
	for _, r := range knobs.RandomNodeFaults() {
		if r.Len != name {
			continue
		}
		random, _ := r.Kind.Desc()
		var actions []string
		for _, d := range redis.FaultKinds() {
			if d.Action != "" && d.Effect == random.Effect {
				actions = append(actions, d.Action)
			}
		}
		return r.Own, actions
	}
	return "", nil
}

// ownVersion says which parameter of sc sets the scheduled fault that the random-fault
// knob name would have tuned, or "".
func ownVersion(sc *scenarios.Scenario, name string) string {
	var what string
	var actions []string
	switch name {
	case "pause_len":
		what, actions = "pause", []string{"pause_client"}
	case "partition_len":
		what, actions = "partition", []string{"isolate", "block", "partition"}
	case "clog_len":
		what, actions = "clog", []string{"clog"}
	case "node_clock_jump":
		what, actions = "clock step", []string{"clock_step"}
	default:
		what, actions = nodeFaultOwn(name)
		if actions == nil {
			return ""
		}
	}
	for _, st := range sc.Steps {
		a := st.Action
		if !slices.Contains(actions, a.Kind) {
			continue
		}
		v := a.For
		if d, ok := a.NodeFault(); ok && d.Effect == redis.EffectStop {
			v = a.Restart
		}
		if a.Kind == "clock_step" {
			v = a.By
		}
		if v.Param != "" {
			return fmt.Sprintf("scenario %s schedules its own %s: set its parameter %s instead (--set %s=...)", sc.Name, what, v.Param, v.Param)
		}
		return fmt.Sprintf("scenario %s schedules its own %s (%s:%d); to change it, start from `redlock-sim scenarios --show %s` and run it with --scenario-file",
			sc.Name, what, sc.File, st.Line, sc.Name)
	}
	return ""
}
