package redlock

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParamError reports a knob given a value outside what it allows. It has the same shape and
// message as sim.ParamError, so every layer names a bad knob the same way, but package
// redlock must not import the simulator, hence its own type. Callers recover it with
// errors.As.
type ParamError struct {
	Param   string // snake_case knob name, e.g. "drift_factor"
	Value   any    // the offending value
	Allowed string // the allowed range or set, e.g. "[0, 0.5)"
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s = %v: out of range, allowed %s", e.Param, e.Value, e.Allowed)
}

func badParam(param string, value any, allowed string) error {
	return &ParamError{Param: param, Value: value, Allowed: allowed}
}

// Limits on the knobs. Everything has a bound so that a typo in a sweep spec (ttl=10h
// instead of 10s, tries=1e9) is an error rather than a run that never ends.
const (
	MaxNodes         = 99
	MaxTTL           = 24 * time.Hour
	MaxDelay         = time.Hour // bound on drift_pad, retry_delay, retry_jitter, timeout
	MaxTries         = 1_000_000
	MaxExtensions    = 1_000_000
	MaxTimeoutFactor = 100.0
)

// Mode says how an acquire attempt contacts the nodes.
type Mode uint8

// The acquire modes.
const (
	// Multiplexed sends SET to all nodes at once: the Redlock page's recommendation, and what
	// redsync and node-redlock do.
	Multiplexed Mode = iota
	// Sequential sends SET to one node after another, each after the previous one answered
	// or timed out: the page's literal step 2 and antirez's redlock-rb. Time spent on the
	// early nodes eats into the validity of the whole lock. Extend, Release and the cleanup
	// after a lost attempt go to all nodes at once in both modes.
	Sequential
)

var modeNames = [...]string{Multiplexed: "multiplexed", Sequential: "sequential"}

// Modes returns every mode, in declaration order.
func Modes() []Mode { return []Mode{Multiplexed, Sequential} }

func (m Mode) String() string { return enumName(modeNames[:], int(m), "mode") }

// ParseMode returns the mode with the given name.
func ParseMode(s string) (Mode, error) {
	i, err := parseEnum(modeNames[:], "mode", s)
	return Mode(i), err
}

// MarshalText lets configuration files spell the mode by name.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses the mode's name.
func (m *Mode) UnmarshalText(b []byte) (err error) { *m, err = ParseMode(string(b)); return err }

// Fencing says whether and where an acquire takes a fencing token.
type Fencing uint8

// The fencing schemes.
const (
	// FenceNone takes no token.
	FenceNone Fencing = iota
	// FenceOne increments the fence counter on node 0 only, as the seed blog's FencedLock
	// does. Node 0 is then a single point of failure for acquiring.
	FenceOne
	// FenceMajority increments the fence counter on every node and takes the largest value
	// among at least a quorum of integer replies. The token is NOT guaranteed to grow from
	// one holder to the next: a majority that misses the node with the highest counter
	// yields a smaller token. That weakness is what the fencing experiments measure.
	FenceMajority
)

var fencingNames = [...]string{FenceNone: "none", FenceOne: "one", FenceMajority: "majority"}

// Fencings returns every fencing scheme, in declaration order.
func Fencings() []Fencing { return []Fencing{FenceNone, FenceOne, FenceMajority} }

func (f Fencing) String() string { return enumName(fencingNames[:], int(f), "fencing") }

// ParseFencing returns the fencing scheme with the given name.
func ParseFencing(s string) (Fencing, error) {
	i, err := parseEnum(fencingNames[:], "fencing", s)
	return Fencing(i), err
}

// MarshalText lets configuration files spell the scheme by name.
func (f Fencing) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText parses the scheme's name.
func (f *Fencing) UnmarshalText(b []byte) (err error) { *f, err = ParseFencing(string(b)); return err }

// FenceKey returns the key whose INCR on a node gives the fencing token of resource: the
// machine asks for it after a won round when fencing takes tokens from the nodes.
func FenceKey(resource string) string { return resource + ":fence" }

// Dialect says whose wire behaviour the machine reproduces where lock libraries that
// implement the same algorithm differ without a knob of their own: the scripts they send,
// how they spell SET's expiry, and what their fail-fast counts. The algorithm's knobs
// (ttl, drift, retries, timeouts, ...) stay separate; a client profile (the `client` knob
// of the simulator) sets both. Each dialect's rules live in a file of its own
// (dialect_redsync.go, ...), resolved once when a machine is built.
type Dialect uint8

