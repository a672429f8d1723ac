package model

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/internal/invariant"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// NoEndpoint marks an absent endpoint, such as the storage of a client that writes nowhere.
const NoEndpoint network.Endpoint = -1

// Limits of a client process.
const (
	MaxClientResources = 1 << 10 // resources one client takes turns on
	MaxClientPauses    = 1 << 16 // scheduled pauses of one client
	MaxPauseRate       = 1000.0  // random pauses per simulated second
	MaxCrashRate       = 100.0   // random crashes per simulated second
	// maxHeld bounds the messages a paused client holds for later. A paused client only
	// receives replies to its own requests, a few per node, so hitting it means a bug.
	maxHeld = 1 << 12
)

// Pause is a stop-the-world pause (a GC pause, a stalled VM) of a client process.
type Pause struct {
	At  sim.Time      // true time it starts
	For time.Duration // how long the process is frozen, in true time
}

// ClientConfig configures one client process: its clock, the lock algorithm it drives,
// whom it talks to, its workload and the pauses and crash it suffers.
type ClientConfig struct {
	Name  string
	Index int // the world numbers its clients 0..n-1; the oracle indexes arrays by it
	Clock clock.Config
	// Lock builds the lock algorithm the process drives (redlock.Factory for Redlock). The
	// algorithm addresses its servers as 0..len(Nodes)-1.
	Lock lock.Factory

	Nodes     []network.Endpoint // the lock service's servers' endpoints, in the algorithm's order
	Storage   network.Endpoint   // the fenced storage, or NoEndpoint
	Resources []string           // the resources it locks, taken round-robin

	Hold           dist.Dist // work per hold, measured on the client's monotonic clock
	Think          dist.Dist // rest between one cycle and the next acquire
	StartAt        sim.Time  // true time of the first acquire
	Fenced         bool      // send the fencing token with storage writes
	StopAtDeadline bool      // a careful client stops working when validity runs out
	// WallValidity: the algorithm's validity deadlines are read on the client's wall clock
	// (Date.now(), time.time()), as node-redlock and redlock-py measure them, not on its
	// monotonic one: the deadline is the wall reading at the decision plus the validity
	// left, so a wall clock stepped back while the lock is held makes the holder believe
	// in it longer, and one stepped forward shorter.
	WallValidity bool
	ExtendEvery  time.Duration // while working, extend this often (local time); 0: never
	// ReleaseAfterAck makes the client wait for the storage's acknowledgement of its last
	// write before it releases: otherwise the write can land after the next holder's (a
	// stale write the workload made, not the lock). It waits AckTimeout (on its own clock;
	// the world passes the time it would wait for a Redis node's reply) and never past its
	// lock's validity, then releases anyway. The storage must acknowledge writes
	// (StorageConfig.Acknowledge).
	ReleaseAfterAck bool
	AckTimeout      time.Duration

	Pauses    []Pause   // stop-the-world pauses at given true times
	PauseRate float64   // random pauses per simulated second; 0: none
	PauseLen  dist.Dist // lengths of the random pauses
	CrashAt   sim.Time  // the process dies for good at this true time; 0 or sim.Never: never
	// CrashRate is random crashes per simulated second (0: none); after each, the process
	// restarts RestartAfter later (a draw), with a fresh lock algorithm and no memory of
	// the lock it held, as a restarted process has.
	CrashRate    float64
	RestartAfter dist.Dist
	MaxCycles    int // start no more than this many acquires; 0: unlimited
	// Conn builds the process's connection to its servers: what its library's driver does
	// between the algorithm and the network (Connection.Conn for Redis's; nil: DirectConn).
	Conn NewConn
}

// ClientEventKind says what a client did.
type ClientEventKind uint8

// The client events, in the order a lock cycle produces them.
const (
	EvAcquireStart ClientEventKind = iota + 1 // the workload starts acquiring Resource
	// EvAttemptStarted: one acquire attempt started (Lock says which). It is told to the
	// observer but not traced: the requests that follow are its trace, and a record of its
	// own would change every trace hash for no new fact.
	EvAttemptStarted
	EvAttemptEnded  // one attempt ended (Lock says how)
	EvAcquired      // the lock is held until ValidUntil (true time)
	EvAcquireFailed // every try failed
	EvWrite         // a storage write was sent
	EvWorkEnd       // the client stopped working on the resource
	EvReleaseStart  // release sent: the client no longer relies on the lock
	EvReleased      // release round over
	EvExtendStart   // an extension was started
	EvExtended      // the lock is now held until ValidUntil
	EvExtendFailed  // the extension failed; ValidUntil is unchanged
	EvLost          // the algorithm learned it lost the lock before its deadline
	EvPause         // a stop-the-world pause began
	EvResume        // the pause ended
	EvCrash         // the process died
	EvRestart       // the process started again, holding nothing
)

