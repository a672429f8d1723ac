// Package viewer is the classroom viewer behind `redlock-sim serve`: an HTTP handler that
// serves a single-page app embedded in the binary (no CDN, no build step) and runs the
// scenarios it asks for through the same Go code as `redlock-sim run`.
//
// The runs happen in the server, not in WebAssembly: the simulator, the Lua VM and the
// scenario catalogue would make a browser download tens of megabytes before the first
// picture, a what-if rerun in native code takes milliseconds, and a run on the server is
// the very run `redlock-sim run` gives for the same scenario, seed and knobs (same trace
// hash), so a shared link and a command line can be checked against each other.
//
// It lives in cmd/redlock-sim/viewer, beside the command that serves it, and not in
// internal/ (where it started): it imports the whole run path (experiments, its world,
// scenarios and report), which makes it a top-layer package, and only the CLI uses it,
// while internal/ holds only the bottom-layer helpers every layer may import
// (internal/layers's import-graph test places it in the top layer).
package viewer

import (
	"compress/gzip"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/plots"
)

//go:embed web
var web embed.FS

// MaxFileBytes bounds a scenario file sent by the browser; the built-in ones are under 2 kB.
const MaxFileBytes = 64 << 10

// CommonKnobs are the knobs the what-if panel lists first, besides the scenario's own
// parameters: the ones the stories turn on. It offers every other knob of the registry
// too, grouped, below them (KnobInfo.Common).
var CommonKnobs = []string{"client", "ttl", "drift_factor", "fencing", "persistence", "nodes", "clients",
	"latency", "variant", "stop_at_deadline", "preload_scripts", "session_timeout", "on_suspended", "fence_token"}

// Server serves the viewer and runs scenarios for it. Its zero value is not usable: New.
type Server struct {
	files []*scenarios.Scenario // scenario files given to serve, after the built-ins
	mux   *http.ServeMux
	opts  Options
	guard *guard
	lim   *limiter
	// beforeRun, when set (by tests), is called in a run's slot before it simulates.
	beforeRun func()
}

// New returns a viewer with the default options (DefaultOptions), answering on loopback
// at any port; see NewWithOptions.
func New(files []*scenarios.Scenario) (*Server, error) {
	return NewWithOptions(files, Options{})
}

// NewWithOptions returns a viewer that offers the built-in scenarios and files, the user's
// scenario files given to serve (each under its own name, which must not repeat
// another's), within the limits of opts and only to requests for opts' address.
func NewWithOptions(files []*scenarios.Scenario, opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{mux: http.NewServeMux(), opts: opts, guard: g, lim: newLimiter(opts)}
	seen := map[string]string{}
	for _, sc := range scenarios.Scenarios() {
		seen[sc.Name] = "the built-in scenario"
	}
	for _, f := range files {
		if where, ok := seen[f.Name]; ok {
			return nil, fmt.Errorf("scenario file %s: its name %q is taken by %s; rename it (the name: field)", f.File, f.Name, where)
		}
		seen[f.Name] = f.File
		s.files = append(s.files, f)
	}
	static, err := fs.Sub(web, "web")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /", http.FileServerFS(static))
	// A browser asks for /favicon.ico whatever the page links: the same icon, not a 404
	// in the console.
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		http.ServeFileFS(w, r, static, "favicon.svg")
	})
	s.mux.HandleFunc("GET /api/scenarios", s.handleScenarios)
	s.mux.HandleFunc("GET /api/run", s.handleRun)
	s.mux.HandleFunc("POST /api/run", s.handleRun)
	return s, nil
}

// ServeHTTP serves the viewer's pages and API, to requests that name this server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setHeaders(w.Header())
	if err := s.guard.checkHost(r); err != nil {
		writeError(w, http.StatusForbidden, err)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Stats returns the server's run counters.
func (s *Server) Stats() Stats { return s.lim.stats() }

// Options returns the options the server runs with, defaults filled in.
func (s *Server) Options() Options { return s.opts }

// HTTPServer returns an http.Server for the viewer with timeouts that fit its limits: a
// request must arrive whole within ReadTimeout (a stalled upload is dropped), and its
// answer may take as long as a wait in the queue and a run, each up to RunDeadline, and
// a minute to send.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s, ReadHeaderTimeout: min(10*time.Second, s.opts.ReadTimeout),
		ReadTimeout: s.opts.ReadTimeout, WriteTimeout: 2*s.opts.RunDeadline + time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}

