// Package redisdriver runs the redlock state machine against real Redis servers, with
// github.com/redis/go-redis/v9, the process's monotonic clock and real timers. It is the
// second of the machine's two drivers (the simulator is the first): the algorithm code is
// the same, only time and the network are real here, so knobs tuned in the simulator mean
// the same thing in production.
//
// Each Lock, Extend and Unlock drives one redlock.Machine from the calling goroutine:
// commands go to the nodes concurrently, one goroutine each, and their replies and the
// machine's timers come back over channels to that one goroutine, which feeds them to the
// machine with a fresh monotonic reading.
package redisdriver

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-sim/redlock-sim/redlock"
)

// Sentinels for errors.Is. A failed Lock matches ErrNotAcquired and the sentinel of its
// reason; a failed Extend matches ErrNotExtended and the sentinel of its reason.
var (
	ErrNotAcquired     = errors.New("redisdriver: lock not acquired")
	ErrNotExtended     = errors.New("redisdriver: lock not extended")
	ErrNoQuorum        = errors.New("redisdriver: no quorum")
	ErrValidityExpired = errors.New("redisdriver: validity expired")
	ErrFenceFailed     = errors.New("redisdriver: no fencing token")
	ErrExtensionLimit  = errors.New("redisdriver: extension limit reached")
)

// OutcomeError is the error of a Lock or Extend that the algorithm lost. It carries the
// machine's outcome (reason, attempts, OK count) for logs and metrics.
type OutcomeError struct {
	Outcome redlock.Outcome
	Nodes   int
}

func (e *OutcomeError) Error() string {
	o := e.Outcome
	what := "lock"
	if o.Kind == redlock.ExtendFailed {
		what = "extend"
	}
	return fmt.Sprintf("redisdriver: %s %q failed: %v (attempt %d, %d/%d OK, %d answered)",
		what, o.Resource, o.Reason, o.Attempt, o.OKs, e.Nodes, o.Replies)
}

// Is matches the operation's sentinel and the reason's sentinel.
func (e *OutcomeError) Is(target error) bool {
	switch target {
	case ErrNotAcquired:
		return e.Outcome.Kind == redlock.AcquireFailed
	case ErrNotExtended:
		return e.Outcome.Kind == redlock.ExtendFailed
	case ErrNoQuorum:
		return e.Outcome.Reason == redlock.ReasonNoQuorum
	case ErrValidityExpired:
		return e.Outcome.Reason == redlock.ReasonValidityExpired
	case ErrFenceFailed:
		return e.Outcome.Reason == redlock.ReasonFenceFailed
	case ErrExtensionLimit:
		return e.Outcome.Reason == redlock.ReasonExtensionLimit
	}
	return false
}

// Options configures a Client.
type Options struct {
	// Config holds the algorithm's knobs; the zero value means redlock.DefaultConfig().
	// Nodes is taken from the number of addresses when zero, and must match it otherwise.
	Config redlock.Config
	// Redis is a template for every node's connection options; Addr is replaced. When nil,
	// RESP2, no client-side retries and the per-node timeout as dial/read/write timeouts.
	// Keep MaxRetries at -1 in a template of your own: a hidden retry stretches the elapsed
	// time the algorithm measures and can repeat a SET the machine counted as lost.
	Redis *redis.Options
}

// Client holds one go-redis client per node. It is safe for concurrent use: each Lock
// creates its own machine.
type Client struct {
	cfg   redlock.Config
	nodes []*redis.Client
	base  time.Time // origin of the monotonic readings fed to machines
}

// New connects lazily to the nodes at addrs (go-redis dials on first use).
func New(addrs []string, opts Options) (*Client, error) {
	cfg := opts.Config
	if cfg == (redlock.Config{}) {
		cfg = redlock.DefaultConfig()
		cfg.Nodes = 0 // taken from the addresses below
	}
	switch {
	case len(addrs) == 0:
		return nil, errors.New("redisdriver: no addresses")
	case cfg.Nodes == 0:
		cfg.Nodes = len(addrs)
	case cfg.Nodes != len(addrs):
		return nil, fmt.Errorf("redisdriver: nodes = %d but %d addresses", cfg.Nodes, len(addrs))
	}
	cfg = cfg.Effective()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("redisdriver: %w", err)
	}
	c := &Client{cfg: cfg, base: time.Now()}
	for _, addr := range addrs[:cfg.Nodes] {
		o := defaultRedisOptions(cfg.NodeTimeout())
		if opts.Redis != nil {
			o = *opts.Redis // a shallow copy, as the template is shared by every node
		}
		o.Addr = addr
		c.nodes = append(c.nodes, redis.NewClient(&o))
	}
	return c, nil
}

