package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.Contains(t, string(report), "target validity_overlaps")
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
// command: fitting, arithmetic, the confirmation rounds on every core, report.md. The
// issue's budget is under 2 minutes on 2 cores (docs/BENCHMARKS.md has the figure).
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
	assert.Contains(t, stdout, "at 10 acquisitions a second, 0 a year, at most ", "each rate per year too")

	// Limits per kind and a success target: each verdict line names its own limit.
	code, stdout, stderr = cli("tune", "--file", file, "--quiet", "--out", filepath.Join(dir, "c"),
		"--max-stale-writes-per-10k", "7", "--min-success", "0.5")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "target stale_writes_accepted ≤ 7 per 10,000")
	assert.Contains(t, stdout, "target validity_overlaps ≤ 1 per 10,000")
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
