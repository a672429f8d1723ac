// Package redisdriver runs the redlock state machine against real Redis servers, with
// github.com/redis/go-redis/v9, the process's monotonic clock and real timers. It is the
// second of the machine's two drivers (the simulator is the first): the algorithm code is
// the same, only time and the network are real here, so knobs tuned in the simulator mean
// the same thing in production.
//
// Each Lock, Extend and Unlock drives one redlock.Machine, through the same lock.Client
// interface the simulator uses, from the calling goroutine: commands go to the nodes
// concurrently, one goroutine each, and their replies and the machine's timers come back
// over channels to that one goroutine, which feeds them to the machine with a fresh
// monotonic reading.
package redisdriver

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
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
	ErrNotReleased     = errors.New("redisdriver: lock not released on a quorum")
)

// NodeError is a command that got no answer from its node: the connection was refused or
// broke, or no reply came within the per-node timeout. The algorithm treats it as a lost
// reply; the error says which server and why, for logs and for callers that must tell a
// dead server from a lock held by someone else. Redis error replies (WRONGTYPE, NOSCRIPT,
// ...) are answers, not NodeErrors.
type NodeError struct {
	Node int    // index of the node's address in the list given to New
	Addr string // the node's address
	Err  error  // the cause, from go-redis or the network
}

// Error reads "redis 127.0.0.1:7001: dial tcp 127.0.0.1:7001: connect: connection refused".
func (e *NodeError) Error() string { return fmt.Sprintf("redis %s: %v", e.Addr, e.Err) }

// Unwrap returns the cause, so errors.Is(err, syscall.ECONNREFUSED) works.
func (e *NodeError) Unwrap() error { return e.Err }

// Timeout reports whether the node merely failed to answer in time (it may be slow, not
// gone), as opposed to a refused or broken connection.
func (e *NodeError) Timeout() bool {
	var ne net.Error
	return errors.Is(e.Err, context.DeadlineExceeded) || (errors.As(e.Err, &ne) && ne.Timeout())
}

// OutcomeError is the error of a Lock or Extend that the algorithm lost, or of an Unlock
// that fewer than a quorum of nodes answered. It carries the machine's outcome (reason,
// attempts, OK count) for logs and metrics, and the nodes that did not answer, so a lock
// lost to dead servers reads differently from one held by another client.
type OutcomeError struct {
	Outcome lock.Event
	Nodes   int
	// NodeErrors holds, for each node that failed to answer during the operation, its first
	// failure, in node order; empty when every node answered.
	NodeErrors []*NodeError
}

func (e *OutcomeError) Error() string {
	o := e.Outcome
	var b strings.Builder
	switch o.Kind {
	case lock.Released:
		fmt.Fprintf(&b, "redisdriver: unlock %q reached %d of %d nodes, fewer than a quorum; the others keep the key until it expires",
			o.Resource, o.Replies, e.Nodes)
	default:
		what := "lock"
		if o.Kind == lock.ExtendFailed {
			what = "extend"
		}
		fmt.Fprintf(&b, "redisdriver: %s %q failed: %v (attempt %d, %d/%d OK, %d answered)",
			what, o.Resource, o.Reason, o.Attempt, o.Votes, e.Nodes, o.Replies)
	}
	for _, ne := range e.NodeErrors {
		b.WriteString("; ")
		b.WriteString(ne.Error())
	}
	return b.String()
}

// Unwrap returns the node errors, so errors.As finds a *NodeError when servers failed.
func (e *OutcomeError) Unwrap() []error {
	errs := make([]error, len(e.NodeErrors))
	for i, ne := range e.NodeErrors {
		errs[i] = ne
	}
	return errs
}

