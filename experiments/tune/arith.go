package tune

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// DesignPercentile is the tail the arithmetic covers: latency, pauses and work are taken
// at their p99.9. A maximum cannot be designed for (a lognormal has none), and a p99
// would leave one hold in a hundred uncovered; what lies beyond p99.9 is what the
// confirmation by simulation measures, and reports with honest bounds.
const DesignPercentile = 99.9

// DriftMargin multiplies the clock rate error the user states. A ppm figure is a
// datasheet value or an observation, not a bound: temperature, ageing and NTP's slewing
// push a clock past it, and doubling it costs only ttl × ppm of validity.
const DriftMargin = 2.0

// MinDriftFactor is the floor of the recommended drift_factor, the 0.01 of the Redlock
// page and the libraries. Going below it saves at most 1 % of the ttl, while the ppm a
// user states rarely includes NTP's slewing or a virtual machine's clock corrections; so
// the floor stays whatever the ppm, and only clocks worse than 2,500 ppm in total
// (0.01 / DriftMargin) raise the factor above it.
const MinDriftFactor = 0.01

// RecommendedDriftPad is the recommended drift_pad. Redis keeps a key's expiry to the
// millisecond, so a key may outlive its PX by up to 1 ms; the Redlock page adds 1 ms
// more so that a short ttl, whose ttl × drift_factor rounds to nothing, still keeps an
// allowance. Both reasons stand whatever the environment, so the pad is a constant.
const RecommendedDriftPad = 2 * time.Millisecond

// TimeoutMargin multiplies the p99.9 round trip into the per-node timeout. A reply three
// times later than the designed tail is more likely from a node in trouble than from the
// network, and waiting for it only eats validity (T2 − T1 grows with the wait).
const TimeoutMargin = 3

// MinTimeout is the smallest per-node timeout recommended: the low end of the Redlock
// page's 5–50 ms for a 10 s ttl. Below it the client's own scheduling, not the network,
// decides whether a reply is in time.
const MinTimeout = 5 * time.Millisecond

// MinRetry is the smallest retry delay and jitter recommended: a timer's usual
// granularity. Zero jitter would let contending clients split the votes round after round.
const MinRetry = time.Millisecond

// ExtendDivisor sets how often a holder that must extend does so: every ttl/3. A third
// leaves two thirds of the ttl for the extension round, the drift allowance and a pause,
// and is the rhythm of Redisson's watchdog (it renews a 30 s lease every 10 s).
const ExtendDivisor = 3

// Env is the environment a lock runs in, as an operator can describe it. Distributions
// given by percentiles are fitted first (FitPercentiles); a zero Dist is the constant 0,
// meaning none (no pauses).
type Env struct {
	Nodes       int               // N, the independent Redis masters
	Persistence redis.Persistence // the nodes' durability: none, aof-everysec, aof-always
	// Latency is the one-way delay of one message between a client and a node, what the
	// latency knob draws; a ping's round trip is two of them.
	Latency        dist.Dist
	ClientDriftPPM float64   // the worst rate error of a client's clock, in ppm, either sign
	NodeDriftPPM   float64   // the worst rate error of a node's clock, in ppm, either sign
	Pause          dist.Dist // a client process's stop-the-world pauses (GC), per pause
	PauseRate      float64   // pauses per client per second
	// NodeRestartDelay is how long a crashed node stays down before it serves again;
	// RestartDelayGiven says the user stated it (a default is not theirs to be short).
	NodeRestartDelay  time.Duration
	RestartDelayGiven bool
	NodeCrashRate     float64   // power losses per node per second
	Work              dist.Dist // how long a holder uses the resource, per hold
	Clients           int       // the clients contending for the one lock
	Load              Load      // how often they want it
}

// Targets are the limits the recommendation must meet; zero means no limit.
type Targets struct {
	// AcquireP99 is the longest acceptable p99 time to acquire, retries included.
	AcquireP99 time.Duration
	// Unavailability is the longest the lock may stay taken by a holder that crashed.
	Unavailability time.Duration
	// MinSuccess is the least share of acquires that must succeed, in (0, 1]; 0 means
	// DefaultMinSuccess.
	MinSuccess float64
	// TTL, when set, pins the ttl instead of deriving it (the confirmation found this
	// one meets the targets), so that everything that depends on the ttl follows it. For a
	// lock held by a ZooKeeper session it pins the session timeout, the ttl's counterpart.
	TTL time.Duration
	// MaxIncidents is the most violation incidents per acquisition the targets allow
	// (0: none stated). Where the design percentile leaves more than MaxIncidents /
	// TargetMargin by the analytic estimates (the rarest holds and pauses outlasting the
	// validity), the ttl is raised until they meet it.
	MaxIncidents float64
}

// Step is the arithmetic behind one recommended value, one equation or reason a line.
type Step struct {
	Name  string // the knob or requirement it bounds: ttl, drift_factor, node restart delay
	Lines []string
}