func defaultRedisOptions(timeout time.Duration) redis.Options {
	return redis.Options{
		Protocol:              2, // RESP2: replies map onto redlock.Reply without guessing
		DisableIdentity:       true,
		MaxRetries:            -1, // the algorithm retries, not the connection
		DialerRetries:         1,
		DialTimeout:           timeout,
		ReadTimeout:           timeout,
		WriteTimeout:          timeout,
		ContextTimeoutEnabled: true,
	}
}

// Config returns the effective algorithm configuration.
func (c *Client) Config() redlock.Config { return c.cfg }

// Close closes the node connections.
func (c *Client) Close() error {
	var errs []error
	for _, n := range c.nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}

// Lease is a lock held by this process. Its methods are safe for concurrent use; Extend
// and Unlock on one lease run one at a time.
type Lease struct {
	c  *Client
	mu sync.Mutex
	m  *redlock.Machine
	o  redlock.Outcome // the last Acquired or Extended
}

// Resource returns the locked key.
func (l *Lease) Resource() string { return l.o.Resource }

// Value returns the lock's random value.
func (l *Lease) Value() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.o.Value
}

// Token returns the fencing token, when the configuration asked for one.
func (l *Lease) Token() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.o.Token, l.o.Fenced
}

// Attempts returns how many attempts the acquire took.
func (l *Lease) Attempts() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.o.Attempt
}

// Deadline returns when validity ends. The time carries a monotonic reading, so
// time.Until(l.Deadline()) is immune to wall-clock steps.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.base.Add(l.o.Deadline)
}

// Lock acquires resource, retrying as configured. A lost acquire returns an *OutcomeError
// matching ErrNotAcquired and its reason (ErrNoQuorum, ...). If ctx ends first, Lock
// releases on every node whatever it may have taken and returns ctx's error.
func (c *Client) Lock(ctx context.Context, resource string) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // nothing sent, nothing to clean up
	}
	m, err := redlock.New(c.cfg, newRand())
	if err != nil {
		return nil, err
	}
	o, err := c.drive(ctx, m, func(now time.Duration) error { return m.Acquire(now, resource) },
		redlock.Acquired, redlock.AcquireFailed, true)
	if err != nil {
		return nil, err
	}
	if o.Kind != redlock.Acquired {
		return nil, &OutcomeError{Outcome: o, Nodes: c.cfg.Nodes}
	}
	return &Lease{c: c, m: m, o: o}, nil
}

// Extend resets the TTL on every node where the key is still the lease's. A lost extend
// returns an *OutcomeError matching ErrNotExtended; the lease keeps its old deadline.
// It takes at most one per-node timeout and is not cut short by ctx.
func (c *Client) Extend(ctx context.Context, l *Lease) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, err := c.drive(ctx, l.m, l.m.Extend, redlock.Extended, redlock.ExtendFailed, false)
	if err != nil {
		return err
	}
	if o.Kind != redlock.Extended {
		return &OutcomeError{Outcome: o, Nodes: c.cfg.Nodes}
	}
	l.o.Deadline, l.o.Validity = o.Deadline, o.Validity
	return nil
}

// Unlock deletes the key on every node where it is still the lease's. It takes at most one
// per-node timeout and is not cut short by ctx, so a cancelled caller still cleans up.
func (c *Client) Unlock(ctx context.Context, l *Lease) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := c.drive(ctx, l.m, l.m.Release, redlock.Released, redlock.Released, false)
	return err
}

type nodeReply struct {
	node  int
	req   redlock.Req
	reply redlock.Reply
}