// The dialects.
const (
	// DialectSpec is the Redlock page: SET NX PX, the page's compare-and-delete and
	// compare-and-pexpire scripts, and a fail-fast that ends a round as soon as its
	// outcome cannot change (enough successes, or too many failures of any kind, timeouts
	// and error replies included, for a quorum to remain possible).
	DialectSpec Dialect = iota
	// DialectRedsync is redsync v4.17.0 over go-redis v9: SET NX EX when the TTL is whole
	// seconds (go-redis's SetNX), else PX; redsync's own delete, touch and touch-with-SET-NX
	// scripts byte for byte (EVALSHA, then EVAL on NOSCRIPT); and redsync's fail-fast,
	// which ends a round once a quorum said yes or a quorum refused ("taken"), never
	// counting timeouts or error replies, and which applies to every round: unlock,
	// extension and the cleanup after a lost attempt too.
	DialectRedsync
	// DialectNodeRedlock is node-redlock 4.2.0 over ioredis: every command is one of its
	// own scripts (EVALSHA, then EVAL on NOSCRIPT): the acquire takes the key with its lock
	// script (EXISTS, then SET PX), which counts as a vote only when it answers 1; its
	// extend and unlock scripts likewise. The lock value is 16 random bytes in hex.
	DialectNodeRedlock
	// DialectRedlockPy is redlock-py 1.0.8 over redis-py: SET NX PX to acquire; its own
	// compare-and-delete, always by EVAL, to release; a value of 22 random letters and
	// digits; and a won attempt that saw any server error (an error reply, or no answer)
	// is given up without releasing anything (it raises MultipleRedlockException).
	DialectRedlockPy
	// DialectRedlockNet is RedLock.net 2.3.2 over StackExchange.Redis: SET NX with EX when
	// the TTL is whole seconds, else PX (SE.Redis's StringSet); its own unlock and extend
	// scripts (the extension takes a missing key back with SET PX); a value that is a
	// GUID's text.
	DialectRedlockNet
	// DialectNodeRedlock5 is node-redlock 5.0.0-beta.2 over ioredis: its own acquire,
	// extend and release scripts (EVALSHA, then EVAL on NOSCRIPT); an attempt that ends
	// as soon as a quorum voted for or a quorum voted against; no release between
	// attempts (one value for the whole acquire, whose acquire script then finds its own
	// leftover keys taken), only one release round after the last lost attempt; validity
	// counted from the start of acquire(), not of the attempt, and never checked; an
	// extension refused at once once the validity has passed; and a release retried like
	// an acquire until a quorum deleted the key.
	DialectNodeRedlock5
)

var dialectNames = [...]string{DialectSpec: "spec", DialectRedsync: "redsync", DialectNodeRedlock: "node-redlock",
	DialectRedlockPy: "redlock-py", DialectRedlockNet: "redlock-net", DialectNodeRedlock5: "node-redlock-5"}

// Dialects returns every dialect, in declaration order.
func Dialects() []Dialect {
	return []Dialect{DialectSpec, DialectRedsync, DialectNodeRedlock, DialectRedlockPy, DialectRedlockNet,
		DialectNodeRedlock5}
}

func (d Dialect) String() string { return enumName(dialectNames[:], int(d), "dialect") }

// ParseDialect returns the dialect with the given name.
func ParseDialect(s string) (Dialect, error) {
	i, err := parseEnum(dialectNames[:], "dialect", s)
	return Dialect(i), err
}

// MarshalText lets configuration files spell the dialect by name.
func (d Dialect) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses the dialect's name.
func (d *Dialect) UnmarshalText(b []byte) (err error) { *d, err = ParseDialect(string(b)); return err }

// Variant names a version of the algorithm. All but VariantRedlock are the correct machine
// with one deliberate, named deviation, kept for teaching: each shows one way real
// implementations went wrong.
type Variant uint8

