// Package sweep runs parameter sweeps: many simulated worlds, one per (point, replicate),
// over a grid (or zip) of knob values read from a YAML spec, and writes their results as
// CSV files that are byte-identical whatever the number of workers, the scheduling, the
// sharding or the interruptions along the way.
//
// The package knows nothing about Redlock. It talks to the simulated world through
// Runner, so that the engine (seeds, workers, ordering, files, resume, shards, merge) can be
// built and tested on its own and any world can be swept.
//
// # Runs and seeds
//
// A spec expands to points: with combine: grid (the default) the Cartesian product of its
// axes, the first axis in the file varying slowest (nested loops in file order); with
// combine: zip the i-th value of every axis. Point i, replicate r (both from 0) is run
// number k = i*replicates + r, and its world seed is RunSeed(spec seed, i, r), a function of
// those three numbers only.
//
// # Files
//
// A sweep folder holds
//
//   - runs.csv: a header and one row per run in run order: point, replicate, seed, the
//     canonical value of each swept knob, then the Runner's columns. Rows are appended and
//     written with one write call each as soon as all earlier runs are written, so a kill -9
//     loses at most the row being written.
//   - summary.csv: one row per point: point, swept knobs, runs, then the statistics of
//     each column (see StatColumns).
//     Written to summary.csv.tmp as points complete and renamed at the end, so it exists
//     only when it is complete. A shard folder (shard i/n with n > 1) has none: Merge
//     writes it.
//   - manifest.json: see Manifest. Written at the start marked incomplete and rewritten at
//     the end marked complete, each time atomically (temporary file and rename).
//
// # Resume, shards and merge
//
// Run with Options.Resume continues a folder left by a sweep that was cancelled, failed or
// killed at any moment: it checks that the manifest records the same sweep (spec, shard,
// columns, program), checks every row already in runs.csv, drops a torn last line, and runs
// only what is missing, so the finished folder is byte-identical to an uninterrupted one.
// Its checks guard against accidents, not against someone who edits a row and its sum
// alike (see SumsFile); Options.Verify re-runs every kept row.
// Options.Shard runs one part of a round-robin partition of the runs (see Shard); Merge
// joins the complete shard folders into the files of the unsharded sweep.
//
// # Locking
//
// Run, Merge and the figures of a command hold the folder's lock (see LockFile) from
// before the first byte written to after the last: a caller that draws into the folder
// after Run or Merge returns takes the lock itself with LockFolder and passes it in the
// options. Taking the lock removes the temporary files a kill left (IsTempFile).
// VerifyFolder checks a folder for a reader with the checks resume makes.
//
// # Errors
//
// Everything that is the user's to fix (a spec problem, with its file and line, a bad
// option, a folder that holds other results, a resume or merge that does not fit) is a
// *SpecError or a *UsageError, reported before any file is written; IsUsage tells a
// command-line interface to exit with status 2.
//
// # Number formats
//
// Integers print in decimal. Floats print as the shortest decimal that reads back to the
// same float64 (strconv.FormatFloat(v, 'g', -1, 64)). Summary statistics use only
// correctly rounded IEEE-754 operations (+, -, *, /, sqrt) in a fixed order, with explicit
// float64 conversions where Go would otherwise be allowed to fuse a multiply-add, so the
// same rows give the same bytes on every machine.
package sweep
