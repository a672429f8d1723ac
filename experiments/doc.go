// Package experiments assembles simulated worlds from a configuration, holds the scenario
// catalogue and the oracle that judges safety and liveness in true time, and runs sweeps
// whose results depend only on their seeds, never on worker count or scheduling.
package experiments
