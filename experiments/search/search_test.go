package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// spec builds a search spec from command-line words.
func spec(t *testing.T, faults string, assume ...string) *Spec {
	t.Helper()
	s := &Spec{Seed: 1, MaxSplitBrain: -1}
	for _, text := range assume {
		a, err := ParseAssumption(text)
		require.NoError(t, err, text)
		s.Assume = append(s.Assume, a)
	}
	var err error
	s.Faults, err = ParseFaults([]string{faults})
	require.NoError(t, err)
	return s
}

// pauses is the search every quick test uses: client pauses of up to twice a 1s ttl.
func pauses(t *testing.T) *Spec { return spec(t, "pause_client", "ttl=1s", "pause_len<=2s") }

func run(t *testing.T, s *Spec, runs, workers int) (*Result, string) {
	t.Helper()
	dir := t.TempDir()
	res, err := Run(context.Background(), s, Options{Dir: dir, Runs: runs, Workers: workers, ShrinkBudget: 100})
	require.NoError(t, err)
	return res, dir
}

// TestEveryFaultKindCanBeDrawn holds the generator to the scenario language: a fault kind
// added to the scenarios without a generator here is one search could never find.
func TestEveryFaultKindCanBeDrawn(t *testing.T) {
	assert.ElementsMatch(t, scenarios.ActionNames(), generators)
	// And every kind draws worlds that read back as scenario files.
	s := spec(t, "all", "variant=single-instance-failover")
	for seed := uint64(1); seed <= 40; seed++ {
		c := s.Draw(seed)
		_, err := c.scenario("x", "", "", "")
		require.NoError(t, err, "seed %d:\n%s", seed, c.YAML("x", "", "", ""))
	}
}

// TestBuiltScenarioIsItsFile: the scenario a search run builds directly runs exactly as its
// file parsed by `run --scenario-file` (the same trace hash), for worlds drawing every fault
// kind, so a run's verdict is its file's.
func TestBuiltScenarioIsItsFile(t *testing.T) {
	for _, s := range []*Spec{spec(t, "all"), spec(t, "all", "variant=single-instance-failover", "ttl=1s")} {
		for seed := uint64(1); seed <= 150; seed++ {
			c := s.Draw(seed)
			built, err := experiments.RunScenario(context.Background(), c.Scenario("search-run"), nil, seed, experiments.Options{})
			require.NoError(t, err)
			sc, err := c.scenario("search-run", "", "", "")
			require.NoError(t, err)
			parsed, err := experiments.RunScenario(context.Background(), sc, nil, seed, experiments.Options{})
			require.NoError(t, err)
			assert.Equal(t, parsed.TraceHash, built.TraceHash, "seed %d:\n%s", seed, c.YAML("x", "", "", ""))
			assert.Equal(t, parsed.Safety, built.Safety)
		}
	}
}

func TestParseAssumption(t *testing.T) {
	a, err := ParseAssumption("client_clock_drift_ppm<=200")
	require.NoError(t, err)
	assert.Equal(t, Assumption{Knob: "client_clock_drift_ppm", Op: OpLE, Lo: "0", Hi: "200", Text: "client_clock_drift_ppm<=200"}, a)
	a, err = ParseAssumption("ttl=500ms..2s")
	require.NoError(t, err)
	assert.Equal(t, OpRange, a.Op)
	assert.Equal(t, []string{"500ms", "2s"}, []string{a.Lo, a.Hi})
	a, err = ParseAssumption("pause_len<=500ms")
	require.NoError(t, err)
	assert.Equal(t, []string{"1ms", "500ms"}, []string{a.Lo, a.Hi})
	a, err = ParseAssumption("nodes>=3")
	require.NoError(t, err)
	assert.Equal(t, []string{"3", "6"}, []string{a.Lo, a.Hi}, "up to twice the bound")
	a, err = ParseAssumption("ttl>=2s")
	require.NoError(t, err)
	assert.Equal(t, []string{"2s", "10s"}, []string{a.Lo, a.Hi}, "up to the default when it is larger")
	a, err = ParseAssumption("persistence=aof-everysec")
	require.NoError(t, err)
	assert.Equal(t, Assumption{Knob: "persistence", Op: OpEq, Value: "aof-everysec", Text: "persistence=aof-everysec"}, a)

	for text, want := range map[string]string{
		"pause_length<=1s":  `unknown knob "pause_length"`,
		"ttl<=fast":         "ttl",
		"nodes=5..3":        "above the upper bound",
		"persistence<=none": "only NAME=VALUE fixes it",
		"ttl":               "want NAME=VALUE",
	} {
		_, err := ParseAssumption(text)
		var ie *InputError
		require.ErrorAs(t, err, &ie, text)
		assert.Contains(t, err.Error(), "--assume "+text, text)
		assert.Contains(t, err.Error(), want, text)
	}
	var ue *knobs.UnknownError
	_, err = ParseAssumption("pause_length<=1s")
	assert.ErrorAs(t, err, &ue, "an unknown knob keeps its suggestions")
	assert.Contains(t, err.Error(), "pause_len")
}