// drive feeds the machine until it reports the outcome kind ok or failed. With abortable,
// a done ctx aborts the operation through Release, drives the release to its end and
// returns ctx's error.
func (c *Client) drive(ctx context.Context, m *redlock.Machine, start func(time.Duration) error,
	ok, failed redlock.OutcomeKind, abortable bool) (redlock.Outcome, error) {
	done := make(chan struct{})
	defer close(done)
	replies := make(chan nodeReply, 2*len(c.nodes))
	fired := make(chan redlock.TimerID, 1)
	timers := map[redlock.TimerID]*time.Timer{}
	defer func() {
		for _, t := range timers {
			t.Stop()
		}
	}()
	// Commands outlive a cancelled ctx: the release that cleans up after it must still go.
	cmdCtx := context.WithoutCancel(ctx)
	cancelled := ctx.Done()
	if !abortable {
		cancelled = nil
	}
	now := func() time.Duration { return time.Since(c.base) }

	err := start(now())
	var ctxErr error
	for {
		if err != nil {
			return redlock.Outcome{}, err
		}
		for _, out := range m.Outputs() {
			switch out.Kind {
			case redlock.OutSend:
				go c.exec(cmdCtx, out, replies, done)
			case redlock.OutSetTimer:
				id := out.Timer
				timers[id] = time.AfterFunc(out.After, func() {
					select {
					case fired <- id:
					case <-done:
					}
				})
			case redlock.OutCancelTimer:
				if t, ok := timers[out.Timer]; ok {
					t.Stop()
					delete(timers, out.Timer)
				}
			case redlock.OutOutcome:
				k := out.Outcome.Kind
				if ctxErr != nil && k == redlock.Released {
					return out.Outcome, ctxErr
				}
				if ctxErr == nil && (k == ok || k == failed) {
					return out.Outcome, nil
				}
			}
		}
		select {
		case r := <-replies:
			err = m.Reply(now(), r.node, r.req, r.reply)
		case id := <-fired:
			delete(timers, id)
			err = m.Timer(now(), id)
		case <-cancelled:
			ctxErr, cancelled = ctx.Err(), nil
			err = m.Release(now())
		}
	}
}

// exec runs one command on its node within the per-node timeout and hands the reply back,
// unless the operation has ended meanwhile.
func (c *Client) exec(ctx context.Context, out redlock.Output, replies chan<- nodeReply, done <-chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.NodeTimeout())
	defer cancel()
	r := Exec(ctx, c.nodes[out.Node], out.Command)
	select {
	case replies <- nodeReply{node: out.Node, req: out.Req, reply: r}:
	case <-done:
	}
}

// Doer is what Exec needs of a go-redis client (*redis.Client, *redis.Conn, ...).
type Doer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// Exec sends c and converts the answer to a redlock.Reply: nil → Nil, status → ReplyStatus,
// integer → ReplyInt, bulk → ReplyBulk, a Redis error → ReplyError, and a timeout or
// connection error → NoReply. An EVALSHA that meets NOSCRIPT (a fresh or flushed script
// cache) is retried once as EVAL, which also loads the script for next time.
//
// go-redis's Do does not say whether a string was a status or a bulk reply; the commands
// Redlock sends answer bulk strings only to GET, so GET's strings are bulk and all others
// status. Use RESP2 (Protocol: 2) so that holds.
func Exec(ctx context.Context, rdb Doer, c redlock.Command) redlock.Reply {
	r := do(ctx, rdb, c)
	if c.Op == redlock.OpEvalSHA && r.Kind == redlock.ReplyError && strings.HasPrefix(r.Str, "NOSCRIPT") {
		c.Op = redlock.OpEval
		r = do(ctx, rdb, c)
	}
	return r
}

func do(ctx context.Context, rdb Doer, c redlock.Command) redlock.Reply {
	argv := c.Args()
	args := make([]any, len(argv))
	for i, a := range argv {
		args[i] = a
	}
	v, err := rdb.Do(ctx, args...).Result()
	return convert(c.Op, v, err)
}

func convert(op redlock.Op, v any, err error) redlock.Reply {
	if errors.Is(err, redis.Nil) {
		return redlock.Nil
	}
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return redlock.Reply{Kind: redlock.ReplyError, Str: re.Error()}
		}
		return redlock.NoReply
	}
	switch x := v.(type) {
	case nil:
		return redlock.Nil
	case int64:
		return redlock.IntReply(x)
	case string:
		if op == redlock.OpGet {
			return redlock.Reply{Kind: redlock.ReplyBulk, Str: x}
		}
		return redlock.Reply{Kind: redlock.ReplyStatus, Str: x}
	default:
		return redlock.Reply{Kind: redlock.ReplyError, Str: fmt.Sprintf("redisdriver: unexpected reply %T", v)}
	}
}

// newRand returns a ChaCha8 stream seeded from crypto/rand, so lock values cannot be
// guessed by another client (a guessed value could release someone else's lock).
func newRand() *rand.Rand {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // crypto/rand.Read never fails since Go 1.24
	return rand.New(rand.NewChaCha8(seed))
}
