package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/redlock-sim/redlock-sim/sim"
)

// Shard names one part of a sweep split over machines: shard Index of Count, numbered
// from 1 (as in "--shard 2/3", the convention of Jest and Playwright). The zero Shard is
// the whole sweep, the same as 1/1.
//
// The partition is round-robin by run number: run k (k = point*replicates + replicate)
// belongs to shard k mod Count + 1. Round-robin rather than contiguous blocks because
// neighbouring points often cost alike (a long duration axis, a large N), so blocks would
// give one machine all the slow runs; round-robin gives every shard a slice of every
// point.
type Shard struct {
	Index int // 1 ≤ Index ≤ Count
	Count int // 1 ≤ Count ≤ MaxShards
}

func (s Shard) norm() Shard {
	if s == (Shard{}) {
		return Shard{1, 1}
	}
	return s
}

// String returns "i/n", the form ParseShard reads and the manifest records.
func (s Shard) String() string {
	s = s.norm()
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

func (s Shard) valid() bool {
	s = s.norm()
	return s.Count >= 1 && s.Count <= MaxShards && s.Index >= 1 && s.Index <= s.Count
}

// size returns how many of total runs belong to the shard.
func (s Shard) size(total int) int {
	s = s.norm()
	first := s.Index - 1
	if first >= total {
		return 0
	}
	return (total-first-1)/s.Count + 1
}

// Runs returns how many of a sweep's total runs are the shard's, so a command can say how
// big its part is before running it.
func (s Shard) Runs(total int) int { return s.size(total) }

// run returns the run number of the shard's j-th run.
func (s Shard) run(j int) int {
	s = s.norm()
	return s.Index - 1 + j*s.Count
}

// ShardEnv lists the environment variables "--shard auto" reads, in the order it tries
// them.
var ShardEnv = []string{"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"}

// ParseShard reads the value of a shard flag: "i/n" with 1 ≤ i ≤ n ≤ MaxShards, or "auto".
// flag names the flag in messages ("--shard"). count is the shard count given separately
// (0 when not given): "auto" needs it (countFlag names that flag in messages), and "i/n"
// checks n against it when both are given.
//
// "auto" takes the index from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job, 0-based) or
// else SLURM_ARRAY_TASK_ID (a Slurm job array; SLURM_ARRAY_TASK_MIN is subtracted when set,
// so --array=0-7 and --array=1-8 both work; arrays with a step are not supported), read
// through getenv (os.Getenv in production). Every error is a *UsageError wrapping a
// *sim.ParamError that names the flag or variable, the value and the allowed range.
func ParseShard(flag, value, countFlag string, count int, getenv func(string) string) (Shard, error) {
	if count < 0 || count > MaxShards {
		return Shard{}, badParam(countFlag, count, fmt.Sprintf("[1, %d]", MaxShards))
	}
	if value == "auto" {
		return autoShard(flag, countFlag, count, getenv)
	}
	allowed := fmt.Sprintf("i/n with 1 ≤ i ≤ n ≤ %d (shards count from 1), or auto", MaxShards)
	is, ns, ok := strings.Cut(value, "/")
	i, errI := strconv.Atoi(is)
	n, errN := strconv.Atoi(ns)
	s := Shard{Index: i, Count: n}
	if !ok || errI != nil || errN != nil || !s.valid() || s == (Shard{}) {
		return Shard{}, badParam(flag, value, allowed)
	}
	if count != 0 && count != n {
		return Shard{}, usagef("%s = %s and %s = %d disagree on the number of shards", flag, value, countFlag, count)
	}
	return s, nil
}

func autoShard(flag, countFlag string, count int, getenv func(string) string) (Shard, error) {
	if count == 0 {
		return Shard{}, usagef("%s = auto needs the number of shards in %s (the Job's completions or the array's size)", flag, countFlag)
	}
	name := ""
	for _, env := range ShardEnv {
		if getenv(env) != "" {
			name = env
			break
		}
	}
	if name == "" {
		return Shard{}, usagef("%s = auto: neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor SLURM_ARRAY_TASK_ID (Slurm job array) is set", flag)
	}
	allowed := fmt.Sprintf("an integer in [0, %d] for %s %d", count-1, countFlag, count)
	raw := getenv(name)
	idx, err := strconv.Atoi(raw)
	if err != nil {
		return Shard{}, &UsageError{Err: sim.BadParam(name, raw, allowed)}
	}
	if lo := getenv("SLURM_ARRAY_TASK_MIN"); name == "SLURM_ARRAY_TASK_ID" && lo != "" {
		m, err := strconv.Atoi(lo)
		if err != nil {
			return Shard{}, &UsageError{Err: sim.BadParam("SLURM_ARRAY_TASK_MIN", lo, "an integer")}
		}
		idx -= m
		allowed = fmt.Sprintf("an integer in [%d, %d] (SLURM_ARRAY_TASK_MIN = %d) for %s %d", m, m+count-1, m, countFlag, count)
	}
	if idx < 0 || idx >= count {
		return Shard{}, &UsageError{Err: sim.BadParam(name, raw, allowed)}
	}
	return Shard{Index: idx + 1, Count: count}, nil
}