var clientEventNames = [...]string{EvAcquireStart: "acquire-start", EvAttemptStarted: "attempt-start",
	EvAttemptEnded: "attempt-ended", EvAcquired: "acquired", EvAcquireFailed: "acquire-failed",
	EvWrite: "write", EvWorkEnd: "work-end", EvReleaseStart: "release-start", EvReleased: "released",
	EvExtendStart: "extend-start", EvExtended: "extended", EvExtendFailed: "extend-failed",
	EvLost: "lost", EvPause: "pause", EvResume: "resume", EvCrash: "crash", EvRestart: "restart"}

func (k ClientEventKind) String() string {
	if int(k) < len(clientEventNames) && clientEventNames[k] != "" {
		return clientEventNames[k]
	}
	return fmt.Sprintf("client-event(%d)", int(k))
}

// ClientEvent is what a client tells its Observer. The pointer passed to the observer is
// reused for the next event: copy what you keep.
type ClientEvent struct {
	Kind       ClientEventKind
	Client     *Client
	Resource   string
	Lock       *lock.Event   // the algorithm's event, for the events that come from one
	ValidUntil sim.Time      // the validity deadline in TRUE time, converted with the client's clock
	Token      int64         // fencing token of the held lock (0 if none)
	Fenced     bool          // EvWrite: the write carries the token
	WriteID    uint64        // EvWrite: the storage request id, as StoredWrite.ReqID
	For        time.Duration // EvPause: how long
}

// Observer receives every client event as it happens in true time. The oracle implements
// it: only the simulation knows true time, and this is where it is told.
type Observer interface {
	ClientEvent(now sim.Time, e *ClientEvent)
}

// ClientStats counts what a client did.
type ClientStats struct {
	Cycles        uint64 // complete lock cycles: acquired, worked, released
	Acquires      uint64 // acquires started
	Acquired      uint64
	AcquireFailed uint64
	Writes        uint64 // storage writes sent
	Pauses        uint64
	Held          uint64 // messages and timers held back by a pause
	DroppedHeld   uint64 // messages dropped because the hold buffer was full
	Stray         uint64 // messages it had no use for (storage acknowledgements, after a crash, replies to an earlier life)
	Crashes       uint64
	Restarts      uint64
	Conn          ConnStats // what its connection did on its own account
}

// The client's kernel event kinds.
const (
	cevStart = iota + 1
	cevMachineTimer
	cevWorkDone
	cevDeadline
	cevExtend
	cevThinkDone
	cevPause
	cevResume
	cevRandomPause
	cevCrash
	cevRestart
	cevRandomCrash
	cevConn // a timer of the process's connection (Link.After); arg: the connection's arg | life<<32
)

// lifeShift places a process's incarnation in the top bits of its request ids: a
// restarted client drops the replies to its earlier life's requests, as a restarted
// process never reads what was sent to its dead connections.
const lifeShift = 48

type clientState uint8

const (
	csIdle clientState = iota // not started yet, or done with its cycles
	csAcquiring
	csWorking
	csAcking // work done, last write sent, waiting for its acknowledgement (ReleaseAfterAck)
	csReleasing
	csThinking
	csDead
)

// heldItem is a timer or message that reached a paused client, run when it resumes.
type heldItem struct {
	kind int // a cev kind, or 0 for a message
	arg  uint64
	from network.Endpoint
	msg  Message
}

// Client is a client process: a local clock, a network endpoint, a lock algorithm (any
// lock.Client: Redlock's state machine, or another) and a workload (acquire, work, release,
// think, again), suffering stop-the-world pauses and crashes, after which it may restart
// with a fresh algorithm and no memory of its lock (CrashRate, CrashAndRestart). It is the simulator's
// driver of the very state machine that redlock/redisdriver drives against real Redis: it
// hands the algorithm's requests to its connection (Conn), which decides what goes on the
// network, sets the algorithm's timers on the local clock, feeds it what the connection
// passes on and its timer firings stamped with its own monotonic clock, and tells its
// observer the algorithm's neutral lock events in true time. It reads no protocol: a
// request or reply is an opaque lock.Payload to it.
//
// A pause freezes the process: timers and messages that come due are held and handled, in
// order, when it resumes, so its timers fire late. A client that was working when the
// pause began sends a storage write as soon as it resumes (it was in the middle of the
// operation: Kleppmann's story) before it notices anything.
type Client struct {
	s    *sim.Sim
	net  *network.Net[Message]
	obs  Observer
	cfg  ClientConfig
	ep   network.Endpoint
	clk  *clock.Clock
	m    lock.Client
	work *rand.Rand // hold and think draws
	gc   *rand.Rand // random pauses, so turning them on leaves the workload's draws alone
	lr   *rand.Rand // the lock algorithm's stream, which a restarted algorithm continues
	cr   *rand.Rand // random crashes and restart delays (only when CrashRate > 0)
	life uint64     // incarnation: 0, and one more at each restart
	// crashEv is the pending random crash: one chain of them, however the process died
	crashEv sim.EventID

	restartAfter dist.Sampler

	hold, think, pauseLen dist.Sampler
	nodeOf                []int32 // endpoint → node index, -1 for other endpoints
	conn                  Conn    // the connection to the servers, which carries every request
	link                  Link

	state    clientState
	gen      uint64 // bumped at each acquire; events of an older cycle are stale
	paused   bool
	resumeAt sim.Time
	held     []heldItem

	timerEv, resumeEv                    sim.EventID
	timerID                              lock.TimerID
	workEv, deadlineEv, extendEv, restEv sim.EventID

	resource   string
	resName    sim.Name // resource as a Name, for the trace records (see clientNames)
	token      int64
	validUntil sim.Time
	writeID    uint64
	ackID      uint64 // csAcking: the write whose acknowledgement releases the lock

	ev       ClientEvent
	stats    ClientStats
	lastMono time.Duration // the latest monotonic reading (invariants builds only)
	names    *clientNames
	// connRand is the connection's stream (Link.Rand), created on its first draw.
	connRand *rand.Rand
}

