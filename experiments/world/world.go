package world

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// World is one assembled simulated world: the kernel, the network, the lock service's
// servers (for Redis, each a Group: a master and its replicas behind one endpoint), the
// fenced storage, the clients and the oracle watching them.
//
// It is built in two steps so that a scenario can shape it. Plan lays out every actor's
// configuration (Groups, ClientCfgs; endpoints are numbered groups first, then another service's servers, then the storage,
// then the clients), which a scenario's Configure may edit; Build then creates the actors,
// after which a scenario's Setup schedules faults and event hooks.
type World struct {
	Config knobs.Config
	Seed   uint64

	Sim *sim.Sim
	Net *network.Net[model.Message]
	// Algorithm is the lock algorithm the clients run, and through it the service they
	// talk to (Algorithm.Service; nil: Redis).
	Algorithm knobs.Algorithm
	// Groups are the Redis servers (none when the algorithm talks to another service);
	// Servers are the endpoints of the servers the clients address, whatever the service,
	// except beside Redis (the hybrid lock: knobs.Service.Count), where Groups hold the
	// Redis masters and Servers the other service's servers only.
	Groups  []*redis.Group
	Servers []network.Endpoint
	// Processes are the processes of another service's servers, in Servers' order (nil
	// for a server that has none: it suffers no process faults); empty with Redis, whose
	// processes are its Groups' nodes.
	Processes []model.ServerProcess
	Storage   *model.Storage
	Clients   []*model.Client
	Oracle    *oracle.Oracle

	// Resources are the lock keys: "lock", or "lock1".."lockK".
	Resources []string
	// GroupCfgs and ClientCfgs are the plan; editing them after Build changes nothing.
	GroupCfgs  []redis.GroupConfig
	ClientCfgs []model.ClientConfig

	// serverClocks are the clocks a scenario planned for another service's servers
	// (ServerClock), by name, which the servers take when the service creates them.
	serverClocks map[string]*clock.Config

	hooks   []func(now sim.Time, e *model.ClientEvent)
	actions []func(now sim.Time)
	notes   []faultNote // process faults scheduled by the world and its scenario
	faults  *model.ServerFaults
	built   bool
}

// faultNote is a process fault the world scheduled, for violation reports.
type faultNote struct {
	at, until sim.Time
	what      string
}

// Plan validates cfg and lays out a world for seed without creating its actors.
func Plan(cfg knobs.Config, seed uint64, opts ...PlanOption) (*World, error) {
	var po planOptions
	for _, o := range opts {
		o(&po)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		return nil, err
	}
	netCfg := network.Config{
		Default: network.Link{Latency: cfg.Latency, Loss: cfg.Loss, Dup: cfg.Dup, FIFO: cfg.FIFO},
		Random: network.RandomFaults{IsolateRate: cfg.PartitionRate, IsolateFor: cfg.PartitionLen,
			ClogRate: cfg.ClogRate, ClogFor: cfg.ClogLen, Until: sim.Time(cfg.Duration)},
	}
	net, err := network.New[model.Message](s, netCfg, s.Source("net"))
	if err != nil {
		return nil, err
	}
	net.SetDeliveryNotes(true) // nodes fold commands and replies, clients and storage their writes
	w := &World{Config: cfg, Seed: seed, Sim: s, Net: net}
	a, algo, err := po.algorithm(&cfg)
	if err != nil {
		return nil, err
	}
	w.Algorithm = a
	net.SetMessage(model.MessageParts, model.MessageFormat(w.Protocol()))
	w.Resources = resourceNames(cfg.Resources)
	if a.Service == nil || a.Service.Count != nil {
		if err := w.planGroups(); err != nil {
			return nil, err
		}
	}
	return w, w.planClients(algo)
}

func resourceNames(k int) []string {
	if k == 1 {
		return []string{"lock"}
	}
	out := make([]string, k)
	for i := range out {
		out[i] = "lock" + strconv.Itoa(i+1)
	}
	return out
}

// nodes returns the number of servers the algorithm's clients address (Algorithm.Servers).
func (w *World) nodes() int { return w.Algorithm.Servers(&w.Config) }

