package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// TestTuneBadInputNamesTheField: every bad input is a usage error (exit 2) that names
// the flag, the value and what is allowed, before anything is run or written.
func TestTuneBadInputNamesTheField(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--latency", "p99=5"}, []string{"--latency", "p99=5", "unit"}},
		{[]string{"--work", "p50=10ms,p99=5ms"}, []string{"--work"}},
		{[]string{"--pauses", "p100=1s"}, []string{"--pauses", "p100"}},
		{[]string{"--persistence", "fsync"}, []string{"--persistence", "fsync", "aof-everysec"}},
		{[]string{"--client", "jedis"}, []string{"client", "jedis", "redsync"}},
		{[]string{"--seeds", "0"}, []string{"--seeds", "0", "allowed"}},
		{[]string{"--nodes", "0"}, []string{"nodes"}},
		{[]string{"--max-violations-per-10k", "-1"}, []string{"--max-violations-per-10k", "negative"}},
		{[]string{"extra"}, []string{"takes no arguments"}},
		{[]string{"--max-violations-per-year", "5"}, []string{"--max-violations-per-year", "--acquisitions-per-second"}},
		{[]string{"--min-success", "95"}, []string{"--min-success", "95", "0 to 1"}},
		{[]string{"--max-usage-overlaps-per-10k", "-3"}, []string{"--max-usage-overlaps-per-10k", "-3", "negative"}},
		{[]string{"--duration", "20000h"}, []string{"--duration", "20000h", "out of range"}},
		{[]string{"--min-success", "NaN"}, []string{"--min-success", "not a finite number"}},
		{[]string{"--max-violations-per-10k", "Inf"}, []string{"--max-violations-per-10k", "not a finite number"}},
		{[]string{"--acquisitions-per-second", "NaN"}, []string{"--acquisitions-per-second", "finite"}},
		{[]string{"--node-crash-rate", "5/fortnight"}, []string{"--node-crash-rate", `unknown period "fortnight"`, "1/month"}},
		{[]string{"--pause-rate", "1e9", "--pauses", "p99=1ms"}, []string{"--pause-rate", "allowed 0 to 100"}},
		{[]string{"--pauses", "p99=1s,max=500ms"}, []string{"--pauses", "max=500ms is below p99=1s"}},
		{[]string{"--think", "p50=1s", "--acquisitions-per-second", "1"}, []string{"--think", "not both"}},
		{[]string{"--node-stall", "10"}, []string{"--node-stall", "needs a unit"}},
		{[]string{"--overwrite", "--resume"}, []string{"--overwrite and --resume"}},
	} {
		out := filepath.Join(dir, "out")
		code, stdout, stderr := cli(append([]string{"tune", "--out", out, "--quiet"}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stdout)
		for _, w := range tc.want {
			assert.Contains(t, stderr, w, "%v", tc.args)
		}
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%v: nothing written", tc.args)
	}
}

