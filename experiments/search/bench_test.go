package search

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// benchSpec is the pause search of the tests, built without a *testing.T.
func benchSpec(b *testing.B) *Spec {
	s := &Spec{Seed: 1, MaxSplitBrain: -1, Faults: []string{"pause_client"}}
	for _, text := range []string{"ttl=1s", "pause_len<=2s"} {
		a, err := ParseAssumption(text)
		if err != nil {
			b.Fatal(err)
		}
		s.Assume = append(s.Assume, a)
	}
	return s
}

// BenchmarkSearchRun is one search run as the sweep engine's worker does it: draw the
// world from its seed, build its scenario, run it, classify it.
// BenchmarkSameWorldParsed runs the same 64 worlds already drawn and parsed, as a sweep of
// them would: the difference is what search adds to a run (docs/BENCHMARKS.md).
func BenchmarkSearchRun(b *testing.B) {
	r := &runner{s: benchSpec(b), found: make([]atomic.Int64, len(kindTable))}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := r.Run(context.Background(), nil, uint64(i%64)+1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSameWorldParsed(b *testing.B) {
	s := benchSpec(b)
	var scs []*scenarios.Scenario
	for i := range 64 {
		sc, err := s.Draw(uint64(i)+1).scenario("search-run", "", "", "")
		if err != nil {
			b.Fatal(err)
		}
		scs = append(scs, sc)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := experiments.RunScenario(context.Background(), scs[i%64], nil, uint64(i%64)+1, experiments.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDraw is what search adds to each run: the draw and the scenario built from it.
func BenchmarkDraw(b *testing.B) {
	s := benchSpec(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = s.Draw(uint64(i%64) + 1).Scenario("search-run")
	}
}
