package redis

import (
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// go-redis v9.23.0's defaults, which a client built with &redis.Options{Addr: ...} runs
// with (docs/clients.md, "go-redis's retries", gives each its source line).
const (
	// goRedisReadTimeout is Options.ReadTimeout (options.go init: 0 → 5s), the wait for a
	// reply, the handshake's too.
	goRedisReadTimeout = 5 * time.Second
	// goRedisDialTimeout is Options.DialTimeout (5s), the wait for one dial's TCP
	// handshake: what a host without power costs each dial.
	goRedisDialTimeout = 5 * time.Second
	// goRedisMaxRetries is Options.MaxRetries (0 → 3): a command is tried at most 4 times.
	goRedisMaxRetries = 3
	// goRedisMinRetryBackoff and goRedisMaxRetryBackoff bound the pause before retry a
	// (internal.RetryBackoff): min + a uniform draw in [0, min << a), at most max.
	goRedisMinRetryBackoff = 10 * time.Millisecond
	goRedisMaxRetryBackoff = time.Second
	// goRedisDialerRetries is Options.DialerRetries (5): a connection is dialled at most
	// that many times, goRedisDialerRetryWait apart (DialerRetryTimeout, 100ms).
	goRedisDialerRetries   = 5
	goRedisDialerRetryWait = 100 * time.Millisecond
	// goRedisPoolSize is Options.PoolSize, 10 × GOMAXPROCS: 20 on a machine with two CPUs,
	// as the one the conformance tests run on. After that many failed dials of a pool (each
	// goRedisDialerRetries dials) it stops dialling and fails every dial at once with the
	// last error, until its background probe reaches the server (pool.go tryDial, one dial
	// every goRedisProbeEvery).
	goRedisPoolSize   = 20
	goRedisProbeEvery = time.Second
)

// goRedisConn is ConnGoRedis: go-redis v9 as a client built with its default options
// runs a command (redis.go processWithRetry, _process; internal/pool/pool.go dialConn,
// waitTurn, tryDial). One command per node at a time, as each of redsync's calls has:
//
//   - A command goes out on the node's open connection and waits goRedisReadTimeout for
//     its reply. A timeout, a reset (the server's process is gone, or its host rebooted)
//     or a failed dial is retryable: the connection is closed, and after a backoff the
//     command is tried again, on a new connection, up to goRedisMaxRetries times. A
//     timed-out command still runs if the node continues (its bytes are in the node's
//     socket), and the retry may run it again.
//   - A new connection is a dial (a bare TCP handshake: a host up answers it even while its
//     process is stalled; one whose process is gone refuses it; one without power is
//     silent until goRedisDialTimeout), tried goRedisDialerRetries times, then the HELLO
//     handshake, which waits goRedisReadTimeout. A handshake that times out is not
//     retried (the error is a timeout on a command that was never written).
//   - The request's context (lock.Output.After, from redsync's lockContext) is read only
//     at go-redis's checkpoints: taking a connection from the pool (a done context fails
//     the command before anything is sent), between dials, and during the backoff
//     before a retry. A read is never cut short by it (ContextTimeoutEnabled is off), so
//     a stalled node costs a Lock the whole read timeout; an Extend or Unlock, whose
//     context never ends, goes through every retry.
//
// The algorithm hears one answer per request: the reply, or a connection error
// (resp.NoReply) once go-redis gives up.
type goRedisConn struct {
	driverBase
	nodes []goRedisNode
}

// goRedisPhase is where a node's command is in go-redis's loop.
type goRedisPhase uint8

const (
	grIdle     goRedisPhase = iota // no command
	grBackoff                      // the pause before a retry
	grDialing                      // a dial awaits the host's answer
	grDialWait                     // the pause between two dials
	grHello                        // the new connection's handshake awaits its reply
	grCommand                      // the command is written; its reply is awaited
)

// goRedisNode is a client's pool for one node and the command under way on it.
type goRedisNode struct {
	phase   goRedisPhase
	open    bool   // a handshaken connection is idle in the pool
	fresh   bool   // the command's connection was dialled by this try
	boot    uint32 // the host boot that connection is bound to
	req     lock.Req
	body    lock.Payload
	attempt int    // retries so far (0: the first try)
	dials   int    // dials in the connection attempt under way
	wait    uint64 // the dial, handshake or command id awaited
	ctxDone bool   // the command's context has ended
	ctxEv   sim.EventID
	ev      sim.EventID // the phase's timer

	// dialErrs is the pool's count of failed connection attempts (dialErrorsNum), which
	// only its probe resets; probe is the probe's dial awaited (0: none), probeEv its timer.
	dialErrs int
	probe    uint64
	probing  bool // the probe loop runs (between its dials too)
	probeEv  sim.EventID
}

// The timers of a go-redis connection: Link.After's arg is node<<2 | one of these.
const (
	grTimerPhase = 0 // the phase's timeout or pause
	grTimerCtx   = 1 // the command's context ends
	grTimerProbe = 2 // the pool's probe: its dial's timeout, or the pause before the next
)

func newGoRedisConn(link *model.Link, n int) *goRedisConn {
	return &goRedisConn{driverBase: driverBase{link: link}, nodes: make([]goRedisNode, n)}
}

func (c *goRedisConn) Send(now sim.Time, node int, req lock.Req, p *lock.Payload, ctx time.Duration) {
	st := &c.nodes[node]
	if st.phase != grIdle { // the algorithm moved on without abandoning: forget the old one
		c.drop(node)
	}
	st.req, st.body, st.attempt, st.ctxDone = req, *p, 0, false
	if ctx > 0 {
		st.ctxEv = c.link.After(now, ctx, uint32(node)<<2|grTimerCtx)
	}
	c.try(now, node)
}

// try is one attempt at node's command: take a connection (a done context fails it
// here, before anything is sent: waitTurn), dialling one if the pool has none.
func (c *goRedisConn) try(now sim.Time, node int) {
	st := &c.nodes[node]
	switch {
	case st.ctxDone:
		c.fail(now, node)
	case st.open:
		st.fresh = false
		c.write(now, node)
	case st.dialErrs >= goRedisPoolSize: // the pool fails the dial at once, with its last error
		c.retry(now, node)
	default:
		st.dials = 0
		c.dial(now, node)
	}
}

// write sends node's command on its open connection: the algorithm's id on the first try
// (as every other connection sends it), one of the connection's own on a retry, so that
// the reply to an earlier try, read by nobody, is told apart.
func (c *goRedisConn) write(now sim.Time, node int) {
	st := &c.nodes[node]
	st.wait = uint64(st.req)
	if st.attempt > 0 {
		st.wait = c.nextID()
	}
	m := model.Request(st.wait, st.body)
	m.Conn = st.boot
	c.link.Send(node, m)
	c.enter(now, node, grCommand, goRedisReadTimeout)
}

// dial sends a bare TCP handshake to node's host.
func (c *goRedisConn) dial(now sim.Time, node int) {
	st := &c.nodes[node]
	st.dials++
	st.wait = c.nextID()
	c.link.Send(node, model.Probe(st.wait, 0))
	c.enter(now, node, grDialing, goRedisDialTimeout)
}

// dialFailed takes a refused dial, or one no host answered in time: dial again after the
// pause, or give the connection up, which fails the try with a retryable error.
func (c *goRedisConn) dialFailed(now sim.Time, node int) {
	st := &c.nodes[node]
	if st.dials < goRedisDialerRetries {
		c.enter(now, node, grDialWait, goRedisDialerRetryWait)
		return
	}
	c.dialError(now, node)
	c.retry(now, node)
}

// dialError counts a failed connection attempt against node's pool, and starts its probe
// when the count reaches the pool's size.
func (c *goRedisConn) dialError(now sim.Time, node int) {
	st := &c.nodes[node]
	if st.dialErrs++; st.dialErrs == goRedisPoolSize {
		st.probing = true
		c.probeDial(now, node)
	}
}

// dialed takes the host's answer to a dial: the connection is open, bound to the host's
// boot, and its HELLO handshake goes out.
func (c *goRedisConn) dialed(now sim.Time, node int, boot uint32) {
	st := &c.nodes[node]
	st.boot = boot
	st.wait = c.nextID()
	m := model.Request(st.wait, pingPayload())
	m.Conn = boot
	c.stats.Connects++
	c.link.Send(node, m)
	c.enter(now, node, grHello, goRedisReadTimeout)
}

// retry fails the try with a retryable error: after the backoff, try again, unless the
// retries are spent or the context is done (the backoff's sleep returns at once).
func (c *goRedisConn) retry(now sim.Time, node int) {
	st := &c.nodes[node]
	st.attempt++
	if st.attempt > goRedisMaxRetries || st.ctxDone {
		c.fail(now, node)
		return
	}
	c.stats.Resent++
	c.enter(now, node, grBackoff, c.backoff(st.attempt))
}

// backoff draws the pause before retry a, as internal.RetryBackoff does.
func (c *goRedisConn) backoff(a int) time.Duration {
	d := goRedisMinRetryBackoff + time.Duration(c.link.Rand().Int64N(int64(goRedisMinRetryBackoff<<a)))
	return min(d, goRedisMaxRetryBackoff)
}

// fail ends node's command with a connection error, the last one go-redis saw.
func (c *goRedisConn) fail(now sim.Time, node int) {
	req := c.nodes[node].req
	c.finish(node)
	c.link.Deliver(now, node, req, resp.NoReply.Payload())
}

// answered ends node's command with the server's reply r. A NOSCRIPT to an EVALSHA is
// answered as go-redis's Script.Run does: the EVAL of the same script, a command of its
// own (its own tries, the same context).
func (c *goRedisConn) answered(now sim.Time, node int, r *lock.Payload) {
	st := &c.nodes[node]
	c.link.Cancel(st.ev)
	st.ev = 0
	if noScript(r) && resp.Op(st.body.Word&0xff) == resp.OpEvalSHA {
		asEval(&st.body)
		st.attempt = 0
		c.stats.Resent++
		c.try(now, node)
		return
	}
	req := st.req
	c.finish(node)
	c.link.Deliver(now, node, req, *r)
}

// drop forgets node's command before its answer: a connection it was reading is closed
// (go-redis closes a connection whose read failed, and one a caller gave up on).
func (c *goRedisConn) drop(node int) {
	st := &c.nodes[node]
	if st.phase == grHello || st.phase == grCommand {
		st.open = false
	}
	c.finish(node)
}

// finish forgets node's command: its timers stop, and its connection, if open, goes back
// to the pool.
func (c *goRedisConn) finish(node int) {
	st := &c.nodes[node]
	c.link.Cancel(st.ev)
	c.link.Cancel(st.ctxEv)
	st.phase, st.req, st.wait, st.ev, st.ctxEv = grIdle, 0, 0, 0, 0
}

// enter moves node's command to phase p, whose timer fires after d.
func (c *goRedisConn) enter(now sim.Time, node int, p goRedisPhase, d time.Duration) {
	st := &c.nodes[node]
	c.link.Cancel(st.ev)
	st.phase = p
	st.ev = c.link.After(now, d, uint32(node)<<2|grTimerPhase)
}

func (c *goRedisConn) Abandon(_ sim.Time, node int, req lock.Req) {
	if c.nodes[node].req == req {
		c.drop(node)
	}
}

func (c *goRedisConn) Receive(now sim.Time, node int, id uint64, m *model.Message) {
	st := &c.nodes[node]
	switch {
	case m.Kind == model.MsgPush:
		c.link.Deliver(now, node, lock.PushReq, m.Body)
	case id == st.probe && st.probe != 0:
		c.probeAnswered(now, node, m)
	case id != st.wait || st.wait == 0:
		c.link.Stray() // an answer to a try go-redis gave up on: its connection is closed
	case st.phase == grDialing && m.Kind == model.MsgAck:
		c.dialed(now, node, m.Conn)
	case st.phase == grDialing && m.Kind == model.MsgReply: // refused
		c.link.Cancel(st.ev)
		c.dialFailed(now, node)
	case m.Kind != model.MsgReply:
		c.link.Stray()
	case resp.ReplyKind(m.Body.Word) == resp.ReplyNone:
		c.reset(now, node)
	case st.phase == grHello:
		st.open, st.fresh = true, true
		c.write(now, node)
	case st.phase == grCommand:
		c.answered(now, node, &m.Body)
	default:
		c.link.Stray()
	}
}

// reset takes a connection error on node's connection: its server's process is gone, or
// its host rebooted. On a connection the pool had kept, it is what the pool's health check
// finds (the peer closed it while it was idle: pool.go isHealthyConn), and the same try
// dials a new one; on one this try dialled, it is an EOF, and the try fails, retryably.
func (c *goRedisConn) reset(now sim.Time, node int) {
	st := &c.nodes[node]
	c.link.Cancel(st.ev)
	st.ev = 0
	st.open = false
	if st.phase == grCommand && !st.fresh {
		c.try(now, node)
		return
	}
	c.retry(now, node)
}

func (c *goRedisConn) Timer(now sim.Time, arg uint32) {
	node := int(arg >> 2)
	st := &c.nodes[node]
	switch arg & 3 {
	case grTimerCtx:
		st.ctxEv = 0
		c.contextDone(now, node)
	case grTimerProbe:
		st.probeEv = 0
		c.probeTimer(now, node)
	default:
		st.ev = 0
		c.phaseTimer(now, node)
	}
}

// phaseTimer is the end of node's phase: a pause over, or a wait timed out.
func (c *goRedisConn) phaseTimer(now sim.Time, node int) {
	st := &c.nodes[node]
	switch st.phase {
	case grBackoff:
		c.try(now, node)
	case grDialing:
		c.dialFailed(now, node)
	case grDialWait:
		c.dial(now, node)
	case grHello: // a timeout on a command never written: not retried
		st.open = false
		c.fail(now, node)
	case grCommand: // a read timeout: retryable
		st.open = false
		c.retry(now, node)
	}
}

// contextDone ends node's command's context. A dial under way, or the pause between
// dials, ends with it (the connection attempt fails, and the retry's sleep returns at
// once), as does the backoff before a retry; a read goes on (ContextTimeoutEnabled is
// off), and the context is checked again before the next try.
func (c *goRedisConn) contextDone(now sim.Time, node int) {
	st := &c.nodes[node]
	st.ctxDone = true
	switch st.phase {
	case grDialing, grDialWait:
		c.dialError(now, node)
		c.fail(now, node)
	case grBackoff:
		c.fail(now, node)
	}
}

// probeDial sends the pool's probe: a dial, which resets the pool's failures if a host
// answers it.
func (c *goRedisConn) probeDial(now sim.Time, node int) {
	st := &c.nodes[node]
	st.probe = c.nextID()
	c.link.Send(node, model.Probe(st.probe, 0))
	st.probeEv = c.link.After(now, goRedisDialTimeout, uint32(node)<<2|grTimerProbe)
}

// probeAnswered takes the host's answer to the probe: a connection (the pool dials
// again, and closes the probe's) or a refusal (the probe sleeps, then dials again).
func (c *goRedisConn) probeAnswered(now sim.Time, node int, m *model.Message) {
	st := &c.nodes[node]
	c.link.Cancel(st.probeEv)
	st.probe = 0
	if m.Kind == model.MsgAck {
		st.dialErrs, st.probing, st.probeEv = 0, false, 0
		return
	}
	st.probeEv = c.link.After(now, goRedisProbeEvery, uint32(node)<<2|grTimerProbe)
}

// probeTimer is the probe's dial timing out (it sleeps, then dials again) or its sleep
// ending (it dials).
func (c *goRedisConn) probeTimer(now sim.Time, node int) {
	st := &c.nodes[node]
	if st.probe != 0 {
		st.probe = 0
		st.probeEv = c.link.After(now, goRedisProbeEvery, uint32(node)<<2|grTimerProbe)
		return
	}
	if st.probing {
		c.probeDial(now, node)
	}
}

func (c *goRedisConn) Restart(sim.Time) { clear(c.nodes) } // a new process has an empty pool

// driverBase is what the retrying drivers' connections (go-redis's, redis-py's) share: the
// link to their process, the ids of their own messages (dials, handshakes, retried
// commands), and their counts.
type driverBase struct {
	link  *model.Link
	seq   uint64
	stats model.ConnStats
}

// nextID returns a new id for one of the connection's own messages.
func (d *driverBase) nextID() uint64 {
	d.seq++
	return model.ConnID | d.seq
}

func (d *driverBase) Stats() model.ConnStats { return d.stats }
