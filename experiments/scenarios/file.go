package scenarios

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/internal/yamltree"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/sim"
)

// FileError reports a problem in a scenario file at a line, so that the user can go
// straight to it. It prints as "scenario FILE:LINE: problem" and unwraps to the problem
// (often a *knobs.ValueError), so the command line exits with status 2.
type FileError struct {
	File string
	Line int // 1-based; 0 when the problem belongs to no single line
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("scenario %s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("scenario %s: %v", e.File, e.Err)
}

// Unwrap returns the underlying problem.
func (e *FileError) Unwrap() error { return e.Err }

// MaxFileBytes bounds a scenario file: a story is a page, not a data set.
const MaxFileBytes = 1 << 20

// MaxSteps bounds a schedule. Each step acts once (a trigger fires on its nth event
// only), so a schedule can never keep the simulation busy for ever.
const MaxSteps = 1000

// MaxParams bounds a scenario's named parameters.
const MaxParams = 64

// Param is a named number in a scenario's schedule, with its default. A parameter is a
// knob of the scenario: `--set NAME=VALUE` sets it, in the units of its default.
type Param struct {
	Name    string
	Default string // as written in the file, checked
	Help    string
	Kind    ParamKind
	line    int
}

// ParamKind says what a parameter holds.
type ParamKind uint8

// The parameter kinds.
const (
	ParamDuration ParamKind = iota + 1 // a Go duration such as 1500ms
	ParamCount                         // a whole number
)

func (k ParamKind) String() string {
	if k == ParamCount {
		return "whole number"
	}
	return "duration"
}

// Value is a number in a schedule: written out, or a $parameter's value.
type Value struct {
	Param string        // the parameter it names, or ""
	Dur   time.Duration // the literal duration (or count, in N)
	N     int
	Never bool // restart_after: never
	Set   bool // given in the file
	line  int
	text  string // a literal as written, for messages
}

// Trigger makes a step wait for a client's nth event of a kind.
type Trigger struct {
	Event  model.ClientEventKind
	Client string
	Nth    Value
}

// Step is one entry of a fault schedule: an action at a true time (At) or on a client's
// event (On), After later.
type Step struct {
	Line   int
	At     Value
	On     *Trigger
	After  Value
	Action Action
}

// Action is what a step does. Kind names it; the other fields are its arguments, those the
// kind does not take left zero (the parser refuses them).
type Action struct {
	Kind     string
	Client   string     // pause_client, crash_client
	Node     string     // the node faults, outside_lock, the clock actions: a group (redis3), another service's server (lease1: a node fault or a clock action), or a client for a clock
	From, To []string   // block, clog: endpoint names
	BothWays bool       // block
	For      Value      // pause_client, a node fault that stalls (pause_node), isolate, block, clog, partition, slow_link: how long (unset: until the end)
	Restart  Value      // crash_client, a node fault that stops (crash_node, ...): restart after (unset or never: stays down)
	By       Value      // clock_step, clock_slew: the wall clock's jump or correction
	Endpoint string     // isolate
	Sides    [][]string // partition: the sides; endpoints not named are one more side
	RatePPM  float64    // clock_slew: the slew's rate (0: ntpd's 500 ppm); clock_drift: the rate change
	Count    Value      // drop: how many messages
	Latency  string     // slow_link: the link's latency while it lasts, as the latency knob takes it, or $parameter (its By then names the parameter)
	TTL      Value      // outside_lock: the outside client's PX
	Resource string     // outside_lock: the lock whose key it takes ("" : the world's first)
}

// actionSpec is an action a step can take, with the fields it accepts and which of those
// it needs. docs/scenarios.md says what each does (TestEveryActionIsDocumented).
type actionSpec struct {
	name     string
	fields   []string
	required []string
}

// actions are every action a step can take: the client actions, one for each process
// fault that has an action (model.FaultDesc.Action), and the network's and the clocks'.
var actions = slices.Concat([]actionSpec{
	{"pause_client", []string{"client", "for"}, []string{"client", "for"}},
	{"crash_client", []string{"client", "restart_after"}, []string{"client"}},
}, nodeFaultActions(), []actionSpec{
	{"isolate", []string{"endpoint", "for"}, []string{"endpoint"}},
	{"block", []string{"from", "to", "both_ways", "for"}, []string{"from", "to"}},
	{"clog", []string{"from", "to", "for"}, []string{"from", "to", "for"}},
	{"drop", []string{"from", "to", "count"}, []string{"from", "to", "count"}},
	{"partition", []string{"sides", "for"}, []string{"sides"}},
	{"outside_lock", []string{"node", "ttl", "resource"}, []string{"node", "ttl"}},
	{"slow_link", []string{"from", "to", "latency", "for"}, []string{"from", "to", "latency", "for"}},
	{"clock_step", []string{"node", "by"}, []string{"node", "by"}},
	{"clock_slew", []string{"node", "by", "rate_ppm"}, []string{"node", "by"}},
	{"clock_drift", []string{"node", "ppm"}, []string{"node", "ppm"}},
})

// nodeFaultActions returns the action of each process fault that has one, in kind order.
// Its fields follow from what the fault does: one that stops the node may restart it
// after restart_after (a duration, or never: the default), one that stalls it lasts for,
// any other acts at an instant. Each acts on the master of the Redis group node names, or
// on the server node names in a world of another service (a server-neutral kind only:
// model.FaultKinds).
func nodeFaultActions() []actionSpec {
	var out []actionSpec
	for _, d := range redis.FaultKinds() {
		if d.Action == "" {
			continue
		}
		a := actionSpec{d.Action, []string{"node"}, []string{"node"}}
		switch d.Effect {
		case redis.EffectStop:
			a.fields = []string{"node", "restart_after"}
		case redis.EffectStall:
			a.fields, a.required = []string{"node", "for"}, []string{"node", "for"}
		}
		out = append(out, a)
	}
	return out
}

// NodeFault returns the descriptor of the process fault the action schedules (crash_node,
// pause_node, failover, ...), and false for an action of another kind.
func (a Action) NodeFault() (redis.FaultDesc, bool) {
	for _, d := range redis.FaultKinds() {
		if d.Action != "" && d.Action == a.Kind {
			return d, true
		}
	}
	return redis.FaultDesc{}, false
}

// ActionNames returns every action a schedule step can take, in the order docs/scenarios.md
// lists them: the fault kinds a search may draw (experiments/search) are these names.
func ActionNames() []string { return actionNames() }

func actionNames() []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a.name
	}
	return out
}