// TestTuneRecommendsAndConfirms runs tune on a planted environment, clocks drifting
// 2 % (20,000 ppm) on both sides: drift_factor must cover 4 % with margin, the
// arithmetic must be shown, and the confirmation must find no two holders at the
// recommended ttl, and write a report that says so. A second run with the same seed
// writes the same report.
func TestTuneRecommendsAndConfirms(t *testing.T) {
	dir := t.TempDir()
	args := []string{"tune", "--client-drift-ppm", "20000", "--node-drift-ppm", "20000", "--duration", "1m",
		"--seeds", "3", "--workers", "2", "--quiet"}
	code, stdout, stderr := cli(append(args, "--out", filepath.Join(dir, "a"))...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "drift_factor    0.08")
	assert.Contains(t, stdout, "MIN_VALIDITY = TTL − (T2 − T1)")
	assert.Contains(t, stdout, "(recommended)")
	// The drift allowance does its job: no two holders believed themselves valid at once
	// at the recommended ttl, whatever the confirmation's size.
	assert.Regexp(t, `\| [0-9.]+m?s \(recommended\) \| [0-9]+ \| [0-9]+ \| [0-9]+ \| 0 \(≤`, stdout)
	assert.Contains(t, stdout, "verdict: ")
	report, err := os.ReadFile(filepath.Join(dir, "a", "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(report), "## The arithmetic")
	assert.Contains(t, string(report), "target validity_overlap_incidents")
	assert.FileExists(t, filepath.Join(dir, "a", "confirm", "runs.csv"))
	page, err := os.ReadFile(filepath.Join(dir, "a", "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "<table>")
	assert.Contains(t, string(page), "data:image/png;base64,", "the figures are embedded")
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, string(page), "nothing is fetched from the network")

	code, _, stderr = cli(append(args, "--out", filepath.Join(dir, "a"))...)
	assert.Equal(t, 2, code, "a report is never overwritten silently")
	assert.Contains(t, stderr, "--overwrite")
	// With --overwrite, an earlier report's later rounds go too.
	stale := filepath.Join(dir, "a", "confirm-5")
	require.NoError(t, os.MkdirAll(stale, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "manifest.json"), []byte("{}"), 0o644))
	code, _, stderr = cli(append(args, "--out", filepath.Join(dir, "a"), "--overwrite")...)
	require.Equal(t, 0, code, stderr)
	assert.NoDirExists(t, stale)

	code, _, stderr = cli(append(args, "--out", filepath.Join(dir, "b"))...)
	require.Equal(t, 0, code, stderr)
	again, err := os.ReadFile(filepath.Join(dir, "b", "report.md"))
	require.NoError(t, err)
	// The command line differs only by the folder.
	assert.Equal(t, string(report), strings.ReplaceAll(string(again), filepath.Join(dir, "b"), filepath.Join(dir, "a")))
	againPage, err := os.ReadFile(filepath.Join(dir, "b", "report.html"))
	require.NoError(t, err)
	assert.Equal(t, string(page), strings.ReplaceAll(string(againPage), filepath.Join(dir, "b"), filepath.Join(dir, "a")),
		"report.html, figures included, is the same for the same seed")
}

// BenchmarkTuneDefaultEnvironment is `tune` with every input at its default, the whole
// command: fitting, arithmetic, the confirmation rounds on every core, report.md. Its
// budget is under 2 minutes on 2 cores, short enough to tune while deciding
// (docs/BENCHMARKS.md has the figure).
func BenchmarkTuneDefaultEnvironment(b *testing.B) {
	for i := 0; i < b.N; i++ {
		code, _, stderr := cli("tune", "--quiet", "--out", filepath.Join(b.TempDir(), "out"))
		if code != 0 {
			b.Fatal(stderr)
		}
	}
}

// TestTuneReadsAFile: a YAML file gives the inputs by flag name (dashes or underscores),
// a flag on the command line overrides it, and a bad key or value is a usage error that
// names the file, the key and what is wrong.
func TestTuneReadsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "env.yaml")
	require.NoError(t, os.WriteFile(file, []byte("client_drift_ppm: 20000\nnode-drift-ppm: 20000\nclients: 2\nduration: 30s\nseeds: 2\nmax_seeds: 2\nacquisitions_per_second: 10\n"), 0o644))
	code, stdout, stderr := cli("tune", "--file", file, "--quiet", "--out", filepath.Join(dir, "a"), "--clients", "3")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "drift_factor    0.08", "from the file")
	assert.Contains(t, stdout, "at 10 acquisitions a second, simulated 0 a year (at most ", "each rate per year too")

	// Limits per kind and a success target: each verdict line names its own limit.
	code, stdout, stderr = cli("tune", "--file", file, "--quiet", "--out", filepath.Join(dir, "c"),
		"--max-stale-writes-per-10k", "7", "--min-success", "0.5")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "target stale_write_incidents ≤ 7 per 10,000")
	assert.Contains(t, stdout, "target validity_overlap_incidents ≤ 1 per 10,000")
	assert.Contains(t, stdout, "target acquire success ≥ 0.5 (--min-success): met")
	report, err := os.ReadFile(filepath.Join(dir, "a", "report.md"))
	require.NoError(t, err)
	assert.Contains(t, string(report), "--clients 3 ", "the flag wins")
	assert.Contains(t, string(report), "--client-drift-ppm 20000 ")

	for _, tc := range []struct{ yaml, want string }{
		{"client_drift: 200\n", `unknown input "client_drift" (did you mean client-drift-ppm?)`},
		{"clients: many\n", "clients"},
		{"latency: [1ms, 5ms]\n", "want a single value"},
		{"- a\n- b\n", "not a YAML map"},
	} {
		require.NoError(t, os.WriteFile(file, []byte(tc.yaml), 0o644))
		code, _, stderr := cli("tune", "--file", file, "--quiet", "--out", filepath.Join(dir, "b"))
		assert.Equal(t, 2, code, tc.yaml)
		assert.Contains(t, stderr, tc.want, tc.yaml)
		assert.Contains(t, stderr, file, tc.yaml)
	}
	code, _, stderr = cli("tune", "--file", filepath.Join(dir, "missing.yaml"), "--quiet", "--out", filepath.Join(dir, "b"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "missing.yaml")
	assert.NoDirExists(t, filepath.Join(dir, "b"))
}

