package search

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments"
)

// shrinker shrinks one case while a kind of finding still shows, within a budget of runs.
type shrinker struct {
	s      *Spec
	kind   string
	budget int
	runs   int
	cur    *Case
}

// Shrink returns the simplest case it finds, within budget runs, that still shows kind,
// and the runs it spent. It shrinks the choices that generated c, not the world, so every
// case it tries is one the search could have drawn: it deletes blocks of choices, sets
// choices to 0 (off, the default, the shortest), halves them and lowers them by one,
// and tries the world seed 1. A candidate is kept only if it is simpler (shortlex on its
// choices, or the same choices with seed 1), its schedule has no more faults and no more
// fault time, and it still shows kind. Everything is in a fixed order, so shrinking is as
// deterministic as a run.
func (s *Spec) Shrink(ctx context.Context, kind string, c *Case, budget int) (*Case, int, error) {
	sh := &shrinker{s: s, kind: kind, budget: budget, cur: c}
	if err := sh.loop(ctx); err != nil {
		return nil, sh.runs, err
	}
	return sh.cur, sh.runs, nil
}

func (sh *shrinker) loop(ctx context.Context) error {
	if sh.cur.Seed != 1 {
		if _, err := sh.try(ctx, sh.cur.Choices, 1); err != nil {
			return err
		}
	}
	for improved := true; improved && sh.runs < sh.budget; {
		improved = false
		for _, pass := range []func(context.Context) (bool, error){sh.dropFaults, sh.deleteBlocks, sh.zero, sh.lower} {
			ok, err := pass(ctx)
			if err != nil {
				return err
			}
			improved = improved || ok
		}
	}
	return nil
}

// dropFaults tries the case without each of its faults, from the last: the fault's
// choices cut out, and the choice that led to it (its kind on, or "another?") set to 0
// when it was its kind's last.
func (sh *shrinker) dropFaults(ctx context.Context) (bool, error) {
	any := false
	for i := len(sh.cur.Faults) - 1; i >= 0 && sh.runs < sh.budget; i-- {
		if i >= len(sh.cur.Faults) {
			continue
		}
		ok, err := sh.try(ctx, sh.cur.withoutFault(i), sh.cur.Seed)
		if err != nil {
			return any, err
		}
		any = any || ok
	}
	return any, nil
}

// withoutFault returns the choices of c without its fault i.
func (c *Case) withoutFault(i int) Choices {
	sp := c.Faults[i].span
	out := slices.Clone(c.Choices)
	last := out[sp.end-1] == 0
	switch {
	case last && sp.prev < 0:
		out[sp.on] = 0
	case last:
		out[c.Faults[sp.prev].span.end-1] = 0
	}
	return slices.Delete(out, sp.start, sp.end)
}

// deleteBlocks tries the choices without each block of 8, 4, 2 and 1, from the end.
func (sh *shrinker) deleteBlocks(ctx context.Context) (bool, error) {
	any := false
	for _, k := range []int{8, 4, 2, 1} {
		for i := len(sh.cur.Choices) - k; i >= 0 && sh.runs < sh.budget; i-- {
			if i+k > len(sh.cur.Choices) {
				continue
			}
			cand := slices.Concat(sh.cur.Choices[:i], sh.cur.Choices[i+k:])
			ok, err := sh.try(ctx, cand, sh.cur.Seed)
			if err != nil {
				return any, err
			}
			any = any || ok
		}
	}
	return any, nil
}

// zero tries each choice, from the first, at 0.
func (sh *shrinker) zero(ctx context.Context) (bool, error) {
	any := false
	for i := 0; i < len(sh.cur.Choices) && sh.runs < sh.budget; i++ {
		if sh.cur.Choices[i] == 0 {
			continue
		}
		cand := slices.Clone(sh.cur.Choices)
		cand[i] = 0
		ok, err := sh.try(ctx, cand, sh.cur.Seed)
		if err != nil {
			return any, err
		}
		any = any || ok
	}
	return any, nil
}

// lower tries each choice halved, then one less.
func (sh *shrinker) lower(ctx context.Context) (bool, error) {
	any := false
	for i := 0; i < len(sh.cur.Choices) && sh.runs < sh.budget; i++ {
		for _, f := range []func(uint64) uint64{func(v uint64) uint64 { return v / 2 }, func(v uint64) uint64 { return v - 1 }} {
			if i >= len(sh.cur.Choices) || sh.cur.Choices[i] < 2 || sh.runs >= sh.budget {
				break
			}
			cand := slices.Clone(sh.cur.Choices)
			cand[i] = f(cand[i])
			ok, err := sh.try(ctx, cand, sh.cur.Seed)
			if err != nil {
				return any, err
			}
			any = any || ok
		}
	}
	return any, nil
}

// try runs the case choices generate with seed and keeps it if it is simpler, no bigger,
// and still shows the kind. A candidate that generates the current case again costs no run.
func (sh *shrinker) try(ctx context.Context, choices Choices, seed uint64) (bool, error) {
	c := sh.s.Replay(choices, seed)
	simpler := c.Choices.less(sh.cur.Choices) || (seed < sh.cur.Seed && !sh.cur.Choices.less(c.Choices))
	steps, length := c.Size()
	curSteps, curLength := sh.cur.Size()
	if !simpler || steps > curSteps || length > curLength {
		return false, nil
	}
	sh.runs++
	rec, err := c.run(ctx)
	if err != nil {
		return false, err
	}
	if !slices.Contains(sh.s.classify(recordFigures(rec)), sh.kind) {
		return false, nil
	}
	sh.cur = c
	return true, nil
}

