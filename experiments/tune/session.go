package tune

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/model/zookeeper"
)

// This file is tune's arithmetic for a lock held by a ZooKeeper session (Curator's
// InterProcessMutex, client=curator). Such a lock has no ttl, drift allowance or
// extension: its node lives as long as the session, which the leader expires after a
// session timeout of silence on its own clock, and the client gives its server up after
// two thirds of that timeout of silence (docs/zookeeper.md, Sessions and The client's
// session). So the session timeout plays the ttl's role, and the rest follows from it.

// Session is the part of a Recommendation that only a lock held by a ZooKeeper session
// has: the session and connection timeouts Curator asks for, what the application does
// at SUSPENDED, the fencing token it passes, and the ensemble's zoo.cfg settings when the
// recommended session needs another tick or a longer maximum. Recommendation.RetryDelay
// and Tries are its ExponentialBackoffRetry(baseSleepTimeMs, maxRetries + 1).
type Session struct {
	Timeout           time.Duration // session_timeout: asked for, and granted by the ensemble
	ConnectionTimeout time.Duration
	OnSuspended       string // stop or carry-on, the on_suspended knob's values
	FenceToken        string // none or czxid, the fence_token knob's values
	// TickTime is zoo.cfg's tickTime; InitLimit and SyncLimit (in ticks) keep their
	// default lengths in time when it is not ZooKeeper's default (TickChanged).
	TickTime             time.Duration
	InitLimit, SyncLimit int
	TickChanged          bool
	// MaxSessionTimeout is zoo.cfg's maxSessionTimeout when Timeout is beyond 20 ticks
	// (0: ZooKeeper's default, 20 ticks, suffices).
	MaxSessionTimeout time.Duration
	// Unavailability is the longest a dead holder keeps the lock, by the arithmetic.
	Unavailability time.Duration
}

// The ZooKeeper client's constants the arithmetic uses (docs/zookeeper.md, The client's
// session): the cleanup sleep after a connection is given up, before SUSPENDED; the
// pause under a second before the next server is tried.
const (
	zkCleanup        = zookeeper.CleanupSleep
	zkReconnectPause = time.Second
)

// MinCuratorTries is the least tries recommended for Curator: its documentation's
// ExponentialBackoffRetry(1000, 3). A rolling restart of the ensemble disconnects every
// client once per server, and any operation may meet one of those losses.
const MinCuratorTries = 4

// sessionTicks are the tickTimes the arithmetic tries, ZooKeeper's default first: a
// shorter tick only where the recommended session needs it (below 2 ticks, or its
// expiry bucket too coarse for the unavailability target). Each keeps initLimit and
// syncLimit within the knobs' 1000 ticks.
var sessionTicks = []time.Duration{2 * time.Second, time.Second, 500 * time.Millisecond,
	200 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond}

// sessionKnobs returns a session recommendation as knob settings, in a fixed order: the
// recipe's, then the ensemble's where they change.
func (r Recommendation) sessionKnobs() []Setting {
	s := r.Session
	out := []Setting{
		{"session_timeout", s.Timeout.String()},
		{"connection_timeout", s.ConnectionTimeout.String()},
		{"retry_delay", r.RetryDelay.String()},
		{"tries", strconv.Itoa(r.Tries)},
		{"on_suspended", s.OnSuspended},
	}
	if s.FenceToken != "" && s.FenceToken != "none" {
		out = append(out, Setting{"fence_token", s.FenceToken})
	}
	if s.TickChanged {
		out = append(out, Setting{"zk_tick_time", s.TickTime.String()}, Setting{"zk_init_limit", strconv.Itoa(s.InitLimit)},
			Setting{"zk_sync_limit", strconv.Itoa(s.SyncLimit)})
	}
	if s.MaxSessionTimeout > 0 {
		out = append(out, Setting{"zk_max_session_timeout", s.MaxSessionTimeout.String()})
	}
	return out
}