// Conflict is two requirements that no setting meets together: one needs Quantity to be
// at least AtLeast, the other allows it at most AtMost.
type Conflict struct {
	Quantity string        // what both bound: "ttl", "time to acquire"
	Need     string        // the requirement behind AtLeast, in words
	AtLeast  time.Duration // Need's bound
	Limit    string        // the target behind AtMost, in words
	AtMost   time.Duration // Limit's bound
	Advice   string        // what helps where no setting of the algorithm does
	// Impossible says no value of Quantity meets Need at all (AtLeast is then not a
	// bound): a session lock's clocks so far apart that the client's readTimeout ends
	// after the leader's expiry whatever the session.
	Impossible bool
}

// By returns how far apart the two bounds are.
func (c Conflict) By() time.Duration { return c.AtLeast - c.AtMost }

func (c Conflict) String() string {
	if c.Impossible {
		return fmt.Sprintf("%s holds for no %s, and %s allows %s ≤ %v. %s", strings.TrimSuffix(c.Need, ","), c.Quantity, c.Limit, c.Quantity, c.AtMost, c.Advice)
	}
	return fmt.Sprintf("%s needs %s ≥ %v, but %s allows %s ≤ %v: %v apart. %s",
		c.Need, c.Quantity, c.AtLeast, c.Limit, c.Quantity, c.AtMost, c.By(), c.Advice)
}

// Recommendation is the algorithm's settings for an environment and its targets, each
// with the arithmetic that bounds it (Steps, in the order they were computed).
type Recommendation struct {
	TTL         time.Duration
	DriftFactor float64
	DriftPad    time.Duration
	Timeout     time.Duration // per node
	RetryDelay  time.Duration
	RetryJitter time.Duration
	Tries       int
	// Extend says the holder must extend the lock every ExtendEvery, at most
	// MaxExtensions times a hold, because its work outlasts any ttl the targets allow.
	Extend        bool
	ExtendEvery   time.Duration
	MaxExtensions int
	// Fencing says that only fencing tokens, checked by the resource, can make the
	// environment safe within the targets (see Conflicts).
	Fencing bool
	// RestartDelay is the least time a crashed node must stay down; RestartOK says
	// Env.NodeRestartDelay meets it.
	RestartDelay time.Duration
	RestartOK    bool
	// Contention is the load's arithmetic behind Tries, and the rest between holds the
	// confirmation simulates.
	Contention Contention
	// UsageTail is the analytic estimate of usage overlap incidents per acquisition
	// (usageTail): what a per-year target far below what simulation can see is held to.
	UsageTail float64
	// CrashTail is the analytic estimate of validity overlaps per acquisition from masters
	// that restart empty inside a ttl (nodesStep).
	CrashTail float64
	Conflicts []Conflict
	Steps     []Step
	// Session is set for a lock held by a ZooKeeper session (Library.Session: Curator's
	// InterProcessMutex), which has no ttl, drift allowance or extension: the fields above
	// it uses are RetryDelay and Tries (its retry policy), Fencing, Contention, UsageTail,
	// Conflicts and Steps.
	Session *Session

	extendDiv int  // the library extends every ttl/extendDiv; 0: ExtendDivisor
	noExtend  bool // the library cannot extend
}

// divisor is how often, as a fraction of the ttl, the holder extends.
func (r *Recommendation) divisor() int {
	if r.extendDiv > 0 {
		return r.extendDiv
	}
	return ExtendDivisor
}

// Setting is one knob and its value, as --set NAME=VALUE takes them.
type Setting struct{ Name, Value string }

// SetFlags returns the recommendation as `run --set` flags, leaving out the extension
// knobs when the holder does not extend: they cannot change such a run, and `run`
// refuses a setting that cannot.
func (r Recommendation) SetFlags() []string {
	var out []string
	if r.Session != nil {
		for _, s := range r.Knobs() {
			out = append(out, "--set "+s.Name+"="+s.Value)
		}
		return out
	}
	for _, s := range r.Knobs() {
		if !r.Extend && (s.Name == "extend_every" || s.Name == "max_extensions") {
			continue
		}
		out = append(out, "--set "+s.Name+"="+s.Value)
	}
	return out
}

// Knobs returns the recommendation as knob settings, in a fixed order, for a confirmation
// sweep or a user's --set flags. Fencing is left out: which token source to trust is the
// caller's choice, and the simulator's Redis-backed tokens are not guaranteed to grow.
func (r Recommendation) Knobs() []Setting {
	if r.Session != nil {
		return r.sessionKnobs()
	}
	return []Setting{
		{"ttl", r.TTL.String()},
		{"drift_factor", strconv.FormatFloat(r.DriftFactor, 'g', -1, 64)},
		{"drift_pad", r.DriftPad.String()},
		{"timeout", r.Timeout.String()},
		{"retry_delay", r.RetryDelay.String()},
		{"retry_jitter", r.RetryJitter.String()},
		{"tries", strconv.Itoa(r.Tries)},
		{"extend_every", r.ExtendEvery.String()},
		{"max_extensions", strconv.Itoa(r.MaxExtensions)},
	}
}

