package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
)

// fakeRunner stands in for the simulated world: its values are a deterministic function of
// (knobs, seed), drawn from sim.NewRand like a real world's. jitter sleeps a random real
// time per run (tests only) to scramble the order in which runs finish; spin burns CPU for
// benchmarks.
type fakeRunner struct {
	jitter time.Duration
	spin   int
	// fail, when set, makes a run fail if it returns an error.
	fail  func(knobs []KV, seed uint64) error
	calls atomic.Int64
}

var fakeKnobNames = []string{"scenario", "duration", "ttl", "retry_jitter", "nodes", "drift_factor"}

func (f *fakeRunner) Knob(name, value string) (string, error) {
	switch name {
	case "scenario":
		switch value {
		case "baseline", "gc-pause", "clock-jump":
			return value, nil
		}
		return "", sim.BadParam(name, value, "one of baseline, clock-jump, gc-pause")
	case "duration", "ttl", "retry_jitter":
		d, err := time.ParseDuration(value)
		lo := time.Millisecond
		if name == "retry_jitter" {
			lo = 0
		}
		if err != nil || d < lo || d > time.Hour {
			return "", sim.BadParam(name, value, fmt.Sprintf("a duration in [%v, 1h]", lo))
		}
		return d.String(), nil
	case "nodes":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 99 {
			return "", sim.BadParam(name, value, "an integer in [1, 99]")
		}
		return strconv.Itoa(n), nil
	case "drift_factor":
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || v < 0 || v > 0.5 {
			return "", sim.BadParam(name, value, "a number in [0, 0.5]")
		}
		return formatFloat(v), nil
	}
	return "", fmt.Errorf("unknown knob %q%s", name, suggest(name, fakeKnobNames))
}

func (f *fakeRunner) Columns() []Column {
	return []Column{
		{"validity_overlap", KindBool},
		{"attempts", KindCount},
		{"acquire_p99_ms", KindMillis},
		{"acquisitions_per_s", KindFloat},
		{"trace_hash", KindText},
	}
}

func (f *fakeRunner) Run(ctx context.Context, knobs []KV, seed uint64) ([]Value, error) {
	f.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.fail != nil {
		if err := f.fail(knobs, seed); err != nil {
			return nil, err
		}
	}
	if f.jitter > 0 {
		time.Sleep(rand.N(f.jitter))
	}
	h := uint64(14695981039346656037)
	for _, kv := range knobs {
		for _, s := range []string{kv.Name, "=", kv.Value, ";"} {
			for i := 0; i < len(s); i++ {
				h = (h ^ uint64(s[i])) * 1099511628211
			}
		}
	}
	for i := 0; i < f.spin; i++ {
		h = h*6364136223846793005 + 1442695040888963407
	}
	rng := sim.NewRand(seed^h, "fake")
	attempts := rng.IntN(40)
	var p99 Value
	if attempts > 0 {
		p99 = FloatValue(math.Round(rng.Float64()*1e6) / 1e3)
	}
	var rate Value
	if rng.IntN(10) > 0 {
		rate = FloatValue(rng.Float64() * 50)
	}
	return []Value{
		BoolValue(rng.Float64() < 0.3),
		IntValue(int64(attempts)),
		p99,
		rate,
		StringValue(fmt.Sprintf("%016x", rng.Uint64()^h)),
	}, nil
}

const exampleSpec = `base:
  scenario: baseline
  duration: 20s
axes:
  ttl: [200ms, 1s]
  nodes: [3, 5]
replicates: 3
seed: 11
`

// engineSpec is bigger than one reorder window (64) so that the window wraps.
const engineSpec = `base:
  scenario: baseline
  duration: 20s
axes:
  ttl: [200ms, 1s, 5s]
  nodes: [3, 5]
  drift_factor: {from: 0, to: 0.05, steps: 3}
replicates: 7
seed: 11
`

func mustSpec(t testing.TB, text string) *Spec {
	t.Helper()
	s, err := ParseSpec("test.yaml", []byte(text), &fakeRunner{})
	require.NoError(t, err)
	return s
}

func runSweep(t testing.TB, r Runner, s *Spec, opt Options) Stats {
	t.Helper()
	if opt.Tool == "" {
		opt.Tool = "test"
	}
	st, err := Run(context.Background(), r, s, opt)
	require.NoError(t, err)
	return st
}

// resultBytes reads the three result files of dir; a missing file reads as nil.
func resultBytes(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range []string{RunsFile, SummaryFile, ManifestFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		out[name] = b
	}
	return out
}

// snapshot reads every file of dir, to check that a refused operation changed nothing.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

// requireSameResults compares the result files of two folders byte for byte.
func requireSameResults(t testing.TB, want, got string) {
	t.Helper()
	w, g := resultBytes(t, want), resultBytes(t, got)
	for _, name := range []string{RunsFile, SummaryFile, ManifestFile} {
		require.NotEmpty(t, w[name], "%s in %s", name, want)
		require.Equal(t, string(w[name]), string(g[name]), "%s differs between %s and %s", name, want, got)
	}
}

// countingProgress records Advance calls and can cancel a sweep after a number of rows.
type countingProgress struct {
	cancelAt int
	cancel   func()
	begin    [2]int
	last     int
	ended    bool
}

func (p *countingProgress) Begin(total, done int) { p.begin = [2]int{total, done} }
func (p *countingProgress) Advance(done int) {
	p.last = done
	if p.cancel != nil && done >= p.cancelAt {
		p.cancel()
	}
}
func (p *countingProgress) End() { p.ended = true }

func sha256Hex(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

func atof(t testing.TB, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return f
}

func sortFloats(v []float64) { slices.Sort(v) }

func nanValue() float64 { return math.NaN() }
