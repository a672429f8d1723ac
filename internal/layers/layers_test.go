package layers

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is the module path every package of the project starts with.
const module = "github.com/redlock-sim/redlock-sim/"

// layer places every package of the module (its path inside the module) in a layer: a
// package may import only packages of lower layers. The order is docs/architecture.md's,
// bottom up; packages of one layer never import one another.
var layer = map[string]int{
	// Helpers that are no layer's own job, importable by all.
	"internal/invariant": 0, "internal/suggest": 0, "internal/htmlpage": 0, "internal/redisproc": 0,
	"internal/cmd/emitgen": 0, "internal/layers": 0, "internal/shell": 0, "internal/zkproc": 0,
	"internal/yamltree": 1, "internal/redistest": 1,
	// The kernel, time and the network.
	"sim":      2,
	"sim/dist": 3,
	"clock":    4, "network": 4,
	// The lock protocol, the Redis protocol, and the algorithms.
	"redlock/lock":        5,
	"redlock/resp":        6,
	"redlock/zk":          6,
	"redlock":             7,
	"redlock/redisson":    8,
	"redlock/redisdriver": 8,
	"redlock/curator":     7,
	// The hybrid lock composes two algorithms (Redlock's, Curator's), given as factories.
	"redlock/hybrid": 8,
	// The algorithms' datadriven test harness, and its RESP adapter; imported by tests only.
	"redlock/lock/locktest": 6, "redlock/lock/locktest/resptest": 7,
	// The simulated world: the client process, the storage and the messages, then the
	// lock services' servers beside one another.
	"model":       9,
	"model/redis": 10, "model/zookeeper": 10,
	// Experiments: judging, sweeping, knobs, worlds, stories, reports, the whole.
	"experiments/oracle": 11, "experiments/sweep": 11, "experiments/metric": 11,
	"experiments/knobs":       12,
	"experiments/world":       13,
	"experiments/scenarios":   14,
	"experiments/report":      14,
	"experiments/testbed":     14,
	"experiments/conformance": 14,
	"experiments":             15,
	// tune imports its parent, as net/http/httptest imports net/http: what it needs is the
	// whole run engine (experiments.SweepRunner: knobs and scenario parameters checked, a
	// world planned, run, judged and turned into a record's metric columns) and the metric
	// names, which are the parent's own job; moving them down would empty the parent.
	"experiments/tune": 16,
	// search, like tune, runs worlds through the parent's engine (experiments.RunScenario on a
	// scenario file it writes, experiments.SweepRunner's columns) and the sweep engine's workers.
	"experiments/search": 16,
	// Presentation and the command line. The viewer crops its diagram as plots crops the
	// timeline figure (plots.DefaultWindow), so it sits above plots.
	"plots": 17, "scripts/baselinemillion": 17,
	"cmd/redlock-sim/viewer": 18,
	"cmd/redlock-sim":        19,
}

// never lists imports the layers would allow but the design forbids: the client process
// and the oracle drive and judge any lock algorithm through redlock/lock alone, so that a
// new algorithm needs no change to either; and the knobs, which say what a user may set,
// state their own limits rather than reach into the judge (knobs.MaxClients equals
// oracle.MaxClients by a test in experiments/world, not by an import).
var never = map[string][]string{
	// The client process carries any service's protocol without reading it.
	"model":              {"redlock", "redlock/redisson", "redlock/redisdriver", "redlock/resp"},
	"model/redis":        {"redlock", "redlock/redisson", "redlock/redisdriver"},
	"model/zookeeper":    {"redlock", "redlock/redisson", "redlock/redisdriver", "redlock/resp", "model/redis"},
	"experiments/oracle": {"redlock", "redlock/redisson", "redlock/redisdriver", "redlock/resp"},
	"experiments/knobs":  {"experiments/oracle"},
	// The lock interface carries any service's protocol as an opaque payload: it knows
	// none of them.
	"redlock/lock": {"redlock/resp"},
	// Redisson's RLock is a lock of its own, not a Redlock dialect.
	"redlock/redisson": {"redlock"},
	// Curator's mutex speaks ZooKeeper's protocol alone.
	"redlock/curator": {"redlock", "redlock/resp"},
	// The hybrid lock routes its two clients' requests by server and reads neither
	// protocol.
	"redlock/hybrid": {"redlock/resp", "redlock/zk"},
}

// packages returns every package directory of the module below root with its non-test
// imports inside the module, by path inside the module.
func packages(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var deps []string
		for _, imp := range pkg.Imports {
			if inner, ok := strings.CutPrefix(imp, module); ok {
				deps = append(deps, inner)
			}
		}
		out[rel] = deps
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestImportGraph: every package of the module has a layer, imports only packages of lower
// layers, and none of the imports the design forbids; a package that moves or appears must
// be placed in the table above, which is where the layering is decided.
func TestImportGraph(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module's root")
	pkgs := packages(t, root)
	require.Contains(t, pkgs, "model", "the walk found the module's packages")
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	slices.Sort(names) // failures in a stable order
	for _, p := range names {
		lp, ok := layer[p]
		if !assert.True(t, ok, "package %s has no layer: place it in layers_test.go's table (docs/architecture.md says where new things go)", p) {
			continue
		}
		for _, dep := range pkgs[p] {
			ld, ok := layer[dep]
			if !ok {
				continue // reported as the package itself
			}
			assert.Less(t, ld, lp, "%s (layer %d) imports %s (layer %d): imports point down the layers only", p, lp, dep, ld)
			assert.NotContains(t, never[p], dep, "%s imports %s, which the design keeps out of it", p, dep)
		}
	}
	for p := range layer {
		assert.Contains(t, pkgs, p, "the table places %s, which is no package of the module any more", p)
	}
}
