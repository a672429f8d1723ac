package sweep

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
)

// benchSpec returns a spec of points × replicates runs.
func benchSpec(b *testing.B, points, replicates int) *Spec {
	if points == 1 {
		return mustSpec(b, fmt.Sprintf("replicates: %d\nseed: 1\n", replicates))
	}
	return mustSpec(b, fmt.Sprintf(`axes:
  ttl: {from: 1ms, to: %dms, steps: %d}
replicates: %d
seed: 1
`, points, points, replicates))
}

// BenchmarkSweep measures the throughput of the engine with a CPU-bound fake world (about
// 0.22 ms of arithmetic per run) at 1 and 2 workers. The engine must not be the bottleneck
// of a sweep: on a 2-core machine, 2 workers should run at least 1.8× the runs per second
// of 1 worker. One op is one run: the sweep has b.N runs, so the fixed cost of a sweep
// (creating files, fsync) is spread as it is in a real sweep of thousands of runs.
func BenchmarkSweep(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			s := benchSpec(b, 1, b.N)
			r := &fakeRunner{spin: 200_000}
			dir := b.TempDir()
			b.ResetTimer()
			if _, err := Run(context.Background(), r, s, Options{Dir: dir, Workers: w, Tool: "bench"}); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

// heapProbe samples memory as rows are written. Every tenth of the sweep it forces a GC
// and reads the live heap, which is what the sweep retains (its growth is what "memory
// stays flat" is about); after every row it reads the heap including garbage not yet
// collected, which is what the process holds under the default GC settings.
type heapProbe struct {
	every      int
	samples    []metrics.Sample
	peak, live uint64
}

func newHeapProbe() *heapProbe {
	return &heapProbe{samples: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}}
}

func (h *heapProbe) Begin(total, _ int) { h.every = max(1, total/10) }
func (h *heapProbe) End()               {}

func (h *heapProbe) Advance(done int) {
	if done%h.every == 0 {
		runtime.GC()
	}
	metrics.Read(h.samples)
	h.peak = max(h.peak, h.samples[0].Value.Uint64())
	if done%h.every == 0 {
		h.live = max(h.live, h.samples[1].Value.Uint64())
	}
}

// BenchmarkSweepMemory checks that memory stays flat as a sweep grows: the live heap of a
// 10,000-run sweep must peak within 1.5× of a 100-run sweep's, so that a sweep of any size
// fits in the memory of a small one. Rows stream to disk, the reorder window is bounded
// and the summary holds one point at a time, so nothing in the engine grows with the
// number of runs. Reported, as maxima over all iterations: live-B (live heap
// after a forced GC, sampled ten times per sweep: what the sweep retains, the figure to
// compare) and heap-B (heap objects including uncollected garbage, sampled after every
// row; it grows with the garbage made between the probe's own forced GCs, every tenth of
// the sweep, so it is bigger for the bigger sweep by construction).
func BenchmarkSweepMemory(b *testing.B) {
	for _, size := range []struct{ points, replicates int }{{10, 10}, {100, 100}} {
		runs := size.points * size.replicates
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			s := benchSpec(b, size.points, size.replicates)
			dir := b.TempDir()
			r := &fakeRunner{spin: 1000}
			probe := newHeapProbe()
			for b.Loop() {
				opt := Options{Dir: dir, Workers: 2, Overwrite: true, Tool: "bench", Progress: probe}
				if _, err := Run(context.Background(), r, s, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(probe.live), "live-B")
			b.ReportMetric(float64(probe.peak), "heap-B")
			b.ReportMetric(float64(runs*b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}