func (w *World) planGroups() error {
	cfg := &w.Config
	for i := range w.Algorithm.RedisMasters(cfg) {
		g := redis.GroupConfig{Name: "redis" + strconv.Itoa(i+1),
			ReplicationDelay: cfg.ReplDelay, ReplicationJitter: cfg.ReplJitter}
		replicas := cfg.EffectiveReplicas()
		if replicas > 0 {
			g.FailoverAfter = cfg.FailoverAfter
		}
		for j := range replicas + 1 {
			name := g.Name
			if replicas > 0 {
				name += "." + strconv.Itoa(j)
			}
			ck, err := w.processClock(name, cfg.NodeDriftPPM, cfg.NodeOffset, true)
			if err != nil {
				return err
			}
			g.Nodes = append(g.Nodes, redis.NodeConfig{Clock: ck, ServiceTime: cfg.ServiceTime,
				Persistence: cfg.Persistence, Hz: cfg.Hz, PreloadScripts: cfg.PreloadScripts})
		}
		w.GroupCfgs = append(w.GroupCfgs, g)
	}
	return nil
}

// ServerClock returns the clock of another service's server called name, planned now so
// that a scenario can step, slew or drift it before Build: drawn as Build would draw it
// (processClock), kept, and handed to the server when the service creates it. Build fails
// if the service creates no server of that name. With Redis it is an error: its nodes'
// clocks are in GroupCfgs.
func (w *World) ServerClock(name string) (*clock.Config, error) {
	if w.Algorithm.Service == nil {
		return nil, fmt.Errorf("no node %s in this world", name)
	}
	if c, ok := w.serverClocks[name]; ok {
		return c, nil
	}
	c, err := w.processClock(name, w.Config.NodeDriftPPM, w.Config.NodeOffset, true)
	if err != nil {
		return nil, err
	}
	if w.serverClocks == nil {
		w.serverClocks = map[string]*clock.Config{}
	}
	w.serverClocks[name] = &c
	return &c, nil
}

// processClock draws one process's clock: drift and offset from the stream
// "<name>/clock-config" (always both, so a knob at zero never shifts the other draws),
// and for nodes the forward jumps from "<name>/jumps".
func (w *World) processClock(name string, driftPPM float64, offset time.Duration, node bool) (clock.Config, error) {
	r := w.Sim.Rand(name + "/clock-config")
	ck := clock.Config{
		DriftPPM: (2*r.Float64() - 1) * driftPPM,
		Offset:   time.Duration((2*r.Float64() - 1) * float64(offset)),
	}
	if !node || w.Config.NodeJumpRate == 0 {
		return ck, nil
	}
	sizes, err := dist.NewSampler(w.Config.NodeJump, "node_clock_jump")
	if err != nil {
		return ck, err
	}
	jr := w.Sim.Rand(name + "/jumps")
	for _, at := range poisson(jr, w.Config.NodeJumpRate, w.Config.Duration, knobs.MaxJumps) {
		ck.Steps = append(ck.Steps, clock.Step{At: at, By: sizes.Draw(jr)})
	}
	return ck, nil
}

// poisson draws the arrival times of a Poisson process of the given rate per second in
// [0, d), at most limit of them (Config.Validate keeps the expected count far below it).
func poisson(r *rand.Rand, rate float64, d time.Duration, limit int) []sim.Time {
	var out []sim.Time
	t := 0.0
	for len(out) < limit {
		t += r.ExpFloat64() / rate * float64(time.Second)
		if t >= float64(d) {
			break
		}
		out = append(out, sim.Time(t))
	}
	return out
}

func (w *World) planClients(algo lock.Factory) error {
	cfg := &w.Config
	n := w.nodes()
	nodes := make([]network.Endpoint, n)
	for i := range nodes {
		nodes[i] = network.Endpoint(i)
	}
	conn := cfg.Connection.Conn
	if svc := w.Algorithm.Service; svc != nil {
		conn = svc.Conn
		if svc.ConnFor != nil {
			conn = svc.ConnFor(cfg)
		}
	}
	extendEvery := cfg.ExtendEvery
	if w.Algorithm.Watchdog { // the algorithm renews its lock itself, every extend_every
		extendEvery = 0
	}
	for j := range cfg.Clients {
		name := "client" + strconv.Itoa(j+1)
		ck, err := w.processClock(name, cfg.ClientDriftPPM, cfg.ClientOffset, false)
		if err != nil {
			return err
		}
		res := make([]string, len(w.Resources))
		for k := range res { // each client starts on its own resource, then goes round
			res[k] = w.Resources[(j+k)%len(w.Resources)]
		}
		start := sim.Time(0)
		if cfg.StartSpread > 0 {
			start = sim.Time(w.Sim.Rand(name + "/start").Int64N(int64(cfg.StartSpread) + 1))
		}
		w.ClientCfgs = append(w.ClientCfgs, model.ClientConfig{
			Name: name, Index: j, Clock: ck, Lock: algo, AckTimeout: cfg.Lock.Effective().NodeTimeout(),
			Nodes: nodes, Storage: network.Endpoint(n), Resources: res,
			Hold: cfg.Hold, Think: cfg.Think, StartAt: start,
			Fenced:         cfg.Lock.Fencing != redlock.FenceNone || (w.Algorithm.Fences != nil && w.Algorithm.Fences(cfg)),
			StopAtDeadline: cfg.StopAtDeadline, ExtendEvery: extendEvery, ReleaseAfterAck: cfg.ReleaseAfterAck,
			PauseRate: cfg.PauseRate, PauseLen: cfg.PauseLen, MaxCycles: cfg.MaxCycles,
			Conn: conn, WallValidity: cfg.WallValidity,
			CrashRate: cfg.ClientCrashRate, RestartAfter: cfg.ClientDown,
		})
	}
	return nil
}