// NewClient builds a client process, attaches it to net and schedules its start, its
// pauses and its crash. obs may be nil.
func NewClient(s *sim.Sim, net *network.Net[Message], cfg ClientConfig, obs Observer) (*Client, error) {
	if err := cfg.validate(net); err != nil {
		return nil, fmt.Errorf("client %s: %w", cfg.Name, err)
	}
	c := &Client{s: s, net: net, obs: obs, cfg: cfg, names: newClientNames(cfg.Name, cfg.Resources),
		work: s.Rand(cfg.Name + "/workload"), gc: s.Rand(cfg.Name + "/pauses")}
	c.resName = sim.NewName("") // a pause before the first acquire names no resource
	var err error
	if c.clk, err = clock.New(cfg.Clock, s.Rand(cfg.Name+"/clock")); err != nil {
		return nil, fmt.Errorf("client %s: %w", cfg.Name, err)
	}
	// The algorithm's stream keeps the name it had when Redlock was the only algorithm, so
	// that seeds replay across that change.
	c.lr = s.Rand(cfg.Name + "/redlock")
	if c.m, err = cfg.Lock(c.lr); err != nil {
		return nil, fmt.Errorf("client %s: %w", cfg.Name, err)
	}
	c.hold, _ = dist.NewSampler(cfg.Hold, "hold")
	c.think, _ = dist.NewSampler(cfg.Think, "think")
	c.pauseLen, _ = dist.NewSampler(cfg.PauseLen, "pause_len")
	if cfg.CrashRate > 0 {
		c.cr = s.Rand(cfg.Name + "/crashes")
		if c.restartAfter, err = dist.NewSampler(cfg.RestartAfter, "client_down"); err != nil {
			return nil, fmt.Errorf("client %s: %w", cfg.Name, err)
		}
	}
	if c.ep, err = net.AddEndpoint(cfg.Name, &endpoint{c: c}); err != nil {
		return nil, fmt.Errorf("client %s: %w", cfg.Name, err)
	}
	c.mapNodes()
	return c, c.schedule()
}

func (cfg *ClientConfig) validate(net *network.Net[Message]) error {
	switch {
	case cfg.Name == "":
		return sim.BadParam("name", `""`, "a non-empty name")
	case cfg.Lock == nil:
		return sim.BadParam("lock", "nil", "a lock algorithm (a lock.Factory)")
	case len(cfg.Nodes) == 0:
		return sim.BadParam("nodes", 0, "at least one server endpoint")
	case cfg.ReleaseAfterAck && cfg.AckTimeout <= 0:
		return sim.BadParam("ack_timeout", cfg.AckTimeout, "more than 0s with release_after_ack")
	case len(cfg.Resources) == 0 || len(cfg.Resources) > MaxClientResources:
		return sim.BadParam("resources", len(cfg.Resources), fmt.Sprintf("[1, %d] resources", MaxClientResources))
	case cfg.Storage != NoEndpoint && (cfg.Storage < 0 || int(cfg.Storage) >= net.Endpoints()):
		return sim.BadParam("storage", cfg.Storage, fmt.Sprintf("an endpoint in [0, %d) or NoEndpoint", net.Endpoints()))
	case cfg.StartAt < 0 || cfg.CrashAt < 0:
		return sim.BadParam("start_at/crash_at", fmt.Sprintf("%v/%v", cfg.StartAt, cfg.CrashAt), "[0s, never)")
	case cfg.ExtendEvery < 0:
		return sim.BadParam("extend_every", cfg.ExtendEvery, "[0s, ∞) (0 = never)")
	case !(cfg.CrashRate >= 0 && cfg.CrashRate <= MaxCrashRate):
		return sim.BadParam("client_crash_rate", cfg.CrashRate, fmt.Sprintf("[0, %g] per second", MaxCrashRate))
	case !(cfg.PauseRate >= 0 && cfg.PauseRate <= MaxPauseRate):
		return sim.BadParam("pause_rate", cfg.PauseRate, fmt.Sprintf("[0, %g] per second", MaxPauseRate))
	case cfg.MaxCycles < 0:
		return sim.BadParam("max_cycles", cfg.MaxCycles, "[0, ∞) (0 = unlimited)")
	case len(cfg.Pauses) > MaxClientPauses:
		return sim.BadParam("pauses", len(cfg.Pauses), fmt.Sprintf("[0, %d] pauses", MaxClientPauses))
	}
	for i, e := range cfg.Nodes {
		if e < 0 || int(e) >= net.Endpoints() {
			return sim.BadParam(fmt.Sprintf("nodes[%d]", i), e, fmt.Sprintf("an endpoint in [0, %d)", net.Endpoints()))
		}
	}
	for i, r := range cfg.Resources {
		if r == "" {
			return sim.BadParam(fmt.Sprintf("resources[%d]", i), `""`, "a non-empty key")
		}
	}
	for i, p := range cfg.Pauses {
		if p.At < 0 || p.For < 0 || p.For > network.MaxDuration {
			return sim.BadParam(fmt.Sprintf("pauses[%d]", i), fmt.Sprintf("at %v for %v", p.At, p.For),
				fmt.Sprintf("at ≥ 0s, for in [0s, %v]", network.MaxDuration))
		}
	}
	for _, d := range []struct {
		name string
		d    dist.Dist
	}{{"hold", cfg.Hold}, {"think", cfg.Think}, {"pause_len", cfg.PauseLen}} {
		if err := d.d.Validate(d.name); err != nil {
			return err
		}
	}
	return nil
}