// Lease returns what a dead holder's lock lasts by, the value the confirmation sweeps:
// the ttl, or the session timeout of a lock held by a ZooKeeper session.
func (r Recommendation) Lease() time.Duration {
	if r.Session != nil {
		return r.Session.Timeout
	}
	return r.TTL
}

// LeaseKnob returns the knob Lease is: ttl, or session_timeout.
func (r Recommendation) LeaseKnob() string {
	if r.Session != nil {
		return "session_timeout"
	}
	return "ttl"
}

// withLease returns r with its lease set to d (the ttl, or the session timeout in a
// copy of the session, so that r's own is left alone).
func (r Recommendation) withLease(d time.Duration) Recommendation {
	if r.Session != nil {
		s := *r.Session
		s.Timeout = d
		r.Session = &s
		return r
	}
	r.TTL = d
	return r
}

// Recommend computes the settings for e and t from first principles, in dependency
// order: drift_factor and drift_pad from the clocks, the per-node timeout from the
// latency, retry delay and jitter from the latency and the contention, the ttl (and
// extension) from the work, the pauses and the unavailability target, the node restart
// delay from the persistence and the ttl, and the tries from the time-to-acquire target.
// Bad input is an *InputError; targets that cannot all be met are not an error but
// Conflicts, with the closest settings still given.
func Recommend(e Env, t Targets) (Recommendation, error) { return RecommendFor(e, t, Library{}) }

// RecommendFor is Recommend for a library that fixes some knobs (LibraryFor): each
// fixed value replaces the arithmetic's as soon as the step that sets it is done, with a
// line saying so, so that the ttl and the tries are worked out for what the library will
// really run. The zero Library fixes nothing.
func RecommendFor(e Env, t Targets, lib Library) (Recommendation, error) {
	if err := e.validate(); err != nil {
		return Recommendation{}, err
	}
	if err := t.validate(); err != nil {
		return Recommendation{}, err
	}
	if t.MinSuccess == 0 {
		t.MinSuccess = DefaultMinSuccess
	}
	if lib.Session {
		return recommendSession(e, t)
	}
	var r Recommendation
	var lines []string
	var err error
	with := func(lines []string, more ...string) []string {
		for _, l := range more {
			if l != "" {
				lines = append(lines, l)
			}
		}
		return lines
	}
	r.DriftFactor, lines = DriftFactor(e.ClientDriftPPM, e.NodeDriftPPM)
	r.Steps = append(r.Steps, Step{"drift_factor", with(lines, pin(lib, "drift_factor", &r))})
	r.DriftPad = RecommendedDriftPad
	r.Steps = append(r.Steps, Step{"drift_pad", with([]string{
		fmt.Sprintf("drift_pad = %v: Redis keeps expiries to the millisecond (a key may outlive its PX by 1ms), plus 1ms so that a short ttl keeps an allowance however small ttl × drift_factor is", r.DriftPad)},
		pin(lib, "drift_pad", &r))})
	r.Timeout, lines = nodeTimeout(e)
	r.Steps = append(r.Steps, Step{"timeout", lines})
	r.RetryDelay, r.RetryJitter, lines = retry(e)
	lines = with(lines, pin(lib, "retry_delay", &r), pin(lib, "retry_jitter", &r), tie(lib, &r))
	if r.RetryJitter == 0 && e.Clients > 1 {
		lines = append(lines, fmt.Sprintf("with no jitter, %d clients that lose a round together retry together and may split the votes again, round after round: the confirmation counts split-brain rounds", e.Clients))
	}
	r.Steps = append(r.Steps, Step{"retry_delay and retry_jitter", lines})
	lines = with(extendRules(lib, &r), ttl(e, t, &r)...)
	r.Steps = append(r.Steps, Step{"ttl", lines})
	r.RestartDelay, r.RestartOK, lines = restartDelay(e, r.TTL)
	r.Steps = append(r.Steps, Step{"node restart delay", lines})
	if lines, err = tries(e, t, &r); err != nil {
		return Recommendation{}, err
	}
	r.Steps = append(r.Steps, Step{"tries", with(lines, pin(lib, "tries", &r))})
	r.UsageTail, lines = usageTail(e, r)
	r.Steps = append(r.Steps, Step{"usage overlap incidents, analytically", lines})
	r.CrashTail, lines = nodesStep(e, r)
	r.Steps = append(r.Steps, Step{"nodes and crashes", lines})
	if t.TTL == 0 && !r.Fencing && t.MaxIncidents > 0 && r.UsageTail+r.CrashTail > t.MaxIncidents/TargetMargin {
		return raiseTTL(e, t, lib, r)
	}
	return r, nil
}