// Is matches the operation's sentinel and the reason's sentinel.
func (e *OutcomeError) Is(target error) bool {
	switch target {
	case ErrNotAcquired:
		return e.Outcome.Kind == lock.AcquireFailed
	case ErrNotExtended:
		return e.Outcome.Kind == lock.ExtendFailed
	case ErrNotReleased:
		return e.Outcome.Kind == lock.Released
	case ErrNoQuorum:
		return e.Outcome.Reason == lock.ReasonNoQuorum
	case ErrValidityExpired:
		return e.Outcome.Reason == lock.ReasonValidityExpired
	case ErrFenceFailed:
		return e.Outcome.Reason == lock.ReasonFenceFailed
	case ErrExtensionLimit:
		return e.Outcome.Reason == lock.ReasonExtensionLimit
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
	// OnNodeError, when set, is called with every command that got no answer, also when
	// the operation succeeded without that node (a minority down) or had already ended. It
	// runs on the command's own goroutine, so it must be safe for concurrent use and quick.
	OnNodeError func(*NodeError)
}

// Client holds one go-redis client per node. It is safe for concurrent use: each Lock
// creates its own machine.
type Client struct {
	cfg         redlock.Config
	nodes       []*redis.Client
	addrs       []string
	onNodeError func(*NodeError)
	base        time.Time // origin of the monotonic readings fed to machines
}

// New connects lazily to the nodes at addrs (go-redis dials on first use). It refuses an
// empty address, which go-redis would quietly turn into localhost:6379, and an address
// given twice, which would let one server count as two votes.
func New(addrs []string, opts Options) (*Client, error) {
	if err := checkAddrs(addrs, opts.Redis); err != nil {
		return nil, err
	}
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
	c := &Client{cfg: cfg, addrs: addrs[:cfg.Nodes:cfg.Nodes], onNodeError: opts.OnNodeError, base: time.Now()}
	for _, addr := range c.addrs {
		o := defaultRedisOptions(cfg.NodeTimeout())
		if opts.Redis != nil {
			o = *opts.Redis // a shallow copy, as the template is shared by every node
		}
		o.Addr = addr
		c.nodes = append(c.nodes, redis.NewClient(&o))
	}
	return c, nil
}

// checkAddrs refuses the addresses go-redis would accept but dial somewhere unintended.
func checkAddrs(addrs []string, tmpl *redis.Options) error {
	tcp := tmpl == nil || tmpl.Network == "" || tmpl.Network == "tcp"
	seen := make(map[string]int, len(addrs))
	for i, a := range addrs {
		if strings.TrimSpace(a) == "" {
			return fmt.Errorf("redisdriver: address %d is %q; want host:port, e.g. 127.0.0.1:6379 (go-redis would dial localhost:6379)", i, a)
		}
		if tcp {
			if _, _, err := net.SplitHostPort(a); err != nil {
				return fmt.Errorf("redisdriver: address %d is %q; want host:port, e.g. 127.0.0.1:6379", i, a)
			}
		}
		if j, dup := seen[a]; dup {
			return fmt.Errorf("redisdriver: address %d is %q, the same as address %d; each node needs a server of its own", i, a, j)
		}
		seen[a] = i
	}
	return nil
}

func defaultRedisOptions(timeout time.Duration) redis.Options {
	return redis.Options{
		Protocol:              2, // RESP2: replies map onto resp.Reply without guessing
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
	m  lock.Client // the algorithm, driven through the lock-client interface
	o  lock.Event  // the last Acquired or Extended
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
	o, nerrs, err := c.drive(ctx, m, func(now time.Duration) ([]lock.Output, error) { return m.Acquire(now, resource) },
		lock.Acquired, lock.AcquireFailed, true)
	if err != nil {
		return nil, err
	}
	if o.Kind != lock.Acquired {
		return nil, &OutcomeError{Outcome: o, Nodes: c.cfg.Nodes, NodeErrors: nerrs}
	}
	return &Lease{c: c, m: m, o: o}, nil
}

// Extend resets the TTL on every node where the key is still the lease's. A lost extend
// returns an *OutcomeError matching ErrNotExtended; the lease keeps its old deadline.
// It takes at most one per-node timeout and is not cut short by ctx.
func (c *Client) Extend(ctx context.Context, l *Lease) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, nerrs, err := c.drive(ctx, l.m, l.m.Extend, lock.Extended, lock.ExtendFailed, false)
	if err != nil {
		return err
	}
	if o.Kind != lock.Extended {
		return &OutcomeError{Outcome: o, Nodes: c.cfg.Nodes, NodeErrors: nerrs}
	}
	l.o.Deadline, l.o.Validity = o.Deadline, o.Validity
	return nil
}

// Unlock deletes the key on every node where it is still the lease's. It takes at most one
// per-node timeout and is not cut short by ctx, so a cancelled caller still cleans up.
// When fewer than a quorum of nodes answer, it returns an *OutcomeError matching
// ErrNotReleased that names the silent nodes: the key lives on there until it expires, and
// nobody else can lock meanwhile.
func (c *Client) Unlock(ctx context.Context, l *Lease) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, nerrs, err := c.drive(ctx, l.m, l.m.Release, lock.Released, lock.Released, false)
	if err != nil {
		return err
	}
	if o.Replies < c.cfg.Quorum() {
		return &OutcomeError{Outcome: o, Nodes: c.cfg.Nodes, NodeErrors: nerrs}
	}
	return nil
}