// sessionClocks returns the rate errors, with DriftMargin, of the leader's clock (which
// expires sessions) and of the client's (which counts its server's silence).
func sessionClocks(e Env) (leader, client float64, lines []string) {
	leader = DriftMargin * max(e.NodeDriftPPM, 0) * 1e-6
	client = DriftMargin * max(e.ClientDriftPPM, 0) * 1e-6
	return leader, client, []string{fmt.Sprintf("the leader expires sessions on its own monotonic clock, the client counts its server's silence on its own: with margin (× %g) their rates err by ε_l = %.4g and ε_c = %.4g",
		DriftMargin, leader, client)}
}

// pingGap is the longest a connected, idle client goes between touches of its session:
// what ZooKeeper's client waits before it pings with a read timeout of two thirds of the
// session (model/zookeeper PingAfter).
func pingGap(timeout time.Duration) time.Duration { return zookeeper.PingAfter(timeout * 2 / 3) }

// sessionBounds are the session timeouts the safety and availability arithmetic allows.
type sessionBounds struct {
	partition, pause, serverLoss float64 // lower bounds, ns (+Inf: none possible)
	lines                        []string
}

// lowerBounds works out the least session timeouts for e: a partitioned holder must stop
// at SUSPENDED before the leader expires its session; a holder paused past its server's
// silence must too; and a client whose server loses power should reach another before
// its session expires (so the lock is not lost for nothing).
func lowerBounds(e Env, el, ec float64) sessionBounds {
	d := Percentile(e.Latency, DesignPercentile)
	p := Percentile(e.Pause, DesignPercentile)
	silence := 1/(1+el) - 2/(3*(1-ec)) // the leader's expiry less the client's readTimeout, per unit of T
	var b sessionBounds
	b.partition, b.serverLoss, b.pause = math.Inf(1), math.Inf(1), 0
	if silence > 1e-9 { // rounding leaves a hair where the clocks eat it all
		b.partition = float64(d+zkCleanup) / silence
		b.serverLoss = float64(zkCleanup+zkReconnectPause+3*d) / silence
	}
	b.lines = []string{
		fmt.Sprintf("a partitioned holder last hears its server at h, a one-way delay (p99.9 d = %s) after the server touched its session at t ≥ h − d; it gives the server up after readTimeout = 2T/3 of silence on its clock and says SUSPENDED %v (the cleanup sleep) later, where on_suspended=stop stops it; the leader expires the session at ⌊(t + T)/tick + 1⌋ × tick > t + T on its clock",
			FormatDuration(d), zkCleanup),
		fmt.Sprintf("stop before expiry ⇒ T/(1 + ε_l) − 2T/(3(1 − ε_c)) ≥ d + cleanup ⇒ T ≥ (%s + %v) / %.4g = %s",
			FormatDuration(d), zkCleanup, silence, formatBound(b.partition)),
	}
	if p > 0 {
		// A pause that begins just before a ping is due: the last touch was a ping gap and
		// a delay before; on waking the client finds its server silent past readTimeout
		// and says SUSPENDED a cleanup sleep later. The gap is at most T/3.
		if rest := 1/(1+el) - 1.0/3; rest > 0 {
			b.pause = float64(p+d+zkCleanup) / rest
		} else {
			b.pause = math.Inf(1)
		}
		b.lines = append(b.lines,
			fmt.Sprintf("a pause of the holder (p99.9 P = %s) that begins just before a ping is due: the last touch was up to a ping gap (≤ T/3: readTimeout/2, less a second past 6s) and d before; on waking the client finds its server silent and says SUSPENDED a cleanup sleep later",
				FormatDuration(p)),
			fmt.Sprintf("stop before expiry ⇒ P + T/3 + d + cleanup ≤ T/(1 + ε_l) ⇒ T ≥ (%s + %s + %v) / (1/(1 + ε_l) − 1/3) = %s; a longer pause breaks the lock whatever the application does: only a fencing token keeps the data safe",
				FormatDuration(p), FormatDuration(d), zkCleanup, formatBound(b.pause)))
	}
	b.lines = append(b.lines, fmt.Sprintf("a server's power loss: its client hears nothing for readTimeout, sleeps %v, pauses under %v and connects to the next server (a round trip); it keeps its session (and its lock node) if T/(1 + ε_l) − 2T/(3(1 − ε_c)) ≥ %v + %v + 3d ⇒ T ≥ %s (kept where the targets allow: below it a server's loss expires the holder's session, which is safe with on_suspended=stop but costs the lock)",
		zkCleanup, zkReconnectPause, zkCleanup, zkReconnectPause, formatBound(b.serverLoss)))
	return b
}