// ScenarioInfo is a scenario as the picker and the what-if panel show it.
type ScenarioInfo struct {
	Name   string      `json:"name"`
	Story  string      `json:"story"`
	Source string      `json:"source"`
	Expect string      `json:"expect"`
	File   string      `json:"file"` // builtin/NAME.yaml, or the user's path
	Params []ParamInfo `json:"params"`
}

// ParamInfo is one of a scenario's named parameters.
type ParamInfo struct {
	Name    string `json:"name"`
	Default string `json:"default"`
	Help    string `json:"help"`
	Kind    string `json:"kind"` // "duration" or "whole number"
}

// KnobInfo is one knob of the registry as the what-if panel offers it: the registry's
// description, its choices when it has a fixed set, and whether the stories turn it on
// (CommonKnobs).
type KnobInfo struct {
	knobs.Param
	Choices []string `json:"choices,omitempty"`
	Common  bool     `json:"common,omitempty"`
}

func info(sc *scenarios.Scenario) ScenarioInfo {
	in := ScenarioInfo{Name: sc.Name, Story: sc.Story, Source: sc.Source, Expect: sc.Expect, File: sc.File,
		Params: []ParamInfo{}}
	for _, p := range sc.Params {
		in.Params = append(in.Params, ParamInfo{Name: p.Name, Default: p.Default, Help: p.Help, Kind: p.Kind.String()})
	}
	return in
}

func (s *Server) handleScenarios(w http.ResponseWriter, r *http.Request) {
	var out struct {
		Scenarios []ScenarioInfo `json:"scenarios"`
		Knobs     []KnobInfo     `json:"knobs"`
	}
	for _, sc := range scenarios.Scenarios() {
		out.Scenarios = append(out.Scenarios, info(&sc))
	}
	for _, f := range s.files {
		out.Scenarios = append(out.Scenarios, info(f))
	}
	out.Knobs = knobCatalogue()
	writeJSON(w, r, &out)
}

// knobCatalogue is every knob of the registry, the common ones first, then the others in
// registry order (which groups them).
func knobCatalogue() []KnobInfo {
	var common, rest []KnobInfo
	for _, p := range knobs.Params() {
		k := KnobInfo{Param: p, Common: slices.Contains(CommonKnobs, p.Name)}
		if choices, ok := strings.CutPrefix(p.Allowed, "one of "); ok {
			k.Choices = strings.Split(choices, ", ")
		}
		if p.Unit == "bool" {
			k.Choices = []string{"false", "true"}
		}
		if k.Common {
			common = append(common, k)
		} else {
			rest = append(rest, k)
		}
	}
	slices.SortStableFunc(common, func(a, b KnobInfo) int {
		return slices.Index(CommonKnobs, a.Name) - slices.Index(CommonKnobs, b.Name)
	})
	return append(common, rest...)
}

// RunRequest asks for one run: a scenario by name, or a scenario file's text, with a seed
// and knob settings as `run --set` takes them.
type RunRequest struct {
	Scenario string   `json:"scenario"`
	File     string   `json:"file"` // a scenario file's YAML, instead of Scenario
	Seed     uint64   `json:"seed"`
	Set      []string `json:"set"`
}

// RunResponse is one run for the viewer: the scenario, the record `run --json` prints,
// the verdicts in words, and the replay to step through.
type RunResponse struct {
	Scenario        ScenarioInfo        `json:"scenario"`
	Seed            uint64              `json:"seed"`
	Set             []string            `json:"set"`
	Record          *experiments.Record `json:"record"`
	LockVerdict     string              `json:"lock_verdict"`
	ResourceVerdict string              `json:"resource_verdict"`
	Replay          *report.Replay      `json:"replay"`
	// ReplayNote says, when the replay stops before the run's end (the server keeps each
	// response small), where it stops; empty otherwise.
	ReplayNote string `json:"replay_note,omitempty"`
	// Check is the story's expected outcome (its check's rules) judged on this one run, so
	// the page can say when the settings made the run depart from the story; empty for a
	// scenario without a check.
	Check []CheckResult `json:"check,omitempty"`
	// Inert names each knob that cannot change this run (knobs.Config.Inert, as `run --set`
	// refuses it) and says why: the what-if panel does not offer it.
	Inert map[string]string `json:"inert"`
	// CropNs is the part of the run worth looking at first, [from, to) in nanoseconds of
	// true time: the window `run --timeline` draws (plots.DefaultWindow), the viewer's
	// first zoom.
	CropNs [2]int64 `json:"crop_ns"`
}