func (e Env) validate() error {
	switch {
	case e.Nodes < 1 || e.Nodes > redlock.MaxNodes:
		return &InputError{"--nodes", strconv.Itoa(e.Nodes), fmt.Sprintf("the number of nodes must be a whole number from 1 to %d", redlock.MaxNodes)}
	case e.Clients < 1 || e.Clients > knobs.MaxClients:
		return &InputError{"--clients", strconv.Itoa(e.Clients), fmt.Sprintf("the number of contending clients must be a whole number from 1 to %d", knobs.MaxClients)}
	case e.Persistence > redis.PersistAOFAlways:
		return &InputError{"--persistence", e.Persistence.String(), "want none, aof-everysec or aof-always"}
	case e.NodeRestartDelay < 0 || e.NodeRestartDelay > dist.MaxDuration:
		return &InputError{"--restart-delay", e.NodeRestartDelay.String(), fmt.Sprintf("want a duration from 0s to %v", dist.MaxDuration)}
	}
	for _, c := range []struct {
		field string
		ppm   float64
	}{{"--client-drift-ppm", e.ClientDriftPPM}, {"--node-drift-ppm", e.NodeDriftPPM}} {
		if !(c.ppm >= 0 && c.ppm <= knobs.MaxSpreadPPM) {
			return &InputError{c.field, strconv.FormatFloat(c.ppm, 'g', -1, 64),
				fmt.Sprintf("a clock's rate error in ppm must be from 0 to %d (10 %%, already a broken clock)", knobs.MaxSpreadPPM)}
		}
	}
	if l := e.Load.PerSecond; !(l >= 0 && l <= MaxPerSecond) {
		return &InputError{"--acquisitions-per-second", strconv.FormatFloat(l, 'g', -1, 64), fmt.Sprintf("a rate from 0 (not given) to %g", float64(MaxPerSecond))}
	}
	if e.Load.PerSecond > 0 && e.Load.ThinkGiven {
		return &InputError{"--think", knobs.FormatDist(e.Load.Think), "give the load as --acquisitions-per-second or as --think, not both: each implies the other"}
	}
	for _, d := range []struct {
		field string
		d     dist.Dist
	}{{"--latency", e.Latency}, {"--pauses", e.Pause}, {"--work", e.Work}, {"--think", e.Load.Think}} {
		if err := d.d.Validate(d.field); err != nil {
			return &InputError{d.field, knobs.FormatDist(d.d), err.Error()}
		}
	}
	return nil
}

func (t Targets) validate() error {
	for _, c := range []struct {
		field string
		d     time.Duration
	}{{"--max-acquire-p99", t.AcquireP99}, {"--max-unavailability", t.Unavailability}} {
		if c.d < 0 || c.d > dist.MaxDuration {
			return &InputError{c.field, c.d.String(), fmt.Sprintf("want a duration from 0s (no limit) to %v", dist.MaxDuration)}
		}
	}
	if !(t.MaxIncidents >= 0 && t.MaxIncidents <= 1) {
		return &InputError{"--max-violations-per-10k", strconv.FormatFloat(t.MaxIncidents*Per10k, 'g', -1, 64), "a rate from 0 to 10,000 per 10,000"}
	}
	if !(t.MinSuccess >= 0 && t.MinSuccess <= 1) {
		return &InputError{"--min-success", strconv.FormatFloat(t.MinSuccess, 'g', -1, 64), "a share of acquires from 0 (the default, 0.99) to 1, e.g. 0.99"}
	}
	return nil
}

// DriftFactor returns the drift_factor for clocks whose rates err by at most clientPPM
// and nodePPM (parts per million, either sign), with its arithmetic. The validity is
// timed on the client's clock while the key expires on the node's, so what must be
// covered is their worst relative rate difference, the sum of the two errors; it is
// doubled (DriftMargin) and never set below MinDriftFactor. Clocks drifting 2 % (20,000
// ppm) give 0.04. Negative or NaN ppm count as 0; the result stays below the knob's 0.5
// for any ppm up to knobs.MaxSpreadPPM.
func DriftFactor(clientPPM, nodePPM float64) (float64, []string) {
	clientPPM, nodePPM = max(clientPPM, 0), max(nodePPM, 0) // max passes NaN through
	if math.IsNaN(clientPPM) {
		clientPPM = 0
	}
	if math.IsNaN(nodePPM) {
		nodePPM = 0
	}
	total := (clientPPM + nodePPM) * 1e-6
	need := DriftMargin * total
	df := roundUpSig(max(need, MinDriftFactor), 4)
	return df, []string{
		fmt.Sprintf("the client times validity on its clock, the node expires the key on its own: their rates differ by up to %g ppm + %g ppm = %.4g of the ttl", clientPPM, nodePPM, total),
		fmt.Sprintf("with margin: %g × %.4g = %.4g (a stated ppm is a datasheet or observed value, not a bound)", DriftMargin, total, need),
		fmt.Sprintf("drift_factor = max(%.4g, %g, the Redlock page's value) = %g", need, MinDriftFactor, df),
	}
}

// designRoundTrip returns the round trip the arithmetic designs for, twice the one-way
// p99.9, with the line that says why.
func designRoundTrip(e Env) (time.Duration, string) {
	l := Percentile(e.Latency, DesignPercentile)
	rtt := 2 * l
	return rtt, fmt.Sprintf("round trip = 2 × latency p99.9 = 2 × %s = %s (it is longer only if a leg is: at most 0.2 %% of round trips)",
		FormatDuration(l), FormatDuration(rtt))
}

