package experiments

import (
	"fmt"
	"strings"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// CheckKnobs checks one world given as knob settings the way the sweep engine passes
// them (the pseudo-knob "scenario" first wherever it appears, then the rest in order):
// every value, and every limit the values reach together (see LimitError), without
// running anything. A sweep calls it for every point before its first run, so that
// --dry-run refuses a point that would abort the sweep part way through.
func CheckKnobs(kvs []knobs.KV) error {
	scenario, rest := splitScenario(kvs)
	sc, err := scenarios.LookupScenario(scenario)
	if err != nil {
		return err
	}
	_, rest, err = sc.Bind(rest)
	if err != nil {
		return err
	}
	cfg := knobs.DefaultConfig()
	if err := cfg.Apply(sc.Knobs); err != nil {
		return fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	if err := cfg.Apply(rest); err != nil {
		return err
	}
	return cfg.Validate()
}

// CheckSpec runs CheckKnobs on every point of a sweep (its base settings, then the
// point's axis settings, as each run gets them), and names the first point that fails
// by its axis settings. It runs nothing, so --dry-run can call it.
func CheckSpec(spec *sweep.Spec) error {
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
	}
	return nil
}
