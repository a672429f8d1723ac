// Package hybrid is the "hybrid" lock of the blog posts this project grew from ("Redis
// Redlock vs ZooKeeper in production"): a client tries Redlock on the Redis masters
// first, and when Redis fails it (the acquire is given up: no quorum, errors, timeouts)
// it escalates to ZooKeeper "as arbiter" and takes Curator's InterProcessMutex on the
// ensemble instead. Release goes to whichever it holds.
//
// It is a composite lock.Client of two others, whose logic it does not repeat: the Redis
// client (Redlock's machine, package redlock) addresses servers 0..Masters−1, the
// ZooKeeper client (Curator's mutex, package redlock/curator) addresses the ensemble as
// one server, Masters (its session picks the ensemble's server). The composite routes
// each reply by its server, maps the ZooKeeper client's server 0 to Masters, keeps the
// one timer its caller runs at the earlier of the two clients' timers, and passes on
// the events of the side the operation runs on, but one: Redis's AcquireFailed, which
// starts the ZooKeeper acquire instead. The ZooKeeper side's attempts are numbered after
// Redis's, and a lock taken through it is Acquired with ReasonEscalated, so that a trace
// says which path took the lock.
//
// What it guarantees is what the blog leaves unsaid: two clients that both fail Redis
// serialize through ZooKeeper, but a client that fails Redis (a partition cuts it from a
// majority of masters) and one that does not take two different locks, and hold at once.
// A lock taken through ZooKeeper carries the token its Curator client takes (none unless
// its Config.Token asks for the czxid or the sequence); one taken through Redis carries
// Redlock's own, when its fencing is on. The two are unrelated numbers: a fenced storage
// cannot order a ZooKeeper holder's writes against a Redis holder's.
package hybrid

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// Config is a hybrid lock's settings: its two clients and how many Redis masters the
// first addresses.
type Config struct {
	// Masters is how many Redis masters the Redis client addresses (servers 0..Masters−1);
	// the ZooKeeper client is server Masters.
	Masters int
	// Redis builds the client that tries first (Redlock on the masters), ZooKeeper the one
	// it escalates to (Curator's mutex, addressing the ensemble as its server 0). Both
	// draw from the composite's random stream.
	Redis, ZooKeeper lock.Factory
}

// Validate checks the settings.
func (c Config) Validate() error {
	switch {
	case c.Masters < 1:
		return fmt.Errorf("hybrid: %d Redis masters: want at least 1", c.Masters)
	case c.Redis == nil || c.ZooKeeper == nil:
		return errors.New("hybrid: a Redis and a ZooKeeper client are both needed")
	}
	return nil
}

// Factory returns the factory of hybrid clients with cfg.
func Factory(cfg Config) (lock.Factory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return func(rng *rand.Rand) (lock.Client, error) { return New(cfg, rng) }, nil
}

// New returns one client's hybrid lock, its two clients built from rng.
func New(cfg Config, rng *rand.Rand) (*Lock, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r, err := cfg.Redis(rng)
	if err != nil {
		return nil, fmt.Errorf("hybrid: the Redis client: %w", err)
	}
	z, err := cfg.ZooKeeper(rng)
	if err != nil {
		return nil, fmt.Errorf("hybrid: the ZooKeeper client: %w", err)
	}
	h := &Lock{cfg: cfg}
	h.sides[Redis].c, h.sides[ZooKeeper].c = r, z
	return h, nil
}

// Side names one of the two clients.
type Side uint8

// The sides.
const (
	None Side = iota
	// Redis is the Redlock client, tried first.
	Redis
	// ZooKeeper is Curator's mutex, the arbiter when Redis fails.
	ZooKeeper
)

var sideNames = [...]string{"none", "redis", "zookeeper"}

func (s Side) String() string {
	if int(s) < len(sideNames) {
		return sideNames[s]
	}
	return fmt.Sprintf("side(%d)", int(s))
}

type op uint8

const (
	opIdle op = iota
	opAcquire
	opHeld
	opRelease
)

// sub is one side's client and the timer it asked for.
type sub struct {
	c       lock.Client
	timer   lock.TimerID
	timerAt time.Duration // when it falls due, on the caller's clock
}

// Lock is one client's hybrid lock, a deterministic state machine (lock.Client).
type Lock struct {
	cfg   Config
	sides [3]sub // by Side; None unused
	out   []lock.Output
	now   time.Duration

	op       op
	on       Side // the side the operation in progress, or the lock held, is on
	resource string
	redisTry int  // attempts Redis made in this acquire: ZooKeeper's are numbered after them
	escalate bool // Redis gave the acquire up: ZooKeeper's acquire starts next

	timer lock.OneTimer
}

// On returns the side the operation in progress, or the lock held, is on (None when
// idle).
func (h *Lock) On() Side {
	if h.op == opIdle {
		return None
	}
	return h.on
}

// Client returns side s's client, for inspection.
func (h *Lock) Client(s Side) lock.Client { return h.sides[s].c }

func (h *Lock) begin(now time.Duration) error {
	if now < h.now {
		return fmt.Errorf("%w: now = %v after %v", lock.ErrTimeBackward, now, h.now)
	}
	h.now, h.out = now, h.out[:0]
	return nil
}

// Acquire tries Redis first.
func (h *Lock) Acquire(now time.Duration, resource string) ([]lock.Output, error) {
	if err := h.begin(now); err != nil {
		return nil, err
	}
	if h.op != opIdle {
		return nil, lock.ErrBusy
	}
	outs, err := h.sides[Redis].c.Acquire(now, resource)
	if err != nil {
		return nil, err
	}
	h.op, h.on, h.resource, h.redisTry = opAcquire, Redis, resource, 0
	h.take(Redis, outs)
	return h.end()
}