// The variants.
const (
	// VariantRedlock is the algorithm as the Redlock page describes it.
	VariantRedlock Variant = iota
	// VariantSingleInstance is the single-Redis lock: the machine with one node.
	VariantSingleInstance
	// VariantSingleInstanceFailover is the same client algorithm as VariantSingleInstance;
	// the simulated world gives its one master an asynchronously replicated replica that is
	// promoted on failure. The name exists so that configurations can select that world.
	VariantSingleInstanceFailover
	// VariantSetNXThenExpire takes each node with SET NX without an expiry and sets the
	// expiry with a separate PEXPIRE after the OK, like the old SETNX + EXPIRE recipe: a
	// client that dies (or a PEXPIRE that is lost) in between leaves a key that never expires.
	VariantSetNXThenExpire
	// VariantUnsafeRelease releases with a plain DEL instead of compare-and-delete, so a
	// client whose lock expired deletes the next holder's key.
	VariantUnsafeRelease
	// VariantNoValidityCheck accepts a quorum without checking that validity is left, as
	// node-redlock v5 did: a slow acquire yields a lock that has already expired.
	VariantNoValidityCheck
	// VariantDriftIgnored leaves out the drift term (ttl × drift_factor + drift_pad), so a
	// client's validity can outlast a key on a node whose clock runs fast.
	VariantDriftIgnored
	// VariantUnlimitedExtension ignores max_extensions: a client that keeps extending can
	// hold the lock forever, which the Redlock page warns breaks liveness.
	VariantUnlimitedExtension
	// VariantReleaseLockedOnly releases (and cleans up after a lost attempt) only on the
	// nodes that answered OK to its SET, against the page's rule to unlock every
	// instance: a SET whose OK was lost on the way back leaves a key nobody deletes, which
	// blocks everyone, the same client's retries included, for a TTL.
	VariantReleaseLockedOnly
	// VariantGetThenDel releases with GET, then DEL when the value is its own, as two
	// commands instead of the compare-and-delete script: a client that pauses between
	// them deletes whatever key is there by the time its DEL arrives, the next holder's.
	VariantGetThenDel
)

var variantNames = [...]string{
	VariantRedlock:                "redlock",
	VariantSingleInstance:         "single-instance",
	VariantSingleInstanceFailover: "single-instance-failover",
	VariantSetNXThenExpire:        "setnx-then-expire",
	VariantUnsafeRelease:          "unsafe-release",
	VariantNoValidityCheck:        "no-validity-check",
	VariantDriftIgnored:           "drift-ignored",
	VariantUnlimitedExtension:     "unlimited-extension",
	VariantReleaseLockedOnly:      "release-locked-only",
	VariantGetThenDel:             "get-then-del",
}

// Variants returns every variant, in declaration order, for `redlock-sim params` and sweeps.
func Variants() []Variant {
	vs := make([]Variant, len(variantNames))
	for i := range vs {
		vs[i] = Variant(i)
	}
	return vs
}

func (v Variant) String() string { return enumName(variantNames[:], int(v), "variant") }

// ParseVariant returns the variant with the given name.
func ParseVariant(s string) (Variant, error) {
	i, err := parseEnum(variantNames[:], "variant", s)
	return Variant(i), err
}

// MarshalText lets configuration files spell the variant by name.
func (v Variant) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText parses the variant's name.
func (v *Variant) UnmarshalText(b []byte) (err error) { *v, err = ParseVariant(string(b)); return err }

// SingleInstance reports whether the variant talks to one node whatever nodes says.
func (v Variant) SingleInstance() bool {
	return v == VariantSingleInstance || v == VariantSingleInstanceFailover
}

func enumName(names []string, i int, kind string) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", kind, i)
}

func parseEnum(names []string, param, s string) (int, error) {
	for i, n := range names {
		if n == s {
			return i, nil
		}
	}
	return 0, badParam(param, s, "one of "+strings.Join(names, ", "))
}