// shellWords splits a command line the way a POSIX shell does for the report's lines:
// words separated by spaces, single quotes around a word with special characters.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	require.False(t, quoted, "unbalanced quote in %q", line)
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// lineAfter returns the rest of the first line of out that contains prefix.
func lineAfter(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if _, rest, ok := strings.Cut(l, prefix); ok {
			return rest
		}
	}
	t.Fatalf("no line with %q in:\n%s", prefix, out)
	return ""
}

// TestTuneKnobLinesRunAsWritten: the report's "as knobs" line is accepted by `run` (on
// top of the library's profile) and by a sweep spec, and its "one confirmation run" line
// runs as written, for the Redlock page's client, for redsync, and for Curator (with the
// ensemble's defaults, and with the shorter tick a 1s unavailability target needs).
func TestTuneKnobLinesRunAsWritten(t *testing.T) {
	for _, c := range []struct {
		client string
		extra  []string
	}{{"spec", nil}, {"redsync", nil}, {"curator", nil}, {"curator", []string{"--max-unavailability", "1s"}}} {
		client := c.client
		dir := t.TempDir()
		args := append([]string{"tune", "--client", client, "--acquisitions-per-second", "5", "--duration", "20s",
			"--seeds", "1", "--max-seeds", "1", "--quiet", "--out", filepath.Join(dir, "t")}, c.extra...)
		code, stdout, stderr := cli(args...)
		require.Equal(t, 0, code, stderr)
		if c.extra != nil {
			assert.Contains(t, stdout, "--set zk_tick_time=200ms", "%s %v: the tick the target needs", client, c.extra)
		}
		if client == "curator" {
			assert.Contains(t, stdout, "| session_timeout | runs |", "the confirmation sweeps the session, not a ttl")
			assert.NotContains(t, stdout, "--set ttl=")
		}
		asKnobs := shellWords(t, lineAfter(t, stdout, "as knobs: "))
		require.NotEmpty(t, asKnobs)
		assert.NotContains(t, asKnobs, "--set max_extensions=0", "a knob that cannot change the run is left out")

		args = append([]string{"run", "--scenario", "baseline", "--set", "client=" + client, "--set", "duration=5s"}, asKnobs...)
		code, _, stderr = cli(args...)
		assert.Equal(t, 0, code, "%s: run %v: %s", client, args, stderr)

		one := shellWords(t, lineAfter(t, stdout, "one confirmation run: "))
		require.Equal(t, []string{"redlock-sim", "run"}, one[:2])
		code, _, stderr = cli(append(one[1:], "--set", "duration=5s")...)
		assert.Equal(t, 0, code, "%s: %v: %s", client, one, stderr)

		var spec strings.Builder
		spec.WriteString("base:\n  scenario: baseline\n  client: " + client + "\n  duration: 5s\n")
		for i := 0; i+1 < len(asKnobs); i += 2 {
			require.Equal(t, "--set", asKnobs[i])
			name, value, _ := strings.Cut(asKnobs[i+1], "=")
			fmt.Fprintf(&spec, "  %s: %q\n", name, value)
		}
		spec.WriteString("axes:\n  seed_offset_unused: []\n")
		specText := strings.Replace(spec.String(), "axes:\n  seed_offset_unused: []\n", "replicates: 1\nseed: 1\n", 1)
		file := filepath.Join(dir, "spec.yaml")
		require.NoError(t, os.WriteFile(file, []byte(specText), 0o644))
		code, _, stderr = cli("sweep", "--spec", file, "--out", filepath.Join(dir, "sweep"), "--quiet")
		assert.Equal(t, 0, code, "%s: sweep of\n%s\n%s", client, specText, stderr)
	}
}