// Extend extends the lock on the side that holds it (Curator's mutex refuses: it has no
// lease).
func (h *Lock) Extend(now time.Duration) ([]lock.Output, error) {
	if err := h.begin(now); err != nil {
		return nil, err
	}
	switch h.op {
	case opIdle:
		return nil, lock.ErrNotHeld
	case opAcquire, opRelease:
		return nil, lock.ErrBusy
	}
	outs, err := h.sides[h.on].c.Extend(now)
	if err != nil {
		return nil, err
	}
	h.take(h.on, outs)
	return h.end()
}

// Release releases the lock on the side that holds it, or aborts the acquire on the
// side it runs on.
func (h *Lock) Release(now time.Duration) ([]lock.Output, error) {
	if err := h.begin(now); err != nil {
		return nil, err
	}
	switch h.op {
	case opIdle:
		return nil, lock.ErrNotHeld
	case opRelease:
		return nil, lock.ErrBusy
	}
	outs, err := h.sides[h.on].c.Release(now)
	if err != nil {
		return nil, err
	}
	h.op = opRelease
	h.take(h.on, outs)
	return h.end()
}

// Reply routes server's reply, or what it pushed, to the side that addresses it.
func (h *Lock) Reply(now time.Duration, server int, req lock.Req, p lock.Payload) ([]lock.Output, error) {
	if err := h.begin(now); err != nil {
		return nil, err
	}
	s, local := Redis, server
	switch {
	case server < 0 || server > h.cfg.Masters:
		return nil, fmt.Errorf("hybrid: reply from server %d of %d", server, h.cfg.Masters+1)
	case server == h.cfg.Masters:
		s, local = ZooKeeper, 0
	}
	outs, err := h.sides[s].c.Reply(now, local, req, p)
	if err != nil {
		return nil, err
	}
	h.take(s, outs)
	return h.end()
}

// Timer fires whichever side's timer fell due.
func (h *Lock) Timer(now time.Duration, id lock.TimerID) ([]lock.Output, error) {
	if err := h.begin(now); err != nil {
		return nil, err
	}
	if !h.timer.Fired(id) {
		return h.out, nil
	}
	for _, s := range []Side{Redis, ZooKeeper} {
		sd := &h.sides[s]
		if sd.timer == 0 || sd.timerAt > now {
			continue
		}
		t := sd.timer
		sd.timer = 0
		outs, err := sd.c.Timer(now, t)
		if err != nil {
			return nil, err
		}
		h.take(s, outs)
	}
	return h.end()
}

// take maps side s's outputs into the composite's: its servers, its timer, its events.
func (h *Lock) take(s Side, outs []lock.Output) {
	sd := &h.sides[s]
	for _, o := range outs {
		switch o.Kind {
		case lock.OutSend, lock.OutAbandon:
			if s == ZooKeeper {
				o.Node += h.cfg.Masters
			}
			h.out = append(h.out, o)
		case lock.OutSetTimer:
			sd.timer, sd.timerAt = o.Timer, h.now+o.After
		case lock.OutCancelTimer:
			if sd.timer == o.Timer {
				sd.timer = 0
			}
		case lock.OutEvent:
			h.event(s, o.Event)
		}
	}
}

// event passes on an event of side s when the operation is on that side, and escalates
// when Redis gives an acquire up. The idle side's events (none but Curator's, whose
// background deletes report nothing) are not the caller's.
func (h *Lock) event(s Side, ev lock.Event) {
	if s != h.on || h.op == opIdle {
		return
	}
	if s == ZooKeeper {
		ev.Attempt += h.redisTry
	}
	switch ev.Kind {
	case lock.AttemptStarted:
		if s == Redis {
			h.redisTry = ev.Attempt
		}
	case lock.Acquired:
		if h.op != opAcquire {
			return
		}
		h.op = opHeld
		if s == ZooKeeper {
			ev.Reason = lock.ReasonEscalated
		}
	case lock.AcquireFailed:
		switch {
		case s == Redis && h.op == opAcquire:
			h.escalate = true // not the caller's: ZooKeeper is asked next
			return
		case s == ZooKeeper || ev.Reason != lock.ReasonAborted:
			h.op = opIdle
		}
		// Redlock's release of an aborted acquire goes on: Released ends it.
	case lock.Released:
		h.op = opIdle
	}
	h.out = append(h.out, lock.Output{Kind: lock.OutEvent, Event: ev})
}

// end starts ZooKeeper's acquire when Redis gave up, sets the timer, and returns the
// outputs.
func (h *Lock) end() ([]lock.Output, error) {
	if h.escalate {
		h.escalate = false
		h.on = ZooKeeper
		outs, err := h.sides[ZooKeeper].c.Acquire(h.now, h.resource)
		if err != nil { // Curator's mutex is idle whenever Redis's acquire runs
			return nil, fmt.Errorf("hybrid: escalating to ZooKeeper: %w", err)
		}
		h.take(ZooKeeper, outs)
	}
	h.rearm()
	return h.out, nil
}

// rearm keeps the caller's one timer at the earlier of the two sides' timers.
func (h *Lock) rearm() {
	var at time.Duration
	found := false
	for _, s := range []Side{Redis, ZooKeeper} {
		if sd := &h.sides[s]; sd.timer != 0 && (!found || sd.timerAt < at) {
			at, found = sd.timerAt, true
		}
	}
	h.out = h.timer.Arm(h.out, h.now, at, found)
}