// formatBound spells a bound in ns, infinity as "none possible".
func formatBound(ns float64) string {
	if math.IsInf(ns, 1) || ns > float64(knobs.MaxZKWait) {
		return "none possible (the clocks' error eats the whole margin)"
	}
	return FormatDuration(toDuration(ns))
}

// sessionUnavailability returns the longest a dead holder keeps the lock with a session
// of timeout on an ensemble ticking every tick: until its session expires, the expiry
// bucket and a follower's late touch included, on a leader's clock slow by el, and then
// the closeSession commit and the next waiter's wake-up.
func sessionUnavailability(e Env, timeout, tick time.Duration, el float64) time.Duration {
	d := Percentile(e.Latency, DesignPercentile)
	fsync := zookeeper.DefaultConfig().Fsync
	return toDuration(float64(timeout+3*tick/2)/(1-el)) + 5*d + fsync
}

// maxSessionFor returns the longest session timeout, whole milliseconds, that keeps the
// unavailability within u on an ensemble ticking every tick (MaxZKWait: no target).
func maxSessionFor(e Env, u, tick time.Duration, el float64) time.Duration {
	if u == 0 {
		return knobs.MaxZKWait
	}
	d := Percentile(e.Latency, DesignPercentile)
	spare := u - 5*d - zookeeper.DefaultConfig().Fsync
	allowed := time.Duration(float64(spare)*(1-el)) - 3*tick/2
	return max(allowed/time.Millisecond*time.Millisecond, 0)
}