// nodeTimeout returns the per-node timeout: the round trip at p99.9 times TimeoutMargin,
// at least MinTimeout.
func nodeTimeout(e Env) (time.Duration, []string) {
	rtt, why := designRoundTrip(e)
	raw := max(TimeoutMargin*rtt, MinTimeout)
	to := min(roundUpDuration(raw), redlock.MaxDelay)
	return to, []string{
		why,
		fmt.Sprintf("timeout = max(%d × %s, %v) = %s → %v: a reply later than that is more likely a node in trouble than the network, and waiting for it only makes T2 − T1 longer",
			TimeoutMargin, FormatDuration(rtt), MinTimeout, FormatDuration(raw), to),
	}
}

// retry returns the retry delay and jitter. Jitter spreads the contending clients'
// retries so that one attempt and the loser's releases are over before the next begins;
// the delay keeps the earliest retry a round trip after a lost attempt.
func retry(e Env) (delay, jitter time.Duration, lines []string) {
	rtt, why := designRoundTrip(e)
	rawJ := max(time.Duration(e.Clients)*rtt, MinRetry)
	jitter = min(roundUpDuration(rawJ), redlock.MaxDelay)
	rawD := jitter + rtt
	delay = min(roundUpDuration(rawD), redlock.MaxDelay)
	return delay, jitter, []string{
		why,
		fmt.Sprintf("retry_jitter = clients × round trip = %d × %s = %s → %v: %d clients retrying at random within ±jitter land 2 × jitter / clients = 2 round trips apart on average, time for one attempt and a loser's release",
			e.Clients, FormatDuration(rtt), FormatDuration(rawJ), jitter, e.Clients),
		fmt.Sprintf("retry_delay = retry_jitter + round trip = %v + %s = %s → %v: the earliest retry (retry_delay − retry_jitter) comes a round trip after a lost attempt, when its releases have reached the nodes",
			jitter, FormatDuration(rtt), FormatDuration(rawD), delay),
	}
}

// ttl sets r's TTL and extension (and Fencing and Conflicts when the targets clash) from
// the work, the pauses and the unavailability target; r's drift, timeout and retry
// settings must be set. It returns the arithmetic.
func ttl(e Env, t Targets, r *Recommendation) []string {
	w, p := Percentile(e.Work, DesignPercentile), Percentile(e.Pause, DesignPercentile)
	el, df, pad, div := r.Timeout, r.DriftFactor, r.DriftPad, r.divisor()
	// need is the least ttl whose validity covers the pause and the acquisition, and the
	// work unless the holder extends every ttl/ExtendDivisor, which keeps that much of the
	// ttl for the time since the last extension; an extending holder also needs its
	// extension round over before the next one is due, so ttl/ExtendDivisor ≥ T2 − T1.
	need := func(pause time.Duration, extend bool) float64 {
		if extend {
			return max(float64(pause+el+pad)/(1-1.0/float64(div)-df), float64(time.Duration(div)*el))
		}
		return float64(w+pause+el+pad) / (1 - df)
	}
	lines := []string{
		fmt.Sprintf("the holder needs validity for its work (p99.9 %s) and a pause (p99.9 %s); T2 − T1 ≤ timeout = %v, because the client stops waiting for every node by then",
			FormatDuration(w), FormatDuration(p), el),
		fmt.Sprintf("MIN_VALIDITY = TTL − (T2 − T1) − (TTL × drift_factor + drift_pad) ≥ work + pause ⇒ TTL ≥ (work + pause + (T2 − T1) + drift_pad) / (1 − drift_factor) = (%s + %s + %v + %v) / (1 − %g) = %s",
			FormatDuration(w), FormatDuration(p), el, pad, df, FormatDuration(toDuration(need(p, false)))),
	}
	allowed, limitLines := unavailabilityLimit(e, t, r)
	lines = append(lines, limitLines...)
	if t.TTL > 0 {
		r.TTL = t.TTL
		lines = append(lines, fmt.Sprintf("ttl set to %v, not derived (why: below, or in the verdict)", t.TTL))
		if !r.noExtend && !fits(need(p, false), t.TTL) && fits(need(p, true), t.TTL) {
			setExtend(r, w)
			lines = append(lines, "the work does not fit in it, so the holder extends: "+extendLine(p, el, pad, df, div))
		}
		return append(lines, ttlCheck(r, w, p)...)
	}
	switch {
	case fits(need(p, false), allowed):
		r.TTL = chooseTTL(need(p, false), allowed)
	case r.noExtend:
		r.TTL = chooseTTL(need(p, false), redlock.MaxTTL)
		c := Conflict{Quantity: "ttl", Need: "covering the whole hold and a pause, since the library cannot extend,",
			AtLeast: r.TTL, Limit: "the unavailability target", AtMost: allowed,
			Advice: "A library that extends (or shorter holds) lets the ttl stay short; otherwise loosen the target."}
		r.Conflicts = append(r.Conflicts, c)
		lines = append(lines, "CONFLICT: "+c.String())
	case fits(need(p, true), allowed):
		r.TTL = chooseTTL(need(p, true), allowed)
		setExtend(r, w)
		lines = append(lines, "the work does not fit in a ttl the target allows, so the holder extends: "+extendLine(p, el, pad, df, div))
	default:
		lines = append(lines, pauseConflict(e, t, r, need, allowed)...)
	}
	return append(lines, ttlCheck(r, w, p)...)
}