// mapNodes builds the endpoint → node index table used on every reply.
func (c *Client) mapNodes() {
	top := network.Endpoint(0)
	for _, e := range c.cfg.Nodes {
		top = max(top, e)
	}
	c.nodeOf = make([]int32, top+1)
	for i := range c.nodeOf {
		c.nodeOf[i] = -1
	}
	for i, e := range c.cfg.Nodes {
		c.nodeOf[e] = int32(i)
	}
	c.link = Link{c: c}
	newConn := c.cfg.Conn
	if newConn == nil {
		newConn = DirectConn
	}
	c.conn = newConn(&c.link, len(c.cfg.Nodes))
}

func (c *Client) schedule() error {
	if _, err := c.s.Schedule(c.cfg.StartAt, c, cevStart, 0); err != nil {
		return err
	}
	for _, p := range c.cfg.Pauses {
		if _, err := c.s.Schedule(p.At, c, cevPause, uint64(p.For)); err != nil {
			return err
		}
	}
	if c.cfg.CrashAt > 0 && c.cfg.CrashAt != sim.Never {
		if _, err := c.s.Schedule(c.cfg.CrashAt, c, cevCrash, 0); err != nil {
			return err
		}
	}
	if c.cfg.PauseRate > 0 {
		c.nextRandomPause(c.s.Now())
	}
	if c.cfg.CrashRate > 0 {
		c.nextRandomCrash(c.cfg.StartAt)
	}
	return nil
}

// Name returns the client's name in traces.
func (c *Client) Name() string { return c.cfg.Name }

// Index returns the client's number in its world, from ClientConfig.Index.
func (c *Client) Index() int { return c.cfg.Index }

// Endpoint returns the client's network endpoint.
func (c *Client) Endpoint() network.Endpoint { return c.ep }

// Clock returns the client's local clock.
func (c *Client) Clock() *clock.Clock { return c.clk }

// Lock returns the lock algorithm the client drives, for inspection.
func (c *Client) Lock() lock.Client { return c.m }

// Stats returns the client's counters.
func (c *Client) Stats() ClientStats {
	st := c.stats
	st.Conn = c.conn.Stats()
	return st
}

// Paused reports whether the process is frozen by a pause.
func (c *Client) Paused() bool { return c.paused }

// Dead reports whether the process has crashed.
func (c *Client) Dead() bool { return c.state == csDead }

// PauseNow freezes the process for d from now: a scenario's stop-the-world pause at a
// moment chosen by an event rather than a time. Called from an Observer, it takes effect
// once the client has finished handling the event it is in.
func (c *Client) PauseNow(d time.Duration) { c.pause(c.s.Now(), d) }

// CrashNow kills the process for good.
func (c *Client) CrashNow() { c.crash(c.s.Now()) }

// CrashAndRestart kills the process now and starts it again after d, holding nothing:
// a scenario's crash of a client that comes back.
func (c *Client) CrashAndRestart(d time.Duration) {
	now := c.s.Now()
	if c.state == csDead {
		return
	}
	c.crash(now)
	c.at(now.Add(d), cevRestart, 0)
}

// HandleEvent runs the client's kernel events. Pause, resume and crash act at once; the
// rest wait while the process is frozen.
func (c *Client) HandleEvent(now sim.Time, kind int, arg uint64) {
	switch kind {
	case cevPause:
		c.pause(now, time.Duration(arg))
		return
	case cevResume:
		c.resume(now)
		return
	case cevCrash:
		c.crash(now)
		return
	case cevRestart:
		c.restart(now)
		return
	case cevRandomCrash:
		c.crashEv = 0
		if c.state != csDead {
			c.crash(now)
			c.at(now.Add(c.restartAfter.Draw(c.cr)), cevRestart, 0)
		}
		return
	case cevRandomPause:
		c.pause(now, c.pauseLen.Draw(c.gc))
		c.nextRandomPause(now)
		return
	}
	switch {
	case c.state == csDead:
	case c.paused:
		c.holdBack(heldItem{kind: kind, arg: arg})
	default:
		c.run(now, kind, arg)
	}
}

