package viewer_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/internal/viewer"
)

func server(t *testing.T, files ...*scenarios.Scenario) *httptest.Server {
	t.Helper()
	srv, err := viewer.New(files)
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs
}

// get fetches path and decodes its JSON into v, returning the status.
func get(t *testing.T, hs *httptest.Server, path string, v any) int {
	t.Helper()
	res, err := http.Get(hs.URL + path)
	require.NoError(t, err)
	defer res.Body.Close()
	require.NoError(t, json.NewDecoder(res.Body).Decode(v), path)
	return res.StatusCode
}

func post(t *testing.T, hs *httptest.Server, body string, v any) int {
	t.Helper()
	res, err := http.Post(hs.URL+"/api/run", "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	defer res.Body.Close()
	require.NoError(t, json.NewDecoder(res.Body).Decode(v))
	return res.StatusCode
}

func TestScenariosAPI(t *testing.T) {
	hs := server(t)
	var out struct {
		Scenarios []viewer.ScenarioInfo `json:"scenarios"`
		Knobs     []viewer.KnobInfo     `json:"knobs"`
	}
	require.Equal(t, 200, get(t, hs, "/api/scenarios", &out))
	all := scenarios.Scenarios()
	require.Len(t, out.Scenarios, len(all))
	for i, sc := range all {
		assert.Equal(t, sc.Name, out.Scenarios[i].Name, "the catalogue's order")
		assert.Equal(t, sc.Story, out.Scenarios[i].Story)
		assert.Len(t, out.Scenarios[i].Params, len(sc.Params), sc.Name)
	}
	var gc viewer.ScenarioInfo
	for _, sc := range out.Scenarios {
		if sc.Name == "gc-pause" {
			gc = sc
		}
	}
	require.Len(t, gc.Params, 2)
	assert.Equal(t, viewer.ParamInfo{Name: "pause", Default: "1500ms", Help: "how long client1's stop-the-world pause lasts (the TTL is 1s)", Kind: "duration"}, gc.Params[0])
	require.Len(t, out.Knobs, len(viewer.CommonKnobs))
	byName := map[string]viewer.KnobInfo{}
	for _, k := range out.Knobs {
		byName[k.Name] = k
	}
	assert.Equal(t, []string{"none", "one", "majority"}, byName["fencing"].Choices)
	assert.Equal(t, []string{"false", "true"}, byName["stop_at_deadline"].Choices)
	assert.Nil(t, byName["ttl"].Choices)
	assert.Equal(t, "duration", byName["ttl"].Unit)
}

// TestRunAPIWithAClientProfile: the what-if panel's client knob tells the story with a
// library's profile, and the story keeps its own timing (its ttl) over the profile's.
func TestRunAPIWithAClientProfile(t *testing.T) {
	hs := server(t)
	var out viewer.RunResponse
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=gc-pause&set=client%3Dredsync", &out))
	rec, err := experiments.Run(context.Background(), "gc-pause", []knobs.KV{{Name: "client", Value: "redsync"}}, 1, experiments.Options{})
	require.NoError(t, err)
	assert.Equal(t, rec.TraceHash, out.Record.TraceHash)
	base, err := experiments.Run(context.Background(), "gc-pause", nil, 1, experiments.Options{})
	require.NoError(t, err)
	assert.NotEqual(t, base.TraceHash, rec.TraceHash, "another library, another run")
	cfg := map[string]string{}
	for _, kv := range rec.Config {
		cfg[kv.Name] = kv.Value
	}
	assert.Equal(t, "redsync", cfg["client"])
	assert.Equal(t, "redsync", cfg["dialect"])
	assert.Equal(t, "1s", cfg["ttl"], "the story's ttl, not redsync's 8s")
	first := func(text string) int {
		return slices.IndexFunc(out.Replay.Steps, func(s report.Step) bool { return strings.Contains(s.Text, text) })
	}
	require.GreaterOrEqual(t, first("PING"), 0)
	assert.Less(t, first("PING"), first("SET lock"), "go-redis connects on first use, before its first SET")
}

// TestRunAPI: a run through the viewer is the run `redlock-sim run` makes: same record,
// same trace hash, by GET and by POST.
func TestRunAPI(t *testing.T) {
	hs := server(t)
	var out viewer.RunResponse
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=gc-pause&seed=3&set=pause%3D1200ms", &out))
	sc, err := scenarios.LookupScenario("gc-pause")
	require.NoError(t, err)
	rec, err := experiments.Run(context.Background(), "gc-pause", []knobs.KV{{Name: "pause", Value: "1200ms"}}, 3, experiments.Options{})
	require.NoError(t, err)
	assert.Equal(t, rec.TraceHash, out.Record.TraceHash)
	assert.Equal(t, rec.Safety, out.Record.Safety)
	assert.Equal(t, sc.Story, out.Scenario.Story)
	assert.Equal(t, uint64(3), out.Seed)
	assert.Equal(t, []string{"pause=1200ms"}, out.Set)
	assert.Equal(t, rec.Safety.LockVerdict(), out.LockVerdict)
	assert.Equal(t, rec.Safety.ResourceVerdict(), out.ResourceVerdict)
	require.NotNil(t, out.Replay)
	assert.NotEmpty(t, out.Replay.Steps)
	assert.Equal(t, "gc-pause", out.Replay.Timeline.Scenario)

	var byPost viewer.RunResponse
	require.Equal(t, 200, post(t, hs, `{"scenario":"gc-pause","seed":3,"set":["pause=1200ms"]}`, &byPost))
	assert.Equal(t, out.Record.TraceHash, byPost.Record.TraceHash)
	assert.Equal(t, len(out.Replay.Steps), len(byPost.Replay.Steps))
}

// TestRunAPIFile: a scenario file sent by the browser runs as `run --scenario-file` would.
func TestRunAPIFile(t *testing.T) {
	hs := server(t)
	path := "../../examples/scenarios/kill-not-power-loss.yaml"
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	body, err := json.Marshal(viewer.RunRequest{File: string(text), Seed: 2})
	require.NoError(t, err)
	var out viewer.RunResponse
	require.Equal(t, 200, post(t, hs, string(body), &out))
	sc, err := scenarios.LoadFile(path)
	require.NoError(t, err)
	rec, err := experiments.RunScenario(context.Background(), sc, nil, 2, experiments.Options{})
	require.NoError(t, err)
	assert.Equal(t, sc.Name, out.Scenario.Name)
	assert.Equal(t, rec.TraceHash, out.Record.TraceHash)

	// Served from the command line, the same file is in the picker and runs by name.
	hs2 := server(t, sc)
	var cat struct {
		Scenarios []viewer.ScenarioInfo `json:"scenarios"`
	}
	require.Equal(t, 200, get(t, hs2, "/api/scenarios", &cat))
	assert.Equal(t, sc.Name, cat.Scenarios[len(cat.Scenarios)-1].Name)
	var byName viewer.RunResponse
	require.Equal(t, 200, get(t, hs2, "/api/run?seed=2&scenario="+url.QueryEscape(sc.Name), &byName))
	assert.Equal(t, rec.TraceHash, byName.Record.TraceHash)

	_, err = viewer.New([]*scenarios.Scenario{sc, sc})
	assert.ErrorContains(t, err, "is taken by")
	gc, err := scenarios.LookupScenario("gc-pause")
	require.NoError(t, err)
	_, err = viewer.New([]*scenarios.Scenario{gc})
	assert.ErrorContains(t, err, `its name "gc-pause" is taken by the built-in scenario`)
}

// TestRunAPIBadInput: every mistake is a 400 whose message names the field, the value and
// what is allowed, in the user's words.
func TestRunAPIBadInput(t *testing.T) {
	hs := server(t)
	for _, c := range []struct{ path, body, want string }{
		{path: "/api/run?scenario=gc-paus", want: `did you mean gc-pause`},
		{path: "/api/run?scenario=gc-pause&set=pause%3D5", want: "pause = 5: a duration needs a unit"},
		{path: "/api/run?scenario=gc-pause&set=tll%3D1s", want: "did you mean ttl"},
		{path: "/api/run?scenario=gc-pause&set=ttl", want: `setting "ttl": want name=value`},
		{path: "/api/run?scenario=gc-pause&seed=-1", want: `seed "-1": want a whole number`},
		{path: "/api/run?scenario=gc-pause&set=node_crash_rate%3D0", want: ""},
		{body: `{"scenario":"gc-pause","file":"name: x"}`, want: "not both"},
		{body: `{"scenario":"gc-pause","seeds":2}`, want: `unknown field "seeds"`},
		{body: `{"file":"name: x\nstory: [unclosed"}`, want: "your file"},
	} {
		var out map[string]any
		status := 0
		if c.body != "" {
			status = post(t, hs, c.body, &out)
		} else {
			status = get(t, hs, c.path, &out)
		}
		if c.want == "" { // a knob the scenario does not use at its default: accepted
			assert.Equal(t, 200, status, c.path)
			continue
		}
		assert.Equal(t, 400, status, "%s%s", c.path, c.body)
		assert.Contains(t, out["error"], c.want, "%s%s", c.path, c.body)
	}
}

// TestStaticAndGzip: the page and its assets come from the binary, and a large run is
// sent compressed to a browser that accepts it.
func TestStaticAndGzip(t *testing.T) {
	hs := server(t)
	for path, want := range map[string]string{"/": `<script src="app.js">`, "/app.js": "function setCursor", "/app.css": "--red"} {
		res, err := http.Get(hs.URL + path)
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, 200, res.StatusCode, path)
		assert.Contains(t, string(b), want, path)
	}
	req, err := http.NewRequest("GET", hs.URL+"/api/run?scenario=split-brain-jitter", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	zr, err := gzip.NewReader(res.Body)
	require.NoError(t, err)
	var out viewer.RunResponse
	require.NoError(t, json.NewDecoder(zr).Decode(&out))
	assert.Equal(t, "split-brain-jitter", out.Scenario.Name)
}