var topKeys = []string{"name", "story", "source", "expect", "check", "window", "params", "knobs", "start", "workload", "schedule"}

// LoadFile reads the scenario file at path and checks it as ParseFile does.
func LoadFile(path string) (*Scenario, error) {
	data, err := yamltree.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, &FileError{File: path, Err: err}
	}
	return ParseFile(path, data)
}

// ParseFile decodes a scenario file strictly: unknown keys, wrong types, bad values and
// references to parameters that are not declared are errors with the file and line,
// before anything runs. What needs the world (a client, node or endpoint name) is checked
// when the scenario is set up, against the world the knobs make. file names the scenario
// in messages.
func ParseFile(file string, data []byte) (*Scenario, error) {
	root, yerr := yamltree.Document(data, "a mapping with name, story, knobs and schedule")
	if yerr != nil {
		return nil, &FileError{File: file, Line: yerr.Line, Err: yerr.Err}
	}
	p := &fileParser{file: file}
	sc, err := p.parse(root)
	if err != nil {
		return nil, err
	}
	sc.Text = string(data)
	sc.File = file
	// The times no run can reach, with the parameters' defaults: a run's own duration is
	// known only when the knobs are applied (Configure checks them against it).
	if err := sc.checkTimes(anyRun, sc.defaults()); err != nil {
		return nil, err
	}
	return sc, nil
}

type fileParser struct {
	file   string
	params []Param
}

func (p *fileParser) errf(line int, format string, args ...any) error {
	return &FileError{File: p.file, Line: line, Err: fmt.Errorf(format, args...)}
}

func (p *fileParser) wrap(line int, err error) error {
	var fe *FileError
	if errors.As(err, &fe) {
		return err
	}
	var ye *yamltree.Error
	if errors.As(err, &ye) {
		return &FileError{File: p.file, Line: ye.Line, Err: ye.Err}
	}
	return &FileError{File: p.file, Line: line, Err: err}
}