// recommendSession is RecommendFor for a lock held by a ZooKeeper session: the session
// timeout from the pauses, the network and the clocks (from below) and the
// unavailability target (from above), with the tick that lets the ensemble grant it; then
// the application's reaction to SUSPENDED, the fencing token, the connection timeout and
// the retry policy, the load, and the analytic estimate of the incidents a pause beyond
// the session causes.
func recommendSession(e Env, t Targets) (Recommendation, error) {
	r := Recommendation{Session: &Session{OnSuspended: "stop", FenceToken: "none"}}
	s := r.Session
	el, ec, clockLines := sessionClocks(e)
	b := lowerBounds(e, el, ec)
	lines := append(clockLines, b.lines...)
	need := max(b.partition, b.pause)
	lines = append(lines, sessionChoice(e, t, &r, b, need, el)...)
	r.Steps = append(r.Steps, Step{"session_timeout", lines})

	r.Steps = append(r.Steps, Step{"on_suspended", []string{
		"the mutex itself ignores SUSPENDED and LOST: a held lock stays held in Curator's eyes, so what the application does is the knob",
		fmt.Sprintf("carry-on works until LOST, a whole session after SUSPENDED: a partitioned holder works T = %v past SUSPENDED, while the leader expires its session about T/3 after it: another client holds for the rest, every time (the story zk-partitioned-holder)", s.Timeout),
		"on_suspended = stop: stop relying on the lock at SUSPENDED (a ConnectionStateListener), as Curator's documentation recommends; the session_timeout bounds above are what make it in time",
	}})
	r.Steps = append(r.Steps, Step{"fence_token", fenceLines(&r)})

	d := Percentile(e.Latency, DesignPercentile)
	reconnect := zkCleanup + zkReconnectPause + 2*d
	wantConn := roundUpDuration(2 * reconnect)
	s.ConnectionTimeout = ceilMillis(min(wantConn, s.Timeout))
	connLines := []string{
		fmt.Sprintf("a request sent while disconnected waits for the connection: after a server is lost the client sleeps %v, pauses under %v and connects to the next (a round trip): R = %v + %v + 2 × %s = %s",
			zkCleanup, zkReconnectPause, zkCleanup, zkReconnectPause, FormatDuration(d), FormatDuration(reconnect)),
		fmt.Sprintf("connection_timeout = 2 × R (the next server may be down too) = %s → %v, at most the session timeout (%v): past it a reconnect finds the session expired, and Curator warns when the session timeout is less than the connection timeout",
			FormatDuration(2*reconnect), s.ConnectionTimeout, s.Timeout),
	}
	if t.AcquireP99 > 0 && s.ConnectionTimeout > t.AcquireP99 {
		connLines = append(connLines, fmt.Sprintf("note: an acquire that meets a server's loss waits up to %v for the connection, longer than the acquire p99 target %v; such acquires are rare (a loss during the acquire), so the p99 rarely sees them", s.ConnectionTimeout, t.AcquireP99))
	}
	r.Steps = append(r.Steps, Step{"connection_timeout", connLines})

	retryLines, err := sessionRetry(e, t, &r)
	if err != nil {
		return Recommendation{}, err
	}
	r.Steps = append(r.Steps, Step{"retry_delay and tries (ExponentialBackoffRetry)", retryLines})

	r.Steps = append(r.Steps, Step{"ensemble", []string{
		fmt.Sprintf("%d servers, a quorum is %d: the lock stays available with up to %d down (an election when the leader goes: FastLeaderElection's %v finalizeWait and a sync, during which requests fail with CONNECTIONLOSS and the retry policy waits)",
			e.Nodes, e.Nodes/2+1, (e.Nodes-1)/2, zookeeper.DefaultConfig().FinalizeWait),
		"every acknowledged write is in the transaction log, fsynced, on a quorum before its reply: a restarted server forgets no lock node, so unlike Redis no restart delay is needed",
	}})

	var tail []string
	r.UsageTail, tail = sessionTail(e, r)
	r.Steps = append(r.Steps, Step{"usage overlap incidents, analytically", tail})
	if t.TTL == 0 && !r.Fencing && t.MaxIncidents > 0 && r.UsageTail > t.MaxIncidents/TargetMargin {
		return raiseSession(e, t, r)
	}
	return r, nil
}

