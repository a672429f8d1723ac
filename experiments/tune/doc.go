// Package tune answers the question an engineer brings to Redlock — which ttl,
// drift_factor, drift_pad, retry delay, jitter, tries and per-node timeout, and should the
// holder extend — from the environment they can describe and the targets they must meet.
//
// It exists because that answer used to take a dozen commands and a hand conversion from a
// p99 latency to a lognormal sigma, and because the answer is only believable with its
// working shown. The package holds all of `redlock-sim tune` except its flags and its
// figures:
//
//   - fitting a distribution to the percentiles people actually know
//     (ParsePercentiles, FitPercentiles), spelled back as a knob value (Fit.Knob);
//   - honest confidence bounds for rare events, which stay meaningful when zero violations
//     are seen (ClopperPearson, UpperBound, RuleOfThree, RateOf);
//   - the Redlock arithmetic from first principles, each recommended value returned with
//     the lines of arithmetic that bound it, and the conflicts between targets named with
//     their size (Recommend and the step functions it calls);
//   - the confirmation by simulation (Prepare, then Plan.Run): sweeps of the recommended
//     ttl and its neighbours, in rounds until the bounds meet the targets or --max-seeds
//     is spent, pooled into Outcomes and judged into a Report;
//   - for a lock held by a ZooKeeper session (client=curator, Curator's InterProcessMutex),
//     which has no ttl, the session's arithmetic instead (session.go): the session timeout
//     bounded by partitions, pauses and clocks from below and by the unavailability target
//     from above, the ensemble's tick and session limits, on_suspended, the fencing token,
//     the connection timeout and the retry policy; its confirmation sweeps session_timeout;
//   - the recommendation in each lock library's own terms (library.go, snippets.go) and
//     the report's text (report.go).
//
// The fitting, the bounds and the arithmetic are deterministic functions of their
// arguments: no clock reads, no random draws, no goroutines and no map iteration reaching
// output. The confirmation runs on the sweep runner's workers, and each round is a
// deterministic function of the rounds before it, so a tune report is as reproducible as
// a simulation run whatever the number of workers.
package tune