type nodeReply struct {
	node  int
	req   lock.Req
	reply resp.Reply
	err   *NodeError // why there was no reply, when there was none
}

// drive feeds the machine until it reports the outcome kind ok or failed, and returns it
// with the first failure of each node that failed to answer meanwhile. With abortable, a
// done ctx aborts the operation through Release, drives the release to its end and
// returns ctx's error.
func (c *Client) drive(ctx context.Context, m lock.Client, start func(time.Duration) ([]lock.Output, error),
	ok, failed lock.EventKind, abortable bool) (lock.Event, []*NodeError, error) {
	done := make(chan struct{})
	defer close(done)
	replies := make(chan nodeReply, 2*len(c.nodes))
	fired := make(chan lock.TimerID, 1)
	timers := map[lock.TimerID]*time.Timer{}
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

	nerrs := make([]*NodeError, len(c.nodes))
	// pending is each node's command still awaiting its reply, and when it was sent. A
	// command the machine gave up on may end the operation before its own goroutine
	// notices the timeout; failures counts it all the same, so that which nodes an error
	// names does not depend on which goroutine ran first.
	type sent struct {
		req lock.Req
		at  time.Duration
	}
	pending := make([]sent, len(c.nodes))
	timeout := c.cfg.NodeTimeout()
	failures := func() []*NodeError {
		var out []*NodeError
		t := now()
		for i, ne := range nerrs {
			if ne == nil && pending[i].req != 0 && t-pending[i].at >= timeout {
				ne = c.timeoutError(i, context.DeadlineExceeded)
			}
			if ne != nil {
				out = append(out, ne)
			}
		}
		return out
	}
	outs, err := start(now())
	var ctxErr error
	for {
		if err != nil {
			return lock.Event{}, nil, err
		}
		for _, out := range outs {
			switch out.Kind {
			case lock.OutSend:
				pending[out.Node] = sent{out.Req, now()}
				go c.exec(cmdCtx, out, replies, done)
			case lock.OutSetTimer:
				id := out.Timer
				timers[id] = time.AfterFunc(out.After, func() {
					select {
					case fired <- id:
					case <-done:
					}
				})
			case lock.OutCancelTimer:
				if t, ok := timers[out.Timer]; ok {
					t.Stop()
					delete(timers, out.Timer)
				}
			case lock.OutEvent:
				k := out.Event.Kind
				if ctxErr != nil && k == lock.Released {
					return out.Event, failures(), ctxErr
				}
				if ctxErr == nil && (k == ok || k == failed) {
					return out.Event, failures(), nil
				}
			}
		}
		select {
		case r := <-replies:
			if r.err != nil && nerrs[r.node] == nil {
				nerrs[r.node] = r.err
			}
			if pending[r.node].req == r.req {
				pending[r.node] = sent{}
			}
			outs, err = m.Reply(now(), r.node, r.req, r.reply.Payload())
		case id := <-fired:
			delete(timers, id)
			outs, err = m.Timer(now(), id)
		case <-cancelled:
			ctxErr, cancelled = ctx.Err(), nil
			outs, err = m.Release(now())
		}
	}
}