// sessionChoice sets r's session timeout and the ensemble's tick (and maximum) from the
// lower bounds and the unavailability target, recording the conflicts and falling back on
// a fencing token when only the pauses do not fit. It returns the arithmetic.
func sessionChoice(e Env, t Targets, r *Recommendation, b sessionBounds, need, el float64) []string {
	s := r.Session
	var lines []string
	if t.Unavailability > 0 {
		lines = append(lines, fmt.Sprintf("a holder that dies keeps the lock until its session expires: its last touch reaches the leader up to half a tick late (a follower's touches ride its next ping), expiry is rounded up to the next tick (⌊(t + T)/tick + 1⌋ × tick ≤ t + T + tick), on the leader's clock; then closeSession commits (a quorum round trip and an fsync) and the next waiter hears its watch and lists the children: unavailability ≤ (T + 1.5 tick)/(1 − ε_l) + 5d + fsync ≤ %v (an election adds its length if the leader died too, and a waiter that died in the queue keeps the lock the same way when its turn comes: crashes close together add up)",
			t.Unavailability))
	}
	pick := func(need float64, tick time.Duration) (time.Duration, bool) {
		lo := ceilMillis(toDuration(need))
		if math.IsInf(need, 1) || lo > knobs.MaxZKWait {
			return 0, false
		}
		allowed := maxSessionFor(e, t.Unavailability, tick, el)
		want := max(lo, 2*tick)
		if soft := ceilMillis(toDuration(b.serverLoss)); !math.IsInf(b.serverLoss, 1) && soft <= allowed {
			want = max(want, soft)
		}
		nice := ceilMillis(roundUpDuration(want))
		switch {
		case nice <= allowed:
			return nice, true
		case want <= allowed:
			return want, true
		}
		return want, false
	}
	setTick := func(tick time.Duration) {
		s.TickTime = tick
		def := zookeeper.DefaultConfig()
		s.TickChanged = tick != def.TickTime
		s.InitLimit = int((time.Duration(def.InitLimit)*def.TickTime + tick - 1) / tick)
		s.SyncLimit = int((time.Duration(def.SyncLimit)*def.TickTime + tick - 1) / tick)
	}
	if t.TTL > 0 { // pinned: the coarsest tick that grants it within the target
		s.Timeout = t.TTL
		setTick(sessionTicks[len(sessionTicks)-1])
		for _, tick := range sessionTicks {
			if 2*tick <= t.TTL && (t.Unavailability == 0 || sessionUnavailability(e, t.TTL, tick, el) <= t.Unavailability) {
				setTick(tick)
				break
			}
		}
		lines = append(lines, fmt.Sprintf("session_timeout set to %v, not derived (why: below, or in the verdict)", t.TTL))
		return append(lines, sessionCheck(e, t, r, need, b.serverLoss, el)...)
	}
	for _, tick := range sessionTicks {
		if to, ok := pick(need, tick); ok {
			s.Timeout = to
			setTick(tick)
			return append(lines, sessionCheck(e, t, r, need, b.serverLoss, el)...)
		}
	}
	// No tick lets a safe session meet the target (or the knob's limit).
	smallest := sessionTicks[len(sessionTicks)-1]
	allowed := maxSessionFor(e, t.Unavailability, smallest, el)
	limit := fmt.Sprintf("the unavailability target of %v after a holder dies (with a %v tick)", t.Unavailability, smallest)
	if t.Unavailability == 0 {
		limit = "the session_timeout knob's limit"
	}
	c := Conflict{Quantity: "session_timeout", Need: "stopping a paused or partitioned holder before its session expires,",
		AtLeast: ceilMillis(toDuration(need)), Limit: limit,
		AtMost: allowed,
		Advice: "No session timeout protects against a pause longer than the session: the holder wakes believing it holds the lock while another does (Curator's tech note 10). " +
			"A fencing token, the lock node's czxid checked by the resource on every write, makes such a pause safe, and only it does; with it the session need not cover the pause."}
	if b.pause <= b.partition {
		c.Need = "stopping a partitioned holder at SUSPENDED before its session expires (the network's delay and the clocks' error),"
		c.Advice = "A faster network, better clocks, or a looser target; no setting of the lock does."
	}
	if math.IsInf(b.partition, 1) || b.partition > float64(knobs.MaxZKWait) {
		c.Impossible = true
		c.Need = fmt.Sprintf("stopping a partitioned holder at SUSPENDED before its session expires, with clocks erring ε_l = %.4g and ε_c = %.4g (the client's readTimeout, 2T/3 on its clock, ends after the leader's expiry, T on its own),", el, clientErr(e))
		c.Advice = "Better clocks (or a smaller stated drift); meanwhile only a fencing token keeps the data safe."
	}
	r.Conflicts = append(r.Conflicts, c)
	lines = append(lines, "CONFLICT: "+c.String())
	if b.pause > b.partition {
		r.Fencing, s.FenceToken = true, "czxid"
		for _, tick := range sessionTicks {
			if to, ok := pick(b.partition, tick); ok {
				s.Timeout = to
				setTick(tick)
				lines = append(lines, fmt.Sprintf("with fence_token czxid the session need not cover the pause, only the partition: session_timeout = %v", to))
				return append(lines, sessionCheck(e, t, r, b.partition, b.serverLoss, el)...)
			}
		}
		need = b.partition
	}
	if math.IsInf(need, 1) || need > float64(knobs.MaxZKWait) {
		// No session outlasts the client's readTimeout on these clocks: keep the default
		// ensemble and its longest session, and leave the data to the token.
		setTick(sessionTicks[0])
		s.Timeout = 20 * s.TickTime
		r.Fencing, s.FenceToken = true, "czxid"
		lines = append(lines, fmt.Sprintf("no session is safe in a partition with clocks this far apart: session_timeout = %v, the longest the default ensemble grants, and fence_token czxid, which alone keeps the data safe", s.Timeout))
		return append(lines, sessionCheck(e, t, r, need, b.serverLoss, el)...)
	}
	to, _ := pick(need, smallest)
	s.Timeout = max(min(to, knobs.MaxZKWait), 2*smallest)
	setTick(smallest)
	lines = append(lines, fmt.Sprintf("session_timeout = %v, the least that is safe; the unavailability target is missed", s.Timeout))
	return append(lines, sessionCheck(e, t, r, need, b.serverLoss, el)...)
}