// CheckResult is one rule of a scenario's check judged on one run.
type CheckResult struct {
	Rule string `json:"rule"` // as the scenario file writes it: "validity_overlaps: always"
	Held bool   `json:"held"`
}

// userError is a request the user can fix: a bad knob, an unknown scenario, a file that
// does not parse. It is answered with 400 and the message.
type userError struct{ err error }

func (e *userError) Error() string { return e.err.Error() }
func (e *userError) Unwrap() error { return e.err }

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	if err := s.guard.checkOrigin(r); err != nil {
		writeError(w, http.StatusForbidden, err)
		return
	}
	req, err := readRequest(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	sc, settings, err := s.parse(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	release, err := s.lim.acquire(r.Context())
	if err != nil {
		writeRunError(w, r, err)
		return
	}
	// The slot is held until the answer is written: its memory is the run's.
	defer release()
	resp, err := s.run(r.Context(), sc, settings, req)
	if err != nil {
		writeRunError(w, r, err)
		return
	}
	writeJSON(w, r, resp)
}

// writeRunError answers a run that did not happen: a user's mistake (400), a busy
// server (503, with Retry-After), a run past its deadline (504); nothing when the client
// went away.
func writeRunError(w http.ResponseWriter, r *http.Request, err error) {
	var ue *userError
	var busy *errBusy
	var late *errLate
	switch {
	case errors.As(err, &ue):
		writeError(w, http.StatusBadRequest, err)
	case errors.As(err, &busy):
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusServiceUnavailable, err)
	case errors.As(err, &late):
		writeError(w, http.StatusGatewayTimeout, err)
	case r.Context().Err() != nil: // the client went away
	default:
		writeError(w, http.StatusInternalServerError, err)
	}
}

// errLate is a run cut at the server's deadline for one run.
type errLate struct{ deadline time.Duration }

func (e *errLate) Error() string {
	return fmt.Sprintf("the run went on past the server's limit of %v for one run (serve --run-deadline): "+
		"shorten the duration or use fewer clients or nodes, or run it with `redlock-sim run`, which has no such limit", e.deadline)
}

// readRequest reads a RunRequest from a POST's JSON body or a GET's query string
// (?scenario=gc-pause&seed=2&set=pause=500ms&set=ttl=2s).
func readRequest(r *http.Request) (RunRequest, error) {
	req := RunRequest{Seed: 1}
	if r.Method == http.MethodPost {
		dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, MaxFileBytes+16<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, fmt.Errorf("the request is not a run request: %v", err)
		}
		return req, nil
	}
	q := r.URL.Query()
	req.Scenario, req.Set = q.Get("scenario"), q["set"]
	if v := q.Get("seed"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return req, fmt.Errorf("seed %q: want a whole number from 0 to 18446744073709551615", v)
		}
		req.Seed = seed
	}
	return req, nil
}

// Run runs the scenario req asks for, as `redlock-sim run` would, and returns its replay,
// within the server's limits: it waits for a slot among Options.MaxRuns, and refuses a
// run past Options.MaxClientNodeSeconds or cuts it at Options.RunDeadline.
func (s *Server) Run(ctx context.Context, req RunRequest) (*RunResponse, error) {
	sc, settings, err := s.parse(req)
	if err != nil {
		return nil, err
	}
	release, err := s.lim.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.run(ctx, sc, settings, req)
}

// parse finds the scenario req asks for and reads its settings, refusing what cannot run:
// the checks that cost next to nothing, made before a request waits for a slot.
func (s *Server) parse(req RunRequest) (*scenarios.Scenario, []knobs.KV, error) {
	sc, err := s.scenario(req)
	if err != nil {
		return nil, nil, &userError{err}
	}
	var settings []knobs.KV
	for _, set := range req.Set {
		name, value, ok := strings.Cut(set, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, nil, &userError{fmt.Errorf("setting %q: want name=value, e.g. ttl=250ms", set)}
		}
		settings = append(settings, knobs.KV{Name: name, Value: strings.TrimSpace(value)})
	}
	if err := experiments.CheckInert(sc, settings); err != nil {
		return nil, nil, &userError{err}
	}
	return sc, settings, nil
}