// shrinkFinding shrinks a finding's first run and writes its scenario file.
func (s *Spec) shrinkFinding(ctx context.Context, f *Finding, budget int, dir string) error {
	first := s.Draw(f.FirstSeed)
	f.FaultsBefore = len(first.Faults)
	c, runs, err := s.Shrink(ctx, f.Kind, first, budget)
	if err != nil {
		return err
	}
	rec, err := c.run(ctx)
	if err != nil {
		return err
	}
	f.Case, f.ShrinkRuns = c, runs
	f.Story = c.Story(f.Kind, rec)
	f.File = filepath.Join(dir, f.Kind+".yaml")
	source := fmt.Sprintf("redlock-sim search --seed %d, run %d (world seed %d), shrunk in %d runs; replay: redlock-sim run --scenario-file %s --seed %d",
		s.Seed, f.FirstRun, f.FirstSeed, runs, f.File, c.Seed)
	return os.WriteFile(f.File, c.YAML("search-"+strings.ReplaceAll(f.Kind, "_", "-"), f.Story, source, f.Kind+": "+kindTable[kindIndex(f.Kind)].Help), 0o644)
}

// Story tells the case in one paragraph: the world, each fault in time order as drawn,
// and what broke, from the run's record.
func (c *Case) Story(kind string, rec *experiments.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clients, %d nodes, %s %s", c.Clients, c.Nodes, c.Lease, c.TTL)
	var set []string
	for _, kv := range c.Knobs {
		switch kv.Name {
		case "clients", "duration", "ttl", "nodes":
			continue
		}
		set = append(set, kv.Name+" "+kv.Value)
	}
	if len(set) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(set, ", "))
	}
	b.WriteString(". ")
	// The faults at a time in time order, then those that wait for an acquisition.
	faults := slices.Clone(c.Faults)
	slices.SortStableFunc(faults, func(x, y Fault) int {
		switch {
		case (x.On == nil) != (y.On == nil):
			if x.On == nil {
				return -1
			}
			return 1
		case x.On == nil:
			return cmp.Compare(x.At, y.At)
		}
		return 0
	})
	for i, f := range faults {
		if i > 0 {
			b.WriteString("; ")
		}
		if f.On != nil {
			fmt.Fprintf(&b, "%s after %s's acquisition #%d, %s", f.On.After, f.On.Client, f.On.Nth, f.Text)
		} else {
			fmt.Fprintf(&b, "at %s %s", f.At, f.Text)
		}
	}
	if len(c.Faults) == 0 {
		b.WriteString("No fault at all")
	}
	b.WriteString(". ")
	b.WriteString(outcome(kind, rec))
	return b.String()
}

// plural is "s" unless n is 1.
func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// outcome says what broke, from the first violation of kind in the record, or from its
// count when the record's list ended before one.
func outcome(kind string, rec *experiments.Record) string {
	at := func(sec float64) time.Duration {
		return time.Duration(sec * float64(time.Second)).Round(time.Millisecond)
	}
	for _, v := range rec.Violations {
		if v.Kind != kind {
			continue
		}
		switch kind {
		case "validity_overlap":
			return fmt.Sprintf("Then %s and %s both believe they hold %s from %s to %s: a validity overlap.", v.First, v.Second, v.Resource, at(v.StartS), at(v.EndS))
		case "usage_overlap":
			return fmt.Sprintf("Then %s and %s work on %s at once from %s to %s: a usage overlap.", v.First, v.Second, v.Resource, at(v.StartS), at(v.EndS))
		case "stale_write":
			return fmt.Sprintf("Then %s writes to %s at %s after %s acquired it, and the resource accepts it: a stale write.", v.First, v.Resource, at(v.StartS), v.Second)
		}
	}
	l, sf := rec.Liveness, rec.Safety
	switch kind {
	case "validity_overlap", "usage_overlap", "stale_write": // counted, past the violations a record lists
		n := map[string]int64{"validity_overlap": sf.ValidityOverlaps, "usage_overlap": sf.UsageOverlaps,
			"stale_write": sf.StaleWritesAccepted}[kind]
		return fmt.Sprintf("Then %d %s (after the first %d violations, which the record lists: the trace shows them all).",
			n, strings.ReplaceAll(kind, "_", " ")+plural(n), len(rec.Violations))
	case "unavailable":
		if m := l.ReacquireAfterCrashMs.Max; m != nil {
			return fmt.Sprintf("Then a holder's crash keeps the lock from the others for %s.", time.Duration(*m*float64(time.Millisecond)).Round(time.Millisecond))
		}
	case "low_success":
		return fmt.Sprintf("Then only %d of %d acquires succeed.", l.Acquired, l.Acquired+l.Failed)
	case "split_brain":
		return fmt.Sprintf("Then the votes split %d times: no client wins a majority.", l.SplitBrainRounds)
	}
	return "Then: " + kind + "."
}