// clientErr is the client's clock rate error, with margin (sessionClocks).
func clientErr(e Env) float64 { return DriftMargin * max(e.ClientDriftPPM, 0) * 1e-6 }

// sessionCheck shows the chosen session against its bounds, the ensemble's clamp, and the
// unavailability it gives, setting r's maximum session and unavailability.
func sessionCheck(e Env, t Targets, r *Recommendation, need, serverLoss, el float64) []string {
	s := r.Session
	mark := func(ok bool) string {
		if ok {
			return "✓"
		}
		return "✗"
	}
	s.Unavailability = sessionUnavailability(e, s.Timeout, s.TickTime, el)
	lines := []string{fmt.Sprintf("session_timeout = %v ≥ %s %s (rounded up to two significant figures where the target allows)",
		s.Timeout, formatBound(need), mark(float64(s.Timeout) >= need))}
	def := zookeeper.DefaultConfig()
	lo, hi := 2*s.TickTime, 20*s.TickTime
	clamp := fmt.Sprintf("the ensemble grants a session within [2, 20] × tickTime = [%v, %v]", lo, hi)
	switch {
	case s.TickChanged:
		lines = append(lines, fmt.Sprintf("ZooKeeper's default tickTime %v would not do (the session below 2 ticks, or the expiry bucket too coarse for the target): zoo.cfg tickTime = %v, so %s; initLimit = %d and syncLimit = %d keep their default lengths (%v and %v)",
			def.TickTime, s.TickTime, clamp, s.InitLimit, s.SyncLimit,
			time.Duration(def.InitLimit)*def.TickTime, time.Duration(def.SyncLimit)*def.TickTime))
	default:
		lines = append(lines, fmt.Sprintf("%s with ZooKeeper's default tickTime %v", clamp, s.TickTime))
	}
	if float64(s.Timeout) < serverLoss {
		lines = append(lines, fmt.Sprintf("below the %s a server's power loss needs, a holder whose server loses power loses its session (safely, with on_suspended=stop) and its place: the targets do not leave room for it", formatBound(serverLoss)))
	}
	if s.Timeout > hi {
		s.MaxSessionTimeout = s.Timeout
		lines = append(lines, fmt.Sprintf("%v is beyond 20 ticks (%v): the ensemble would cut it, so zoo.cfg maxSessionTimeout = %v", s.Timeout, hi, s.Timeout))
	}
	u := fmt.Sprintf("a dead holder keeps the lock at most (T + 1.5 tick)/(1 − ε_l) + 5d + fsync = %s", FormatDuration(s.Unavailability))
	if t.Unavailability > 0 {
		u += fmt.Sprintf(" ≤ %v %s", t.Unavailability, mark(s.Unavailability <= t.Unavailability))
	}
	return append(lines, u)
}

