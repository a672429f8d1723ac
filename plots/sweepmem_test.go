package plots

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeBigRuns writes a synthetic runs.csv of rows runs over points points (two swept
// knobs) with the columns a real sweep writes, and no manifest or summary.
func writeBigRuns(t *testing.T, rows, points int) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "runs.csv"))
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "point,replicate,seed,ttl,nodes,trace_hash,any_validity_overlap,any_usage_overlap,any_stale_write,"+
		"validity_overlaps,usage_overlaps,stale_writes_accepted,fenced_writes_rejected,attempts,acquired,failed,"+
		"failures_no_quorum,failures_timeout,failures_validity_expired,failures_fence_failed,failures_aborted,"+
		"acquire_latency_p50_ms,acquire_latency_p90_ms,acquire_latency_p99_ms,acquire_latency_max_ms,split_brain_rounds,"+
		"unheld_while_waiting_ms,extensions_tried,extensions_succeeded,acquisitions_per_s,sim_time_s,events")
	ttls := []string{"1s", "2s", "5s", "10s", "30s"}
	perPoint := rows / points
	for p := range points {
		for r := range perPoint {
			i := p*perPoint + r
			fmt.Fprintf(w, "%d,%d,%d,%s,%d,%016x,%d,%d,%d,%d,%d,%d,0,%d,%d,%d,0,0,0,0,0,%.3f,%.3f,%.3f,%.3f,%d,%.3f,0,0,4.4,300,%d\n",
				p, r, 1000003*i, ttls[p%len(ttls)], 3+2*(p/len(ttls)), i*7919, i%2, i%3/2, i%5/4, i%2, i%3/2, i%5/4,
				100+i%50, 30+i%20, i%4, 1.5+float64(i%10), 800+float64(i%100), 9000+float64(i%1000), 12000.5,
				i%7/6, 512.25, 100000+i)
		}
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return dir
}

// TestReadSweepMemoryIsPerPoint: reading a sweep of 200,000 runs keeps per point only its
// counts and each run's two time percentiles, not the rows: the heap it leaves behind and
// the bytes it allocates per row stay small whatever the file's size.
func TestReadSweepMemoryIsPerPoint(t *testing.T) {
	const rows, points = 200_000, 20
	dir := writeBigRuns(t, rows, points)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sw, err := ReadSweep(dir)
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	allocated := float64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("retained %.0f B/row, allocated %.0f B/row", retained/rows, allocated/rows)
	assert.Less(t, retained/rows, 40.0, "two float64 percentiles per run (16 B) and slice growth, no rows")
	assert.Less(t, allocated/rows, 400.0, "one read buffer per row at most")
	runtime.KeepAlive(sw)
	assert.Equal(t, rows, sw.RunCount())
	require.Len(t, KnobFigures(sw), 2)
	files, err := SweepFigures(dir, t.TempDir())
	require.NoError(t, err)
	assert.Len(t, files, 3)
}
