package experiments

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden traces under testdata/ (then read the diff)")

// golden renders a scenario's narrated trace for seed 1 in its window, framed by its story
// and followed by its summary: the teaching transcript kept under testdata/.
func golden(t *testing.T, sc scenarios.Scenario) []byte {
	t.Helper()
	var trace, out bytes.Buffer
	rec, err := Run(context.Background(), sc.Name, nil, 1, Options{Trace: &trace, From: sc.Window[0], To: sc.Window[1]})
	require.NoError(t, err)
	window := "the whole run"
	if sc.Window != [2]time.Duration{} {
		window = sc.Window[0].String() + " to "
		if sc.Window[1] == 0 {
			window += "the end"
		} else {
			window += sc.Window[1].String()
		}
	}
	out.WriteString("# scenario " + sc.Name + ": " + sc.Story + "\n")
	out.WriteString("# source: " + sc.Source + "\n")
	out.WriteString("# expect: " + sc.Expect + "\n")
	out.WriteString("# seed 1, trace of " + window + "; regenerate: go test ./experiments -rewrite\n")
	out.WriteString("# columns: true time, !! fault / ** violation, actor, the actor's own clock, event\n")
	out.WriteString("# under a violation, [n] spells out a fault in effect, once; later lines refer to it by number\n")
	out.Write(trace.Bytes())
	out.WriteString("# summary\n")
	require.NoError(t, WriteSummary(&out, rec))
	return out.Bytes()
}

func TestGoldenTraces(t *testing.T) {
	for _, sc := range scenarios.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			got := golden(t, sc)
			path := filepath.Join("testdata", sc.Name+".trace")
			if *rewrite {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, got, 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "no golden trace: run go test ./experiments -rewrite")
			assert.Equal(t, string(want), string(got), "trace of %s changed: if intended, run go test ./experiments -rewrite and read the diff", sc.Name)
		})
	}
}

func TestGoldenTracesStayShort(t *testing.T) {
	for _, sc := range scenarios.Scenarios() {
		lines := bytes.Count(golden(t, sc), []byte("\n"))
		assert.LessOrEqual(t, lines, 400, "%s: a teaching transcript should be readable; narrow its Window", sc.Name)
		assert.GreaterOrEqual(t, lines, 15, "%s: the window shows almost nothing", sc.Name)
	}
}

func TestSameSeedSameTraceHash(t *testing.T) {
	for _, name := range []string{"baseline", "gc-pause", "split-brain-no-jitter"} {
		hash := func() string {
			r, err := Run(context.Background(), name, []knobs.KV{{Name: "duration", Value: "10s"}}, 7, Options{})
			require.NoError(t, err)
			return r.TraceHash
		}
		first := hash()
		for range 2 {
			assert.Equal(t, first, hash(), name)
		}
		for _, procs := range []int{1, 2} {
			old := runtime.GOMAXPROCS(procs)
			assert.Equal(t, first, hash(), "%s under GOMAXPROCS=%d", name, procs)
			runtime.GOMAXPROCS(old)
		}
	}
}

func TestTracingDoesNotChangeTheRun(t *testing.T) {
	plain, err := Run(context.Background(), "baseline", []knobs.KV{{Name: "duration", Value: "5s"}}, 3, Options{})
	require.NoError(t, err)
	var buf bytes.Buffer
	traced, err := Run(context.Background(), "baseline", []knobs.KV{{Name: "duration", Value: "5s"}}, 3, Options{Trace: &buf})
	require.NoError(t, err)
	assert.Equal(t, plain.TraceHash, traced.TraceHash)
	assert.Equal(t, plain.Metrics(), traced.Metrics())
	assert.Greater(t, buf.Len(), 1000)
}

func TestDifferentSeedsDiffer(t *testing.T) {
	seen := map[string]uint64{}
	for seed := uint64(1); seed <= 5; seed++ {
		r, err := Run(context.Background(), "baseline", []knobs.KV{{Name: "duration", Value: "5s"}}, seed, Options{})
		require.NoError(t, err)
		prev, dup := seen[r.TraceHash]
		assert.False(t, dup, "seeds %d and %d give the same trace", prev, seed)
		seen[r.TraceHash] = seed
	}
}