// fenceLines says whether the resource must check the lock node's czxid, and why.
func fenceLines(r *Recommendation) []string {
	var lines []string
	if r.Fencing {
		lines = []string{"fence_token = czxid: the pauses outlast any session the targets allow, and no setting of the lock keeps the data safe then; the lock node's czxid grows with every lock taken, so the resource, checking it on every write, refuses the paused holder's late writes"}
	} else {
		lines = []string{"fence_token = none needed by the targets: the session covers the pauses up to their p99.9; what lies beyond is the estimate below, and the czxid checked by the resource would catch it too (one exists() read per acquire)"}
	}
	return lines
}

// sessionRetry sets r's ExponentialBackoffRetry: the base from what a retry waits for (the
// client to reconnect) and the tries from how often an operation meets a connection loss,
// never below Curator's documented 3 retries; and the load for the confirmation.
func sessionRetry(e Env, t Targets, r *Recommendation) ([]string, error) {
	d := Percentile(e.Latency, DesignPercentile)
	r.RetryDelay = ceilMillis(roundUpDuration(zkCleanup + 2*d))
	// The load: Curator's waiters queue and are woken by a watch, so what a waiter pays
	// for the hand-off is a round trip, not a retry delay.
	handoff := Recommendation{}
	c, _, err := contention(e, &handoff)
	if err != nil {
		return nil, err
	}
	r.Contention = c
	outage := zkCleanup + zkReconnectPause + 2*d + zookeeper.DefaultConfig().FinalizeWait
	q := min(2*e.NodeCrashRate*outage.Seconds(), 1)
	n := triesFor(q, t.MinSuccess)
	r.Tries = min(max(n, MinCuratorTries), 30)
	lines := []string{
		fmt.Sprintf("an operation is retried on CONNECTIONLOSS, SESSIONMOVED and SESSIONEXPIRED; no retry succeeds before the client has reconnected, the cleanup sleep and a round trip: retry_delay (baseSleepTimeMs) = %v + 2 × %s → %v; the k-th retry sleeps it × max(1, random[0, 2^(k+1)))",
			zkCleanup, FormatDuration(d), r.RetryDelay),
		retryNeed(e.NodeCrashRate, outage, q, t.MinSuccess, n),
		fmt.Sprintf("tries = max(that, %d, Curator's documented ExponentialBackoffRetry(1000, 3)): a rolling restart disconnects every client once per server = %d (maxRetries %d, at most 29)", MinCuratorTries, r.Tries, r.Tries-1),
		fmt.Sprintf("the load: one hold keeps the lock for B = E[work] + 2 × RTT p50 = %s, so it is held ρ = %.3g of the time; a waiter's node watches its predecessor's and is woken by its deletion, so it waits its turn rather than retrying, and acquire() has no limit: no acquire gives up for the load, only when the retries above run out",
			FormatDuration(c.Busy), c.Utilization),
		fmt.Sprintf("the confirmation's clients rest think = %s between holds (exponential), to make the load stated", FormatDuration(Mean(c.Think))),
	}
	if c.Mode == Saturated {
		lines[len(lines)-1] = "the confirmation's clients want the lock again as soon as they release it (no load given: the most contended case)"
	}
	return lines, nil
}

// retryNeed is the line of the tries the connection losses need.
func retryNeed(rate float64, outage time.Duration, q, success float64, n int) string {
	head := fmt.Sprintf("a client loses its connection when its server or the leader goes (2 × %.3g a second), for the reconnect and an election, about %s: an operation meets a loss with probability q = %.3g",
		rate, FormatDuration(outage), q)
	if q == 0 {
		return head + " (no server crashes stated): one try would do"
	}
	return head + fmt.Sprintf(", and the success target %g needs ⌈ln %.3g / ln q⌉ = %d tries", success, 1-success, n)
}

