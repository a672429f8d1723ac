package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
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
		{[]string{"--in", empty}, "no runs.csv, and no subfolder holding one"},
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

// TestPlotDrawsEverySweepInAParentFolder: `plot --in out` on the folder the default study
// writes draws each sweep folder one level down and says which.
func TestPlotDrawsEverySweepInAParentFolder(t *testing.T) {
	parent, out := t.TempDir(), t.TempDir()
	src := filepath.Join("..", "..", "plots", "testdata", "sweep-two")
	for _, name := range []string{"jitter", "ttl"} {
		require.NoError(t, os.CopyFS(filepath.Join(parent, name), os.DirFS(src)))
	}
	require.NoError(t, os.Mkdir(filepath.Join(parent, "not-a-sweep"), 0o755))
	code, stdout, errOut := cli("plot", "--in", parent, "--out", out)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, "drew 2 sweep folders in "+parent+": jitter, ttl")
	for _, name := range []string{"jitter", "ttl"} {
		assert.FileExists(t, filepath.Join(out, name, "knob-ttl.png"))
	}
}

// damagedFixture copies plots/testdata/sweep-two into a temporary folder and rewrites
// field col of data row row (0-based) of its runs.csv with edit; with incomplete, the
// manifest says the sweep is unfinished and summary.csv is gone, as a sweep still running
// leaves them.
func damagedFixture(t *testing.T, row, col int, edit func(string) string, incomplete bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sweep")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "plots", "testdata", "sweep-two"))))
	runs := filepath.Join(dir, "runs.csv")
	lines := strings.SplitAfter(read(t, runs), "\n")
	fields := strings.Split(strings.TrimSuffix(lines[row+1], "\n"), ",")
	fields[col] = edit(fields[col])
	lines[row+1] = strings.Join(fields, ",") + "\n"
	require.NoError(t, os.WriteFile(runs, []byte(strings.Join(lines, "")), 0o644))
	if incomplete {
		m := filepath.Join(dir, "manifest.json")
		require.NoError(t, os.WriteFile(m, []byte(strings.Replace(read(t, m), `"complete": true`, `"complete": false`, 1)), 0o644))
		require.NoError(t, os.Remove(filepath.Join(dir, "summary.csv")))
	}
	return dir
}

// same leaves a field as it is: damagedFixture then only copies the fixture.
func same(s string) string { return s }

// TestPlotChecksTheFolderBeforeItDraws: plot refuses, with exit 2 and no figure, a
// complete folder whose runs.csv is not the one its manifest recorded (an edited count, a
// NUL byte), naming the folder and what to do; and in any folder a malformed row, naming
// the file, the line and the column. An intact folder draws, an incomplete one draws and
// says it is incomplete.
func TestPlotChecksTheFolderBeforeItDraws(t *testing.T) {
	// The fixture's columns, its recorded SHA-256 and its width, read from it so that a new
	// metric column does not break the test.
	fixture := filepath.Join("..", "..", "plots", "testdata", "sweep-two")
	head := strings.Split(strings.SplitN(read(t, filepath.Join(fixture, "runs.csv")), "\n", 2)[0], ",")
	traceHash, attempts := slices.Index(head, "trace_hash"), slices.Index(head, "attempts")
	require.True(t, traceHash >= 0 && attempts >= 0)
	var manifest struct {
		RunsSHA256 string `json:"runs_csv_sha256"`
	}
	require.NoError(t, json.Unmarshal([]byte(read(t, filepath.Join(fixture, "manifest.json"))), &manifest))
	require.NotEmpty(t, manifest.RunsSHA256)
	for _, tc := range []struct {
		name string
		dir  string
		says []string
	}{
		{"an edited count", damagedFixture(t, 4, attempts, func(string) string { return "64" }, false),
			[]string{"runs.csv has SHA-256 ", "manifest.json recorded " + manifest.RunsSHA256 + " (24 rows, the sweep has 24): the file changed after the sweep finished"}},
		{"a NUL byte, complete", damagedFixture(t, 2, traceHash, func(s string) string { return s[:3] + "\x00" + s[4:] }, false),
			[]string{"the file changed after the sweep finished", `first bad line 4: trace_hash = "`, `\x00`}},
		{"a NUL byte, incomplete", damagedFixture(t, 2, traceHash, func(s string) string { return s[:3] + "\x00" + s[4:] }, true),
			[]string{`runs.csv line 4: trace_hash = "`, `\x00`, `": a NUL byte: text holds none`}},
		{"an unparsable number", damagedFixture(t, 6, attempts, func(string) string { return "6x" }, true),
			[]string{`runs.csv line 8: attempts = "6x": want a non-negative integer`}},
		{"a column too many", damagedFixture(t, 0, attempts, func(s string) string { return s + ",7" }, true),
			[]string{fmt.Sprintf("runs.csv line 2: %d fields, want %d", len(head)+1, len(head))}},
		{"a bare quote", damagedFixture(t, 1, traceHash, func(s string) string { return s + `"` }, true),
			[]string{`runs.csv line 3: column trace_hash (field 6): bare " in non-quoted-field`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, _, errOut := cli("plot", "--in", tc.dir, "--out", out)
			assert.Equal(t, 2, code, errOut)
			assert.Contains(t, errOut, "redlock-sim: usage: plot refused: "+filepath.Join(tc.dir, "runs.csv"))
			for _, s := range tc.says {
				assert.Contains(t, errOut, s)
			}
			assert.Contains(t, errOut, "; restore the folder's files, or run its sweep again into it (redlock-sim sweep --overwrite --out "+tc.dir)
			figs, err := filepath.Glob(filepath.Join(out, "*.png"))
			require.NoError(t, err)
			assert.Empty(t, figs, "nothing drawn")
		})
	}

	dir := damagedFixture(t, 0, traceHash, same, true)
	lines := strings.SplitAfter(read(t, filepath.Join(dir, "runs.csv")), "\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs.csv"), []byte(strings.Join(lines[:11], "")+lines[11][:9]), 0o644))
	code, stdout, errOut := cli("plot", "--in", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, dir+": incomplete sweep (10 of 24 runs written): the figures show those runs and their captions say INCOMPLETE; finish it with redlock-sim sweep --resume --out "+dir)
	assert.FileExists(t, filepath.Join(dir, "knob-ttl.png"))

	dir = damagedFixture(t, 0, traceHash, same, false)
	require.NoError(t, os.Remove(filepath.Join(dir, "manifest.json")))
	code, _, errOut = cli("plot", "--in", dir)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "plot: "+dir+" has no manifest.json: its rows are not checked against a sweep")
	assert.FileExists(t, filepath.Join(dir, "knob-ttl.png"))

	dir = damagedFixture(t, 0, traceHash, same, false) // a summary.csv from another sweep
	other := read(t, filepath.Join("..", "..", "plots", "testdata", "sweep-three", "summary.csv"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.csv"), []byte(other), 0o644))
	code, _, errOut = cli("plot", "--in", dir)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "plot refused: "+filepath.Join(dir, "summary.csv")+":2 disagrees with runs.csv")
}