func (p *fileParser) entries(n *yaml.Node, allowed []string, what string) ([]yamltree.Entry, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n.Line, "%s: want a mapping, got %s", what, yamltree.Describe(n))
	}
	es, err := yamltree.Entries(n, allowed, what)
	if err != nil {
		return nil, p.wrap(0, err)
	}
	return es, nil
}

func (p *fileParser) scalar(n *yaml.Node, what string) (string, error) {
	s, err := yamltree.Scalar(n, what)
	if err != nil {
		return "", p.wrap(0, err)
	}
	return s, nil
}

var (
	nameRE  = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	paramRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

func (p *fileParser) parse(root *yaml.Node) (*Scenario, error) {
	es, err := p.entries(root, topKeys, "the scenario")
	if err != nil {
		return nil, err
	}
	sc := &Scenario{}
	var schedule *yaml.Node
	got := map[string]bool{}
	// params first, wherever they are written: the schedule names them.
	for _, e := range es {
		got[e.Key] = true
		if e.Key == "params" {
			if err := p.parseParams(e.Val); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range es {
		var text string
		switch e.Key {
		case "name", "story", "source", "expect":
			if text, err = p.scalar(e.Val, e.Key); err != nil {
				return nil, err
			}
		}
		switch e.Key {
		case "name":
			if !nameRE.MatchString(text) {
				return nil, p.errf(e.Val.Line, "name %q: want lower-case letters, digits and dashes, starting with a letter", text)
			}
			sc.Name = text
		case "story":
			sc.Story = text
		case "source":
			sc.Source = text
		case "expect":
			sc.Expect = text
		case "window":
			if err := p.parseWindow(sc, e.Val); err != nil {
				return nil, err
			}
		case "knobs":
			if err := p.parseKnobs(sc, e.Val); err != nil {
				return nil, err
			}
		case "start":
			if err := p.parseStart(sc, e.Val); err != nil {
				return nil, err
			}
		case "workload":
			if err := p.parseWorkload(sc, e.Val); err != nil {
				return nil, err
			}
		case "schedule":
			schedule = e.Val
		case "check":
			if err := p.parseCheck(sc, e.Val); err != nil {
				return nil, err
			}
		}
	}
	for _, key := range []string{"name", "story"} {
		if !got[key] {
			return nil, p.errf(0, "missing key %q", key)
		}
	}
	if schedule != nil {
		if err := p.parseSchedule(sc, schedule); err != nil {
			return nil, err
		}
	}
	sc.Params = p.params
	return sc, nil
}

func (p *fileParser) parseParams(n *yaml.Node) error {
	if yamltree.IsNull(n) {
		return nil
	}
	es, err := p.entries(n, nil, "params")
	if err != nil {
		return err
	}
	if len(es) > MaxParams {
		return p.errf(n.Line, "params: %d parameters, at most %d allowed", len(es), MaxParams)
	}
	for _, e := range es {
		if !paramRE.MatchString(e.Key) {
			return p.errf(e.KeyLine, "parameter name %q: want lower-case letters, digits and underscores, starting with a letter", e.Key)
		}
		if _, err := knobs.LookupParam(e.Key); err == nil {
			return p.errf(e.KeyLine, "parameter %s has the name of a knob; a parameter needs a name of its own", e.Key)
		}
		what := "parameter " + e.Key
		fields, err := p.entries(e.Val, []string{"default", "help"}, what)
		if err != nil {
			return err
		}
		prm := Param{Name: e.Key, line: e.KeyLine}
		for _, f := range fields {
			text, err := p.scalar(f.Val, what+": "+f.Key)
			if err != nil {
				return err
			}
			switch f.Key {
			case "default":
				prm.Default = text
				if _, err := knobs.Whole(e.Key, text, ""); err == nil {
					prm.Kind = ParamCount
				} else if _, err := knobs.Duration(e.Key, text, "a duration such as 500ms"); err == nil {
					prm.Kind = ParamDuration
				} else {
					return p.wrap(f.Val.Line, fmt.Errorf("%s: default %q is neither a duration (such as 500ms) nor a whole number", what, text))
				}
				// The value any --set of it must be, checked here so that a bad default
				// is refused at its line rather than when a run binds it.
				if _, err := prm.Check(text); err != nil {
					return p.wrap(f.Val.Line, err)
				}
			case "help":
				prm.Help = text
			}
		}
		if prm.Default == "" {
			return p.errf(e.KeyLine, "%s: missing \"default\" (a duration such as 500ms, or a whole number)", what)
		}
		p.params = append(p.params, prm)
	}
	return nil
}

func (p *fileParser) param(name string) *Param {
	for i := range p.params {
		if p.params[i].Name == name {
			return &p.params[i]
		}
	}
	return nil
}

// paramRef checks a reference $name in field what: a declared parameter of the kind the
// field takes.
func (p *fileParser) paramRef(n *yaml.Node, what, name string, kind ParamKind) (string, error) {
	prm := p.param(name)
	if prm == nil {
		return "", p.errf(n.Line, "%s: no parameter %q is declared under params%s", what, name, yamltree.Suggest(name, p.paramNames()))
	}
	if prm.Kind != kind {
		return "", p.errf(n.Line, "%s: parameter %s is a %s, want a %s", what, name, prm.Kind, kind)
	}
	return name, nil
}

// duration reads a duration field: a Go duration, or $name of a duration parameter.
// never allows the word never.
func (p *fileParser) duration(n *yaml.Node, what string, never bool) (Value, error) {
	text, err := p.scalar(n, what)
	if err != nil {
		return Value{}, err
	}
	v := Value{Set: true, line: n.Line}
	if name, ok := strings.CutPrefix(text, "$"); ok {
		v.Param, err = p.paramRef(n, what, name, ParamDuration)
		return v, err
	}
	if never && text == "never" {
		v.Never = true
		return v, nil
	}
	allowed := "a duration such as 500ms, or $parameter"
	if never {
		allowed = "a duration such as 500ms, never, or $parameter"
	}
	d, err := knobs.Duration(what, text, allowed)
	if err != nil {
		return Value{}, p.wrap(n.Line, err)
	}
	v.Dur, v.text = d, text
	return v, nil
}

func (p *fileParser) count(n *yaml.Node, what string) (Value, error) {
	text, err := p.scalar(n, what)
	if err != nil {
		return Value{}, err
	}
	v := Value{Set: true, line: n.Line}
	if name, ok := strings.CutPrefix(text, "$"); ok {
		v.Param, err = p.paramRef(n, what, name, ParamCount)
		return v, err
	}
	k, err := knobs.Whole(what, text, "a whole number from 1, or $parameter")
	if err != nil {
		return Value{}, p.wrap(n.Line, err)
	}
	if k < 1 {
		return Value{}, p.wrap(n.Line, sim.BadParam(what, text, "a whole number from 1, or $parameter"))
	}
	v.N = k
	return v, nil
}

func (p *fileParser) paramNames() []string {
	out := make([]string, len(p.params))
	for i, prm := range p.params {
		out[i] = prm.Name
	}
	return out
}

func (p *fileParser) parseWindow(sc *Scenario, n *yaml.Node) error {
	es, err := p.entries(n, []string{"from", "to"}, "window")
	if err != nil {
		return err
	}
	for _, e := range es {
		text, err := p.scalar(e.Val, "window: "+e.Key)
		if err != nil {
			return err
		}
		d, err := knobs.Duration("window "+e.Key, text, "a duration from 0s (to: 0s means the end)")
		if err != nil {
			return p.wrap(e.Val.Line, err)
		}
		if d < 0 {
			return p.wrap(e.Val.Line, sim.BadParam("window "+e.Key, text, "a duration from 0s (to: 0s means the end)"))
		}
		if e.Key == "from" {
			sc.Window[0] = d
		} else {
			sc.Window[1] = d
		}
	}
	return nil
}

func (p *fileParser) parseKnobs(sc *Scenario, n *yaml.Node) error {
	if yamltree.IsNull(n) {
		return nil
	}
	es, err := p.entries(n, nil, "knobs")
	if err != nil {
		return err
	}
	for _, e := range es {
		if p.param(e.Key) != nil {
			return p.errf(e.KeyLine, "knobs: %s is a parameter of this scenario, not a knob; its default goes under params", e.Key)
		}
		text, err := p.scalar(e.Val, "knob "+e.Key)
		if err != nil {
			return err
		}
		if _, err := knobs.Canonical(e.Key, text); err != nil {
			return p.wrap(e.KeyLine, err)
		}
		sc.Knobs = append(sc.Knobs, knobs.KV{Name: e.Key, Value: text})
	}
	return nil
}

// parseStart reads when clients start: client name: true time. Clients not named keep
// their drawn start times.
func (p *fileParser) parseStart(sc *Scenario, n *yaml.Node) error {
	if yamltree.IsNull(n) {
		return nil
	}
	es, err := p.entries(n, nil, "start")
	if err != nil {
		return err
	}
	for _, e := range es {
		v, err := p.duration(e.Val, "start of "+e.Key, false)
		if err != nil {
			return err
		}
		if !v.Set || (v.Param == "" && v.Dur < 0) {
			return p.errf(e.Val.Line, "start of %s: a true time from 0s", e.Key)
		}
		sc.Start = append(sc.Start, ClientStart{Client: e.Key, At: v, line: e.KeyLine})
	}
	return nil
}

// ClientWorkload is one client's own workload, where it differs from the knobs': its
// work per hold, its rest between cycles and how many acquires it starts (each as the
// knob of that name takes it; "" or -1 keeps the knob's).
type ClientWorkload struct {
	Client    string
	Hold      string
	Think     string
	MaxCycles int
	line      int
}

var workloadKeys = []string{"hold", "think", "max_cycles"}

// parseWorkload reads per-client workloads: client name: {hold, think, max_cycles}.
func (p *fileParser) parseWorkload(sc *Scenario, n *yaml.Node) error {
	if yamltree.IsNull(n) {
		return nil
	}
	es, err := p.entries(n, nil, "workload")
	if err != nil {
		return err
	}
	for _, e := range es {
		what := "workload of " + e.Key
		fields, err := p.entries(e.Val, workloadKeys, what)
		if err != nil {
			return err
		}
		wl := ClientWorkload{Client: e.Key, MaxCycles: -1, line: e.KeyLine}
		for _, f := range fields {
			text, err := p.scalar(f.Val, what+": "+f.Key)
			if err != nil {
				return err
			}
			if _, err := knobs.Canonical(f.Key, text); err != nil {
				return p.wrap(f.Val.Line, fmt.Errorf("%s: %w", what, err))
			}
			switch f.Key {
			case "hold":
				wl.Hold = text
			case "think":
				wl.Think = text
			case "max_cycles":
				wl.MaxCycles, _ = knobs.Whole(f.Key, text, "")
			}
		}
		sc.Workloads = append(sc.Workloads, wl)
	}
	return nil
}

// ClientStart pins a client's start to a true time.
type ClientStart struct {
	Client string
	At     Value
	line   int
}

var stepKeys = append([]string{"at", "on", "after"}, actionNames()...)

func (p *fileParser) parseSchedule(sc *Scenario, n *yaml.Node) error {
	if yamltree.IsNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return p.errf(n.Line, "schedule: want a list of steps, each with at: or on:, got %s", yamltree.Describe(n))
	}
	if len(n.Content) > MaxSteps {
		return p.errf(n.Line, "schedule: %d steps, at most %d allowed", len(n.Content), MaxSteps)
	}
	for _, item := range n.Content {
		item = yamltree.Resolve(item)
		st, err := p.parseStep(item)
		if err != nil {
			return err
		}
		sc.Steps = append(sc.Steps, st)
	}
	return nil
}

func (p *fileParser) parseStep(n *yaml.Node) (Step, error) {
	es, err := p.entries(n, stepKeys, "a schedule step")
	if err != nil {
		return Step{}, err
	}
	st := Step{Line: n.Line}
	var action *yamltree.Entry
	for i, e := range es {
		switch e.Key {
		case "at":
			if st.At, err = p.duration(e.Val, "at", false); err != nil {
				return Step{}, err
			}
			if st.At.Param == "" && st.At.Dur < 0 {
				return Step{}, p.wrap(e.Val.Line, sim.BadParam("at", e.Val.Value, "a true time from 0s"))
			}
		case "after":
			if st.After, err = p.duration(e.Val, "after", false); err != nil {
				return Step{}, err
			}
			if st.After.Param == "" && st.After.Dur < 0 {
				return Step{}, p.wrap(e.Val.Line, sim.BadParam("after", e.Val.Value, "a duration from 0s"))
			}
		case "on":
			if st.On, err = p.parseTrigger(e.Val); err != nil {
				return Step{}, err
			}
		default:
			if action != nil {
				return Step{}, p.errf(e.KeyLine, "a step takes one action; this one has %s (line %d) and %s", action.Key, action.KeyLine, e.Key)
			}
			action = &es[i]
		}
	}
	switch {
	case st.At.Set && st.On != nil:
		return Step{}, p.errf(n.Line, "a step is either at a time (at:) or on an event (on:), not both")
	case !st.At.Set && st.On == nil:
		return Step{}, p.errf(n.Line, "a step needs at: (a true time such as 1.2s) or on: (an event, such as {event: acquired, client: client1})")
	case st.At.Set && st.After.Set:
		return Step{}, p.errf(n.Line, "after: goes with on: (a delay after the event); a step at a time needs no after")
	case action == nil:
		return Step{}, p.errf(n.Line, "a step needs an action, one of: %s", strings.Join(actionNames(), ", "))
	}
	if st.Action, err = p.parseAction(*action); err != nil {
		return Step{}, err
	}
	if (st.Action.Kind == "clock_step" || st.Action.Kind == "clock_slew" || st.Action.Kind == "clock_drift") && st.On != nil {
		return Step{}, p.errf(action.KeyLine, "%s is planned into the clock before the run: give it at:, not on:", st.Action.Kind)
	}
	return st, nil
}

var triggerKeys = []string{"event", "client", "nth"}

func (p *fileParser) parseTrigger(n *yaml.Node) (*Trigger, error) {
	es, err := p.entries(n, triggerKeys, "on")
	if err != nil {
		return nil, err
	}
	t := &Trigger{Nth: Value{N: 1}}
	got := map[string]bool{}
	for _, e := range es {
		got[e.Key] = true
		switch e.Key {
		case "event":
			text, err := p.scalar(e.Val, "on: event")
			if err != nil {
				return nil, err
			}
			k, ok := eventKind(text)
			if !ok {
				return nil, p.errf(e.Val.Line, "on: event %q is not a client event%s; allowed: %s", text,
					yamltree.Suggest(text, eventNames()), strings.Join(eventNames(), ", "))
			}
			t.Event = k
		case "client":
			if t.Client, err = p.scalar(e.Val, "on: client"); err != nil {
				return nil, err
			}
		case "nth":
			if t.Nth, err = p.count(e.Val, "on: nth"); err != nil {
				return nil, err
			}
		}
	}
	for _, key := range triggerKeys[:2] {
		if !got[key] {
			return nil, p.errf(n.Line, "on: missing %q (a trigger is {event: acquired, client: client1, nth: 1})", key)
		}
	}
	return t, nil
}

func eventNames() []string {
	var out []string
	for k := model.EvAcquireStart; k <= model.EvCrash; k++ {
		out = append(out, k.String())
	}
	return out
}

func eventKind(name string) (model.ClientEventKind, bool) {
	for k := model.EvAcquireStart; k <= model.EvCrash; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}

func (p *fileParser) parseAction(e yamltree.Entry) (Action, error) {
	i := slices.IndexFunc(actions, func(a actionSpec) bool { return a.name == e.Key })
	spec := actions[i]
	fields, err := p.entries(e.Val, spec.fields, e.Key)
	if err != nil {
		return Action{}, err
	}
	a := Action{Kind: e.Key}
	got := map[string]bool{}
	for _, f := range fields {
		got[f.Key] = true
		what := e.Key + ": " + f.Key
		switch f.Key {
		case "client":
			a.Client, err = p.scalar(f.Val, what)
		case "node":
			a.Node, err = p.scalar(f.Val, what)
		case "endpoint":
			a.Endpoint, err = p.scalar(f.Val, what)
		case "from":
			a.From, err = p.names(f.Val, what)
		case "to":
			a.To, err = p.names(f.Val, what)
		case "both_ways":
			var text string
			if text, err = p.scalar(f.Val, what); err == nil {
				switch text {
				case "true":
					a.BothWays = true
				case "false":
				default:
					err = p.errf(f.Val.Line, "%s = %s: want true or false", what, text)
				}
			}
		case "for":
			a.For, err = p.duration(f.Val, what, false)
			if err == nil && a.For.Param == "" && a.For.Dur <= 0 {
				err = p.wrap(f.Val.Line, sim.BadParam(what, f.Val.Value, "a duration above 0s (leave it out for: to the end of the run)"))
			}
		case "restart_after":
			a.Restart, err = p.duration(f.Val, what, true)
			if err == nil && a.Restart.Param == "" && !a.Restart.Never && a.Restart.Dur < 0 {
				err = p.wrap(f.Val.Line, sim.BadParam(what, f.Val.Value, "a duration from 0s, or never"))
			}
		case "by":
			a.By, err = p.duration(f.Val, what, false)
		case "ttl":
			a.TTL, err = p.duration(f.Val, what, false)
			if err == nil && a.TTL.Param == "" && (a.TTL.Dur < time.Millisecond || a.TTL.Dur%time.Millisecond != 0) {
				err = p.wrap(f.Val.Line, sim.BadParam(what, f.Val.Value, "whole milliseconds from 1ms (SET PX cannot say less)"))
			}
		case "resource":
			a.Resource, err = p.scalar(f.Val, what)
		case "count":
			a.Count, err = p.count(f.Val, what)
		case "sides":
			a.Sides, err = p.sides(f.Val, what)
		case "ppm":
			allowed := fmt.Sprintf("a rate change in parts per million, not 0, between -%d and %d", clock.MaxSlewPPM, clock.MaxSlewPPM)
			var text string
			if text, err = p.scalar(f.Val, what); err == nil {
				if a.RatePPM, err = knobs.Number(what, text, allowed); err != nil {
					err = p.wrap(f.Val.Line, err)
				} else if a.RatePPM == 0 || math.Abs(a.RatePPM) > clock.MaxSlewPPM {
					err = p.errf(f.Val.Line, "%s = %s: want %s", what, text, allowed)
				}
			}
		case "rate_ppm":
			allowed := fmt.Sprintf("a rate in parts per million above 0 and at most %d (ntpd slews at 500)", clock.MaxSlewPPM)
			var text string
			if text, err = p.scalar(f.Val, what); err == nil {
				if a.RatePPM, err = knobs.Number(what, text, allowed); err != nil {
					err = p.wrap(f.Val.Line, err)
				} else if !(a.RatePPM > 0 && a.RatePPM <= clock.MaxSlewPPM) {
					err = p.errf(f.Val.Line, "%s = %s: want %s", what, text, allowed)
				}
			}
		case "latency":
			var text string
			if text, err = p.scalar(f.Val, what); err == nil {
				if strings.HasPrefix(text, "$") { // a duration parameter: a constant latency
					a.By, err = p.duration(f.Val, what, false)
				} else if _, kerr := knobs.Canonical("latency", text); kerr != nil {
					err = p.wrap(f.Val.Line, fmt.Errorf("%s: %w", e.Key, kerr))
				}
				a.Latency = text
			}
		}
		if err != nil {
			return Action{}, err
		}
	}
	for _, key := range spec.required {
		if !got[key] {
			return Action{}, p.errf(e.KeyLine, "%s: missing %q (%s takes %s)", e.Key, key, e.Key, strings.Join(spec.fields, ", "))
		}
	}
	return a, nil
}

// sides reads a partition's sides: a list of lists of endpoint names.
func (p *fileParser) sides(n *yaml.Node, what string) ([][]string, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errf(n.Line, "%s: want a list of sides, each a list of endpoints, such as [[client1, redis1], [client2, redis2]]", what)
	}
	var out [][]string
	for _, item := range n.Content {
		item = yamltree.Resolve(item)
		if item.Kind != yaml.SequenceNode {
			return nil, p.errf(item.Line, "%s: each side is a list of endpoints, got %s", what, yamltree.Describe(item))
		}
		side, err := p.names(item, what)
		if err != nil {
			return nil, err
		}
		out = append(out, side)
	}
	return out, nil
}

// names reads one endpoint name or a list of them.
func (p *fileParser) names(n *yaml.Node, what string) ([]string, error) {
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) == 0 {
			return nil, p.errf(n.Line, "%s: an empty list names no endpoint", what)
		}
		var out []string
		for _, item := range n.Content {
			s, err := p.scalar(yamltree.Resolve(item), what)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := p.scalar(n, what)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}