// TestTunePlantedLoads: a load one lock cannot serve is refused with the arithmetic; a
// saturated lock (no load given) is said to be one, and gets the tries its refusals need,
// and its confirmation holds give-ups to the default success target.
func TestTunePlantedLoads(t *testing.T) {
	dir := t.TempDir()
	// Holds of 500ms: one lock serves at most about 2 a second.
	code, _, stderr := cli("tune", "--work", "p50=500ms,p99=600ms", "--acquisitions-per-second", "50", "--quiet",
		"--out", filepath.Join(dir, "a"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--acquisitions-per-second")
	assert.Contains(t, stderr, "one lock serves one hold at a time")
	assert.Contains(t, stderr, "at most 1/B = 1.99 acquisitions a second")
	assert.NoDirExists(t, filepath.Join(dir, "a"))

	code, _, stderr = cli("tune", "--acquisitions-per-second", "2/s", "--think", "p50=10ms,p99=20ms", "--quiet", "--out", filepath.Join(dir, "a"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "not both")

	code, stdout, stderr := cli("tune", "--duration", "1m", "--seeds", "2", "--max-seeds", "2", "--quiet", "--out", filepath.Join(dir, "b"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "load: none given")
	assert.Contains(t, stdout, "the most contended case")
	tries, err := strconv.Atoi(strings.TrimSpace(lineAfter(t, stdout, "  tries ")))
	require.NoError(t, err)
	assert.Greater(t, tries, 30, "a saturated lock refuses most tries")
	assert.Contains(t, stdout, "target acquire success ≥ 0.99 (the default")
	assert.NotContains(t, stdout, "target acquire success ≥ 0.99 (the default, stated: a tuning that gives up acquires is not one to ship; --min-success sets another): NOT met")

	// Too few tries for that load, forced by a success target tune must meet: the verdict
	// never says the recommendation is borne out when acquires are given up.
	code, stdout, stderr = cli("tune", "--duration", "1m", "--seeds", "2", "--max-seeds", "2", "--quiet", "--min-success", "0.05",
		"--out", filepath.Join(dir, "c"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "target acquire success ≥ 0.05 (--min-success): met")
}

// TestTuneWarnsOfAFractionGivenAsPPM: a drift that looks like a fraction (0.02 meaning
// 2 %) is taken as given, in ppm, with a warning that says what to type instead.
func TestTuneWarnsOfAFractionGivenAsPPM(t *testing.T) {
	code, _, stderr := cli("tune", "--client-drift-ppm", "0.02", "--duration", "10s", "--seeds", "1", "--max-seeds", "1",
		"--quiet", "--out", filepath.Join(t.TempDir(), "t"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "warning: --client-drift-ppm 0.02 is in parts per million")
	assert.Contains(t, stderr, "if you meant 2 %, give 20000")
}

// TestTuneOverwriteRefusesAFolderInUse: while another tune holds the output folder,
// --overwrite is refused with the holder named, and nothing of the folder is deleted.
func TestTuneOverwriteRefusesAFolderInUse(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t")
	held, err := sweep.LockFolder(out, "tune")
	require.NoError(t, err)
	defer held.Unlock()
	keep := filepath.Join(out, "report.md")
	require.NoError(t, os.WriteFile(keep, []byte("the other tune's"), 0o644))
	code, _, stderr := cli("tune", "--overwrite", "--quiet", "--out", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "in use by another tune (PID ")
	assert.FileExists(t, keep)
}
