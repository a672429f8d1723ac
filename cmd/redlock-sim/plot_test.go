package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunTimelineDrawsAndKeepsTheRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gc.png")
	code, out, errOut := cli("run", "--scenario", "gc-pause", "--json", "--timeline", path)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "written to "+path)
	var with map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &with), "stdout stays pure JSON")
	code, out, errOut = cli("run", "--scenario", "gc-pause", "--json")
	require.Equal(t, 0, code, errOut)
	var without map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &without))
	assert.Equal(t, without["trace_hash"], with["trace_hash"])
	assert.Equal(t, without["events"], with["events"])

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, 1600, img.Bounds().Dx())
	assert.Equal(t, 900, img.Bounds().Dy())

	svg := filepath.Join(dir, "gc.svg")
	code, _, errOut = cli("run", "--scenario", "gc-pause", "--timeline", svg, "--window", "1s:2s")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "timeline of 1s to 2s")
	data, err = os.ReadFile(svg)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "<?xml"), "an SVG document")
}

func TestRunTimelineBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeline", filepath.Join(dir, "t.jpg")}, `unknown extension ".jpg"`},
		{[]string{"--timeline", filepath.Join(dir, "t.png"), "--window", "2s:1s"}, "--window"},
		{[]string{"--timeline", filepath.Join(dir, "t.png"), "--window", "soon"}, "--window"},
		{[]string{"--timeline", filepath.Join(dir, "t.png"), "--window", "10s:20s"}, "before the end of the run (3s)"},
	} {
		args := append([]string{"run", "--scenario", "gc-pause"}, c.args...)
		code, _, errOut := cli(args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want)
	}
	_, err := os.Stat(filepath.Join(dir, "t.png"))
	assert.True(t, os.IsNotExist(err), "nothing drawn")
}

// TestRunTimelineChecksTheFolderFirst: a figure path in a folder that does not exist is a
// usage error found before the run, naming the folder, never a temporary file.
func TestRunTimelineChecksTheFolderFirst(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent", "x.png")
	code, out, errOut := cli("run", "--scenario", "gc-pause", "--timeline", missing)
	assert.Equal(t, 2, code, errOut)
	assert.Empty(t, out, "refused before the run: no summary")
	assert.Contains(t, errOut, "--timeline "+missing+": folder "+filepath.Dir(missing)+" does not exist")
	assert.NotContains(t, errOut, ".tmp")

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	code, _, errOut = cli("run", "--scenario", "gc-pause", "--timeline", filepath.Join(file, "x.png"))
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, file+" is not a folder")
}

func TestPlotDrawsASweepFolder(t *testing.T) {
	out := t.TempDir()
	code, stdout, errOut := cli("plot", "--in", filepath.Join("..", "..", "plots", "testdata", "sweep-two"), "--out", out)
	require.Equal(t, 0, code, errOut)
	for _, f := range []string{"knob-ttl.png", "knob-nodes.png", "heatmap-ttl-nodes.png"} {
		assert.Contains(t, stdout, filepath.Join(out, f))
		_, err := os.Stat(filepath.Join(out, f))
		assert.NoError(t, err)
	}
}

func TestPlotBadInputExitsTwo(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--in DIR is required"},
		{[]string{"--in", filepath.Join(empty, "missing")}, "not a folder"},
		{[]string{"--in", empty}, "no runs.csv"},
		{[]string{"--in", empty, "--format", "gif"}, `--format "gif"`},
		{[]string{"--in", empty, "--width", "0"}, "--width"},
		{[]string{"stray"}, "no arguments"},
	} {
		code, _, errOut := cli(append([]string{"plot"}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want)
	}
}

// TestRunTimelineTitleHasTheRunsCounts: the timeline keeps only the first violations;
// the title's verdicts are the run's own counts, as the summary prints them.
func TestRunTimelineTitleHasTheRunsCounts(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "busy.svg")
	code, out, errOut := cli("run", "--set", "duration=5m", "--set", "ttl=1s", "--set", "pause_rate=0.05",
		"--set", "pause_len=exp(0s,2s)", "--json", "--timeline", svg)
	require.Equal(t, 0, code, errOut)
	var rec struct {
		Safety struct {
			Usage int64 `json:"usage_overlaps"`
		} `json:"safety"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rec))
	require.Greater(t, rec.Safety.Usage, int64(64), "more than a record lists")
	data, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(data), fmt.Sprintf("(%d usage", rec.Safety.Usage))
}