// Config holds the knobs of the algorithm. The zero value is not valid (ttl and tries are
// zero); start from DefaultConfig. Enum fields' zero values are the defaults (redlock,
// multiplexed, no fencing).
type Config struct {
	Variant Variant
	// Nodes is N, the number of independent Redis masters. Single-instance variants use 1
	// whatever it says (see Effective).
	Nodes int
	// TTL is the key's expiry (SET PX) and the base of the validity time. Whole milliseconds,
	// because PX cannot say less.
	TTL time.Duration
	// DriftFactor and DriftPad make the clock-drift allowance ttl × DriftFactor + DriftPad
	// subtracted from validity. The Redlock page and node-redlock use 0.01 and 2ms,
	// redsync 0.01 and 0.
	DriftFactor float64
	DriftPad    time.Duration
	// RetryDelay and RetryJitter give the pause after a failed attempt: RetryDelay plus a
	// uniform draw from [−RetryJitter, +RetryJitter], clamped at 0 (node-redlock's form).
	// redsync's 50–250ms is RetryDelay 150ms, RetryJitter 100ms. Zero jitter is allowed: it
	// is what produces rounds in which contending clients split the votes forever.
	RetryDelay  time.Duration
	RetryJitter time.Duration
	// Tries bounds the attempts of one acquire (the first one included).
	Tries int
	Mode  Mode
	// Timeout is how long to wait for one node's reply. When zero, it is TTL × TimeoutFactor,
	// so the wait is always small next to the lock's lifetime. A library that waits for its
	// driver's answer however long it takes (redsync, node-redlock) has none of its own: its
	// profile sets 1h, and the driver's connection (its timeouts and retries) decides.
	Timeout       time.Duration
	TimeoutFactor float64
	// ContextFactor is the deadline of the context the library hands its driver with each
	// request of an acquire attempt and of the cleanup after a lost one, as a fraction of
	// TTL, counted from the round's start (redsync's timeoutFactor: each attempt and its
	// cleanup run under context.WithTimeout(ctx, expiry × timeoutFactor)); 0: no deadline.
	// Extensions and releases pass none (redsync's Extend and Unlock use
	// context.Background()). Only a driver that reads contexts heeds it (go-redis's
	// connections, which check it when they take a connection, between dials and between
	// retries); the machine itself never waits on it.
	ContextFactor float64
	// ExtendTimeout and ReleaseTimeout are the per-node waits of an extension and of a
	// release, when they differ from the acquire's (0: NodeTimeout). redsync bounds its
	// acquire and the cleanup after a lost attempt by its context timeout but its Extend
	// and Unlock only by the driver's own read timeout.
	ExtendTimeout  time.Duration
	ReleaseTimeout time.Duration
	// FailFast stops waiting for replies once the quorum outcome is decided: enough OKs, or
	// too many failures for a quorum to remain possible.
	FailFast bool
	// MaxExtensions bounds the Extend calls per acquired lock; the page says to limit them.
	MaxExtensions int
	// SetNXOnExtend makes Extend also take nodes whose key is missing (redsync's
	// WithSetNXOnExtend), using ScriptExtendOrSet.
	SetNXOnExtend bool
	Fencing       Fencing
	// Dialect is whose scripts, SET spelling and fail-fast rule the machine uses.
	Dialect Dialect
}

// DefaultConfig returns the Redlock page's algorithm with the common library defaults:
// five nodes, ttl 10s, drift 0.01 + 2ms, node-redlock's retry 200ms ± 100ms, ten tries,
// redsync's timeout factor 0.05, at most ten extensions.
func DefaultConfig() Config {
	return Config{
		Variant:       VariantRedlock,
		Nodes:         5,
		TTL:           10 * time.Second,
		DriftFactor:   0.01,
		DriftPad:      2 * time.Millisecond,
		RetryDelay:    200 * time.Millisecond,
		RetryJitter:   100 * time.Millisecond,
		Tries:         10,
		Mode:          Multiplexed,
		TimeoutFactor: 0.05,
		MaxExtensions: 10,
		Fencing:       FenceNone,
	}
}

// Effective returns the configuration the machine actually runs: single-instance variants
// force Nodes to 1, so that a sweep over variants can share one nodes setting.
func (c Config) Effective() Config {
	if c.Variant.SingleInstance() {
		c.Nodes = 1
	}
	return c
}

// Quorum returns N/2+1, the number of nodes that must agree.
func (c Config) Quorum() int { return c.Effective().Nodes/2 + 1 }

// Drift returns the allowance subtracted from validity, ttl × drift_factor + drift_pad,
// rounded up to the nanosecond so that rounding never favours the lock holder. It is zero
// for VariantDriftIgnored: that variant's one deviation.
func (c Config) Drift() time.Duration {
	if c.Variant == VariantDriftIgnored {
		return 0
	}
	return time.Duration(math.Ceil(float64(c.TTL)*c.DriftFactor)) + c.DriftPad
}