// Receive is the client's network endpoint.
func (c *Client) Receive(now sim.Time, from, _ network.Endpoint, m *Message) {
	switch {
	case c.state == csDead:
		c.stats.Stray++
	case c.paused:
		c.holdBack(heldItem{from: from, msg: *m})
	default:
		c.receive(now, from, m)
	}
}

func (c *Client) run(now sim.Time, kind int, arg uint64) {
	switch kind {
	case cevStart:
		if c.state == csIdle {
			c.startAcquire(now)
		}
	case cevThinkDone:
		if c.state == csThinking && arg == c.gen {
			c.restEv = 0
			c.startAcquire(now)
		}
	case cevMachineTimer:
		if lock.TimerID(arg) == c.timerID {
			c.timerEv, c.timerID = 0, 0
		}
		outs, err := c.m.Timer(c.mono(now), lock.TimerID(arg))
		c.feed(now, outs, err)
	case cevWorkDone:
		c.endWork(now, arg, true)
	case cevDeadline:
		c.endWork(now, arg, false)
	case cevExtend:
		c.extend(now, arg)
	case cevConn:
		if arg>>32 == c.life {
			c.conn.Timer(now, uint32(arg))
		}
	}
}

func (c *Client) receive(now sim.Time, from network.Endpoint, m *Message) {
	node := int32(-1)
	if int(from) < len(c.nodeOf) {
		node = c.nodeOf[from]
	}
	if node >= 0 {
		switch m.Kind {
		case MsgPush:
			// It comes on no request, so it carries no incarnation either, and an algorithm
			// that never asked for pushes ignores it (request 0 is never awaited).
			c.conn.Receive(now, int(node), 0, m)
			return
		case MsgReply, MsgAck:
			if m.ReqID>>lifeShift != c.life {
				c.stats.Stray++ // an answer to the process's earlier life
				return
			}
			c.conn.Receive(now, int(node), m.ReqID&(1<<lifeShift-1), m)
			return
		}
	}
	if c.state == csAcking && from == c.cfg.Storage && m.ReqID == c.ackID {
		c.release(now) // the last write landed (accepted or fenced off): let go
		return
	}
	c.stats.Stray++ // storage acknowledgements of other writes: nobody waits for them
}

// feed carries out what the machine asked for after an input. Outcomes are handled
// without calling back into the machine (the outputs are its outbox, reused by its next
// input); whatever must call it next goes through a kernel event.
func (c *Client) feed(now sim.Time, outs []lock.Output, err error) {
	if err != nil {
		c.fail(now, err)
		return
	}
	for i := 0; i < len(outs) && c.state != csDead; i++ {
		o := &outs[i]
		switch o.Kind {
		case lock.OutSend:
			if uint(o.Node) >= uint(len(c.cfg.Nodes)) { // an algorithm's bug, not the network's
				c.badServer(now, o.Node)
				return
			}
			c.conn.Send(now, o.Node, o.Req, &o.Request, o.After)
		case lock.OutAbandon:
			c.conn.Abandon(now, o.Node, o.Req)
		case lock.OutSetTimer:
			c.s.Cancel(c.timerEv)
			c.timerID = o.Timer
			c.timerEv = c.at(c.clk.TimerFires(now, o.After), cevMachineTimer, uint64(o.Timer))
		case lock.OutCancelTimer:
			if o.Timer == c.timerID {
				c.s.Cancel(c.timerEv)
				c.timerEv, c.timerID = 0, 0
			}
		case lock.OutEvent:
			c.outcome(now, &o.Event)
		}
	}
}

func (c *Client) outcome(now sim.Time, o *lock.Event) {
	switch o.Kind {
	case lock.AttemptStarted:
		c.emit(now, EvAttemptStarted, o)
	case lock.Lost:
		c.lost(now, o)
	case lock.ExtendStarted:
		c.emit(now, EvExtendStart, nil)
	case lock.AttemptEnded:
		c.emit(now, EvAttemptEnded, o)
	case lock.Acquired:
		c.acquired(now, o)
	case lock.AcquireFailed:
		c.stats.AcquireFailed++
		c.emit(now, EvAcquireFailed, o)
		c.rest(now)
	case lock.Extended:
		c.validUntil = c.trueDeadline(now, o.Deadline)
		c.emit(now, EvExtended, o)
		if c.cfg.StopAtDeadline && c.state != csAcking { // awaitAck's give-up time stands
			c.s.Cancel(c.deadlineEv)
			c.deadlineEv = c.at(c.validUntil, cevDeadline, c.gen)
		}
	case lock.ExtendFailed:
		c.emit(now, EvExtendFailed, o)
	case lock.Released:
		c.stats.Cycles++
		c.emit(now, EvReleased, o)
		c.rest(now)
	}
}