// unavailabilityLimit returns the largest ttl the unavailability target allows, with its
// arithmetic: a crashed holder's keys expire a ttl later on the nodes' clocks (slower
// than true time by up to the node ppm), and a waiter takes the lock at its next retry.
func unavailabilityLimit(e Env, t Targets, r *Recommendation) (time.Duration, []string) {
	if t.Unavailability == 0 {
		return redlock.MaxTTL, []string{"no unavailability target: a crashed holder blocks the lock for up to about a ttl, whatever it is"}
	}
	slow := 1 - e.NodeDriftPPM*1e-6
	spare := t.Unavailability - r.RetryDelay - r.RetryJitter - r.Timeout
	// Floored to the millisecond: a ttl is whole milliseconds, so that is the real limit.
	allowed := time.Duration(math.Floor(float64(max(spare, 0))*slow)) / time.Millisecond * time.Millisecond
	return allowed, []string{
		"a crashed holder blocks the lock until its keys expire, a ttl later on the nodes' clocks, and a waiter gets it at its next retry: unavailability ≤ TTL / (1 − node_ppm × 1e-6) + retry_delay + retry_jitter + (T2 − T1)",
		fmt.Sprintf("unavailability ≤ %v ⇒ TTL ≤ (%v − %v − %v − %v) × (1 − %.4g) = %s",
			t.Unavailability, t.Unavailability, r.RetryDelay, r.RetryJitter, r.Timeout, e.NodeDriftPPM*1e-6, FormatDuration(allowed)),
	}
}

// chooseTTL returns the least safe ttl rounded up to a value people can read (two
// significant digits), or to the millisecond when that rounding would break the
// unavailability limit; whole milliseconds either way, because PX cannot say less.
func chooseTTL(need float64, allowed time.Duration) time.Duration {
	exact := ceilMillis(toDuration(need))
	nice := ceilMillis(roundUpDuration(toDuration(need)))
	switch {
	case nice <= allowed:
		return min(nice, redlock.MaxTTL)
	case exact <= allowed:
		return min(exact, redlock.MaxTTL)
	}
	return min(max(exact, time.Millisecond), redlock.MaxTTL)
}

// setExtend makes the holder extend every ttl/ExtendDivisor, often enough to cover a
// p99.9 hold of w.
func setExtend(r *Recommendation, w time.Duration) {
	r.Extend = true
	r.ExtendEvery = max(r.TTL/time.Duration(r.divisor())/time.Millisecond*time.Millisecond, time.Millisecond)
	n := (w + r.ExtendEvery - 1) / r.ExtendEvery
	r.MaxExtensions = int(min(n, redlock.MaxExtensions))
}

// pauseConflict records that no ttl the unavailability target allows covers the pauses,
// even with extension, and falls back on fencing: with tokens checked by the resource,
// the validity need not cover a pause, and the ttl can meet the target.
func pauseConflict(e Env, t Targets, r *Recommendation, need func(time.Duration, bool) float64, allowed time.Duration) []string {
	p := Percentile(e.Pause, DesignPercentile)
	w := Percentile(e.Work, DesignPercentile)
	limit := fmt.Sprintf("the unavailability target of %v after a holder crashes", t.Unavailability)
	if t.Unavailability == 0 {
		limit = "the ttl knob's limit"
	}
	c := Conflict{
		Quantity: "ttl",
		Need:     fmt.Sprintf("covering pauses of %s (pause p99.9), even extending every ttl/%d,", FormatDuration(p), r.divisor()),
		AtLeast:  ceilMillis(toDuration(need(p, true))),
		Limit:    limit,
		AtMost:   allowed,
		Advice: "No ttl protects against a pause longer than the validity left: the holder wakes up believing it still holds the lock (Kleppmann's argument). " +
			"Fencing tokens, checked by the resource on every write, make such a pause safe, and only they do; with them the ttl need not cover the pause.",
	}
	if p == 0 { // no pauses: the acquisition round itself does not fit
		c.Need = fmt.Sprintf("the acquisition round (T2 − T1 up to the %v timeout) and drift_pad", r.Timeout)
		c.Advice = "A faster network or nodes closer to the clients shorten the round; no setting of the algorithm does."
	}
	r.Conflicts = append(r.Conflicts, c)
	r.Fencing = p > 0
	lines := []string{"CONFLICT: " + c.String()}
	switch {
	case p == 0:
		r.TTL = chooseTTL(need(0, true), allowed)
		setExtend(r, w)
		return append(lines, fmt.Sprintf("ttl = %v, the least that leaves any validity, extending every ttl/%d; the unavailability target is missed by %v", r.TTL, r.divisor(), c.By()))
	case fits(need(0, false), allowed):
		r.TTL = chooseTTL(need(0, false), allowed)
		return append(lines, fmt.Sprintf("with fencing, ttl covers work, T2 − T1 and drift_pad only: ttl = %v", r.TTL))
	case fits(need(0, true), allowed):
		r.TTL = chooseTTL(need(0, true), allowed)
		setExtend(r, w)
		return append(lines, "with fencing the ttl need not cover the pause, and the holder extends: "+extendLine(0, r.Timeout, r.DriftPad, r.DriftFactor, r.divisor()))
	}
	r.TTL = chooseTTL(need(0, true), allowed)
	setExtend(r, w)
	r.Conflicts = append(r.Conflicts, Conflict{
		Quantity: "ttl", Need: fmt.Sprintf("the acquisition round (T2 − T1 up to the %v timeout) and drift_pad, even with fencing,", r.Timeout),
		AtLeast: r.TTL, Limit: c.Limit, AtMost: allowed,
		Advice: "A faster network or nodes closer to the clients shorten the round; no setting of the algorithm does.",
	})
	return append(lines, fmt.Sprintf("even with fencing the round does not fit: ttl = %v, extending every ttl/%d; the unavailability target is missed", r.TTL, r.divisor()))
}