// NodeTimeout returns how long the machine waits for a node's reply: Timeout, or
// TTL × TimeoutFactor when Timeout is zero, at least 1ns.
func (c Config) NodeTimeout() time.Duration {
	d := c.Timeout
	if d == 0 {
		d = time.Duration(float64(c.TTL) * c.TimeoutFactor)
	}
	return max(d, 1)
}

// AcquireContext returns the deadline of the context an acquire attempt and its cleanup
// hand the driver, TTL × ContextFactor, or 0 for none.
func (c Config) AcquireContext() time.Duration {
	return time.Duration(float64(c.TTL) * c.ContextFactor)
}

// ExtendNodeTimeout returns how long an extension waits for a node's reply: ExtendTimeout,
// or NodeTimeout when it is zero.
func (c Config) ExtendNodeTimeout() time.Duration {
	if c.ExtendTimeout > 0 {
		return c.ExtendTimeout
	}
	return c.NodeTimeout()
}

// ReleaseNodeTimeout returns how long a release waits for a node's reply: ReleaseTimeout,
// or NodeTimeout when it is zero.
func (c Config) ReleaseNodeTimeout() time.Duration {
	if c.ReleaseTimeout > 0 {
		return c.ReleaseTimeout
	}
	return c.NodeTimeout()
}

// Validate returns a *ParamError for the first knob out of range, in field order.
func (c Config) Validate() error {
	c = c.Effective()
	switch {
	case c.Variant >= Variant(len(variantNames)):
		return badParam("variant", c.Variant, "one of "+strings.Join(variantNames[:], ", "))
	case c.Nodes < 1 || c.Nodes > MaxNodes:
		return badParam("nodes", c.Nodes, fmt.Sprintf("[1, %d]", MaxNodes))
	case c.TTL < time.Millisecond || c.TTL > MaxTTL || c.TTL%time.Millisecond != 0:
		return badParam("ttl", c.TTL, fmt.Sprintf("whole milliseconds in [1ms, %v]", MaxTTL))
	case !(c.DriftFactor >= 0 && c.DriftFactor < 0.5): // written so that NaN fails
		return badParam("drift_factor", c.DriftFactor, "[0, 0.5)")
	case c.DriftPad < 0 || c.DriftPad > MaxDelay:
		return badParam("drift_pad", c.DriftPad, fmt.Sprintf("[0s, %v]", MaxDelay))
	case c.RetryDelay < 0 || c.RetryDelay > MaxDelay:
		return badParam("retry_delay", c.RetryDelay, fmt.Sprintf("[0s, %v]", MaxDelay))
	case c.RetryJitter < 0 || c.RetryJitter > MaxDelay:
		return badParam("retry_jitter", c.RetryJitter, fmt.Sprintf("[0s, %v]", MaxDelay))
	case c.Tries < 1 || c.Tries > MaxTries:
		return badParam("tries", c.Tries, fmt.Sprintf("[1, %d]", MaxTries))
	case c.Mode >= Mode(len(modeNames)):
		return badParam("mode", c.Mode, "one of "+strings.Join(modeNames[:], ", "))
	case c.Timeout < 0 || c.Timeout > MaxDelay:
		return badParam("timeout", c.Timeout, fmt.Sprintf("[0s, %v] (0: ttl × timeout_factor)", MaxDelay))
	case c.Timeout == 0 && !(c.TimeoutFactor > 0 && c.TimeoutFactor <= MaxTimeoutFactor):
		return badParam("timeout_factor", c.TimeoutFactor, fmt.Sprintf("(0, %g] when timeout = 0", MaxTimeoutFactor))
	case !(c.ContextFactor >= 0 && c.ContextFactor <= MaxTimeoutFactor):
		return badParam("context_factor", c.ContextFactor, fmt.Sprintf("[0, %g] (0: no deadline)", MaxTimeoutFactor))
	case c.ExtendTimeout < 0 || c.ExtendTimeout > MaxDelay:
		return badParam("extend_timeout", c.ExtendTimeout, fmt.Sprintf("[0s, %v] (0: as timeout)", MaxDelay))
	case c.ReleaseTimeout < 0 || c.ReleaseTimeout > MaxDelay:
		return badParam("release_timeout", c.ReleaseTimeout, fmt.Sprintf("[0s, %v] (0: as timeout)", MaxDelay))
	case c.MaxExtensions < 0 || c.MaxExtensions > MaxExtensions:
		return badParam("max_extensions", c.MaxExtensions, fmt.Sprintf("[0, %d]", MaxExtensions))
	case c.Fencing >= Fencing(len(fencingNames)):
		return badParam("fencing", c.Fencing, "one of "+strings.Join(fencingNames[:], ", "))
	case c.Dialect >= Dialect(len(dialectNames)):
		return badParam("dialect", c.Dialect, "one of "+strings.Join(dialectNames[:], ", "))
	}
	return nil
}

