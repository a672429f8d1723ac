package viewer_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/cmd/redlock-sim/viewer"
	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
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
	require.Len(t, out.Knobs, len(knobs.Params()), "every knob of the registry is offered")
	byName := map[string]viewer.KnobInfo{}
	for i, k := range out.Knobs {
		byName[k.Name] = k
		assert.Equal(t, i < len(viewer.CommonKnobs), k.Common, "%s: the common knobs come first", k.Name)
		assert.NotEmpty(t, k.Group, k.Name)
	}
	for _, name := range []string{"retry_jitter", "timeout", "extend_every", "hold"} { // lessons 4 and 5, "Going further"
		assert.Contains(t, byName, name)
	}
	assert.Equal(t, []string{"none", "one", "majority"}, byName["fencing"].Choices)
	assert.Equal(t, []string{"false", "true"}, byName["stop_at_deadline"].Choices)
	assert.Nil(t, byName["ttl"].Choices)
	assert.Equal(t, "duration", byName["ttl"].Unit)
}

// TestRunAPIInertAndCheck: a run says which knobs cannot change it (the panel leaves them
// out, as run --set refuses them) and judges the story's check on itself, so the page can
// say when a what-if made the run depart from the story.
func TestRunAPIInertAndCheck(t *testing.T) {
	hs := server(t)
	var gc viewer.RunResponse
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=gc-pause", &gc))
	assert.Contains(t, gc.Inert["pause_len"], "pause_rate is 0")
	assert.Contains(t, gc.Inert, "replication_delay", "no replicas")
	assert.NotContains(t, gc.Inert, "ttl")
	assert.NotContains(t, gc.Inert, "pause_rate")
	require.NotEmpty(t, gc.Check)
	for _, c := range gc.Check {
		assert.True(t, c.Held, "the story's own run keeps its promise: %s", c.Rule)
	}
	var short viewer.RunResponse
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=gc-pause&set=pause%3D500ms", &short))
	held := true
	for _, c := range short.Check {
		held = held && c.Held
	}
	assert.False(t, held, "with a 500 ms pause the run no longer shows the story's overlap")

	var fo viewer.RunResponse
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=failover-race", &fo))
	assert.Contains(t, fo.Inert["nodes"], "talks to one node")
	assert.NotContains(t, fo.Inert, "replication_delay", "failover-race has a replica")
	var sb viewer.RunResponse
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=split-brain-no-jitter", &sb))
	assert.NotContains(t, sb.Inert, "retry_jitter", "lesson 4's what-if")
	assert.NotContains(t, sb.Inert, "timeout")
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
	path := "../../../examples/scenarios/kill-not-power-loss.yaml"
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
		// issue 38: failover-race locks on one master, so nodes=5 would be the same run
		{path: "/api/run?scenario=failover-race&set=nodes%3D5", want: "nodes = 5 cannot change this run: it is N"},
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
	for path, want := range map[string]string{"/": `<script src="app.js">`, "/app.js": "function setCursor", "/app.css": "--red",
		"/favicon.svg": "<svg", "/favicon.ico": "<svg"} { // issue 38: no 404 for the icon in the console
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

// limited starts a viewer with opts on a loopback port it knows (its Host check then
// wants that port), and returns it with its URL.
func limited(t *testing.T, opts viewer.Options) (*viewer.Server, *httptest.Server) {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	opts.Addr = hs.Listener.Addr().String()
	srv, err := viewer.NewWithOptions(nil, opts)
	require.NoError(t, err)
	hs.Config.Handler = srv
	hs.Start()
	t.Cleanup(hs.Close)
	return srv, hs
}

// do sends a request with headers and returns its status, headers and decoded error.
func do(t *testing.T, method, url, body string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out struct {
		Error string `json:"error"`
	}
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(b, &out), string(b))
	}
	return res.StatusCode, res.Header, out.Error
}