// exec runs one command on its node within the per-node timeout and hands the reply back,
// unless the operation has ended meanwhile. A command with no answer is reported to
// OnNodeError even then: the server failed all the same.
func (c *Client) exec(ctx context.Context, out lock.Output, replies chan<- nodeReply, done <-chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.NodeTimeout())
	defer cancel()
	r, err := execErr(ctx, c.nodes[out.Node], resp.CommandOf(&out.Request))
	var ne *NodeError
	if err != nil && !errors.Is(err, redis.ErrClosed) { // closed by Close: ours, not the server's
		ne = &NodeError{Node: out.Node, Addr: c.addrs[out.Node], Err: err}
		if ne.Timeout() {
			ne = c.timeoutError(out.Node, err)
		}
		if c.onNodeError != nil {
			c.onNodeError(ne)
		}
	}
	select {
	case replies <- nodeReply{node: out.Node, req: out.Req, reply: r, err: ne}:
	case <-done:
	}
}

// timeoutError is the NodeError of a command node did not answer within the per-node
// timeout.
func (c *Client) timeoutError(node int, cause error) *NodeError {
	return &NodeError{Node: node, Addr: c.addrs[node],
		Err: fmt.Errorf("no answer within %v: %w", c.cfg.NodeTimeout(), cause)}
}

// Doer is what Exec needs of a go-redis client (*redis.Client, *redis.Conn, ...).
type Doer interface {
	Do(ctx context.Context, args ...any) *redis.Cmd
}

// Exec sends c and converts the answer to a resp.Reply: nil → Nil, status → ReplyStatus,
// integer → ReplyInt, bulk → ReplyBulk, a Redis error → ReplyError, and a timeout or
// connection error → NoReply. An EVALSHA that meets NOSCRIPT (a fresh or flushed script
// cache) is retried once as EVAL, which also loads the script for next time.
//
// go-redis's Do does not say whether a string was a status or a bulk reply; the commands
// Redlock sends answer bulk strings only to GET, so GET's strings are bulk and all others
// status. Use RESP2 (Protocol: 2) so that holds.
func Exec(ctx context.Context, rdb Doer, c resp.Command) resp.Reply {
	r, _ := execErr(ctx, rdb, c)
	return r
}

// execErr is Exec that also returns why a NoReply got no reply.
func execErr(ctx context.Context, rdb Doer, c resp.Command) (resp.Reply, error) {
	r, err := do(ctx, rdb, c)
	if c.Op == resp.OpEvalSHA && r.Kind == resp.ReplyError && strings.HasPrefix(r.Str, "NOSCRIPT") {
		c.Op = resp.OpEval
		r, err = do(ctx, rdb, c)
	}
	return r, err
}

func do(ctx context.Context, rdb Doer, c resp.Command) (resp.Reply, error) {
	argv := c.Args()
	args := make([]any, len(argv))
	for i, a := range argv {
		args[i] = a
	}
	v, err := rdb.Do(ctx, args...).Result()
	return convert(c.Op, v, err)
}

// convert maps go-redis's answer to a Reply, and returns the error when there was no
// answer at all.
func convert(op resp.Op, v any, err error) (resp.Reply, error) {
	if errors.Is(err, redis.Nil) {
		return resp.Nil, nil
	}
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return resp.Reply{Kind: resp.ReplyError, Str: re.Error()}, nil
		}
		return resp.NoReply, err
	}
	switch x := v.(type) {
	case nil:
		return resp.Nil, nil
	case int64:
		return resp.IntReply(x), nil
	case string:
		if op == resp.OpGet {
			return resp.Reply{Kind: resp.ReplyBulk, Str: x}, nil
		}
		return resp.Reply{Kind: resp.ReplyStatus, Str: x}, nil
	default:
		return resp.Reply{Kind: resp.ReplyError, Str: fmt.Sprintf("redisdriver: unexpected reply %T", v)}, nil
	}
}

// newRand returns a ChaCha8 stream seeded from crypto/rand, so lock values cannot be
// guessed by another client (a guessed value could release someone else's lock).
func newRand() *rand.Rand {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // crypto/rand.Read never fails since Go 1.24
	return rand.New(rand.NewChaCha8(seed))
}
