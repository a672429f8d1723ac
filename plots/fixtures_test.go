package plots

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

var rewrite = flag.Bool("rewrite", false, "regenerate the sweep fixtures under testdata/ from their spec.yaml (then read the diff)")

// fixtures are the sweep folders under testdata/, each the output of the real sweep engine
// for the spec.yaml beside it (see sweep_test.go for what each one sweeps).
var fixtures = []string{"sweep-one", "sweep-two", "sweep-three", "sweep-latency"}

// fixtureFiles are the files of a fixture that the sweep writes.
var fixtureFiles = []string{sweep.RunsFile, sweep.SummaryFile, sweep.ManifestFile}

// sweepFixture runs a fixture's spec.yaml through the sweep engine and the simulated
// world, as `redlock-sim sweep` does, into a new folder, and returns that folder.
func sweepFixture(t *testing.T, name string) string {
	t.Helper()
	spec, err := sweep.LoadSpec(filepath.Join("testdata", name, "spec.yaml"), experiments.SweepRunner())
	require.NoError(t, err)
	out := t.TempDir()
	_, err = sweep.Run(context.Background(), experiments.SweepRunner(), spec,
		sweep.Options{Dir: out, Tool: "redlock-sim (devel)"})
	require.NoError(t, err)
	return out
}

// TestFixturesAreSweepOutput: each fixture is what the sweep engine writes today for its
// spec.yaml, byte for byte (the manifest's Go version aside), so the figures are tested
// on real files. `go test ./plots -rewrite` regenerates them after a deliberate change to
// what a sweep writes or to the simulated world; read the diff.
func TestFixturesAreSweepOutput(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			got := sweepFixture(t, name)
			dir := filepath.Join("testdata", name)
			for _, f := range fixtureFiles {
				b, err := os.ReadFile(filepath.Join(got, f))
				require.NoError(t, err)
				if *rewrite {
					require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
					continue
				}
				want, err := os.ReadFile(filepath.Join(dir, f))
				require.NoError(t, err)
				if f == sweep.ManifestFile {
					want, b = withoutGoVersion(t, want), withoutGoVersion(t, b)
				}
				assert.Equal(t, string(want), string(b),
					"%s/%s is not what the sweep writes for its spec.yaml: if that change is intended, run go test ./plots -rewrite and read the diff", dir, f)
			}
		})
	}
}

// withoutGoVersion returns a manifest with its Go version blanked: the one field that
// depends on the toolchain and not on the sweep.
func withoutGoVersion(t *testing.T, manifest []byte) []byte {
	t.Helper()
	var m sweep.Manifest
	require.NoError(t, json.Unmarshal(manifest, &m))
	m.GoVersion = ""
	b, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	return b
}