// TestForeignHostRefused: a request whose Host header names another server (a page of
// another site that DNS rebinding points at 127.0.0.1) is refused, whatever it asks for;
// the loopback names with the server's port are answered.
func TestForeignHostRefused(t *testing.T) {
	_, hs := limited(t, viewer.Options{})
	_, port, err := net.SplitHostPort(hs.Listener.Addr().String())
	require.NoError(t, err)
	for _, path := range []string{"/", "/app.js", "/api/scenarios", "/api/run?scenario=gc-pause"} {
		status, _, msg := do(t, "GET", hs.URL+path, "", map[string]string{"Host": "evil.example.com:" + port})
		assert.Equal(t, 403, status, path)
		assert.Contains(t, msg, `the Host header "evil.example.com:`+port+`" names another server`, path)
		assert.Contains(t, msg, "127.0.0.1:"+port, path)
	}
	for host, want := range map[string]int{"127.0.0.1:" + port: 200, "localhost:" + port: 200, "[::1]:" + port: 200,
		"LOCALHOST:" + port: 200, "127.0.0.1:1": 403, "localhost": 403, "evil.example.com": 403, "127.0.0.1.nip.io:" + port: 403} {
		status, _, _ := do(t, "GET", hs.URL+"/api/scenarios", "", map[string]string{"Host": host})
		assert.Equal(t, want, status, host)
	}
}

// TestForeignOriginRefused: a run asked by a page of another origin (a cross-site form or
// fetch) is refused, by GET and by POST; the viewer's own page, and a request from no
// page (curl), run.
func TestForeignOriginRefused(t *testing.T) {
	_, hs := limited(t, viewer.Options{})
	_, port, err := net.SplitHostPort(hs.Listener.Addr().String())
	require.NoError(t, err)
	body := `{"scenario":"gc-pause","seed":1}`
	for _, h := range []map[string]string{
		{"Origin": "http://evil.example.com"},
		{"Origin": "null"},
		{"Origin": "http://127.0.0.1:1"},
		{"Origin": "https://127.0.0.1:" + port},
		{"Origin": "http://127.0.0.1:" + port, "Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
	} {
		for _, method := range []string{"GET", "POST"} {
			url := hs.URL + "/api/run?scenario=gc-pause"
			status, _, msg := do(t, method, url, body, h)
			assert.Equal(t, 403, status, "%s %v", method, h)
			assert.Contains(t, msg, "only the viewer's own page", "%s %v", method, h)
		}
	}
	for _, h := range []map[string]string{
		{},
		{"Origin": "http://127.0.0.1:" + port, "Sec-Fetch-Site": "same-origin"},
		{"Origin": "http://localhost:" + port, "Host": "localhost:" + port},
		{"Sec-Fetch-Site": "none"},
	} {
		status, _, msg := do(t, "POST", hs.URL+"/api/run", body, h)
		assert.Equal(t, 200, status, "%v: %s", h, msg)
	}
	status, _, _ := do(t, "GET", hs.URL+"/api/run?scenario=gc-pause", "", map[string]string{"Origin": "http://127.0.0.1:" + port})
	assert.Equal(t, 200, status)
}

// TestSecurityHeaders: every answer, the page's, the API's and a refusal, carries a
// content security policy that lets in only the page's own script and style, and
// forbids framing and referrers.
func TestSecurityHeaders(t *testing.T) {
	_, hs := limited(t, viewer.Options{})
	for _, c := range []struct{ path, host string }{{"/", ""}, {"/app.js", ""}, {"/api/scenarios", ""}, {"/", "evil.example.com"}} {
		_, h, _ := do(t, "GET", hs.URL+c.path, "", map[string]string{"Host": c.host})
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
			assert.Contains(t, csp, want, c.path)
		}
		assert.NotContains(t, csp, "unsafe-inline", c.path)
		assert.Equal(t, "DENY", h.Get("X-Frame-Options"), c.path)
		assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"), c.path)
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), c.path)
	}
}

// TestPageNeedsNoInline: the page works under its content security policy: no inline
// script or style, no style attribute, no event handler attribute, nothing from elsewhere.
func TestPageNeedsNoInline(t *testing.T) {
	hs := server(t)
	read := func(path string) string {
		res, err := http.Get(hs.URL + path)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}
	html := read("/")
	assert.Equal(t, 1, strings.Count(html, "<script"), "one script")
	assert.Contains(t, html, `<script src="app.js"></script>`)
	assert.NotContains(t, html, "<style")
	assert.NotRegexp(t, `\s(style|on[a-z]+)=`, html)
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, html)
	js := read("/app.js")
	assert.NotRegexp(t, `[{,]\s*style:`, js, "a style attribute, which the policy refuses: set element.style instead")
	assert.NotRegexp(t, `setAttribute\("style"|innerHTML|eval\(|new Function`, js)
}

