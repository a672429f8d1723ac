// Package tune answers the question an engineer brings to Redlock — which ttl,
// drift_factor, drift_pad, retry delay, jitter, tries and per-node timeout, and should the
// holder extend — from the environment they can describe and the targets they must meet.
//
// It exists because that answer used to take a dozen commands and a hand conversion from a
// p99 latency to a lognormal sigma, and because the answer is only believable with its
// working shown. The package therefore holds the three pure parts of `redlock-sim tune`
// that run before any simulation:
//
//   - fitting a distribution to the percentiles people actually know
//     (ParsePercentiles, FitPercentiles), spelled back as a knob value (Fit.Knob);
//   - honest confidence bounds for rare events, which stay meaningful when zero violations
//     are seen (ClopperPearson, UpperBound, RuleOfThree, RateOf);
//   - the Redlock arithmetic from first principles, each recommended value returned with
//     the lines of arithmetic that bound it, and the conflicts between targets named with
//     their size (Recommend and the step functions it calls).
//
// Everything here is a deterministic function of its arguments: no clock reads, no random
// draws, no goroutines and no map iteration reaching output, so a tune report is as
// reproducible as a simulation run. The confirmation by simulation is the caller's job.
package tune