func (c *Client) startAcquire(now sim.Time) {
	if c.cfg.MaxCycles > 0 && c.stats.Acquires >= uint64(c.cfg.MaxCycles) {
		c.state = csIdle
		return
	}
	r := c.stats.Acquires % uint64(len(c.cfg.Resources))
	c.resource, c.resName = c.cfg.Resources[r], c.names.res[r]
	c.stats.Acquires++
	c.gen++
	c.state = csAcquiring
	c.token, c.validUntil = 0, 0
	c.emit(now, EvAcquireStart, nil)
	outs, err := c.m.Acquire(c.mono(now), c.resource)
	c.feed(now, outs, err)
}

// acquired starts the work: a first storage write at once, then the hold on the local
// clock, and for a careful client a stop at the validity deadline.
func (c *Client) acquired(now sim.Time, o *lock.Event) {
	c.stats.Acquired++
	c.state = csWorking
	c.token = o.Token
	c.validUntil = c.trueDeadline(now, o.Deadline)
	c.emit(now, EvAcquired, o)
	c.write(now)
	c.workEv = c.at(c.clk.TimerFires(now, c.hold.Draw(c.work)), cevWorkDone, c.gen)
	if c.cfg.StopAtDeadline {
		c.deadlineEv = c.at(c.validUntil, cevDeadline, c.gen)
	}
	if c.cfg.ExtendEvery > 0 {
		c.extendEv = c.at(c.clk.TimerFires(now, c.cfg.ExtendEvery), cevExtend, c.gen)
	}
}

// endWork stops working, with a last storage write when the work completed (a careful
// client that ran out of validity writes nothing), and releases the lock. With
// ReleaseAfterAck it first waits for that write's acknowledgement (see awaitAck); a
// deadline event in that wait gives up and releases.
func (c *Client) endWork(now sim.Time, gen uint64, completed bool) {
	if gen != c.gen {
		return // an older cycle's timer, held back by a pause
	}
	if c.state == csAcking {
		c.release(now) // the lock ran out before the acknowledgement came
		return
	}
	if c.state != csWorking {
		return
	}
	if completed {
		c.write(now)
		if c.cfg.ReleaseAfterAck && c.cfg.Storage != NoEndpoint && c.validUntil > now {
			c.awaitAck(now)
			return
		}
	}
	c.release(now)
}

// awaitAck waits for the acknowledgement of the write just sent, for as long as the
// client would wait for a node's reply and no later than the validity deadline: a lost
// acknowledgement must not keep the lock taken for a whole TTL.
func (c *Client) awaitAck(now sim.Time) {
	c.s.Cancel(c.workEv)
	c.s.Cancel(c.deadlineEv)
	c.s.Cancel(c.extendEv)
	c.workEv, c.extendEv = 0, 0
	c.state, c.ackID = csAcking, c.writeID
	giveUp := min(c.validUntil, c.clk.TimerFires(now, c.cfg.AckTimeout))
	c.deadlineEv = c.at(giveUp, cevDeadline, c.gen)
}

// release ends the work and starts releasing the lock.
func (c *Client) release(now sim.Time) {
	c.s.Cancel(c.workEv)
	c.s.Cancel(c.deadlineEv)
	c.s.Cancel(c.extendEv)
	c.workEv, c.deadlineEv, c.extendEv = 0, 0, 0
	c.emit(now, EvWorkEnd, nil)
	c.state = csReleasing
	c.emit(now, EvReleaseStart, nil)
	outs, err := c.m.Release(c.mono(now))
	c.feed(now, outs, err)
}

func (c *Client) extend(now sim.Time, gen uint64) {
	if c.state != csWorking || gen != c.gen {
		return
	}
	c.extendEv = c.at(c.clk.TimerFires(now, c.cfg.ExtendEvery), cevExtend, c.gen)
	outs, err := c.m.Extend(c.mono(now))
	if errors.Is(err, lock.ErrBusy) {
		return // the previous extension is still under way
	}
	if err == nil {
		c.emit(now, EvExtendStart, nil) // the algorithm traces nothing: its outputs follow
	}
	c.feed(now, outs, err)
}

// lost handles the algorithm's word that the lock is gone before its deadline: the
// validity ends now, and a careful client stops working at once, as at its deadline.
func (c *Client) lost(now sim.Time, o *lock.Event) {
	c.validUntil = min(c.validUntil, now)
	c.emit(now, EvLost, o)
	if c.cfg.StopAtDeadline && c.state == csWorking {
		c.s.Cancel(c.deadlineEv)
		c.deadlineEv = c.at(now, cevDeadline, c.gen)
	}
}

// rest schedules the next acquire after a think time on the local clock.
func (c *Client) rest(now sim.Time) {
	c.state = csThinking
	c.restEv = c.at(c.clk.TimerFires(now, c.think.Draw(c.work)), cevThinkDone, c.gen)
}