// Knobs returns the snake_case names Set accepts, in Config field order. They are the names
// bad-input errors use, so a sweep spec, an error message and `redlock-sim params` agree.
func Knobs() []string {
	return []string{"variant", "nodes", "ttl", "drift_factor", "drift_pad", "retry_delay",
		"retry_jitter", "tries", "mode", "timeout", "timeout_factor", "context_factor", "extend_timeout",
		"release_timeout", "fail_fast", "max_extensions", "set_nx_on_extend", "fencing", "dialect"}
}

// Set parses value into the knob called name (durations like 10s, plain numbers, true or
// false, enum names). It checks syntax only; Validate checks ranges.
func (c *Config) Set(name, value string) error {
	var err error
	switch name {
	case "variant":
		c.Variant, err = ParseVariant(value)
	case "nodes":
		c.Nodes, err = parseInt(name, value)
	case "ttl":
		c.TTL, err = parseDuration(name, value)
	case "drift_factor":
		c.DriftFactor, err = parseFactor(name, value)
	case "drift_pad":
		c.DriftPad, err = parseDuration(name, value)
	case "retry_delay":
		c.RetryDelay, err = parseDuration(name, value)
	case "retry_jitter":
		c.RetryJitter, err = parseDuration(name, value)
	case "tries":
		c.Tries, err = parseInt(name, value)
	case "mode":
		c.Mode, err = ParseMode(value)
	case "timeout":
		c.Timeout, err = parseDuration(name, value)
	case "timeout_factor":
		c.TimeoutFactor, err = parseFloat(name, value)
	case "context_factor":
		c.ContextFactor, err = parseFloat(name, value)
	case "extend_timeout":
		c.ExtendTimeout, err = parseDuration(name, value)
	case "release_timeout":
		c.ReleaseTimeout, err = parseDuration(name, value)
	case "fail_fast":
		c.FailFast, err = parseBool(name, value)
	case "max_extensions":
		c.MaxExtensions, err = parseInt(name, value)
	case "set_nx_on_extend":
		c.SetNXOnExtend, err = parseBool(name, value)
	case "fencing":
		c.Fencing, err = ParseFencing(value)
	case "dialect":
		c.Dialect, err = ParseDialect(value)
	default:
		return fmt.Errorf("redlock: unknown knob %q (known: %s)", name, strings.Join(Knobs(), ", "))
	}
	return err
}

func parseInt(name, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, badParam(name, s, "an integer")
	}
	return n, nil
}

func parseFloat(name, s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, badParam(name, s, "a number")
	}
	return f, nil
}

// FactorUnit splits off the unit people quote clock drift in: "400ppm" is ("400", 1e6)
// and "1%" is ("1", 100), to be divided (not multiplied, so that the result is the
// nearest float to the decimal written); anything else is (s, 1).
func FactorUnit(s string) (num string, scale float64) {
	switch {
	case strings.HasSuffix(s, "ppm"):
		return strings.TrimSpace(strings.TrimSuffix(s, "ppm")), 1e6
	case strings.HasSuffix(s, "%"):
		return strings.TrimSpace(strings.TrimSuffix(s, "%")), 1e2
	}
	return s, 1
}

// parseFactor parses a dimensionless rate as a number, or with a unit (FactorUnit).
func parseFactor(name, s string) (float64, error) {
	num, scale := FactorUnit(s)
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, badParam(name, s, "a number, or with a unit: 0.01, 1% and 10000ppm are the same")
	}
	return f / scale, nil
}

func parseBool(name, s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, badParam(name, s, "true or false")
	}
	return b, nil
}

func parseDuration(name, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, badParam(name, s, "a duration such as 10ms or 1.5s")
	}
	return d, nil
}
