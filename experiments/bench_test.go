package experiments

import (
	"context"
	"testing"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
)

// BenchmarkBaseline runs one minute of the baseline world per op and reports the kernel
// events per second of machine time, the simulator's speed with the oracle attached.
func BenchmarkBaseline(b *testing.B) {
	b.ReportAllocs()
	var events uint64
	for i := range b.N {
		rec, err := Run(context.Background(), "baseline", nil, uint64(i+1), Options{})
		if err != nil {
			b.Fatal(err)
		}
		events += rec.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

// TestRunAllocationsDoNotGrowWithLength checks that a run's allocations come from setup
// and acquires (each allocates its random lock value), not from each event.
func TestRunAllocationsDoNotGrowWithLength(t *testing.T) {
	if testing.Short() {
		t.Skip("measures two runs")
	}
	allocs := func(d string) (float64, uint64) {
		var rec *Record
		a := testing.AllocsPerRun(3, func() {
			var err error
			rec, err = Run(context.Background(), "baseline", []knobs.KV{{Name: "duration", Value: d}}, 1, Options{})
			if err != nil {
				t.Fatal(err)
			}
		})
		return a, uint64(rec.Liveness.Attempts) + rec.Events
	}
	short, _ := allocs("5s")
	long, n := allocs("50s")
	perEvent := (long - short) / float64(n)
	if perEvent > 0.1 {
		t.Errorf("%.3f allocations per event in steady state (short run %v, long run %v)", perEvent, short, long)
	}
}