// TestRunRefusedUpFront: a run asking for more work than a request may is refused before
// it starts, in the words of the knobs, as `run` says a limit.
func TestRunRefusedUpFront(t *testing.T) {
	_, hs := limited(t, viewer.Options{})
	var out map[string]string
	require.Equal(t, 400, get(t, hs, "/api/run?scenario=baseline&set=duration%3D10000h&set=clients%3D64&set=nodes%3D99", &out))
	assert.Equal(t, "duration = 10000h0m0s, clients = 64 and nodes = 99 make about 228 billion client-node-seconds "+
		"(simulated seconds × clients × redis-servers: every client talks to every node), and serve simulates at most "+
		"200,000 in one run: shorten the duration or use fewer clients or nodes, or run it with `redlock-sim run`, "+
		"which has no such limit", out["error"])
	require.Equal(t, 400, post(t, hs, `{"scenario":"baseline","set":["duration=1h","nodes=10","replicas=2"]}`, &out))
	assert.Contains(t, out["error"], "clients = 3 and nodes = 10 and replicas = 2 (30 redis-servers) make about 324,000 client-node-seconds")
}

// TestRunCutAtDeadline: a run that goes on past the server's deadline is stopped and
// answered 504 with the deadline; the server runs the next one.
func TestRunCutAtDeadline(t *testing.T) {
	srv, hs := limited(t, viewer.Options{RunDeadline: time.Millisecond})
	var out map[string]string
	// An hour of the baseline: about three million events, far past a millisecond.
	require.Equal(t, 504, get(t, hs, "/api/run?scenario=baseline&set=duration%3D1h", &out))
	assert.Equal(t, "the run went on past the server's limit of 1ms for one run (serve --run-deadline): shorten the "+
		"duration or use fewer clients or nodes, or run it with `redlock-sim run`, which has no such limit", out["error"])
	assert.Equal(t, viewer.Stats{PeakRunning: 1}, srv.Stats(), "the slot was given back")
}

// TestReplayWithinLimits: a response carries at most MaxReplaySteps steps and
// MaxReplayStateCells node and client states, and says where its replay stops; the run
// is the same run, its record the whole run's.
func TestReplayWithinLimits(t *testing.T) {
	_, hs := limited(t, viewer.Options{MaxReplaySteps: 100})
	var out viewer.RunResponse
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=baseline", &out))
	assert.Len(t, out.Replay.Steps, 100)
	assert.True(t, out.Replay.Truncated)
	assert.LessOrEqual(t, len(out.Replay.States), 100)
	last := out.Replay.Steps[99]
	assert.LessOrEqual(t, last.State, len(out.Replay.States)-1)
	assert.Contains(t, out.ReplayNote, "The replay stops after the run's first 100 events, at ")
	assert.Contains(t, out.ReplayNote, "the verdicts and figures cover the whole run")
	rec, err := experiments.Run(context.Background(), "baseline", nil, 1, experiments.Options{})
	require.NoError(t, err)
	assert.Equal(t, rec.TraceHash, out.Record.TraceHash)
	assert.Equal(t, rec.Liveness, out.Record.Liveness)

	_, hs = limited(t, viewer.Options{MaxReplayStateCells: 1000})
	out = viewer.RunResponse{}
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=baseline&set=clients%3D10&set=nodes%3D9", &out))
	cells := 0
	for _, s := range out.Replay.States {
		cells += len(s.Nodes) + len(s.Clients)
	}
	assert.LessOrEqual(t, cells, 1000)
	assert.Greater(t, cells, 1000-19, "it stops when the next state would not fit")
	assert.True(t, out.Replay.Truncated)

	_, hs = limited(t, viewer.Options{})
	out = viewer.RunResponse{}
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=unlimited-extension", &out))
	assert.False(t, out.Replay.Truncated, "a story fits whole")
	assert.Empty(t, out.ReplayNote)
}

