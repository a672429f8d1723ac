package world

import (
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// PlanOption changes how Plan lays out a world.
type PlanOption func(*planOptions)

type planOptions struct {
	algorithms []knobs.Algorithm
}

// WithAlgorithm makes algorithm a available to the world being planned, beside the
// registered ones, for the `algorithm` knob to name: how a test or an experiment runs a
// lock algorithm that is not (yet) in the registry.
func WithAlgorithm(a knobs.Algorithm) PlanOption {
	return func(o *planOptions) { o.algorithms = append(o.algorithms, a) }
}

// algorithm returns the algorithm cfg names and its clients' factory, among the registered ones and
// those the options add.
func (o *planOptions) algorithm(cfg *knobs.Config) (knobs.Algorithm, lock.Factory, error) {
	a, err := knobs.LookupAlgorithm(cfg.Algorithm, o.algorithms...)
	if err != nil {
		return a, nil, err
	}
	f, err := a.New(cfg)
	return a, f, err
}
