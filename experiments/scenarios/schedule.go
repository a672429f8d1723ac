package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/internal/yamltree"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Values are a scenario's parameters for one run: each parameter's default, or the
// value a user set.
type Values struct {
	durs   map[string]time.Duration
	counts map[string]int
}

// Bind takes the scenario's parameters out of settings (knob settings as a user gave
// them) and returns their values, with the defaults for those not set, and the remaining
// settings, in order. A bad value is a *knobs.ValueError naming the parameter.
func (sc *Scenario) Bind(settings []knobs.KV) (Values, []knobs.KV, error) {
	v := Values{durs: map[string]time.Duration{}, counts: map[string]int{}}
	set := func(p Param, text string) error {
		if _, err := p.Check(text); err != nil {
			return err
		}
		if p.Kind == ParamCount {
			v.counts[p.Name], _ = knobs.Whole(p.Name, text, "")
		} else {
			v.durs[p.Name], _ = knobs.Duration(p.Name, text, "")
		}
		return nil
	}
	for _, p := range sc.Params {
		if err := set(p, p.Default); err != nil {
			return Values{}, nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
	}
	rest := make([]knobs.KV, 0, len(settings))
	for _, kv := range settings {
		if p := sc.param(kv.Name); p != nil {
			if err := set(*p, kv.Value); err != nil {
				return Values{}, nil, err
			}
			continue
		}
		if _, err := knobs.LookupParam(kv.Name); err != nil {
			return Values{}, nil, sc.unknown(kv.Name, err)
		}
		rest = append(rest, kv)
	}
	return v, rest, nil
}

// unknown is the error for a name that is neither a knob nor a parameter of this
// scenario: the knob registry's complaint, with this scenario's parameters and the
// scenarios that do declare a parameter of that name.
func (sc *Scenario) unknown(name string, err error) error {
	var names []string
	for _, p := range sc.Params {
		names = append(names, p.Name)
	}
	hint := "scenario " + sc.Name + " has no parameters"
	if len(names) > 0 {
		hint = "scenario " + sc.Name + "'s parameters: " + strings.Join(names, ", ") + yamltree.Suggest(name, names)
	}
	var with []string
	for _, other := range scenarioTable {
		if other.param(name) != nil {
			with = append(with, other.Name)
		}
	}
	if len(with) > 0 {
		hint += "; " + name + " is a parameter of " + strings.Join(with, ", ")
	}
	return fmt.Errorf("%w; %s", err, hint)
}

func (sc *Scenario) param(name string) *Param {
	for i := range sc.Params {
		if sc.Params[i].Name == name {
			return &sc.Params[i]
		}
	}
	return nil
}

// dur is a duration field's value in this run.
func (v Values) dur(x Value) time.Duration {
	if x.Param != "" {
		return v.durs[x.Param]
	}
	return x.Dur
}

func (v Values) count(x Value) int {
	if x.Param != "" {
		return v.counts[x.Param]
	}
	return x.N
}

// Configure applies the part of the scenario that is planned before the actors exist:
// client start times, client pauses at a time, and clock steps. It first refuses, at
// their lines, the times this run cannot honour: its duration is final only here, with
// every knob applied.
func (sc *Scenario) Configure(w *world.World, v Values) error {
	if err := sc.checkTimes(span{end: w.Config.Duration, run: true}, v); err != nil {
		return err
	}
	for _, s := range sc.Start {
		i, err := clientIndex(w, s.Client)
		if err != nil {
			return sc.lineErr(s.line, fmt.Errorf("start: %w", err))
		}
		w.ClientCfgs[i].StartAt = sim.Time(v.dur(s.At))
	}
	for _, wl := range sc.Workloads {
		i, err := clientIndex(w, wl.Client)
		if err != nil {
			return sc.lineErr(wl.line, fmt.Errorf("workload: %w", err))
		}
		c := &w.ClientCfgs[i]
		if wl.Hold != "" {
			if c.Hold, err = knobs.ParseDist(wl.Hold); err != nil {
				return sc.lineErr(wl.line, err)
			}
		}
		if wl.Think != "" {
			if c.Think, err = knobs.ParseDist(wl.Think); err != nil {
				return sc.lineErr(wl.line, err)
			}
		}
		if wl.MaxCycles >= 0 {
			c.MaxCycles = wl.MaxCycles
		}
	}
	for _, st := range sc.Steps {
		if st.On != nil {
			continue
		}
		at := sim.Time(v.dur(st.At))
		switch a := st.Action; a.Kind {
		case "pause_client":
			i, err := clientIndex(w, a.Client)
			if err != nil {
				return sc.lineErr(st.Line, fmt.Errorf("pause_client: %w", err))
			}
			w.ClientCfgs[i].Pauses = append(w.ClientCfgs[i].Pauses, model.Pause{At: at, For: v.dur(a.For)})
		case "clock_step", "clock_slew", "clock_drift":
			c, err := processClock(w, a.Node)
			if err != nil {
				return sc.lineErr(st.Line, fmt.Errorf("%s: %w", a.Kind, err))
			}
			switch a.Kind {
			case "clock_step":
				c.Steps = append(c.Steps, clock.Step{At: at, By: v.dur(a.By)})
			case "clock_slew":
				c.Slews = append(c.Slews, clock.Slew{At: at, By: v.dur(a.By), RatePPM: a.RatePPM})
			default:
				// A rate change to the end of the run is a slew that lasts that long: it
				// moves both readings at the new rate, as a changed drift does.
				end := sim.Time(w.Config.Duration)
				if at >= end {
					continue
				}
				by := time.Duration(a.RatePPM * 1e-6 * float64(end-at))
				c.Slews = append(c.Slews, clock.Slew{At: at, By: by, RatePPM: math.Abs(a.RatePPM)})
			}
		}
	}
	return nil
}

// trigger is the steps waiting on one (event, client, nth), in file order: they act
// together, as one kernel event at the instant of the event.
type trigger struct {
	kind   model.ClientEventKind
	client string
	nth    int
	steps  []Step
}

// Setup schedules the rest of the schedule once the actors exist: faults at a time, and
// the hooks that wait for the triggering events. Every name is checked first, so a step
// that names something the world does not have is an error before the run, not during it.
func (sc *Scenario) Setup(w *world.World, v Values) error {
	var triggers []*trigger
	for _, st := range sc.Steps {
		if err := sc.check(w, st); err != nil {
			return err
		}
		if st.On == nil {
			if k := st.Action.Kind; k == "pause_client" || k == "clock_step" || k == "clock_slew" || k == "clock_drift" {
				continue // planned by Configure
			}
			if err := sc.act(w, v, st, sim.Time(v.dur(st.At)), false); err != nil {
				return sc.lineErr(st.Line, err)
			}
			continue
		}
		nth := v.count(st.On.Nth)
		if nth < 1 {
			return sc.lineErr(st.Line, sim.BadParam("on: nth", nth, "a whole number from 1"))
		}
		var t *trigger
		for _, x := range triggers {
			if x.kind == st.On.Event && x.client == st.On.Client && x.nth == nth {
				t = x
			}
		}
		if t == nil {
			t = &trigger{kind: st.On.Event, client: st.On.Client, nth: nth}
			triggers = append(triggers, t)
			sc.hook(w, v, t)
		}
		t.steps = append(t.steps, st)
	}
	return nil
}

// hook waits for the trigger's event and then runs its steps, once.
func (sc *Scenario) hook(w *world.World, v Values, t *trigger) {
	seen, done := 0, false
	w.OnEvent(func(now sim.Time, e *model.ClientEvent) {
		if done || e.Kind != t.kind || e.Client.Name() != t.client {
			return
		}
		if seen++; seen < t.nth {
			return
		}
		done = true
		if err := w.Do(now, func(now sim.Time) {
			for _, st := range t.steps {
				if err := sc.act(w, v, st, now.Add(v.dur(st.After)), v.dur(st.After) == 0); err != nil {
					w.Sim.Fail(sc.lineErr(st.Line, err))
					return
				}
			}
		}); err != nil {
			w.Sim.Fail(err)
		}
	})
}

// act takes a step's action at true time at; now says at is the present instant, so a
// client action acts at once instead of scheduling itself.
func (sc *Scenario) act(w *world.World, v Values, st Step, at sim.Time, now bool) error {
	a := st.Action
	if d, ok := a.NodeFault(); ok {
		if g := group(w, a.Node); g != nil {
			return w.NodeFault(g, at, nodeFault(v, a, d))
		}
		f := model.Fault{Kind: d.Process}
		f.For, f.Forever = faultLength(v, a, d.Effect)
		return w.ServerFault(serverIndex(w, a.Node), at, f)
	}
	switch a.Kind {
	case "pause_client", "crash_client":
		c := w.Client(a.Client)
		f := func(sim.Time) { c.CrashNow() }
		if a.Restart.Set && !a.Restart.Never {
			d := v.dur(a.Restart)
			f = func(sim.Time) { c.CrashAndRestart(d) }
		}
		if a.Kind == "pause_client" {
			d := v.dur(a.For)
			f = func(sim.Time) { c.PauseNow(d) }
		}
		if now {
			f(at)
			return nil
		}
		return w.Do(at, f)
	case "drop":
		k := v.count(a.Count)
		f := func(sim.Time) {
			for _, from := range a.From {
				for _, to := range a.To {
					if err := w.Net.DropNext(w.Endpoint(from), w.Endpoint(to), k); err != nil {
						w.Sim.Fail(err)
					}
				}
			}
		}
		if now {
			f(at)
			return nil
		}
		return w.Do(at, f)
	case "outside_lock":
		g, res := group(w, a.Node), a.Resource
		if res == "" {
			res = w.Resources[0]
		}
		cmd := resp.Set(res, OutsideValue, resp.CondNX, v.dur(a.TTL))
		return w.Do(at, func(now sim.Time) { g.Submit(now, cmd) })
	case "isolate":
		return w.Net.At(at, network.IsolateFault(w.Endpoint(a.Endpoint), v.dur(a.For)))
	case "block", "clog":
		for _, from := range a.From {
			for _, to := range a.To {
				f, t := w.Endpoint(from), w.Endpoint(to)
				fault := network.BlockFault(f, t, v.dur(a.For))
				if a.Kind == "clog" {
					fault = network.ClogFault(f, t, v.dur(a.For))
				}
				if err := w.Net.At(at, fault); err != nil {
					return err
				}
				if a.BothWays {
					if err := w.Net.At(at, network.BlockFault(t, f, v.dur(a.For))); err != nil {
						return err
					}
				}
			}
		}
		return nil
	case "partition":
		groups := make([][]network.Endpoint, len(a.Sides))
		for i, side := range a.Sides {
			for _, name := range side {
				groups[i] = append(groups[i], w.Endpoint(name))
			}
		}
		return w.Net.At(at, network.SplitFault(v.dur(a.For), groups...))
	case "slow_link":
		cfg := w.Config
		latency := a.Latency
		if a.By.Param != "" {
			latency = "const(" + v.dur(a.By).String() + ")"
		}
		if err := cfg.Set("latency", latency); err != nil {
			return err
		}
		slow := network.Link{Latency: cfg.Latency, Loss: w.Config.Loss, Dup: w.Config.Dup, FIFO: w.Config.FIFO}
		normal := network.Link{Latency: w.Config.Latency, Loss: w.Config.Loss, Dup: w.Config.Dup, FIFO: w.Config.FIFO}
		set := func(l network.Link) func(sim.Time) {
			return func(sim.Time) {
				for _, from := range a.From {
					for _, to := range a.To {
						if err := w.Net.SetLink(w.Endpoint(from), w.Endpoint(to), l); err != nil {
							w.Sim.Fail(err)
						}
					}
				}
			}
		}
		if err := w.Do(at, set(slow)); err != nil {
			return err
		}
		return w.Do(at.Add(v.dur(a.For)), set(normal))
	}
	return fmt.Errorf("action %s cannot be taken here", a.Kind)
}

// nodeFault is the process fault a node fault's action (its kind's descriptor d) schedules
// on a Redis group's master.
func nodeFault(v Values, a Action, d redis.FaultDesc) redis.Fault {
	f := redis.Fault{Kind: d.Kind, Node: redis.CurrentMaster}
	f.For, f.Forever = faultLength(v, a, d.Effect)
	return f
}

// faultLength is how long a node fault's action's fault lasts, by its effect: one that
// stops the server restarts it after restart_after or keeps it down (never, or unset:
// forever), one that stalls it lasts for; any other is an instant.
func faultLength(v Values, a Action, effect model.FaultEffect) (time.Duration, bool) {
	switch effect {
	case model.EffectStop:
		if !a.Restart.Set || a.Restart.Never {
			return 0, true
		}
		return v.dur(a.Restart), false
	case model.EffectStall:
		return v.dur(a.For), false
	}
	return 0, false
}

// OutsideValue is the value an outside_lock step's client writes: no client of the world
// ever generates it (theirs are 24 characters of base64), so no release can match it.
const OutsideValue = "outside"

// check resolves every name a step uses against the world.
func (sc *Scenario) check(w *world.World, st Step) error {
	a := st.Action
	var err error
	if st.On != nil && w.Client(st.On.Client) == nil {
		err = fmt.Errorf("on: %w", noClient(w, st.On.Client))
	}
	fault, isFault := a.NodeFault()
	switch {
	case a.Kind == "pause_client" || a.Kind == "crash_client":
		if w.Client(a.Client) == nil {
			err = fmt.Errorf("%s: %w", a.Kind, noClient(w, a.Client))
		}
	case isFault || a.Kind == "outside_lock":
		g, i := group(w, a.Node), serverIndex(w, a.Node)
		switch svc := w.Algorithm.Service; {
		case a.Kind == "outside_lock" && a.Resource != "" && !slices.Contains(w.Resources, a.Resource):
			err = fmt.Errorf("outside_lock: no resource %q in this world; it has %s", a.Resource, strings.Join(w.Resources, ", "))
		case g == nil && i >= 0 && a.Kind == "outside_lock":
			err = fmt.Errorf("outside_lock: node %s is a server of the %s service, and outside_lock writes a Redis key (SET NX): it needs a Redis node", a.Node, svc.Name)
		case g == nil && i >= 0 && fault.Process == 0:
			err = fmt.Errorf("%s: node %s is a server of the %s service, and only a Redis group with replicas takes a %s", a.Kind, a.Node, svc.Name, fault.Name)
		case g == nil && i >= 0 && w.Processes[i] == nil:
			err = fmt.Errorf("%s: node %s is a server of the %s service, whose servers suffer no process faults", a.Kind, a.Node, svc.Name)
		case g == nil && i < 0:
			err = fmt.Errorf("%s: %w", a.Kind, noNode(w, a.Node))
		case g != nil && fault.NeedsReplica && g.Len() < 2:
			err = fmt.Errorf("%s: node %s has no replica to promote (set the replicas knob)", a.Kind, a.Node)
		}
	case slices.Contains([]string{"isolate", "block", "clog", "partition", "slow_link", "drop"}, a.Kind):
		names := append(append([]string{a.Endpoint}, a.From...), a.To...)
		for _, side := range a.Sides {
			names = append(names, side...)
		}
		for _, name := range names {
			if name != "" && w.Endpoint(name) < 0 {
				err = fmt.Errorf("%s: no endpoint %q in this world; it has %s", a.Kind, name, strings.Join(endpointNames(w), ", "))
				break
			}
		}
	}
	if err != nil {
		return sc.lineErr(st.Line, err)
	}
	return nil
}

func (sc *Scenario) lineErr(line int, err error) error {
	if sc.File == "" {
		return fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return &FileError{File: sc.File, Line: line, Err: err}
}

func clientIndex(w *world.World, name string) (int, error) {
	for i, c := range w.ClientCfgs {
		if c.Name == name {
			return i, nil
		}
	}
	return 0, noClient(w, name)
}

func noClient(w *world.World, name string) error {
	names := make([]string, len(w.ClientCfgs))
	for i, c := range w.ClientCfgs {
		names[i] = c.Name
	}
	return sim.BadParam("client", name, fmt.Sprintf("one of this world's %d clients: %s (the clients knob sets how many)", len(names), strings.Join(names, ", ")))
}

func noNode(w *world.World, name string) error {
	names := make([]string, len(w.GroupCfgs))
	for i, g := range w.GroupCfgs {
		names[i] = g.Name
	}
	if w.Algorithm.Service != nil { // another service's servers, by their endpoints' names
		names = names[:0]
		for _, e := range w.Servers {
			names = append(names, w.Net.Name(e))
		}
	}
	hint := " (the nodes knob sets how many)"
	if w.Algorithm.Masters > 0 {
		hint = " (algorithm " + w.Algorithm.Name + " addresses " + strconv.Itoa(w.Algorithm.Masters) + ")"
	}
	return sim.BadParam("node", name, fmt.Sprintf("one of this world's %d nodes: %s%s, or last", len(names), strings.Join(names, ", "), hint))
}

func endpointNames(w *world.World) []string {
	var out []string
	for e := range network.Endpoint(w.Net.Endpoints()) {
		out = append(out, w.Net.Name(e))
	}
	return out
}

// LastNode names the highest-numbered node in a node field, whatever the nodes knob: a
// story about "one node down" keeps working at every N.
const LastNode = "last"

// group is the Redis node a node field names: redisN, or LastNode; nil in a world of
// another service.
func group(w *world.World, name string) *redis.Group {
	if name == LastNode && len(w.Groups) > 0 {
		return w.Groups[len(w.Groups)-1]
	}
	return w.Group(name)
}

// serverIndex is the index of another service's server a node field names: its endpoint's
// name (lease1), or LastNode; -1 in a Redis world, or for a name no server has. A node
// field names a server of any service the same way: by its name, numbered from 1.
func serverIndex(w *world.World, name string) int {
	if name == LastNode && w.Algorithm.Service != nil && len(w.Servers) > 0 {
		return len(w.Servers) - 1
	}
	return w.ServerIndex(name)
}

// processClock is the planned clock of a node (its first process: the master at the
// start) or of a client.
func processClock(w *world.World, name string) (*clock.Config, error) {
	if name == LastNode && len(w.GroupCfgs) > 0 {
		name = w.GroupCfgs[len(w.GroupCfgs)-1].Name
	}
	for i := range w.GroupCfgs {
		if w.GroupCfgs[i].Name == name {
			if len(w.GroupCfgs[i].Nodes) == 0 {
				return nil, fmt.Errorf("node %s has no process configuration", name)
			}
			return &w.GroupCfgs[i].Nodes[0].Clock, nil
		}
	}
	for i := range w.ClientCfgs {
		if w.ClientCfgs[i].Name == name {
			return &w.ClientCfgs[i].Clock, nil
		}
	}
	if svc := w.Algorithm.Service; svc != nil && name != LastNode {
		// Another service's servers exist only at Build: the world keeps the clock
		// planned for this name, and Build refuses a name the service does not create.
		return w.ServerClock(name)
	}
	return nil, sim.BadParam("node", name, "a node (redis1, ...) or a client (client1, ...) of this world")
}

// ParamNamed returns the first built-in scenario's parameter called name, or nil: a
// sweep spec may set or sweep it, and each point's scenario must declare it.
func ParamNamed(name string) *Param {
	for i := range scenarioTable {
		if p := scenarioTable[i].param(name); p != nil {
			return p
		}
	}
	return nil
}

// Check validates a value for the parameter and returns it as written.
func (p *Param) Check(text string) (string, error) {
	if p.Kind == ParamCount {
		// Every count field (on: nth, drop: count) counts from 1.
		const allowed = "a whole number from 1 (a scenario parameter)"
		n, err := knobs.Whole(p.Name, text, allowed)
		if err != nil {
			return "", err
		}
		if n < 1 {
			return "", sim.BadParam(p.Name, text, allowed)
		}
		return text, nil
	}
	d, err := knobs.Duration(p.Name, text, "a duration (a scenario parameter)")
	if err != nil {
		return "", err
	}
	if d < 0 {
		return "", sim.BadParam(p.Name, text, "a duration from 0s")
	}
	return text, nil
}