// extendLine is the arithmetic of an extending holder's ttl: after an extension round
// starts it relies on the old validity for ttl/ExtendDivisor + (T2 − T1) + a pause, and
// its round must be over before the next is due.
func extendLine(p, el, pad time.Duration, df float64, div int) string {
	byPause := float64(p+el+pad) / (1 - 1.0/float64(div) - df)
	return fmt.Sprintf("every ttl/%d, relying on the old validity for ttl/%d + (T2 − T1) + pause ⇒ TTL ≥ max((pause + (T2 − T1) + drift_pad) / (1 − 1/%d − drift_factor), %d × (T2 − T1)) = max((%s + %v + %v) / %.4g, %d × %v) = %s",
		div, div, div, div, FormatDuration(p), el, pad, 1-1.0/float64(div)-df, div, el,
		FormatDuration(toDuration(max(byPause, float64(time.Duration(div)*el)))))
}

func fits(ns float64, allowed time.Duration) bool { return ns <= float64(allowed) }

// ttlCheck shows the Redlock page's MIN_VALIDITY for the chosen ttl, against what it must
// cover.
func ttlCheck(r *Recommendation, w, p time.Duration) []string {
	drift := time.Duration(math.Ceil(float64(r.TTL)*r.DriftFactor)) + r.DriftPad
	valid := r.TTL - r.Timeout - drift
	covers, what := w+p, "work + pause"
	between := fmt.Sprintf("ttl/%d between extensions", r.divisor())
	switch {
	case r.Extend && r.Fencing:
		covers, what = r.ExtendEvery, between+" (pauses left to fencing)"
	case r.Extend:
		covers, what = r.ExtendEvery+p, between+" + pause"
	case r.Fencing:
		covers, what = w, "work (pauses left to fencing)"
	}
	mark := "✓"
	if valid < covers {
		mark = "✗"
	}
	lines := []string{
		fmt.Sprintf("ttl = %v; MIN_VALIDITY = TTL − (T2 − T1) − CLOCK_DRIFT = %v − %v − (%v × %g + %v) = %s ≥ %s = %s %s",
			r.TTL, r.TTL, r.Timeout, r.TTL, r.DriftFactor, r.DriftPad, FormatDuration(valid), what, FormatDuration(covers), mark),
		fmt.Sprintf("the per-node timeout is %.2g %% of the ttl (the Redlock page: 5–50 ms for a 10 s ttl, 0.05–0.5 %%)", 100*float64(r.Timeout)/float64(r.TTL)),
	}
	if r.Extend {
		lines = append(lines, fmt.Sprintf("extend every %v (ttl/%d, rounded down to the ms), at most %d times: enough for a hold of %s (work p99.9)",
			r.ExtendEvery, r.divisor(), r.MaxExtensions, FormatDuration(w)))
	}
	return lines
}

// restartDelay returns how long a crashed node must stay down, whether the environment's
// restart delay meets it, and why. A node that lost its keys and serves again before the
// locks it granted have expired can grant one of them a second time (the Redlock page's
// delayed restarts); a lock's validity ends at most a ttl after the node set its key,
// whatever extensions preceded the crash.
func restartDelay(e Env, ttl time.Duration) (time.Duration, bool, []string) {
	var why string
	switch e.Persistence {
	case redis.PersistAOFAlways:
		return 0, true, []string{fmt.Sprintf("persistence aof-always: every acknowledged SET is on disk before its reply, so a restarted node remembers every lock it granted; no delay is needed (given %v)", e.NodeRestartDelay)}
	case redis.PersistAOFEverySec:
		why = "persistence aof-everysec: a power loss loses the writes since the last fsync (up to about a second), so a restarted node may have forgotten a lock it granted"
	default:
		why = "persistence none: a restarted node comes back empty, having forgotten every lock it granted"
	}
	lines := []string{why,
		fmt.Sprintf("it must stay down until those locks have expired: restart delay ≥ ttl = %v (delayed restarts)", ttl)}
	ok := e.NodeRestartDelay >= ttl
	if ok {
		return ttl, true, append(lines, fmt.Sprintf("given %v ≥ %v ✓", e.NodeRestartDelay, ttl))
	}
	if !e.RestartDelayGiven && e.NodeCrashRate == 0 {
		return ttl, true, append(lines, fmt.Sprintf("no restart delay or crash rate given: keep a crashed node down at least %v (the simulation's %v is a default, not yours)", ttl, e.NodeRestartDelay))
	}
	return ttl, false, append(lines, fmt.Sprintf("given %v < %v ✗: short by %v; keep a crashed node down at least %v, or use aof-always", e.NodeRestartDelay, ttl, ttl-e.NodeRestartDelay, ttl))
}