// TestRoundNumbers: drawn lengths read as a person would write them.
func TestRoundNumbers(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		1234 * time.Millisecond: 1200 * time.Millisecond, 57300 * time.Microsecond: 57 * time.Millisecond,
		0: time.Millisecond, 99 * time.Millisecond: 99 * time.Millisecond, 1051 * time.Millisecond: 1100 * time.Millisecond,
	} {
		assert.Equal(t, want, roundDuration(in), "%s", in)
	}
	assert.Equal(t, 0.012, roundSig(0.01234, 2))
}

func TestParseFaults(t *testing.T) {
	got, err := ParseFaults([]string{"crash_node,pause_client", "crash_node"})
	require.NoError(t, err)
	assert.Equal(t, []string{"pause_client", "crash_node"}, got, "the scenario language's order, each once")
	got, err = ParseFaults([]string{"none"})
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = ParseFaults([]string{"crash_nodes"})
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), `--faults crash_nodes: not a fault kind (did you mean crash_node?)`)
}

// TestDrawIsAFunctionOfTheSeed: a run's world is its seed's alone, and replaying its
// choices gives the same world, so any worker may draw it and shrinking starts from it.
func TestDrawIsAFunctionOfTheSeed(t *testing.T) {
	s := spec(t, "all")
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := s.Draw(seed), s.Draw(seed)
		assert.Equal(t, a.YAML("x", "", "", ""), b.YAML("x", "", "", ""))
		assert.Equal(t, a.YAML("x", "", "", ""), s.Replay(a.Choices, seed).YAML("x", "", "", ""))
	}
	assert.NotEqual(t, s.Draw(1).YAML("x", "", "", ""), s.Draw(2).YAML("x", "", "", ""))
	// The simplest world: no fault, the assumptions' defaults.
	c := s.Replay(nil, 1)
	assert.Empty(t, c.Faults)
	assert.Contains(t, string(c.YAML("x", "", "", "")), "clients: 2\n")
}