// write sends one storage write for the resource being worked on, with the token when
// the client fences.
func (c *Client) write(now sim.Time) {
	if c.cfg.Storage == NoEndpoint {
		return
	}
	c.writeID++
	c.stats.Writes++
	fenced := c.cfg.Fenced && c.token != 0
	c.net.Send(c.ep, c.cfg.Storage, StorageWrite(c.writeID, c.resource, c.cfg.Name, c.token, fenced))
	c.ev = ClientEvent{Kind: EvWrite, Client: c, Resource: c.resource, ValidUntil: c.validUntil,
		Token: c.token, Fenced: fenced, WriteID: c.writeID}
	c.notify(now)
}

func (c *Client) pause(now sim.Time, d time.Duration) {
	if c.state == csDead || d <= 0 {
		return
	}
	end := now.Add(d)
	if c.paused {
		if end > c.resumeAt { // overlapping pauses merge into the longer one
			c.s.Cancel(c.resumeEv)
			c.resumeAt = end
			c.resumeEv = c.at(end, cevResume, 0)
		}
		if c.s.Tracing() { // told to a reader only: the merge changes nothing else the trace folds
			c.s.Aside(c.cfg.Name, RecPauseMerged, sim.Dur("mono", c.mono(now)), sim.Dur("for", d),
				sim.Dur("until", time.Duration(c.resumeAt)))
		}
		return
	}
	c.paused, c.resumeAt = true, end
	c.stats.Pauses++
	c.ev = ClientEvent{Kind: EvPause, Client: c, Resource: c.resource, ValidUntil: c.validUntil,
		Token: c.token, For: d}
	c.notify(now)
	c.resumeEv = c.at(end, cevResume, 0)
}

// resume unfreezes the process. A client that was working finishes the write it was in
// the middle of before it handles anything that came due meanwhile.
func (c *Client) resume(now sim.Time) {
	if !c.paused || now < c.resumeAt {
		return
	}
	c.paused, c.resumeEv = false, 0
	c.emit(now, EvResume, nil)
	if c.state == csWorking {
		c.write(now)
	}
	// An observer's hook may pause or crash the client while this runs; what is left then
	// stays held (or is dropped with the process).
	i := 0
	for ; i < len(c.held) && !c.paused && c.state != csDead; i++ {
		h := c.held[i]
		if h.kind == 0 {
			c.receive(now, h.from, &h.msg)
		} else {
			c.run(now, h.kind, h.arg)
		}
	}
	if c.state == csDead {
		return
	}
	n := copy(c.held, c.held[i:])
	clear(c.held[n:])
	c.held = c.held[:n]
}

func (c *Client) holdBack(h heldItem) {
	if h.kind == 0 && len(c.held) >= maxHeld {
		c.stats.DroppedHeld++
		return
	}
	c.stats.Held++
	c.held = append(c.held, h)
}

func (c *Client) crash(now sim.Time) {
	if c.state == csDead {
		return
	}
	if c.state == csWorking || c.state == csAcking {
		c.emit(now, EvWorkEnd, nil)
	}
	for _, id := range []sim.EventID{c.timerEv, c.resumeEv, c.workEv, c.deadlineEv, c.extendEv, c.restEv} {
		c.s.Cancel(id)
	}
	c.state, c.paused, c.held = csDead, false, nil
	c.stats.Crashes++
	c.emit(now, EvCrash, nil)
}

// restart starts a crashed process again: a fresh lock algorithm (drawing on, from the
// same stream), no lock held, no memory of its requests, and an acquire at once, as a
// service that restarts and goes back to its work.
func (c *Client) restart(now sim.Time) {
	if c.state != csDead {
		return
	}
	m, err := c.cfg.Lock(c.lr)
	if err != nil {
		c.s.Fail(fmt.Errorf("client %s: restart: %w", c.cfg.Name, err))
		return
	}
	c.m, c.life = m, c.life+1
	c.conn.Restart(now)
	c.timerID, c.ackID, c.token, c.validUntil = 0, 0, 0, 0
	c.state = csIdle
	c.stats.Restarts++
	c.emit(now, EvRestart, nil)
	if c.cfg.CrashRate > 0 {
		c.nextRandomCrash(now)
	}
	c.startAcquire(now)
}

// nextRandomCrash schedules the next random crash, an exponential gap after from, in
// place of any still pending (a scheduled crash and restart may come in between).
func (c *Client) nextRandomCrash(from sim.Time) {
	c.s.Cancel(c.crashEv)
	gap := time.Duration(c.cr.ExpFloat64() / c.cfg.CrashRate * float64(time.Second))
	c.crashEv = c.at(from.Add(gap), cevRandomCrash, 0)
}

func (c *Client) nextRandomPause(now sim.Time) {
	gap := time.Duration(c.gc.ExpFloat64() / c.cfg.PauseRate * float64(time.Second))
	c.at(now.Add(gap), cevRandomPause, 0)
}