// Build creates the planned actors and attaches the oracle.
func (w *World) Build() error {
	if w.built {
		return fmt.Errorf("world already built")
	}
	w.built = true
	for i, gc := range w.GroupCfgs {
		g, err := redis.NewGroup(w.Sim, w.Net, gc)
		if err != nil {
			return err
		}
		if g.Endpoint() != network.Endpoint(i) {
			return fmt.Errorf("world: group %s got endpoint %d, planned %d", gc.Name, g.Endpoint(), i)
		}
		w.Groups = append(w.Groups, g)
		w.Servers = append(w.Servers, g.Endpoint())
	}
	if err := w.buildService(); err != nil {
		return err
	}
	st, err := model.NewStorage(w.Sim, w.Net, model.StorageConfig{MaxRecorded: 4096,
		Acknowledge: w.Config.ReleaseAfterAck})
	if err != nil {
		return err
	}
	w.Storage = st
	names := make([]string, len(w.ClientCfgs))
	for j := range w.ClientCfgs {
		names[j] = w.ClientCfgs[j].Name
	}
	w.Oracle = oracle.New(w.Sim, names, w.Resources, w.describeFaults)
	st.SetObserver(w.Oracle)
	for j, cc := range w.ClientCfgs {
		cc.Index = j
		c, err := model.NewClient(w.Sim, w.Net, cc, w)
		if err != nil {
			return err
		}
		w.Clients = append(w.Clients, c)
	}
	eps := make([]network.Endpoint, len(w.Clients))
	for j, c := range w.Clients {
		eps[j] = c.Endpoint()
	}
	w.Oracle.SetClientEndpoints(eps)
	return w.scheduleCrashes()
}

