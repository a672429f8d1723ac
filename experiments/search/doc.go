// Package search finds how a lock can break under stated assumptions, by swarm testing,
// and shrinks each counterexample to the smallest story that still breaks it.
//
// A search draws one world per run from a choice sequence seeded by the run's seed alone
// (the sweep engine's RunSeed of the search seed and the run's index): the knobs inside the
// assumptions, the world's shape, and a fault schedule in which each allowed fault kind is
// on or off and, when on, drawn in number, time, target and length (swarm testing, as
// FoundationDB's simulation and TigerBeetle's VOPR do). Each world is written as a scenario
// file and run through the same code as `run --scenario-file`, on the sweep engine's
// workers, so the findings (findings.csv) are the same for any number of workers.
//
// The first run of each kind of finding is shrunk by shrinking the choices that generated
// it (Hypothesis's way: every shrunk case is one the generator could have drawn), within a
// budget of runs, and written as a scenario file with a story.
package search
