package model

import (
	"fmt"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// FaultKind names a fault of a server's process that any lock service's servers can
// suffer: a stop (three ways), a start, a stall and a thaw. Each kind has one descriptor
// in faultKinds, which the layers above read instead of naming kinds (the world's fault
// notes, the scenario actions, the timeline, the narration, the random draws); FaultKinds
// lists them. A service's own faults (Redis's failover) are the service's kinds, in its
// package, beside these.
type FaultKind uint8

// The process faults every server can suffer.
const (
	FaultCrash    FaultKind = iota + 1 // power loss: the host goes down with the process
	FaultKill                          // kill -9: the process ends, its host stays up
	FaultShutdown                      // a clean shutdown: what the server flushes on exit is kept
	FaultRestart                       // start a stopped server
	FaultPause                         // stall the process (SIGSTOP, a GC or VM pause), its queue intact
	FaultResume                        // end a pause
	faultEnd                           // one past the last kind; TestEveryProcessFaultHasADescriptor holds each below it to a descriptor
)

// FaultEffect is what a process fault does, in the terms the layers above need: how long
// the world notes it, which lane of the timeline it fills, which arguments its scenario
// action takes. A fault is applied by its effect (ServerFaults, a Redis group), so a new
// kind with an existing effect needs no code outside its descriptor.
type FaultEffect uint8

// The effects of process faults.
const (
	// EffectStop ends the process: the server is down until it starts again, by itself
	// Fault.For later, or (Forever) at a FaultRestart. The timeline draws a down span and
	// marks its start.
	EffectStop FaultEffect = iota + 1
	// EffectStart starts a stopped process from what it kept: an instant that ends a
	// stop. The timeline marks it.
	EffectStart
	// EffectStall freezes the process with its queue: the server is paused until it
	// thaws, Fault.For later or (Forever) at a FaultResume. The timeline draws a paused
	// span.
	EffectStall
	// EffectThaw ends a stall: an instant that ends the paused span.
	EffectThaw
	// EffectPromote promotes a replicated service's most up-to-date running replica: an
	// instant, which acts on the service (a Redis group's failover), never on one
	// server's process, so no kind of FaultKinds has it and a ServerProcess never
	// suffers it. The timeline marks the promoted server.
	EffectPromote
	effectEnd
)

// Valid reports whether e is one of the effects.
func (e FaultEffect) Valid() bool { return e >= EffectStop && e < effectEnd }

// FaultDesc describes one kind of process fault, as plain data the layers above model
// interpret: it is where a kind is registered, once, so that none of them switches on
// kinds or their names.
type FaultDesc struct {
	Kind   FaultKind
	Name   string // how the kind prints ("crash")
	Record string // the kind of the trace record the server writes as it applies it
	Effect FaultEffect
	// HostDown says the host goes down with the process, as in a power loss: what the
	// server had not yet made durable is lost, and while it is down nothing answers a
	// connection (after a kill or a shutdown the host refuses it at once). What "durable"
	// means is the server's (a Redis node's AOF fsync, a ZooKeeper server's log).
	HostDown bool
	// Action is the scenario action that schedules it on a server ("crash_node"; its
	// arguments follow from Effect), or "" when a scenario cannot ask for it (a restart
	// or resume comes as the end of a stop or a stall).
	Action string
}

// Lasts reports whether a fault of this kind lasts (Fault.For, or Forever) rather than
// happening at an instant.
func (d FaultDesc) Lasts() bool { return d.Effect == EffectStop || d.Effect == EffectStall }

// The records of the faults that are not stops (a stop's record is its kind's name).
const (
	RecRestart = "restart" // the process started again
	RecPause   = "pause"   // the process froze
	RecResume  = "resume"  // the process thawed
)

// faultKinds is every kind's descriptor, indexed by kind.
var faultKinds = [faultEnd]FaultDesc{
	FaultCrash:    {Name: "crash", Record: "crash", Effect: EffectStop, HostDown: true, Action: "crash_node"},
	FaultKill:     {Name: "kill", Record: "kill", Effect: EffectStop, Action: "kill_node"},
	FaultShutdown: {Name: "shutdown", Record: "shutdown", Effect: EffectStop, Action: "shutdown_node"},
	FaultRestart:  {Name: "restart", Record: RecRestart, Effect: EffectStart},
	FaultPause:    {Name: "pause", Record: RecPause, Effect: EffectStall, Action: "pause_node"},
	FaultResume:   {Name: "resume", Record: RecResume, Effect: EffectThaw},
}

// FaultKinds returns the descriptor of every process fault kind, in kind order.
func FaultKinds() []FaultDesc {
	out := make([]FaultDesc, 0, len(faultKinds)-1)
	for k := FaultCrash; k < faultEnd; k++ {
		d, _ := k.Desc()
		out = append(out, d)
	}
	return out
}

// Desc returns the kind's descriptor, and false for a value that names no kind.
func (k FaultKind) Desc() (FaultDesc, bool) {
	if k < FaultCrash || k >= faultEnd {
		return FaultDesc{}, false
	}
	d := faultKinds[k]
	d.Kind = k
	return d, true
}

// FaultByRecord returns the descriptor of the kind whose record is called kind, and
// false for a record no process fault writes.
func FaultByRecord(kind string) (FaultDesc, bool) {
	for k := FaultCrash; k < faultEnd; k++ {
		if faultKinds[k].Record == kind {
			return k.Desc()
		}
	}
	return FaultDesc{}, false
}

func (k FaultKind) String() string {
	if d, ok := k.Desc(); ok {
		return d.Name
	}
	return "fault(" + strconv.Itoa(int(k)) + ")"
}

// ServerProcess is a lock service's server as process faults reach it, whatever the
// service: the world stops, starts, stalls and thaws it through this (the scenario
// actions crash_node, pause_node, ... and the node knobs' random draws), and the timeline
// and the replay read its state and its clock. A Redis node is one; another service's
// server implements it to suffer the same faults (knobs.Server.Process).
//
// Each method that changes the process writes its kind's record (FaultDesc.Record) under
// Name, with what fields it likes (what it lost), so the narration marks it as a fault and
// the timeline draws it; a method that finds nothing to change (Stop on a stopped server,
// Start on a running one, Stall on a stalled or stopped one, Thaw on one not stalled)
// does nothing and writes nothing.
type ServerProcess interface {
	// Name is the process's actor in the trace: its records are written under it.
	Name() string
	// Clock is the process's own clock (its wall reading is what the narration shows
	// beside its lines; its steps are marked on the timeline).
	Clock() *clock.Clock
	// Up reports whether the process is running (possibly stalled).
	Up() bool
	// Paused reports whether the process is stalled.
	Paused() bool
	// Stop ends the process as how (a kind of EffectStop) does: what it kept in memory is
	// gone, and whether what it had not made durable survives is how's HostDown.
	Stop(now sim.Time, how FaultKind)
	// Start starts a stopped process from what it kept.
	Start(now sim.Time)
	// Stall freezes the process: it serves nothing until it thaws, and keeps what it
	// was asked meanwhile.
	Stall(now sim.Time)
	// Thaw ends a stall.
	Thaw(now sim.Time)
}

// MaxDowntime bounds how long a fault keeps a server down or stalled.
const MaxDowntime = 24 * time.Hour

// MaxServerFaults bounds the faults scheduled on one server.
const MaxServerFaults = 1 << 16

// Fault is a process fault to apply to a server at a given true time.
type Fault struct {
	Kind FaultKind
	// For is how long a fault that lasts (FaultDesc.Lasts: a stop, a stall) keeps the
	// server down before it starts again by itself, or stalled before it thaws (0: at
	// once). Ignored by the others.
	For time.Duration
	// Forever keeps the server down (or stalled) until a FaultRestart (or FaultResume).
	// Ignored by a fault that does not last.
	Forever bool
}

// The ServerFaults' kernel event kinds.
const (
	evServerFault   = iota + 1 // a fault scheduled with At; the argument indexes it
	evServerRestart            // a stop's end; the argument is the server
	evServerThaw               // a stall's end; the argument is the server
)

// ServerFaults schedules process faults on a lock service's servers and applies each by
// its effect, as a Redis group applies its nodes' (redis.Group.At): a stop that is not
// Forever starts the server again For later, a stall thaws it For later, and a stop
// cancels a pending thaw (a stopped process does not thaw). Faults are cold: nothing here
// runs per request.
type ServerFaults struct {
	s       *sim.Sim
	procs   []ServerProcess
	faults  []serverFault
	restart []sim.EventID // per server: its pending start, 0 when none
	thaw    []sim.EventID // per server: its pending thaw, 0 when none
	counts  []int         // per server: faults scheduled
}

type serverFault struct {
	server int
	f      Fault
}

// NewServerFaults returns the fault schedule of procs, which it addresses by index.
func NewServerFaults(s *sim.Sim, procs []ServerProcess) *ServerFaults {
	n := len(procs)
	return &ServerFaults{s: s, procs: procs, restart: make([]sim.EventID, n), thaw: make([]sim.EventID, n),
		counts: make([]int, n)}
}

// At schedules fault f on server i at true time t. It is validated now, so a bad
// schedule is an error at setup rather than a failed run: a *sim.ParamError.
func (sf *ServerFaults) At(t sim.Time, i int, f Fault) error {
	_, known := f.Kind.Desc()
	switch {
	case !known:
		return sim.BadParam("fault", int(f.Kind), faultNames())
	case i < 0 || i >= len(sf.procs) || sf.procs[i] == nil:
		return sim.BadParam("fault_server", i, fmt.Sprintf("a server with a process, in [0, %d]", len(sf.procs)-1))
	case f.For < 0 || f.For > MaxDowntime:
		return sim.BadParam("fault_for", f.For, fmt.Sprintf("[0s, %v]", MaxDowntime))
	case sf.counts[i] >= MaxServerFaults:
		return sim.BadParam("faults", sf.counts[i]+1, fmt.Sprintf("[0, %d] per server", MaxServerFaults))
	}
	if _, err := sf.s.Schedule(t, sf, evServerFault, uint64(len(sf.faults))); err != nil {
		return err
	}
	sf.faults = append(sf.faults, serverFault{server: i, f: f})
	sf.counts[i]++
	return nil
}

// HandleEvent runs the schedule's kernel events.
func (sf *ServerFaults) HandleEvent(now sim.Time, kind int, arg uint64) {
	switch kind {
	case evServerFault:
		x := sf.faults[arg]
		sf.apply(now, x.server, x.f)
	case evServerRestart:
		sf.restart[arg] = 0
		sf.procs[arg].Start(now)
	case evServerThaw:
		sf.thaw[arg] = 0
		sf.procs[arg].Thaw(now)
	}
}

func (sf *ServerFaults) apply(now sim.Time, i int, f Fault) {
	p := sf.procs[i]
	switch faultKinds[f.Kind].Effect {
	case EffectStop:
		if !p.Up() {
			return
		}
		sf.cancel(&sf.thaw[i])
		sf.cancel(&sf.restart[i])
		p.Stop(now, f.Kind)
		if !f.Forever {
			sf.restart[i] = sf.schedule(now.Add(f.For), evServerRestart, i)
		}
	case EffectStart:
		sf.cancel(&sf.restart[i])
		p.Start(now)
	case EffectStall:
		if !p.Up() || p.Paused() {
			return
		}
		p.Stall(now)
		if !f.Forever {
			sf.thaw[i] = sf.schedule(now.Add(f.For), evServerThaw, i)
		}
	case EffectThaw:
		sf.cancel(&sf.thaw[i])
		p.Thaw(now)
	}
}

func (sf *ServerFaults) schedule(at sim.Time, kind, i int) sim.EventID {
	id, err := sf.s.Schedule(at, sf, kind, uint64(i))
	if err != nil {
		sf.s.Fail(fmt.Errorf("server %s: %w", sf.procs[i].Name(), err))
	}
	return id
}

func (sf *ServerFaults) cancel(id *sim.EventID) {
	if *id != 0 {
		sf.s.Cancel(*id)
		*id = 0
	}
}

// faultNames lists the kinds' names for an error message: "{crash, kill, ...}".
func faultNames() string {
	s := "{"
	for k := FaultCrash; k < faultEnd; k++ {
		if k > FaultCrash {
			s += ", "
		}
		s += faultKinds[k].Name
	}
	return s + "}"
}
