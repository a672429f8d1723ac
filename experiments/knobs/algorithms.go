package knobs

import (
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// Algorithm is a lock algorithm a world's clients can run: the value of the `algorithm`
// knob, and how to build the algorithm's clients from a world's knobs. The client process
// (model.Client) drives whatever New returns through the lock.Client interface, and the
// oracle judges it by the neutral lock events it reports, so neither changes for a new
// algorithm.
type Algorithm struct {
	Name string
	Help string
	// New returns the factory of the algorithm's clients for cfg, or the error of the first
	// knob it cannot use.
	New func(cfg *Config) (lock.Factory, error)
}

// algorithmTable is the registry of lock algorithms. A new algorithm is its own package
// (a lock.Client) plus one entry here. It is read-only after package initialisation.
var algorithmTable = []Algorithm{
	{Name: "redlock", Help: "the Redlock page's algorithm (package redlock), with the algorithm knobs below",
		New: func(cfg *Config) (lock.Factory, error) { return redlock.Factory(cfg.Lock) }},
}

// Algorithms returns the registered lock algorithms, in table order.
func Algorithms() []Algorithm { return append([]Algorithm(nil), algorithmTable...) }

func algorithmNames(table []Algorithm) []string {
	out := make([]string, len(table))
	for i, a := range table {
		out[i] = a.Name
	}
	return out
}

// LookupAlgorithm returns the algorithm named name among the registered ones and extra
// (algorithms a world adds for itself, see experiments.WithAlgorithm).
func LookupAlgorithm(name string, extra ...Algorithm) (Algorithm, error) {
	table := append(Algorithms(), extra...)
	for _, a := range table {
		if a.Name == name {
			return a, nil
		}
	}
	names := algorithmNames(table)
	return Algorithm{}, asValueError("algorithm", name, oneOf(names), unknownChoice(name, names))
}