// run simulates sc in a slot: it assembles the world once to weigh its work, refuses it
// past the limit, and runs it under the deadline with a replay kept within the limits.
func (s *Server) run(ctx context.Context, sc *scenarios.Scenario, settings []knobs.KV, req RunRequest) (*RunResponse, error) {
	if s.beforeRun != nil {
		s.beforeRun()
	}
	w, err := experiments.AssembleScenario(sc, settings, req.Seed)
	if err != nil {
		return nil, &userError{err}
	}
	if err := checkWork(w, s.opts.MaxClientNodeSeconds); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithTimeout(ctx, s.opts.RunDeadline)
	defer cancel()
	lim := report.ReplayLimits{Steps: s.opts.MaxReplaySteps, StateCells: s.opts.MaxReplayStateCells,
		TimelineItems: s.opts.MaxTimelineItems}
	rp, rec, err := experiments.ReplayScenarioWithin(runCtx, sc, settings, req.Seed, lim)
	switch {
	case err == nil:
	case ctx.Err() != nil: // the caller gave up
		return nil, ctx.Err()
	case runCtx.Err() != nil:
		return nil, &errLate{s.opts.RunDeadline}
	default:
		return nil, &userError{err}
	}
	resp := &RunResponse{Scenario: info(sc), Seed: req.Seed, Set: slices.Clip(append([]string{}, req.Set...)),
		Record: rec, LockVerdict: rec.Safety.LockVerdict(), ResourceVerdict: rec.Safety.ResourceVerdict(),
		Replay: rp, ReplayNote: replayNote(rp), Inert: inertKnobs(sc, settings, rec)}
	crop := plots.DefaultWindow(rp.Timeline)
	resp.CropNs = [2]int64{crop.From.Nanoseconds(), crop.To.Nanoseconds()}
	if sc.Check != nil {
		results, err := sc.Check.Evaluate([]scenarios.Figures{rec.Figures()})
		if err != nil {
			return nil, err
		}
		for _, r := range results {
			resp.Check = append(resp.Check, CheckResult{Rule: r.Rule.Text, Held: r.Held})
		}
	}
	return resp, nil
}

// inertKnobs asks experiments.CheckInert, which `run --set` asks, of every knob not set
// yet: would setting it, to the value it has in this run, change a run of sc with
// settings? A knob it refuses is one the what-if panel must not offer.
func inertKnobs(sc *scenarios.Scenario, settings []knobs.KV, rec *experiments.Record) map[string]string {
	out := map[string]string{}
	set := map[string]bool{}
	for _, kv := range settings {
		set[kv.Name] = true
	}
	for _, kv := range rec.Config {
		if set[kv.Name] {
			continue
		}
		var ie *knobs.InertError
		if err := experiments.CheckInert(sc, append(slices.Clip(settings), kv)); errors.As(err, &ie) {
			out[kv.Name] = ie.Why
			if ie.Hint != "" {
				out[kv.Name] += "; " + ie.Hint
			}
		}
	}
	return out
}

// replayNote says where a replay cut short stops, and that the verdicts do not.
func replayNote(rp *report.Replay) string {
	if !rp.Truncated && !rp.Timeline.Truncated {
		return ""
	}
	end := time.Duration(0)
	if len(rp.Steps) > 0 {
		end = time.Duration(rp.Steps[len(rp.Steps)-1].AtNs)
	}
	what := fmt.Sprintf("The replay stops after the run's first %s events, at %.3f s of %v", grouped(int64(len(rp.Steps))), end.Seconds(), rp.Timeline.Duration)
	if !rp.Truncated {
		what = "The diagram stops part way through the run"
	}
	return what + " (the viewer keeps each run small); the verdicts and figures cover the whole run, " +
		"and `redlock-sim run --trace` prints every event."
}

// scenario finds the scenario req names, or parses the file it carries.
func (s *Server) scenario(req RunRequest) (*scenarios.Scenario, error) {
	if req.File != "" {
		if req.Scenario != "" {
			return nil, errors.New("give a scenario's name or a scenario file, not both")
		}
		if len(req.File) > MaxFileBytes {
			return nil, fmt.Errorf("the scenario file is %d bytes; at most %d are accepted", len(req.File), MaxFileBytes)
		}
		return scenarios.ParseFile("your file", []byte(req.File))
	}
	if req.Scenario == "" {
		req.Scenario = "baseline"
	}
	for _, f := range s.files {
		if f.Name == req.Scenario {
			return f, nil
		}
	}
	return scenarios.LookupScenario(req.Scenario)
}

func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var out io.Writer = w
	var gz *gzip.Writer
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		gz = gzip.NewWriter(w)
		out = gz
	}
	enc := json.NewEncoder(out)
	if err := enc.Encode(v); err != nil {
		return // the client went away
	}
	if gz != nil {
		gz.Close()
	}
}

func writeError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