// tries sets r's Tries from the load: enough that a waiter gives up no more often than
// the success target allows, each try refused with the probability the load gives
// (contention). It records a Conflict when no number of tries meets the target, or when
// the wait the load implies is longer than the acquire p99 target. r's timeout and retry
// settings must be set.
func tries(e Env, t Targets, r *Recommendation) ([]string, error) {
	c, lines, err := contention(e, r)
	if err != nil {
		return nil, err
	}
	r.Contention = c
	n := triesFor(c.Refusal, t.MinSuccess)
	r.Tries = min(n, MaxUsefulTries)
	lines = append(lines, fmt.Sprintf("a waiter gives up when every try is refused, with probability %.3g^tries; the success target %g allows %.3g ⇒ tries = ⌈ln %.3g / ln %.3g⌉ = %d",
		c.Refusal, t.MinSuccess, 1-t.MinSuccess, 1-t.MinSuccess, c.Refusal, r.Tries))
	if n > MaxUsefulTries {
		cf := Conflict{Quantity: "tries", Need: fmt.Sprintf("getting a waiter in %g of the time, with each try refused with probability %.3g,", t.MinSuccess, c.Refusal),
			AtLeast: time.Duration(n), Limit: "what retries can do", AtMost: MaxUsefulTries,
			Advice: "The lock is too busy for retries to fix: lower the load, shorten the holds, or split the lock (one lock per resource)."}
		r.Conflicts = append(r.Conflicts, cf)
		lines = append(lines, fmt.Sprintf("CONFLICT: more than %d tries would be needed: the lock is too busy for retries to fix; lower the load, shorten the holds, or split the lock", MaxUsefulTries))
	}
	// The p99 wait: the tries refused before the one that gets in, at 99 %.
	refused99 := max(triesFor(c.Refusal, 0.99)-1, 0)
	wait99 := time.Duration(refused99) * c.Cost
	lines = append(lines, fmt.Sprintf("time to acquire p99 ≈ (⌈ln 0.01 / ln %.3g⌉ − 1) refused tries × s = %d × %s = %s",
		c.Refusal, refused99, FormatDuration(c.Cost), FormatDuration(wait99)))
	rtt, why := designRoundTrip(e)
	if t.AcquireP99 > 0 && t.AcquireP99 < rtt {
		cf := Conflict{Quantity: "time to acquire", Need: "one quorum round trip (2 × latency p99.9)", AtLeast: rtt,
			Limit: "the acquire p99 target", AtMost: t.AcquireP99,
			Advice: "A faster network or nodes closer to the clients shorten the round; no setting of the algorithm does."}
		r.Conflicts = append(r.Conflicts, cf)
		lines = append(lines, why, "CONFLICT: "+cf.String())
	} else if t.AcquireP99 > 0 && wait99 > t.AcquireP99 {
		lines = append(lines, fmt.Sprintf("note: the load makes waiters wait about %s at p99, longer than the %v target; the confirmation will show it: a lower load, fewer clients or shorter holds help, tries do not",
			FormatDuration(wait99), t.AcquireP99))
	}
	return lines, nil
}

// roundUpDuration rounds d up to two significant digits (1.732s → 1.8s, 50.88ms → 51ms):
// values people can read and retype, never below what the arithmetic asked for.
func roundUpDuration(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	p := time.Duration(1)
	for d/p >= 100 {
		p *= 10
	}
	if d%p == 0 {
		return d
	}
	return (d/p + 1) * p
}

// ceilMillis rounds d up to the millisecond.
func ceilMillis(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1) / time.Millisecond * time.Millisecond
}

// roundUpSig rounds x > 0 up to digits significant digits, so that a factor is never
// printed smaller than the arithmetic asked for. A relative 1e-12 is forgiven first, so
// that x one ulp above its decimal (2 × 0.02) stays that decimal; the result is an
// integer times or over an exact power of ten, so it prints as the decimal it means.
func roundUpSig(x float64, digits int) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return x
	}
	x *= 1 - 1e-12
	e := digits - int(math.Ceil(math.Log10(x)))
	if e >= 0 {
		p := math.Pow10(e)
		return math.Ceil(x*p) / p
	}
	p := math.Pow10(-e)
	return math.Ceil(x/p) * p
}