// TestFindingsSameForAnyWorkers: the same seed and runs give byte-identical findings and
// runs for 1 and 3 workers.
func TestFindingsSameForAnyWorkers(t *testing.T) {
	s := pauses(t)
	_, one := run(t, s, 60, 1)
	_, three := run(t, s, 60, 3)
	for _, name := range []string{FindingsFile, filepath.Join(RunsDir, "runs.csv"), "usage_overlap.yaml", "stale_write.yaml"} {
		a, err := os.ReadFile(filepath.Join(one, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(three, name))
		require.NoError(t, err)
		assert.Equal(t, string(a), strings.ReplaceAll(string(b), three, one), name)
	}
}

// TestShrinkKeepsTheKindAndNeverGrows shrinks the first few pause findings: each still
// shows its kind, has no more faults and no more fault time, and simpler choices.
func TestShrinkKeepsTheKindAndNeverGrows(t *testing.T) {
	s := pauses(t)
	shrunk := 0
	for seed := uint64(1); seed <= 40 && shrunk < 3; seed++ {
		c := s.Draw(seed)
		rec, err := c.run(context.Background())
		require.NoError(t, err)
		kinds := s.classify(recordFigures(rec))
		if len(kinds) == 0 {
			continue
		}
		shrunk++
		got, runs, err := s.Shrink(context.Background(), kinds[0], c, 60)
		require.NoError(t, err)
		assert.LessOrEqual(t, runs, 60, "the budget bounds the runs")
		rec, err = got.run(context.Background())
		require.NoError(t, err)
		assert.Contains(t, s.classify(recordFigures(rec)), kinds[0], "seed %d", seed)
		steps, length := got.Size()
		steps0, length0 := c.Size()
		assert.LessOrEqual(t, steps, steps0)
		assert.LessOrEqual(t, length, length0)
		assert.False(t, c.Choices.less(got.Choices), "shrinking only moves to simpler choices")
		// Shrinking is deterministic.
		again, _, err := s.Shrink(context.Background(), kinds[0], c, 60)
		require.NoError(t, err)
		assert.Equal(t, got.YAML("x", "", "", ""), again.YAML("x", "", "", ""))
	}
	require.Equal(t, 3, shrunk, "40 worlds of pauses up to 2 × ttl break the lock at least 3 times")
}

// TestShrunkFileReplays: each scenario file a search writes replays, through the code of
// `run --scenario-file`, with the finding's kind.
func TestShrunkFileReplays(t *testing.T) {
	res, dir := run(t, pauses(t), 30, 2)
	require.NotEmpty(t, res.Findings)
	for _, f := range res.Findings {
		require.Equal(t, filepath.Join(dir, f.Kind+".yaml"), f.File)
		sc, err := scenarios.LoadFile(f.File)
		require.NoError(t, err)
		rec, err := experiments.RunScenario(context.Background(), sc, nil, f.Case.Seed, experiments.Options{})
		require.NoError(t, err)
		assert.True(t, slices.ContainsFunc(rec.Violations, func(v oracle.Violation) bool { return v.Kind == f.Kind }), f.Kind)
		assert.Contains(t, sc.Story, "pauses", "the story tells the schedule")
		assert.LessOrEqual(t, f.ShrinkRuns, 100)
	}
}

// TestInterruptKeepsFindings: a search stopped part way writes the findings of the runs
// that finished and says it was interrupted.
func TestInterruptKeepsFindings(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	res, err := Run(ctx, pauses(t), Options{Dir: dir, Runs: 50, Workers: 1})
	require.True(t, errors.Is(err, ErrInterrupted), "%v", err)
	require.NotNil(t, res)
	assert.True(t, res.Interrupted)
	b, err := os.ReadFile(filepath.Join(dir, FindingsFile))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "kind,runs,count,first_run"), string(b))
}

// TestLivenessBoundsAreFindings: a liveness bound the user sets is a kind of finding, found
// and shrunk like a violation; unset, it is not looked for.
func TestLivenessBoundsAreFindings(t *testing.T) {
	// Holders that crash keep the lock from the others until its ttl (10s): longer than 2s.
	s := spec(t, "crash_client")
	s.MaxUnavailable = 2 * time.Second
	res, _ := run(t, s, 30, 2)
	f := res.Finding("unavailable")
	require.NotNil(t, f)
	assert.Contains(t, res.Checked, "unavailable")
	require.NotNil(t, f.Case)
	assert.Contains(t, f.Story, "crashes")

	// Nodes that go down for good leave acquires without a majority.
	s = spec(t, "crash_node", "tries=1")
	s.MinSuccess = 0.99
	res, _ = run(t, s, 30, 2)
	require.NotNil(t, res.Finding("low_success"))
	assert.Nil(t, res.Finding("unavailable"), "not bounded, not looked for")
	assert.NotContains(t, res.Checked, "split_brain")
}