// TestLongRunOutlivesReadTimeout: ReadTimeout bounds reading the request, not the run:
// a run that takes longer is answered.
func TestLongRunOutlivesReadTimeout(t *testing.T) {
	srv, err := viewer.NewWithOptions(nil, viewer.Options{ReadTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(srv)
	hs.Config = srv.HTTPServer()
	hs.Start()
	t.Cleanup(hs.Close)
	// The baseline's minute takes longer than 100ms on any machine today.
	var out viewer.RunResponse
	require.Equal(t, 200, get(t, hs, "/api/run?scenario=baseline", &out))
	assert.Equal(t, "baseline", out.Scenario.Name)
}

// TestStalledBodyDropped: a request whose body stops arriving is dropped at ReadTimeout
// instead of holding its connection open.
func TestStalledBodyDropped(t *testing.T) {
	srv, err := viewer.NewWithOptions(nil, viewer.Options{ReadTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(srv)
	hs.Config = srv.HTTPServer()
	hs.Start()
	t.Cleanup(hs.Close)
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /api/run HTTP/1.1\r\nHost: "+hs.Listener.Addr().String()+
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"scenario\":")
	require.NoError(t, err)
	// A safety net for the test itself, far past ReadTimeout: the server must close first.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(time.Minute)))
	answer, err := io.ReadAll(conn)
	require.NoError(t, err, "the server closed the connection (a read timeout here means it kept it open)")
	assert.Contains(t, string(answer), "400 Bad Request")
	assert.Contains(t, string(answer), "i/o timeout")
}

// TestServeWithinLimits fires 50 costly requests at once at a viewer that runs 2 and
// queues 2: each is answered, 200 or 503 with Retry-After, never a dropped connection; no
// more than 2 simulations ever run at once; and every answer, the costliest kinds the
// limits allow, stays under answerMB. Those two bound the server's memory (the README's
// figures per run were measured with heap profiles: a heap's peak turns on when the
// collector runs, so no test samples it). The runs are held at the start of their slot
// until every other request has been answered, so the test does not depend on the
// machine's speed.
func TestServeWithinLimits(t *testing.T) {
	const n, runs, queue, answerMB = 50, 2, 2, 16
	srv, hs := limited(t, viewer.Options{MaxRuns: runs, MaxQueue: queue, RunDeadline: 10 * time.Minute})
	hold := make(chan struct{})
	viewer.SetBeforeRun(srv, func() { <-hold })

	type answer struct {
		status     int
		retryAfter string
		err        error
		size       int64
	}
	answers := make(chan answer, n)
	// The costliest kinds the limits allow: the baseline's minute, and 64 clients on 99
	// nodes, whose states fill the replay's cells.
	paths := []string{"/api/run?scenario=baseline", "/api/run?scenario=baseline&set=clients%3D64&set=nodes%3D99&set=duration%3D10s"}
	for i := range n {
		go func() {
			var res *http.Response
			var err error
			if i%2 == 0 {
				res, err = http.Get(hs.URL + paths[i/2%2])
			} else {
				res, err = http.Post(hs.URL+"/api/run", "application/json", strings.NewReader(`{"scenario":"baseline","seed":`+strconv.Itoa(i)+`}`))
			}
			if err != nil {
				answers <- answer{err: err}
				return
			}
			size, err := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			answers <- answer{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After"), err: err, size: size}
		}()
	}
	for range n - runs - queue {
		a := <-answers
		require.NoError(t, a.err, "no dropped connection")
		assert.Equal(t, 503, a.status)
		assert.Equal(t, "2", a.retryAfter)
	}
	// The admitted ones count themselves running or waiting just after they took their
	// place, so the counters may lag the last refusal by an instant.
	want := viewer.Stats{Running: runs, Waiting: queue, PeakRunning: runs, Busy: n - runs - queue}
	assert.Eventually(t, func() bool { return srv.Stats() == want }, time.Minute, time.Millisecond, "%+v", srv.Stats())
	close(hold)
	for range runs + queue {
		a := <-answers
		require.NoError(t, a.err, "no dropped connection")
		assert.Equal(t, 200, a.status)
		assert.Greater(t, a.size, int64(1<<20))
		assert.Less(t, a.size, int64(answerMB<<20), "the replay's limits bound the answer")
	}
	st := srv.Stats()
	assert.Equal(t, runs, st.PeakRunning, "never more than %d runs at once", runs)
	assert.Zero(t, st.Running+st.Waiting)
}

// TestExercisesAreTheDocs: every question and answer the page shows is docs/teaching.md's,
// word for word, so the exercises on screen and in the docs cannot drift apart.
func TestExercisesAreTheDocs(t *testing.T) {
	js, err := os.ReadFile("web/app.js")
	require.NoError(t, err)
	doc, err := os.ReadFile("../../../docs/teaching.md")
	require.NoError(t, err)
	flat := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "`", "")), " ")
	n := 0
	for _, line := range strings.Split(string(js), "\n") {
		for _, key := range []string{`{ q: "`, `a: "`} {
			i := strings.Index(line, key)
			if i < 0 {
				continue
			}
			text := line[i+len(key):]
			text = text[:strings.Index(text, `"`)]
			assert.True(t, strings.Contains(flat, text), "docs/teaching.md's exercises lack %q", text)
			n++
		}
	}
	assert.Equal(t, 14, n, "seven questions and their answers")
}