// sessionTail estimates the usage overlap incidents per acquisition of a session lock: a
// pause that begins during a hold and outlasts what the session has left (its timeout, less
// the time since the last touch, a delay and the cleanup sleep), with another client
// asking during the hold or the overrun, queued and woken at the expiry.
func sessionTail(e Env, r Recommendation) (float64, []string) {
	s := r.Session
	if e.Clients == 1 {
		return 0, []string{"one client: nobody else can take the lock while it is paused"}
	}
	if e.PauseRate == 0 || Percentile(e.Pause, DesignPercentile) == 0 {
		return 0, []string{"no pauses stated: a holder keeps its session while it is connected, so only a partition can end it, and on_suspended=stop stops the holder first (above)"}
	}
	el := DriftMargin * max(e.NodeDriftPPM, 0) * 1e-6
	d := Percentile(e.Latency, 50)
	gap := pingGap(s.Timeout)
	k := float64(e.Clients)
	lo := 0.0
	if r.Contention.Busy > 0 {
		lo = r.Contention.Utilization / r.Contention.Busy.Seconds() * (k - 1) / k
	}
	if r.Contention.Mode == Saturated {
		lo = math.Inf(1)
	}
	work := Mean(e.Work)
	// The time since the last touch is spread over the ping gap: average over it.
	const steps = 8
	var after float64
	for i := range steps {
		since := gap * time.Duration(2*i+1) / (2 * steps)
		left := toDuration(float64(s.Timeout)/(1+el)) - since - d - zkCleanup
		after += beyond(e.Pause, left, func(p time.Duration) float64 {
			return -math.Expm1(-lo * (work + p - left).Seconds())
		})
	}
	after /= steps
	p := -math.Expm1(-e.PauseRate*work.Seconds()) * after
	return p, []string{
		fmt.Sprintf("a pause beginning during a hold (rate λ = %g a second, E[work] = %s) outlasts what the session has left, T/(1 + ε_l) − (time since the last touch, spread over the ping gap %s) − d − cleanup, and another client asked during the hold or the overrun (λ_o = ρ/B × (K − 1)/K = %.3g a second): it is queued and gets the lock at the expiry",
			e.PauseRate, FormatDuration(work), FormatDuration(gap), lo),
		fmt.Sprintf("usage overlap incidents ≈ (1 − e^(−λ × E[work])) × E[taken; pause > left] = %.3g per acquisition = %.3g per 10,000 (validity overlaps the same: the paused holder still believes it holds)", p, p*Per10k),
	}
}

// raiseSession lengthens the session until the analytic estimate meets a third of the
// violation target, within the unavailability target, or else asks for a fencing token.
func raiseSession(e Env, t Targets, r Recommendation) (Recommendation, error) {
	limit := t.MaxIncidents / TargetMargin
	el := DriftMargin * max(e.NodeDriftPPM, 0) * 1e-6
	from := r.Session.Timeout
	for to := from; to <= knobs.MaxZKWait; to = ceilMillis(roundUpDuration(to + to/10)) {
		if to > maxSessionFor(e, t.Unavailability, sessionTicks[len(sessionTicks)-1], el) {
			break // beyond what the target allows at any tick
		}
		pinned := t
		pinned.TTL = to
		alt, err := recommendSession(e, pinned)
		if err != nil {
			return Recommendation{}, err
		}
		if alt.UsageTail <= limit {
			last := &alt.Steps[len(alt.Steps)-1]
			last.Lines = append(last.Lines, fmt.Sprintf("the bounds' session %v leaves %.3g incidents per 10,000 by this estimate, more than a third of the target's %.3g (TargetMargin): raised to %v, the least (two figures) where they are %.3g",
				from, r.UsageTail*Per10k, t.MaxIncidents*Per10k, to, alt.UsageTail*Per10k))
			return alt, nil
		}
	}
	r.Fencing, r.Session.FenceToken = true, "czxid"
	r.Steps = append(r.Steps, Step{"fence_token, from the estimate", []string{fmt.Sprintf(
		"no session the targets allow brings the estimate (%.3g per 10,000) to a third of the target's %.3g: fence_token = czxid, so that the resource refuses a paused holder's late writes",
		r.UsageTail*Per10k, t.MaxIncidents*Per10k)}})
	for i := range r.Steps {
		if r.Steps[i].Name == "fence_token" {
			r.Steps[i].Lines = fenceLines(&r)
		}
	}
	return r, nil
}
