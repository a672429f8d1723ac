package experiments

import (
	"context"
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkStandardWorkload runs one simulated minute of `redlock-sim bench`'s workload per
// op (ten clients sharing one lock, or each with its own) and reports the figures the
// bench command's targets are about. Run it on one core: -cpu 1.
func BenchmarkStandardWorkload(b *testing.B) {
	for _, own := range []bool{false, true} {
		spec := DefaultBenchSpec()
		spec.Duration, spec.OwnLocks = time.Minute, own
		b.Run("locks="+spec.Locks(), func(b *testing.B) { benchWorkload(b, spec) })
	}
}

// BenchmarkZooKeeperWorkload is BenchmarkStandardWorkload's workload run with
// client=curator: Curator's mutex on a 5-server ZooKeeper ensemble (docs/BENCHMARKS.md,
// "ZooKeeper"). Run it on one core: -cpu 1.
func BenchmarkZooKeeperWorkload(b *testing.B) {
	spec := DefaultBenchSpec()
	spec.Duration, spec.Client = time.Minute, "curator"
	benchWorkload(b, spec)
}

// benchWorkload runs spec b.N times and reports the bench command's figures per op.
func benchWorkload(b *testing.B, spec BenchSpec) {
	b.ReportAllocs()
	var cycles, events uint64
	var wall float64
	for range b.N {
		r, err := RunBench(context.Background(), spec, BenchOptions{})
		if err != nil {
			b.Fatal(err)
		}
		cycles += r.Cycles
		events += r.Events
		wall += r.WallTimeS
	}
	b.ReportMetric(wall*1e9/float64(cycles), "ns/cycle")
	b.ReportMetric(wall*1e9/float64(events), "ns/event")
	b.ReportMetric(float64(cycles)/wall, "cycles/s")
	b.ReportMetric(spec.Duration.Seconds()*float64(b.N)/wall, "compression")
}

func TestBenchWorkloadShapes(t *testing.T) {
	spec := DefaultBenchSpec()
	spec.Duration = 5 * time.Second
	shared, err := RunBench(context.Background(), spec, BenchOptions{})
	require.NoError(t, err)
	spec.OwnLocks = true
	own, err := RunBench(context.Background(), spec, BenchOptions{})
	require.NoError(t, err)
	assert.True(t, shared.Safe)
	assert.True(t, own.Safe)
	assert.Equal(t, "shared", shared.Locks)
	assert.Equal(t, "own", own.Locks)
	assert.Greater(t, shared.Attempts, shared.Acquired, "shared: the losers' attempts fail")
	assert.Equal(t, own.Attempts, own.Acquired, "own locks: nobody contends")
	assert.Greater(t, own.Cycles, 5*shared.Cycles, "own locks run cycles in parallel")
	assert.Equal(t, "10", own.Config.Get("resources"))
	assert.Equal(t, "1", shared.Config.Get("resources"))
	assert.Equal(t, "const(5ms)", shared.Config.Get("hold"))
	assert.Positive(t, shared.PeakHeapBytes)

	again, err := RunBench(context.Background(), spec, BenchOptions{})
	require.NoError(t, err)
	assert.Equal(t, own.TraceHash, again.TraceHash, "same seed, same run")
	assert.Equal(t, own.Cycles, again.Cycles)
}

func TestBenchZeroHold(t *testing.T) {
	spec := DefaultBenchSpec()
	spec.Duration, spec.ZeroHold = 2*time.Second, true
	var calls []string
	r, err := RunBench(context.Background(), spec, BenchOptions{
		OnStart: func() { calls = append(calls, "start") }, OnEnd: func() { calls = append(calls, "end") }})
	require.NoError(t, err)
	assert.Equal(t, []string{"start", "end"}, calls)
	assert.Equal(t, "zero-hold", r.Workload)
	assert.Equal(t, "const(0s)", r.Config.Get("hold"))
	assert.Equal(t, "const(0s)", r.Config.Get("think"))
	assert.Positive(t, r.Cycles)
}

// TestBenchReportsItsStaleWrites pins down the one way the fault-free bench workloads go
// unsafe, so that the report's UNSAFE is explained: a client releases right after sending
// its last storage write, and the write can land after the next holder acquired. Nothing
// else may be counted: no two holders' validity or work ever overlaps.
func TestBenchReportsItsStaleWrites(t *testing.T) {
	spec := DefaultBenchSpec()
	spec.Duration, spec.ZeroHold = 5*time.Minute, true
	r, err := RunBench(context.Background(), spec, BenchOptions{})
	require.NoError(t, err)
	assert.False(t, r.Safe)
	assert.Equal(t, r.Safety.Safe(), r.Safe)
	assert.Positive(t, r.Safety.StaleWritesAccepted)
	assert.Zero(t, r.Safety.ValidityOverlaps)
	assert.Zero(t, r.Safety.UsageOverlaps)
	assert.Zero(t, r.Safety.FencedWritesRejected, "the bench does not fence")
}

func TestBenchSpecErrors(t *testing.T) {
	for _, spec := range []BenchSpec{
		{Duration: 0, Clients: 10},
		{Duration: 25 * time.Hour, Clients: 10},
		{Duration: time.Second, Clients: 0},
		{Duration: time.Second, Clients: knobs.MaxClients + 1},
	} {
		_, err := RunBench(context.Background(), spec, BenchOptions{})
		assert.Error(t, err, "%+v", spec)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := RunBench(ctx, DefaultBenchSpec(), BenchOptions{})
	assert.ErrorIs(t, err, context.Canceled)
}
