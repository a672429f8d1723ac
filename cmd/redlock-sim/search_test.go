package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSearchBadInputNamesIt: an unknown knob, a bad bound, an unknown fault kind or a bad
// flag is a usage error (exit 2) naming what was typed and what is allowed, before
// anything is run or written.
func TestSearchBadInputNamesIt(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--assume", "pause_length<=1s"}, []string{"--assume pause_length<=1s", `unknown knob "pause_length"`, "pause_len"}},
		{[]string{"--assume", "ttl<=soon"}, []string{"--assume ttl<=soon", "ttl"}},
		{[]string{"--assume", "nodes=5..3"}, []string{"--assume nodes=5..3", "above the upper bound"}},
		{[]string{"--assume", "nodes=0"}, []string{"--assume nodes=0", "out of range"}},
		{[]string{"--assume", "persistence>=none"}, []string{"--assume persistence>=none", "only NAME=VALUE"}},
		{[]string{"--faults", "crash_nodes"}, []string{"--faults crash_nodes", "not a fault kind", "crash_node"}},
		{[]string{"--client", "jedis"}, []string{"--client", "jedis", "redsync"}},
		{[]string{"--min-success", "95"}, []string{"--min-success", "95", "[0, 1]"}},
		{[]string{"--runs", "0"}, []string{"--runs", "0"}},
		{[]string{"--max-split-brain", "-2"}, []string{"--max-split-brain", "-2"}},
		{[]string{"extra"}, []string{"takes no arguments"}},
	} {
		out := filepath.Join(dir, "out")
		code, stdout, stderr := cli(append([]string{"search", "--out", out, "--quiet"}, tc.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tc.args, stdout)
		for _, w := range tc.want {
			assert.Contains(t, stderr, w, "%v", tc.args)
		}
		_, err := os.Stat(filepath.Join(out, "findings.csv"))
		assert.True(t, os.IsNotExist(err), "%v: no findings written", tc.args)
	}
}

// TestSearchFindsShrinksAndReplays runs a small search end to end: the table, findings.csv,
// and for each finding its scenario file, narrated trace and timeline; the file replays
// with `run --scenario-file` to the same verdict; a second search into the folder is
// refused without --overwrite; the same search with another --workers writes the same
// findings.
func TestSearchFindsShrinksAndReplays(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s")
	args := []string{"search", "--assume", "ttl=1s", "--assume", "pause_len<=2s", "--faults", "pause_client",
		"--runs", "30", "--shrink-budget", "60", "--quiet", "--out", out}
	code, stdout, stderr := cli(append(args, "--workers", "1")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "usage_overlap")
	assert.Contains(t, stdout, "replay: redlock-sim run --scenario-file")
	for _, name := range []string{"findings.csv", "usage_overlap.yaml", "usage_overlap.trace.txt", "usage_overlap.png"} {
		_, err := os.Stat(filepath.Join(out, name))
		assert.NoError(t, err, name)
	}
	findings, err := os.ReadFile(filepath.Join(out, "findings.csv"))
	require.NoError(t, err)
	// The replay command the table prints gives the same verdict.
	line := stdout[strings.Index(stdout, "replay: redlock-sim run"):]
	line = strings.TrimSpace(line[len("replay: redlock-sim "):strings.Index(line, "\n")])
	code, runOut, stderr := cli(strings.Fields(line)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, runOut, "UNSAFE (")
	assert.Contains(t, runOut, "usage overlap")

	code, _, stderr = cli(append(args, "--workers", "3")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "already holds a search")
	code, _, stderr = cli(append(args, "--workers", "3", "--overwrite")...)
	require.Equal(t, 0, code, stderr)
	again, err := os.ReadFile(filepath.Join(out, "findings.csv"))
	require.NoError(t, err)
	assert.Equal(t, string(findings), string(again), "findings do not depend on --workers")
}

// TestSearchSpecFile reads the search from a YAML file, lists included; a flag given
// overrides it, and an unknown key is named.
func TestSearchSpecFile(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("assume: [ttl=1s, pause_len<=2s]\nfaults: [pause_client]\nruns: 10\nshrink_budget: 20\n"), 0o644))
	code, stdout, stderr := cli("search", "--spec", spec, "--quiet", "--out", filepath.Join(dir, "a"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "usage_overlap")
	require.NoError(t, os.WriteFile(spec, []byte("asume: [ttl=1s]\n"), 0o644))
	code, _, stderr = cli("search", "--spec", spec, "--quiet", "--out", filepath.Join(dir, "b"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown key "asume" (did you mean assume?)`)
}

// TestSearchInterruptKeepsFindings: Ctrl-C (a cancelled context) writes the findings so
// far and exits as interrupted.
func TestSearchInterruptKeepsFindings(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "s")
	var stdout, stderr strings.Builder
	err := runSearchCtx(ctx, []string{"--faults", "pause_client", "--runs", "20", "--quiet", "--out", out}, &stdout, &stderr)
	require.ErrorIs(t, err, errInterrupted)
	_, err = os.Stat(filepath.Join(out, "findings.csv"))
	assert.NoError(t, err)
}