// at schedules a client event; the times come from the client's clock and are never in
// the past, so an error here is the kernel's queue limit, which ends the run. It is kept
// out of line: inlined with the kernel's Schedule in it, it would make each of its callers
// (feed above all) larger by as much as PGO's inliner allows a hot function to be, and
// whether feed then still inlined into its own callers would turn on the profile's noise.
//
//go:noinline
func (c *Client) at(t sim.Time, kind int, arg uint64) sim.EventID {
	id, err := c.s.Schedule(t, c, kind, arg)
	if err != nil {
		c.fail(c.s.Now(), err)
	}
	return id
}

// badServer fails the run: the lock algorithm sent to a server the client does not have.
//
//go:noinline
func (c *Client) badServer(now sim.Time, node int) {
	c.fail(now, fmt.Errorf("the lock algorithm sent to server %d of %d", node, len(c.cfg.Nodes)))
}

// fail ends the run with err, an error of the lock algorithm or of the kernel's queue,
// naming the client and the time. It is the cold path of feed and at, kept out of line so
// that their hot paths stay small.
//
//go:noinline
func (c *Client) fail(now sim.Time, err error) {
	c.s.Fail(fmt.Errorf("client %s at %v: %w", c.cfg.Name, now, err))
}

// mono reads the client's monotonic clock at true time now. In invariants builds it
// asserts the reading never goes backward: the algorithm's validity arithmetic assumes it.
func (c *Client) mono(now sim.Time) time.Duration {
	m := c.clk.Mono(now)
	if invariant.Enabled {
		if m < c.lastMono {
			invariant.Check(false, "client %s: monotonic clock went backward: %v after %v", c.cfg.Name, m, c.lastMono)
		}
		c.lastMono = m
	}
	return m
}

// trueDeadline converts a deadline on the local monotonic clock to true time: what the
// oracle needs to judge a validity window, and what the client cannot know.
func (c *Client) trueDeadline(now sim.Time, deadline time.Duration) sim.Time {
	if c.cfg.WallValidity {
		return c.clk.WallReaches(now, c.clk.Wall(now)+deadline-c.mono(now))
	}
	return c.clk.TimerFires(now, deadline-c.mono(now))
}

func (c *Client) emit(now sim.Time, k ClientEventKind, o *lock.Event) {
	c.ev = ClientEvent{Kind: k, Client: c, Resource: c.resource, Lock: o,
		ValidUntil: c.validUntil, Token: c.token}
	c.notify(now)
}

// notify traces c.ev (but an attempt's start, see EvAttemptStarted) and hands it to the
// observer.
func (c *Client) notify(now sim.Time) {
	e := &c.ev
	switch {
	case e.Kind == EvAttemptStarted:
	case !c.s.Tracing():
		emitEventHasher(c.s.Hasher(), c.names, c.mono(now), c.resName, e)
	default:
		emitEventTexter(c.s.Texter(), c.names, c.mono(now), c.resName, e)
	}
	if c.obs != nil {
		c.obs.ClientEvent(now, e)
	}
}

// emitEvent writes client event ev's trace record, once, for either emitter (see
// sim.Emitter): the lock's events with their attempt, votes, reason, validity and token; a
// write with its id, token and fencing; a pause with its length; the rest with the
// resource. Every record starts with the client's monotonic reading. res is ev.Resource as
// a Name, whose digest was worked out once.
//
//lint:ignore U1000 the template internal/cmd/emitgen copies into emit_gen.go once per emitter; never called itself
func emitEvent[E sim.Emitter[E]](e E, nm *clientNames, mono time.Duration, res sim.Name, ev *ClientEvent) {
	e = e.Begin(nm.actor, nm.kinds[ev.Kind]).Dur("mono", mono)
	switch {
	case ev.Lock != nil:
		o := ev.Lock
		e = e.Name("resource", res).Int("attempt", int64(o.Attempt)).Int("oks", int64(o.Votes)).
			Str("reason", o.Reason.String()).Dur("validity", o.Validity).Int("token", o.Token)
	case ev.Kind == EvWrite:
		e = e.Name("resource", res).Int("id", int64(ev.WriteID)).Int("token", ev.Token).Bool("fenced", ev.Fenced)
	case ev.Kind == EvPause:
		e = e.Dur("for", ev.For)
	default:
		e = e.Name("resource", res)
	}
	e.End()
}

// clientNames are a client's name, its record kinds and its resources, with their trace
// digests: every client record names its resource, and a Name folds as one word where a
// string is looked up in the digest cache first.
type clientNames struct {
	actor sim.Name
	kinds [len(clientEventNames)]sim.Name
	res   []sim.Name // by index in ClientConfig.Resources
}

func newClientNames(name string, resources []string) *clientNames {
	n := &clientNames{actor: sim.NewName(name), res: make([]sim.Name, len(resources))}
	for i, r := range resources {
		n.res[i] = sim.NewName(r)
	}
	for k := range n.kinds {
		n.kinds[k] = sim.NewName(ClientEventKind(k).String())
	}
	return n
}