// buildService creates the servers of the algorithm's service when it is not Redis, at
// the endpoints the plan gave them.
func (w *World) buildService() error {
	svc := w.Algorithm.Service
	if svc == nil {
		return nil
	}
	first := len(w.Groups) // beside Redis, the service's servers follow its masters
	n := w.nodes() - first
	taken := map[string]bool{}
	servers, err := svc.Servers(knobs.ServiceEnv{Sim: w.Sim, Net: w.Net, Config: &w.Config, Servers: n,
		Clock: func(name string) (clock.Config, error) {
			if c, ok := w.serverClocks[name]; ok {
				taken[name] = true
				return *c, nil
			}
			return w.processClock(name, w.Config.NodeDriftPPM, w.Config.NodeOffset, true)
		}})
	if err != nil {
		return fmt.Errorf("world: service %s: %w", svc.Name, err)
	}
	var unknown []string
	for name := range w.serverClocks {
		if !taken[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("world: no server of the %s service is called %s (a clock action names a node, a %s server or a client)",
			svc.Name, strings.Join(unknown, ", "), svc.Name)
	}
	if len(servers) != n {
		return fmt.Errorf("world: service %s made %d servers, the clients address %d", svc.Name, len(servers), n)
	}
	w.Servers = make([]network.Endpoint, n)
	w.Processes = make([]model.ServerProcess, n)
	for i, sv := range servers {
		if sv.Endpoint != network.Endpoint(first+i) {
			return fmt.Errorf("world: service %s: server %d got endpoint %d, planned %d", svc.Name, i, sv.Endpoint, first+i)
		}
		w.Servers[i], w.Processes[i] = sv.Endpoint, sv.Process
	}
	w.faults = model.NewServerFaults(w.Sim, w.Processes)
	return nil
}

// scheduleCrashes draws each server's random process faults (knobs.RandomNodeFaults): a
// Redis group's power losses (node_crash_rate) from the stream "<group>/crashes", each
// hitting the master of the moment for node_down, and its stalls (node_pause_rate) from
// "<group>/pauses", each lasting node_pause_len (a stall that begins while the node is
// stalled already is absorbed by it); another service's servers' the same way, from
// "<server>/crashes" and "<server>/pauses", each server that has a process.
func (w *World) scheduleCrashes() error {
	for _, r := range knobs.RandomNodeFaults() {
		if r.RateOf(&w.Config) == 0 {
			continue
		}
		length, err := dist.NewSampler(r.LenOf(&w.Config), r.Len)
		if err != nil {
			return err
		}
		kind, _ := redis.KindOf(r.Kind)
		for _, g := range w.Groups {
			rng := w.Sim.Rand(g.Name() + r.Stream)
			for _, at := range poisson(rng, r.RateOf(&w.Config), w.Config.Duration, knobs.MaxCrashes) {
				f := redis.Fault{Kind: kind, Node: redis.CurrentMaster, For: min(length.Draw(rng), redis.MaxDowntime)}
				if err := w.NodeFault(g, at, f); err != nil {
					return err
				}
			}
		}
		for i, p := range w.Processes {
			if p == nil {
				continue
			}
			rng := w.Sim.Rand(p.Name() + r.Stream)
			for _, at := range poisson(rng, r.RateOf(&w.Config), w.Config.Duration, knobs.MaxCrashes) {
				f := model.Fault{Kind: r.Kind, For: min(length.Draw(rng), model.MaxDowntime)}
				if err := w.ServerFault(i, at, f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ClientEvent passes client events to the oracle, then to the scenario's hooks.
func (w *World) ClientEvent(now sim.Time, e *model.ClientEvent) {
	w.Oracle.ClientEvent(now, e)
	for _, h := range w.hooks {
		h(now, e)
	}
}

// OnEvent registers a hook run after the oracle on every client event. Hooks must not
// act on the client in the middle of its event (it is still carrying out the machine's
// outputs); to act, they schedule with Do.
func (w *World) OnEvent(h func(now sim.Time, e *model.ClientEvent)) { w.hooks = append(w.hooks, h) }

// Do runs f at true time at (not before now), as a kernel event of its own.
func (w *World) Do(at sim.Time, f func(now sim.Time)) error {
	w.actions = append(w.actions, f)
	_, err := w.Sim.Schedule(at, w, 0, uint64(len(w.actions)-1))
	return err
}

// HandleEvent runs the actions scheduled with Do.
func (w *World) HandleEvent(now sim.Time, _ int, arg uint64) { w.actions[arg](now) }

// NodeFault schedules a process fault on group g at true time at, and notes it for
// violation reports.
func (w *World) NodeFault(g *redis.Group, at sim.Time, f redis.Fault) error {
	if err := g.At(at, f); err != nil {
		return err
	}
	who := g.Name()
	if f.Node != redis.CurrentMaster && g.Len() > 1 {
		who = g.Node(f.Node).Name()
	}
	// A fault that lasts is noted until it ends (or for good); any other is an instant.
	// g.At has refused a kind without a descriptor.
	d, _ := f.Kind.Desc()
	until := at
	switch {
	case d.Lasts() && f.Forever:
		until = sim.Never
	case d.Lasts():
		until = at.Add(f.For)
	}
	w.notes = append(w.notes, faultNote{at: at, until: until, what: who + " " + f.Kind.String()})
	return nil
}

// ServerFault schedules process fault f on server i of another service than Redis (one
// with a process: Processes[i]) at true time at, and notes it for violation reports. It
// is NodeFault for a service's server: applied by its effect, as a group applies a node's.
func (w *World) ServerFault(i int, at sim.Time, f model.Fault) error {
	if w.faults == nil {
		return sim.BadParam("fault_server", i, "a server of a lock service other than Redis (Redis's take NodeFault)")
	}
	if err := w.faults.At(at, i, f); err != nil {
		return err
	}
	d, _ := f.Kind.Desc() // At has refused a kind without a descriptor
	until := at
	switch {
	case d.Lasts() && f.Forever:
		until = sim.Never
	case d.Lasts():
		until = at.Add(f.For)
	}
	w.notes = append(w.notes, faultNote{at: at, until: until, what: w.Processes[i].Name() + " " + f.Kind.String()})
	return nil
}

// ServerIndex returns the index in Servers of the service's server called name, or -1
// (always -1 with Redis: its servers are Groups).
func (w *World) ServerIndex(name string) int {
	if w.Algorithm.Service == nil {
		return -1
	}
	for i, e := range w.Servers {
		if w.Net.Name(e) == name {
			return i
		}
	}
	return -1
}

// Protocol returns the protocol the clients and servers speak: the service's, or RESP.
func (w *World) Protocol() lock.Protocol {
	if svc := w.Algorithm.Service; svc != nil {
		return svc.Protocol
	}
	return resp.Protocol{}
}

// Group returns the group named name ("redis1"), or nil.
func (w *World) Group(name string) *redis.Group {
	for _, g := range w.Groups {
		if g.Name() == name {
			return g
		}
	}
	return nil
}

// describeFaults lists what was wrong with the world during [since, now], for a
// violation's report: network faults, process faults (of Redis's nodes or another
// service's servers), failovers and clock jumps.
func (w *World) describeFaults(since, now sim.Time) []string {
	var fs []string
	spans := w.Net.Faults()
	paired := make([]bool, len(spans))
	for i, f := range spans {
		if paired[i] || f.Start > now || f.End < since {
			continue
		}
		text := w.NetFaultText(f.Fault)
		if j := ReverseBlock(spans, i); j >= 0 { // a two-way cut reads as one fault
			paired[j] = true
			text = "cut " + w.Net.Name(f.Fault.From) + "↔" + w.Net.Name(f.Fault.To)
		}
		fs = append(fs, "net "+text+" from "+oracle.FmtTime(f.Start)+" to "+oracle.FmtTime(f.End))
	}
	for _, n := range w.notes {
		if n.at <= now && n.until >= since {
			s := n.what + " at " + oracle.FmtTime(n.at)
			if n.until != sim.Never {
				s += " until " + oracle.FmtTime(n.until)
			}
			fs = append(fs, s)
		}
	}
	for _, g := range w.Groups {
		if st := g.Stats(); st.Failovers > 0 {
			fs = append(fs, fmt.Sprintf("%s failed over %d time(s), %d write(s) lost", g.Name(), st.Failovers, st.LostWrites))
		}
		for i := range g.Len() {
			n := g.Node(i)
			if ns := n.Stats(); ns.LostWrites > 0 {
				fs = append(fs, fmt.Sprintf("%s lost %d unsynced write(s) in crashes", n.Name(), ns.LostWrites))
			}
			for _, s := range n.Clock().Steps() {
				if s.At <= now && s.At >= since-sim.Time(w.Config.Lock.TTL) {
					fs = append(fs, fmt.Sprintf("%s wall clock jumped %+v at %s", n.Name(), s.By, oracle.FmtTime(s.At)))
				}
			}
		}
	}
	for _, p := range w.Processes {
		if p == nil || p.Clock() == nil {
			continue
		}
		for _, s := range p.Clock().Steps() {
			if s.At <= now && s.At >= since-sim.Time(w.Config.Lock.TTL) {
				fs = append(fs, fmt.Sprintf("%s wall clock jumped %+v at %s", p.Name(), s.By, oracle.FmtTime(s.At)))
			}
		}
	}
	return fs
}

// NetFaultText says network fault f in a reader's words, with the endpoints' names.
func (w *World) NetFaultText(f network.Fault) string {
	switch f.Kind {
	case network.FaultIsolate:
		return "isolate " + w.Net.Name(f.Node)
	case network.FaultBlock:
		return "block " + w.Net.Name(f.From) + "→" + w.Net.Name(f.To)
	case network.FaultClog:
		return "clog " + w.Net.Name(f.From) + "→" + w.Net.Name(f.To)
	}
	return f.Kind.String()
}

// ReverseBlock returns the index of a later block fault that cuts the other direction of
// spans[i] over the same interval, or -1: the two halves of one two-way cut.
func ReverseBlock(spans []network.FaultSpan, i int) int {
	f := spans[i]
	if f.Fault.Kind != network.FaultBlock {
		return -1
	}
	for j := i + 1; j < len(spans); j++ {
		g := spans[j]
		if g.Fault.Kind == network.FaultBlock && g.Fault.From == f.Fault.To && g.Fault.To == f.Fault.From &&
			g.Start == f.Start && g.End == f.End {
			return j
		}
	}
	return -1
}

// Endpoint returns the network endpoint called name, or -1.
func (w *World) Endpoint(name string) network.Endpoint {
	for e := range network.Endpoint(w.Net.Endpoints()) {
		if w.Net.Name(e) == name {
			return e
		}
	}
	return -1
}

// Client returns the client called name, or nil.
func (w *World) Client(name string) *model.Client {
	for _, c := range w.Clients {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// Built reports whether Build has run: a world runs only once built.
func (w *World) Built() bool { return w.built }
