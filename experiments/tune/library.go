package tune

import (
	"fmt"
	"go/format"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
)

// Access is how a lock library takes one knob of a Recommendation. It exists because a
// recommendation is worth shipping only in the form the library can take: redsync has no
// drift pad, node-redlock no per-node timeout of its own, RedLock.net no jitter apart
// from its delay.
type Access int

const (
	// Settable means the library has an option for the knob (KnobRule.Option).
	Settable Access = iota + 1
	// FactorOfTTL means the library takes the knob only as a fraction of the ttl
	// (redsync's WithTimeoutFactor).
	FactorOfTTL
	// Driver means the library has no option for the knob, but the Redis client it runs
	// over does (ioredis's commandTimeout, redis-py's socket_timeout).
	Driver
	// Tied means the library takes the knob only as a function of another knob
	// (KnobRule.Tie): RedLock.net's wait is uniform in [0, retryDelayMs), so its jitter
	// is its delay.
	Tied
	// Fixed means the library fixes the knob (KnobRule.FixedValue gives the value).
	Fixed
	// AppCode means the library leaves the knob to the application's own code (redsync's
	// extensions: the application calls Extend in its own loop).
	AppCode
)

// String returns the access as the report names it.
func (a Access) String() string {
	switch a {
	case Settable:
		return "settable"
	case FactorOfTTL:
		return "factor of the ttl"
	case Driver:
		return "on the Redis client"
	case Tied:
		return "tied"
	case Fixed:
		return "fixed"
	case AppCode:
		return "application code"
	}
	return "unknown"
}

// KnobRule says how a library takes one knob of Recommendation.Knobs(), with the source
// it was read from, so that every line of a library-aware recommendation can be checked
// against the library's code.
type KnobRule struct {
	Knob   string // the knob: ttl, drift_factor, ... (Recommendation.Knobs' names)
	Access Access
	// Option is the library's (or, for Driver, its Redis client's) option name(s), as the
	// engineer writes them, and how the knob maps to it.
	Option string
	// Unit is the option's unit as the library takes it: "ms", "s", "time.Duration",
	// "TimeSpan", "factor of the expiry", "count".
	Unit string
	// Fixed is the value the library fixes, in knob syntax, for a Fixed rule whose value
	// does not follow the ttl; for the other rules it is the library's value when the
	// option is left alone (the profile's value).
	Fixed string
	// PerTTL, for a Fixed rule whose value follows the ttl, is the divisor: the library
	// fixes the knob at ttl / PerTTL, truncated to the millisecond (RedLock.net's timer
	// every expiry/2, Redisson's watchdog every lease/3).
	PerTTL int
	// WhenExtending says a Fixed value holds only for a holder that extends: the library
	// has another call that does not extend at all (Redisson's lock(leaseTime, unit)),
	// whose value is Otherwise.
	WhenExtending bool
	Otherwise     string
	// Tie, for a Tied rule, is the knob whose value this one takes.
	Tie    string
	Why    string // one sentence: what the library does with the knob, and why that matters
	Source string // the library's file and function at the profile's version
}

// FixedValue returns the knob's value, in knob syntax, for a Fixed rule and
// recommendation r (whose ttl a PerTTL value follows), and false for any other rule.
func (k KnobRule) FixedValue(r Recommendation) (string, bool) {
	if k.Access != Fixed {
		return "", false
	}
	if k.WhenExtending && !r.Extend {
		return k.Otherwise, true
	}
	if k.PerTTL == 0 {
		return k.Fixed, true
	}
	return (r.TTL / time.Duration(k.PerTTL) / time.Millisecond * time.Millisecond).String(), true
}

// Option is one setting of a recommendation in a library's own terms: the option's name
// as the library spells it, the value as it is written there (in the library's unit), and
// a note when the mapping is not one to one.
type Option struct {
	Name, Value, Note string
}

// Library is what one client profile's library lets a user set, knob by knob, and how to
// write a recommendation for it. LibraryFor returns one per profile of knobs.Profiles();
// the zero Library has no rules and renders nothing.
type Library struct {
	Profile  string // the client profile: redsync, node-redlock, ...
	Name     string // the library and version the rules were read from
	Language string // the snippet's language
	Rules    []KnobRule
	// render turns a recommendation into the library's options, the snippet, and the
	// knob values the library will run with them.
	render func(r Recommendation) rendering
}

// rendering is one recommendation in a library's terms.
type rendering struct {
	opts []Option
	code string
	eff  Recommendation
}

// LibraryFor returns the library of the client profile named profile, as the user gave it
// to --client.
func LibraryFor(profile string) (Library, error) {
	for _, l := range libraryTable() {
		if l.Profile == profile {
			return l, nil
		}
	}
	names := make([]string, 0, len(knobs.Profiles()))
	for _, p := range knobs.Profiles() {
		names = append(names, p.Name)
	}
	return Library{}, &InputError{"--client", profile, "no library is described for this profile; want one of " + strings.Join(names, ", ")}
}

// Rule returns the library's rule for knob; a knob the library does not know has Access 0
// ("unknown").
func (l Library) Rule(knob string) KnobRule {
	for _, k := range l.Rules {
		if k.Knob == knob {
			return k
		}
	}
	return KnobRule{Knob: knob}
}

// Options returns r in the library's option names, values and units, leaving out what the
// library fixes. Values are rounded to what the option can say (whole milliseconds for
// node-redlock's, for instance), and Note says so where it changed a value.
func (l Library) Options(r Recommendation) []Option { return l.rendered(r).opts }

// Snippet returns code the engineer can paste that sets r in the library (and in the
// Redis client under it, where a knob lives there), in the library's language.
func (l Library) Snippet(r Recommendation) string { return l.rendered(r).code }

// Effective returns r as the library runs it once Options are set: every knob the library
// fixes at its fixed value, every value in the library's unit and rounding, and the retry
// wait in the shape the library can express. A confirmation by simulation of the
// library's profile should run these values, not r's.
func (l Library) Effective(r Recommendation) Recommendation { return l.rendered(r).eff }

func (l Library) rendered(r Recommendation) rendering {
	if l.render == nil {
		return rendering{eff: r}
	}
	return l.render(r)
}

// libraryTable is the registry of libraries, one per client profile, in knobs' profile
// order. It is built afresh on each call, so no caller can change another's rules.
func libraryTable() []Library {
	return []Library{specLibrary(), redsyncLibrary(), nodeRedlockLibrary(false),
		nodeRedlockLibrary(true), redlockPyLibrary(), redlockNetLibrary(),
		redissonLibrary(false), redissonLibrary(true)}
}

// The sources the rules cite, at the versions the profiles model (docs/clients.md).
const (
	srcSpec        = "the Redlock page (redis.io, Distributed Locks with Redis)"
	srcRedsync     = "redsync v4.17.0 "
	srcGoRedis     = "go-redis v9.23.0 "
	srcNodeRedlock = "node-redlock v4.2.0 redlock.js "
	srcNodeRedlk5  = "node-redlock v5.0.0-beta.2 src/index.ts "
	srcRedlockPy   = "redlock-py 1.0.8 (42ef491) redlock/__init__.py "
	srcRedlockNet  = "RedLock.net release-2.3.2 "
	srcRedisson    = "Redisson 3.43.0 "
)

func specLibrary() Library {
	src := srcSpec
	return Library{
		Profile: "spec", Name: "the Redlock page (redis.io, Distributed Locks with Redis)", Language: "text",
		Rules: []KnobRule{
			{Knob: "ttl", Access: Settable, Option: "TTL (SET resource_name my_random_value NX PX ttl)", Unit: "ms", Fixed: "10s",
				Why: "the key's expiry, the lock's auto-release time", Source: src},
			{Knob: "drift_factor", Access: Settable, Option: "CLOCK_DRIFT = TTL × drift_factor + drift_pad", Unit: "factor of the TTL", Fixed: "0.01",
				Why: "the allowance for the clocks' drift, subtracted from the validity", Source: src},
			{Knob: "drift_pad", Access: Settable, Option: "CLOCK_DRIFT = TTL × drift_factor + drift_pad", Unit: "ms", Fixed: "2ms",
				Why: "the constant part of the drift allowance (Redis's 1ms expiry precision, plus 1ms)", Source: src},
			{Knob: "timeout", Access: Settable, Option: "per-instance timeout", Unit: "ms", Fixed: "500ms",
				Why: "the wait for each instance, small compared to the auto-release time (5–50 ms for a 10 s TTL)", Source: src},
			{Knob: "retry_delay", Access: Settable, Option: "retry after a random delay", Unit: "ms", Fixed: "200ms",
				Why: "the centre of the random delay between attempts", Source: src},
			{Knob: "retry_jitter", Access: Settable, Option: "retry after a random delay", Unit: "ms", Fixed: "100ms",
				Why: "the half-width of the random delay, which desynchronises contending clients", Source: src},
			{Knob: "tries", Access: Settable, Option: "attempts", Unit: "count", Fixed: "10",
				Why: "the attempts before the acquire gives up", Source: src},
			{Knob: "extend_every", Access: Settable, Option: "extend the lock", Unit: "ms", Fixed: "0s",
				Why: "the page's extension: the holder re-sets the key with its value before the validity ends", Source: src},
			{Knob: "max_extensions", Access: Settable, Option: "extend the lock (a limited number of times)", Unit: "count", Fixed: "10",
				Why: "the page limits reacquisition attempts so that liveness is kept", Source: src},
		},
		render: renderSpec,
	}
}

func redsyncLibrary() Library {
	return Library{
		Profile: "redsync", Name: "redsync v4.17.0 over go-redis v9.23.0", Language: "go",
		Rules: []KnobRule{
			{Knob: "ttl", Access: Settable, Option: "redsync.WithExpiry(ttl)", Unit: "time.Duration", Fixed: "8s",
				Why:    "the key's expiry, also the base of the drift and of the per-attempt deadline",
				Source: srcRedsync + "redsync.go NewMutex, WithExpiry"},
			{Knob: "drift_factor", Access: Settable, Option: "redsync.WithDriftFactor(drift_factor)", Unit: "factor of the expiry", Fixed: "0.01",
				Why:    "validity = expiry − elapsed − expiry × driftFactor",
				Source: srcRedsync + "redsync.go WithDriftFactor; mutex.go lockContext"},
			{Knob: "drift_pad", Access: Fixed, Fixed: "0s",
				Why:    "redsync's drift allowance is expiry × driftFactor alone: no constant is added, and no option adds one",
				Source: srcRedsync + "mutex.go lockContext, ExtendContext"},
			{Knob: "timeout", Access: FactorOfTTL, Unit: "factor of the expiry", Fixed: "5s",
				Option: "redsync.WithTimeoutFactor(timeout / ttl), with ContextTimeoutEnabled: true on every go-redis client",
				Why: "redsync gives each attempt and its cleanup a context of expiry × timeoutFactor, but go-redis reads with " +
					"context.Background() unless the client has ContextTimeoutEnabled, so without it every node's wait is " +
					"go-redis's ReadTimeout (5s), retried up to MaxRetries (3) times where no deadline cuts the retry short " +
					"(Extend, Unlock: issue 35); the factor with ContextTimeoutEnabled is the honest setting, because a short " +
					"ReadTimeout would bound every command of a client the application may share and still be retried, " +
					"while the context bounds only the lock's calls (and Extend and Unlock given a context with a deadline)",
				Source: srcRedsync + "mutex.go lockContext; " + srcGoRedis + "redis.go baseClient.context, baseClient._process; options.go ReadTimeout, MaxRetries, ContextTimeoutEnabled"},
			{Knob: "retry_delay", Access: Settable, Unit: "time.Duration",
				Option: "redsync.WithRetryDelayFunc (uniform in [retry_delay − retry_jitter, retry_delay + retry_jitter)), or redsync.WithRetryDelay(retry_delay) without jitter",
				Fixed:  "150ms",
				Why:    "the default waits uniformly in [50ms, 250ms); WithRetryDelay waits a fixed time, WithRetryDelayFunc whatever its function returns",
				Source: srcRedsync + "redsync.go NewMutex (delayFunc), WithRetryDelay, WithRetryDelayFunc"},
			{Knob: "retry_jitter", Access: Settable, Unit: "time.Duration",
				Option: "redsync.WithRetryDelayFunc (the half-width of its uniform draw)", Fixed: "100ms",
				Why:    "only a delay function can spread the retries around a chosen delay",
				Source: srcRedsync + "redsync.go WithRetryDelayFunc; mutex.go lockContext"},
			{Knob: "tries", Access: Settable, Option: "redsync.WithTries(tries)", Unit: "count", Fixed: "32",
				Why:    "lockContext makes tries attempts in all",
				Source: srcRedsync + "redsync.go WithTries; mutex.go lockContext"},
			{Knob: "extend_every", Access: AppCode, Option: "mutex.ExtendContext(ctx), called by the application", Unit: "time.Duration", Fixed: "0s",
				Why:    "redsync never extends by itself: the application calls Extend or ExtendContext (which resets the keys to the mutex's expiry) from its own loop",
				Source: srcRedsync + "mutex.go ExtendContext"},
			{Knob: "max_extensions", Access: AppCode, Option: "the application's extension loop", Unit: "count", Fixed: "1000000",
				Why:    "redsync counts no extensions: the limit is the application's loop",
				Source: srcRedsync + "mutex.go ExtendContext"},
		},
		render: renderRedsync,
	}
}

func nodeRedlockLibrary(v5 bool) Library {
	src, profile, name, ioredis := srcNodeRedlock, "node-redlock", "node-redlock 4.2.0 over ioredis 4", "ioredis v4.31.0 lib/redis/index.ts sendCommand, lib/command.ts setTimeout"
	ctor, lock, extend, retries := "Redlock constructor", "Redlock.prototype.lock", "Redlock.prototype.extend, _lock", "_lock (attempts <= retryCount)"
	ttlOpt, extOpt := "redlock.lock(resource, ttl)", "lock.extend(ttl), called by the application"
	waits := "an attempt ends when every server answered"
	extWhy := "node-redlock 4.2.0 never extends by itself: the application calls lock.extend(ttl) on its own timer; a lost extension round unlocks the lock on every server and retries in vain"
	if v5 {
		src, profile, name, ioredis = srcNodeRedlk5, "node-redlock-5", "node-redlock 5.0.0-beta.2 over ioredis 5", "ioredis v5.9.3 lib/Redis.ts sendCommand, lib/Command.ts setTimeout"
		ctor, lock, extend, retries = "Redlock constructor, defaultSettings", "Redlock.acquire", "Redlock.extend, using", "_execute (maxAttempts = retryCount + 1)"
		ttlOpt, extOpt = "redlock.acquire([resource], duration)", "lock.extend(duration), called by the application"
		waits = "an attempt ends once a quorum voted for or against, waiting for the servers it needs"
		extWhy = "acquire() never extends: the application calls lock.extend(duration) on its own timer (using() extends once the time left falls under automaticExtensionThreshold, a rhythm the profile does not model)"
	}
	return Library{
		Profile: profile, Name: name, Language: "javascript",
		Rules: []KnobRule{
			{Knob: "ttl", Access: Settable, Option: ttlOpt, Unit: "ms", Fixed: "10s",
				Why: "the keys' PX, an integer number of ms; the library has no default", Source: src + lock},
			{Knob: "drift_factor", Access: Settable, Option: "driftFactor", Unit: "factor of the ttl", Fixed: "0.01",
				Why: "drift = round(driftFactor × ttl) + 2 ms", Source: src + ctor + ", " + lock},
			{Knob: "drift_pad", Access: Fixed, Fixed: "2ms",
				Why: "the 2 ms added to the drift is a constant of the code (Redis's 1 ms expiry precision, plus 1 ms)", Source: src + lock},
			{Knob: "timeout", Access: Driver, Option: "commandTimeout on each ioredis client", Unit: "ms", Fixed: "1h",
				Why: "node-redlock has no timeout of its own (" + waits + ": 1h in the profile), " +
					"so only ioredis's commandTimeout, which fails any command, queued ones included, that has no reply in time, bounds a node's wait; " +
					"it bounds the release and the extension too, and a NOSCRIPT reply starts the EVAL with a timeout of its own",
				Source: src + lock + "; " + ioredis},
			{Knob: "retry_delay", Access: Settable, Option: "retryDelay", Unit: "ms", Fixed: "200ms",
				Why: "each wait is max(0, retryDelay + floor((random × 2 − 1) × retryJitter)) whole ms", Source: src + retries},
			{Knob: "retry_jitter", Access: Settable, Option: "retryJitter", Unit: "ms", Fixed: "100ms",
				Why: "the wait is uniform over the whole ms in [retryDelay − retryJitter, retryDelay + retryJitter)", Source: src + retries},
			{Knob: "tries", Access: Settable, Option: "retryCount = tries − 1", Unit: "count", Fixed: "11",
				Why: "retryCount counts the retries after the first attempt", Source: src + retries},
			{Knob: "extend_every", Access: AppCode, Option: extOpt, Unit: "ms", Fixed: "0s", Why: extWhy, Source: src + extend},
			{Knob: "max_extensions", Access: AppCode, Option: "the application's extension timer", Unit: "count", Fixed: "1000000",
				Why: "the library counts no extensions: the limit is the application's", Source: src + extend},
		},
		render: func(r Recommendation) rendering { return renderNodeRedlock(r, v5) },
	}
}

func redlockPyLibrary() Library {
	src := srcRedlockPy
	return Library{
		Profile: "redlock-py", Name: "redlock-py 1.0.8 over redis-py 3.1 to 6.x", Language: "python",
		Rules: []KnobRule{
			{Knob: "ttl", Access: Settable, Option: "dlm.lock(resource, ttl)", Unit: "ms", Fixed: "10s",
				Why: "the keys' PX, which must be an int; the library has no default", Source: src + "Redlock.lock, lock_instance"},
			{Knob: "drift_factor", Access: Settable, Option: "dlm.clock_drift_factor (a class attribute, set on the instance)", Unit: "factor of the ttl", Fixed: "0.01",
				Why: "lock() reads self.clock_drift_factor; the constructor takes no drift argument", Source: src + "Redlock.lock"},
			{Knob: "drift_pad", Access: Fixed, Fixed: "2ms",
				Why: "drift = int(ttl × clock_drift_factor) + 2: the 2 ms is a constant of the code", Source: src + "Redlock.lock"},
			{Knob: "timeout", Access: Driver, Option: "socket_timeout in each connection dict (redis-py)", Unit: "s", Fixed: "1h",
				Why: "redlock-py has no timeout and redis-py's socket_timeout is None by default (1h in the profile); " +
					"a timed-out SET raises redis-py's TimeoutError, a RedisError, so an attempt that won despite it raises MultipleRedlockException without unlocking, " +
					"and the servers are asked one after another, so an attempt may last N × socket_timeout",
				Source: src + "Redlock.__init__ (StrictRedis(**connection_info)), Redlock.lock"},
			{Knob: "retry_delay", Access: Settable, Option: "retry_delay", Unit: "s", Fixed: "200ms",
				Why: "time.sleep(retry_delay) after each lost attempt; 0 means the 0.2 s default (retry_delay or default_retry_delay)", Source: src + "Redlock.__init__, Redlock.lock"},
			{Knob: "retry_jitter", Access: Fixed, Fixed: "0s",
				Why: "the sleep is the same every time: contending clients retry in step", Source: src + "Redlock.lock"},
			{Knob: "tries", Access: Settable, Option: "retry_count (attempts in all)", Unit: "count", Fixed: "3",
				Why: "lock() loops while retry < retry_count: retry_count is the number of attempts", Source: src + "Redlock.__init__, Redlock.lock"},
			{Knob: "extend_every", Access: Fixed, Fixed: "0s",
				Why: "redlock-py has no extension: a hold must fit in the ttl", Source: src + "class Redlock (lock and unlock only)"},
			{Knob: "max_extensions", Access: Fixed, Fixed: "0",
				Why: "redlock-py has no extension", Source: src + "class Redlock (lock and unlock only)"},
		},
		render: renderRedlockPy,
	}
}

func redlockNetLibrary() Library {
	src := srcRedlockNet
	return Library{
		Profile: "redlock-net", Name: "RedLock.net 2.3.2 over StackExchange.Redis", Language: "csharp",
		Rules: []KnobRule{
			{Knob: "ttl", Access: Settable, Option: "factory.CreateLock(resource, expiryTime)", Unit: "TimeSpan", Fixed: "10s",
				Why: "the keys' expiry (at least 10 ms); the library has no default", Source: src + "RedLockFactory.cs CreateLock; RedLock.cs RedLock (MinimumExpiryTime)"},
			{Knob: "drift_factor", Access: Fixed, Fixed: "0.01",
				Why: "ClockDriftFactor is a constant", Source: src + "RedLock.cs GetRemainingValidityTicks"},
			{Knob: "drift_pad", Access: Fixed, Fixed: "2ms",
				Why: "ClockPrecisionPaddingTicks is a constant 2 ms", Source: src + "RedLock.cs GetRemainingValidityTicks"},
			{Knob: "timeout", Access: Settable, Option: "RedLockEndPoint.SyncTimeout", Unit: "ms", Fixed: "1s",
				Why: "the connections RedLock.net makes itself take each endpoint's SyncTimeout (1000 ms by default); " +
					"CreateLock's calls are synchronous and wait exactly that, while CreateLockAsync's are timed out only on StackExchange.Redis's heartbeat (1 s), so may wait up to a second longer",
				Source: src + "Configuration/InternallyManagedRedLockConnectionProvider.cs CreateRedisConnections; RedLock.cs Lock, LockAsync; StackExchange.Redis PhysicalConnection.OnBridgeHeartbeat"},
			{Knob: "retry_delay", Access: Settable, Option: "RedLockRetryConfiguration(retryDelayMs: retry_delay + retry_jitter)", Unit: "ms", Fixed: "200ms",
				Why:    "each wait is ThreadSafeRandom.Next(retryDelayMs): uniform in [0, retryDelayMs), at least 10 ms, so the delay is half of retryDelayMs",
				Source: src + "RedLock.cs Acquire; Configuration/RedLockRetryConfiguration.cs"},
			{Knob: "retry_jitter", Access: Tied, Tie: "retry_delay", Option: "RedLockRetryConfiguration(retryDelayMs)", Unit: "ms", Fixed: "200ms",
				Why:    "the wait is uniform in [0, retryDelayMs): its jitter always equals its delay, so a recommendation's [delay − jitter, delay + jitter) keeps only its upper end",
				Source: src + "RedLock.cs Acquire"},
			{Knob: "tries", Access: Settable, Option: "RedLockRetryConfiguration(retryCount: tries)", Unit: "count", Fixed: "3",
				Why: "retryCount is the number of attempts in all (at least 1)", Source: src + "RedLock.cs Acquire; Configuration/RedLockRetryConfiguration.cs"},
			{Knob: "extend_every", Access: Fixed, PerTTL: 2,
				Why: "a held lock extends itself every expiry/2 on a timer, whatever the application does", Source: src + "RedLock.cs StartAutoExtendTimer"},
			{Knob: "max_extensions", Access: Fixed, Fixed: "1000000",
				Why: "the timer runs until the lock is disposed: no limit (1000000 in the profile)", Source: src + "RedLock.cs StartAutoExtendTimer, ExtendLockLifetime"},
		},
		render: renderRedlockNet,
	}
}

func redissonLibrary(redLock bool) Library {
	src := srcRedisson
	profile, name, lockSrc := "redisson", "Redisson 3.43.0 RLock", "RedissonLock.java lock, tryAcquireAsync"
	if redLock {
		profile, name, lockSrc = "redisson-redlock", "Redisson 3.43.0 RedissonRedLock", "RedissonRedLock.java; RedissonMultiLock.java lock, tryLock"
	}
	noRedlockRetry := "Redisson's retryInterval and retryAttempts resend one command that could not be sent (or a renewal that timed out); " +
		"they are not Redlock's retries, since lock() waits for the holder's unlock message or its key's PTTL, without limit, so the library's values stay"
	return Library{
		Profile: profile, Name: name, Language: "java",
		Rules: []KnobRule{
			{Knob: "ttl", Access: Settable, Unit: "ms", Fixed: "30s",
				Option: "Config.setLockWatchdogTimeout(ttl) with lock(); lock(leaseTime, TimeUnit.MILLISECONDS) when the holder need not extend",
				Why:    "the lease is the key's PEXPIRE: the watchdog timeout with lock(), the leaseTime (no watchdog) with lock(leaseTime, unit)",
				Source: src + "config/Config.java setLockWatchdogTimeout; " + lockSrc},
			{Knob: "drift_factor", Access: Fixed, Fixed: "0",
				Why: "Redisson computes no validity, so it subtracts no drift", Source: src + "RedissonLock.java tryAcquireAsync"},
			{Knob: "drift_pad", Access: Fixed, Fixed: "0s",
				Why: "Redisson computes no validity, so it subtracts no drift", Source: src + "RedissonLock.java tryAcquireAsync"},
			{Knob: "timeout", Access: Settable, Option: "setTimeout(timeout) on each server config", Unit: "ms", Fixed: "3s",
				Why:    "each command waits that long for its reply; a lock() whose trylock times out throws, and the trylock still queued may take the lock later with no watchdog (docs/clients.md)",
				Source: src + "config/BaseConfig.java setTimeout; command/RedisExecutor.java"},
			{Knob: "retry_delay", Access: Fixed, Fixed: "1500ms", Why: noRedlockRetry,
				Source: src + "config/BaseConfig.java setRetryInterval; " + lockSrc},
			{Knob: "retry_jitter", Access: Fixed, Fixed: "0s",
				Why: "a command's resend comes retryInterval after its attempt, without jitter", Source: src + "command/RedisExecutor.java scheduleRetryTimeout"},
			{Knob: "tries", Access: Fixed, Fixed: "4", Why: noRedlockRetry,
				Source: src + "config/BaseConfig.java setRetryAttempts; " + lockSrc},
			{Knob: "extend_every", Access: Fixed, PerTTL: 3, WhenExtending: true, Otherwise: "0s",
				Why:    "the watchdog renews every lockWatchdogTimeout/3 while a lock() without a lease is held; lock(leaseTime, unit) does not renew at all",
				Source: src + "RedissonBaseLock.java renewExpiration"},
			{Knob: "max_extensions", Access: Fixed, Fixed: "1000000", WhenExtending: true, Otherwise: "0",
				Why:    "the watchdog renews until unlock(): no limit (1000000 in the profile); bounding a hold is the application's unlock, and lock(leaseTime, unit) renews never",
				Source: src + "RedissonBaseLock.java renewExpiration"},
		},
		render: func(r Recommendation) rendering { return renderRedisson(r, redLock) },
	}
}

// Units: conversions of a knob's duration into the ways the libraries write one.

// millis returns d in whole milliseconds, rounded to the nearest and at least 1 when d is
// positive: what an option in ms can say.
func millis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return max(int64((d+time.Millisecond/2)/time.Millisecond), 1)
}

// msDuration is millis(d) as a duration.
func msDuration(d time.Duration) time.Duration { return time.Duration(millis(d)) * time.Millisecond }

// roundedNote says that an option in ms changed d, or nothing when it did not.
func roundedNote(d time.Duration) string {
	if msDuration(d) == d {
		return ""
	}
	return fmt.Sprintf("%v rounded to whole ms", d)
}

// goDuration writes d as a Go constant expression: 2300 * time.Millisecond.
func goDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}} {
		if d != 0 && d%u.d == 0 {
			if d == u.d {
				return "time." + u.name
			}
			return fmt.Sprintf("%d * time.%s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Nanosecond", int64(d))
}

// seconds writes d in seconds to the millisecond, as Python's time.sleep and redis-py's
// socket_timeout take it: 0.096.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(float64(millis(d))/1000, 'f', -1, 64)
}

// formatFactor writes a factor as the shortest decimal that reads back as it.
func formatFactor(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// retryWindow is the recommendation's retry wait, uniform in [lo, hi), with the note
// that lo was clamped at 0 when the jitter exceeds the delay.
func retryWindow(r Recommendation) (lo, hi time.Duration, note string) {
	lo, hi = r.RetryDelay-r.RetryJitter, r.RetryDelay+r.RetryJitter
	if lo < 0 {
		note = fmt.Sprintf("the jitter exceeds the delay: waits below 0 (%v) are 0", lo)
		lo = 0
	}
	return lo, hi, note
}

// spec

func renderSpec(r Recommendation) rendering {
	lo, hi, _ := retryWindow(r)
	opts := []Option{
		{"TTL", r.TTL.String(), "SET resource_name my_random_value NX PX " + strconv.FormatInt(millis(r.TTL), 10)},
		{"CLOCK_DRIFT", fmt.Sprintf("TTL × %s + %v", formatFactor(r.DriftFactor), r.DriftPad), ""},
		{"per-instance timeout", r.Timeout.String(), ""},
		{"retry after a random delay", waitText(lo, hi), fmt.Sprintf("%v ± %v", r.RetryDelay, r.RetryJitter)},
		{"attempts", strconv.Itoa(r.Tries), ""},
	}
	extend := "no extension: the work fits in the validity"
	if r.Extend {
		opts = append(opts, Option{"extend the lock", fmt.Sprintf("every %v, at most %d times a hold", r.ExtendEvery, r.MaxExtensions), ""})
		extend = fmt.Sprintf("every %v, at most %d times a hold", r.ExtendEvery, r.MaxExtensions)
	}
	var b strings.Builder
	b.WriteString("# Redlock as the page (redis.io, Distributed Locks with Redis) describes it:\n")
	b.WriteString("# the settings redlock-sim tune recommended.\n")
	fmt.Fprintf(&b, "TTL                   %v   # SET resource_name my_random_value NX PX %d\n", r.TTL, millis(r.TTL))
	fmt.Fprintf(&b, "CLOCK_DRIFT           TTL × %s + %v\n", formatFactor(r.DriftFactor), r.DriftPad)
	fmt.Fprintf(&b, "per-instance timeout  %v   # small compared to the auto-release time\n", r.Timeout)
	fmt.Fprintf(&b, "attempts              %d\n", r.Tries)
	fmt.Fprintf(&b, "retry after           %s   # %v ± %v\n", waitText(lo, hi), r.RetryDelay, r.RetryJitter)
	fmt.Fprintf(&b, "extend                %s\n", extend)
	b.WriteString("MIN_VALIDITY = TTL − (T2 − T1) − CLOCK_DRIFT\n")
	b.WriteString(fencingLine(r, "# "))
	return rendering{opts: opts, code: b.String(), eff: r}
}

// attempts writes n attempts in words: "1 attempt", "12 attempts".
func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}

// waitText describes a retry wait uniform in [lo, hi), or a fixed one when they meet.
func waitText(lo, hi time.Duration) string {
	if lo == hi {
		return fmt.Sprintf("a fixed %v", lo)
	}
	return fmt.Sprintf("uniform in [%v, %v)", lo, hi)
}

// waitTextMs is waitText for whole milliseconds.
func waitTextMs(lo, hi int64) string {
	if lo == hi {
		return fmt.Sprintf("a fixed %d ms", lo)
	}
	return fmt.Sprintf("uniform in [%d, %d) ms", lo, hi)
}

// notes joins the non-empty notes with "; ".
func notes(ns ...string) string {
	var out []string
	for _, n := range ns {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// fencingLine is the snippet's closing comment when r relies on fencing tokens: the lock
// libraries modelled issue none (Redisson's RFencedLock is not its RLock), so the
// engineer must add them, and the snippet says so where it will be read.
func fencingLine(r Recommendation, comment string) string {
	if !r.Fencing {
		return ""
	}
	return "\n" + comment + "Fencing: this recommendation is safe only if the resource checks a fencing token on\n" +
		comment + "every write and refuses an older one. The lock does not issue one: take it from a\n" +
		comment + "counter that only grows, and pass it with every write.\n"
}

// redsync

// timeoutFactor returns redsync's timeoutFactor for a per-node timeout and ttl: their
// ratio rounded down to three significant digits, so that it reads well and never waits
// longer than the arithmetic assumed; and the wait redsync then gives, computed as
// mutex.go does (time.Duration(int64(float64(expiry) × timeoutFactor))).
func timeoutFactor(timeout, ttl time.Duration) (string, time.Duration) {
	if ttl <= 0 || timeout <= 0 {
		return "0", 0
	}
	x := float64(timeout) / float64(ttl) * (1 + 1e-12) // forgive the ulp below an exact ratio
	e := int(math.Floor(math.Log10(x))) - 2
	digits := math.Floor(x / math.Pow10(e))
	s := strconv.FormatFloat(digits, 'f', 0, 64) + "e" + strconv.Itoa(e)
	f, _ := strconv.ParseFloat(s, 64) // a decimal written here always parses
	s = formatFactor(f)
	return s, time.Duration(int64(float64(ttl) * f))
}

// goReadTimeout is go-redis v9's default ReadTimeout (options.go).
const goReadTimeout = 5 * time.Second

func renderRedsync(r Recommendation) rendering {
	r.Tries = max(r.Tries, 1)
	factor, wait := timeoutFactor(r.Timeout, r.TTL)
	eff := r
	eff.DriftPad, eff.Timeout = 0, wait
	opts := []Option{
		{"redsync.WithExpiry", goDuration(r.TTL), ""},
		{"redsync.WithDriftFactor", formatFactor(r.DriftFactor), "validity = expiry − elapsed − expiry × driftFactor, nothing added"},
		{"redsync.WithTimeoutFactor", factor, fmt.Sprintf("%v × %s = %v per node; needs ContextTimeoutEnabled", r.TTL, factor, wait)},
		{"goredislib.Options.ContextTimeoutEnabled", "true", "on every client: without it each node's wait is ReadTimeout (5s), retried"},
	}
	if wait > goReadTimeout {
		opts = append(opts, Option{"goredislib.Options.ReadTimeout", goDuration(wait), "above go-redis's 5s default, which would otherwise end the read first and retry it"})
	}
	opts = append(opts, Option{"redsync.WithTries", strconv.Itoa(r.Tries), ""})
	lo, hi, note := retryWindow(r)
	var delayOpt string
	if r.RetryJitter == 0 {
		opts = append(opts, Option{"redsync.WithRetryDelay", goDuration(r.RetryDelay), "no jitter"})
		delayOpt = fmt.Sprintf("redsync.WithRetryDelay(%s),", goDuration(r.RetryDelay))
	} else {
		opts = append(opts, Option{"redsync.WithRetryDelayFunc", fmt.Sprintf("%s + rand.N(%s)", goDuration(lo), goDuration(hi-lo)),
			notes(fmt.Sprintf("%s: %v ± %v", waitText(lo, hi), r.RetryDelay, r.RetryJitter), note)})
		delayOpt = fmt.Sprintf(`redsync.WithRetryDelayFunc(func(int) time.Duration {
			// uniform in [%v, %v): %v ± %v
			return %s + rand.N(%s)
		}),`, lo, hi, r.RetryDelay, r.RetryJitter, goDuration(lo), goDuration(hi-lo))
	}
	if r.Extend {
		opts = append(opts, Option{"mutex.ExtendContext", fmt.Sprintf("every %v, at most %d times a hold", r.ExtendEvery, r.MaxExtensions), "the application's loop"})
	}
	imports := []string{`"context"`}
	if r.RetryJitter != 0 {
		imports = append(imports, `"math/rand/v2"`)
	}
	imports = append(imports, `"time"`)
	var b strings.Builder
	fmt.Fprintf(&b, `// redsync v4.17.0 over go-redis v9.23.0: the settings redlock-sim tune recommended.
// go get github.com/go-redsync/redsync/v4@v4.17.0 github.com/redis/go-redis/v9@v9.23.0
package lock

import (
	%s

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

// expiry is the keys' ttl; timeoutFactor × expiry (%v) is each node's wait, as redsync
// computes it.
const (
	expiry        = %s
	timeoutFactor = %s
)

// newMutex returns the lock named name on the independent masters at addrs.
func newMutex(addrs []string, name string) *redsync.Mutex {
	pools := make([]redis.Pool, 0, len(addrs))
	for _, addr := range addrs {
		client := goredislib.NewClient(&goredislib.Options{
			Addr: addr,
			// Without it go-redis ignores redsync's deadlines: every node's wait is
			// ReadTimeout (5s), and a read that timed out is retried (MaxRetries 3).
			ContextTimeoutEnabled: true,
`, strings.Join(imports, "\n"), wait, goDuration(r.TTL), factor)
	if wait > goReadTimeout {
		fmt.Fprintf(&b, "\t\t\t// Above the 5s default, which would end the read first.\n\t\t\tReadTimeout: %s,\n", goDuration(wait))
	}
	fmt.Fprintf(&b, `		})
		pools = append(pools, goredis.NewPool(client))
	}
	return redsync.New(pools...).NewMutex(name,
		redsync.WithExpiry(expiry),
		redsync.WithDriftFactor(%s), // the whole drift allowance: redsync adds nothing to it
		redsync.WithTimeoutFactor(timeoutFactor),
		redsync.WithTries(%d),
		%s
	)
}

// nodeDeadline bounds a call to each master by the per-node wait: Extend and Unlock
// pass no deadline of their own.
func nodeDeadline() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Duration(float64(expiry)*timeoutFactor))
}
`, formatFactor(r.DriftFactor), r.Tries, delayOpt)
	if r.Extend {
		fmt.Fprintf(&b, `
// extend renews m's keys to the full expiry. redsync does not extend by itself: call it
// every %v, at most %d times a hold, and stop using the resource once it fails or
// m.Until() has passed.
func extend(m *redsync.Mutex) (bool, error) {
	ctx, cancel := nodeDeadline()
	defer cancel()
	return m.ExtendContext(ctx)
}
`, r.ExtendEvery, r.MaxExtensions)
	}
	b.WriteString(`
// unlock releases m on every master.
func unlock(m *redsync.Mutex) (bool, error) {
	ctx, cancel := nodeDeadline()
	defer cancel()
	return m.UnlockContext(ctx)
}
`)
	b.WriteString(fencingLine(r, "// "))
	return rendering{opts: opts, code: gofmt(b.String()), eff: eff}
}

// gofmt formats Go source, or returns it as it is if it does not parse (a test catches
// that).
func gofmt(src string) string {
	out, err := format.Source([]byte(src))
	if err != nil {
		return src
	}
	return string(out)
}

// node-redlock 4.2.0 and 5.0.0-beta.2

func renderNodeRedlock(r Recommendation, v5 bool) rendering {
	r.Tries = max(r.Tries, 1) // retryCount −1 would retry without end
	ttl, timeout := millis(r.TTL), millis(r.Timeout)
	delay, jitter := millis(r.RetryDelay), millis(r.RetryJitter)
	every := millis(r.ExtendEvery)
	eff := r
	eff.TTL, eff.DriftPad, eff.Timeout = msDuration(r.TTL), 2*time.Millisecond, msDuration(r.Timeout)
	eff.RetryDelay, eff.RetryJitter = msDuration(r.RetryDelay), msDuration(r.RetryJitter)
	if r.Extend {
		eff.ExtendEvery = msDuration(r.ExtendEvery)
	}
	var clamp string
	if delay < jitter {
		clamp = "waits below 0 are 0"
	}
	lockCall, ttlName, waits := "redlock.lock(resource, ttl)", "ttl", "an attempt waits for every server"
	if v5 {
		lockCall, ttlName, waits = "redlock.acquire([resource], duration)", "duration", "an attempt waits until a quorum voted"
	}
	opts := []Option{
		{lockCall, strconv.FormatInt(ttl, 10), notes("ms", roundedNote(r.TTL))},
		{"driftFactor", formatFactor(r.DriftFactor), fmt.Sprintf("drift = round(%s × %s) + 2 ms: the 2 ms pad is fixed", formatFactor(r.DriftFactor), ttlName)},
		{"commandTimeout", strconv.FormatInt(timeout, 10), notes("ms, on each ioredis client: node-redlock has no timeout of its own", roundedNote(r.Timeout))},
		{"retryCount", strconv.Itoa(r.Tries - 1), fmt.Sprintf("tries − 1: %s in all", attempts(r.Tries))},
		{"retryDelay", strconv.FormatInt(delay, 10), notes("ms", roundedNote(r.RetryDelay))},
		{"retryJitter", strconv.FormatInt(jitter, 10), notes("ms: each wait "+waitTextMs(max(delay-jitter, 0), delay+jitter)+", in whole ms", roundedNote(r.RetryJitter), clamp)},
	}
	if r.Extend {
		opts = append(opts, Option{"lock.extend(" + ttlName + ")", fmt.Sprintf("every %d ms, at most %d times a hold", every, r.MaxExtensions), "the application's timer"})
	}
	var b strings.Builder
	if v5 {
		b.WriteString(`// node-redlock 5.0.0-beta.2 over ioredis 5: the settings redlock-sim tune recommended.
// npm install redlock@5.0.0-beta.2 ioredis@5
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock').default;
`)
	} else {
		b.WriteString(`// node-redlock 4.2.0 over ioredis 4: the settings redlock-sim tune recommended.
// npm install redlock@4.2.0 ioredis@4
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock');
`)
	}
	fmt.Fprintf(&b, `
// One client per independent master (your hosts here). node-redlock has no timeout of
// its own (%s), so ioredis's commandTimeout, in ms, bounds
// each node's wait, for the releases and extensions too.
const clients = ['redis-1', 'redis-2', 'redis-3'].map(
  (host) => new Redis({ host, port: 6379, commandTimeout: %d }),
);

const redlock = new Redlock(clients, {
  driftFactor: %s, // drift = round(%s × %s) + 2 ms
  retryCount: %d, // %s in all
  retryDelay: %d, // ms
  retryJitter: %d, // ms: each wait %s
});

const %s = %d; // ms
`, waits, timeout, formatFactor(r.DriftFactor), formatFactor(r.DriftFactor), ttlName, r.Tries-1, attempts(r.Tries), delay, jitter, waitTextMs(max(delay-jitter, 0), delay+jitter), ttlName, ttl)
	if v5 {
		renderNodeRedlock5Use(&b, r, every)
	} else {
		renderNodeRedlock4Use(&b, r, every)
	}
	b.WriteString("\nmodule.exports = { redlock, withLock };\n")
	b.WriteString(fencingLine(r, "// "))
	return rendering{opts: opts, code: b.String(), eff: eff}
}

func renderNodeRedlock4Use(b *strings.Builder, r Recommendation, every int64) {
	if !r.Extend {
		b.WriteString(`
// withLock runs work(lock) holding resource; work must stop once Date.now() passes
// lock.expiration.
async function withLock(resource, work) {
  const lock = await redlock.lock(resource, ttl);
  try {
    return await work(lock);
  } finally {
    await lock.unlock().catch(() => {});
  }
}
`)
		return
	}
	fmt.Fprintf(b, `
// withLock runs work(lock) holding resource. node-redlock does not extend by itself: this
// extends every %d ms, at most %d times; work must stop once Date.now() passes
// lock.expiration (a lost extension leaves it as it was, and unlocks the lock).
async function withLock(resource, work) {
  const lock = await redlock.lock(resource, ttl);
  let extensions = 0;
  const timer = setInterval(() => {
    if (extensions === %d) {
      clearInterval(timer);
      return;
    }
    extensions++;
    lock.extend(ttl).catch(() => clearInterval(timer));
  }, %d);
  try {
    return await work(lock);
  } finally {
    clearInterval(timer);
    await lock.unlock().catch(() => {});
  }
}
`, every, r.MaxExtensions, r.MaxExtensions, every)
}

func renderNodeRedlock5Use(b *strings.Builder, r Recommendation, every int64) {
	b.WriteString(`
// withLock runs work(current) holding resource; current() is the lock, whose expiration
// work must not pass. acquire() never checks the validity it returns, so this does.
async function withLock(resource, work) {
  let lock = await redlock.acquire([resource], duration);
  if (lock.expiration <= Date.now()) {
    await lock.release().catch(() => {});
    throw new Error('the lock on ' + resource + ' came after its validity ended');
  }
`)
	if !r.Extend {
		b.WriteString(`  try {
    return await work(() => lock);
  } finally {
    await lock.release().catch(() => {});
  }
}
`)
		return
	}
	fmt.Fprintf(b, `  // node-redlock does not extend by itself (using() would, on a rhythm of its own):
  // this extends every %d ms, at most %d times.
  let extensions = 0;
  const timer = setInterval(() => {
    if (extensions === %d) {
      clearInterval(timer);
      return;
    }
    extensions++;
    lock.extend(duration).then(
      (next) => {
        lock = next;
      },
      () => clearInterval(timer),
    );
  }, %d);
  try {
    return await work(() => lock);
  } finally {
    clearInterval(timer);
    await lock.release().catch(() => {});
  }
}
`, every, r.MaxExtensions, r.MaxExtensions, every)
}

// redlock-py 1.0.8

func renderRedlockPy(r Recommendation) rendering {
	r.Tries = max(r.Tries, 1)
	eff := r
	eff.TTL, eff.DriftPad, eff.Timeout = msDuration(r.TTL), 2*time.Millisecond, msDuration(r.Timeout)
	eff.RetryDelay, eff.RetryJitter = msDuration(r.RetryDelay), 0
	eff.Extend, eff.ExtendEvery, eff.MaxExtensions = false, 0, 0
	ttl := millis(r.TTL)
	opts := []Option{
		{"dlm.lock(resource, ttl)", strconv.FormatInt(ttl, 10), notes("ms, an int", roundedNote(r.TTL))},
		{"clock_drift_factor", formatFactor(r.DriftFactor), "set on the instance; drift = int(factor × ttl) + 2 ms: the 2 ms pad is fixed"},
		{"socket_timeout", seconds(r.Timeout), notes("s, in each connection dict (redis-py): redlock-py has no timeout of its own", roundedNote(r.Timeout))},
		{"retry_count", strconv.Itoa(r.Tries), attempts(r.Tries) + " in all"},
		{"retry_delay", seconds(r.RetryDelay), notes(fmt.Sprintf("s, every time: no jitter (the recommendation's ± %v cannot be set)", r.RetryJitter), roundedNote(r.RetryDelay))},
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# redlock-py 1.0.8 over redis-py 3.1 to 6.x: the settings redlock-sim tune recommended.
# pip install redlock-py==1.0.8 "redis>=3.1,<7"
from redlock import Redlock

# One dict per independent master (your hosts here). redlock-py has no timeout of its
# own: redis-py's socket_timeout, in seconds, bounds each node's wait. The masters are
# asked one after another, and a server that timed out makes an attempt that won anyway
# raise MultipleRedlockException, leaving its keys to expire.
servers = [
    {"host": host, "port": 6379, "socket_timeout": %s}
    for host in ("redis-1", "redis-2", "redis-3")
]
# %s, %s s apart: redlock-py has no jitter.
dlm = Redlock(servers, retry_count=%d, retry_delay=%s)
dlm.clock_drift_factor = %s  # drift = int(%s * ttl) + 2 ms

TTL_MS = %d

lock = dlm.lock("resource", TTL_MS)  # False when not acquired
if lock:
    try:
        pass  # the work: lock.validity ms from the attempt's start
    finally:
        dlm.unlock(lock)
`, seconds(r.Timeout), attempts(r.Tries), seconds(r.RetryDelay), r.Tries, seconds(r.RetryDelay),
		formatFactor(r.DriftFactor), formatFactor(r.DriftFactor), ttl)
	if r.Extend {
		fmt.Fprintf(&b, "\n# redlock-py cannot extend a lock: the recommended extension every %v cannot be\n# set, and a hold must end within its validity.\n", r.ExtendEvery)
	}
	b.WriteString(fencingLine(r, "# "))
	return rendering{opts: opts, code: b.String(), eff: eff}
}

// RedLock.net 2.3.2

// redlockNetMinRetryDelayMs and redlockNetMinExpiry are RedLock.net's floors
// (RedLockRetryConfiguration's check; RedLock's MinimumExpiryTime).
const (
	redlockNetMinRetryDelayMs = 10
	redlockNetMinExpiry       = 10 * time.Millisecond
)

func renderRedlockNet(r Recommendation) rendering {
	ttl := millis(max(r.TTL, redlockNetMinExpiry))
	timeout := millis(r.Timeout)
	_, hi, _ := retryWindow(r)
	wait := max(millis(hi), redlockNetMinRetryDelayMs)
	eff := r
	eff.TTL, eff.DriftFactor, eff.DriftPad = time.Duration(ttl)*time.Millisecond, 0.01, 2*time.Millisecond
	eff.Timeout = msDuration(r.Timeout)
	eff.RetryDelay = time.Duration(wait) * time.Millisecond / 2
	eff.RetryJitter = eff.RetryDelay
	eff.Tries = max(r.Tries, 1)
	eff.Extend, eff.ExtendEvery, eff.MaxExtensions = true, time.Duration(ttl/2)*time.Millisecond, 1000000
	opts := []Option{
		{"CreateLock(resource, expiryTime)", fmt.Sprintf("TimeSpan.FromMilliseconds(%d)", ttl), notes(roundedNote(r.TTL))},
		{"RedLockEndPoint.SyncTimeout", strconv.FormatInt(timeout, 10), notes("ms, on each endpoint; with CreateLock, the synchronous call", roundedNote(r.Timeout))},
		{"RedLockRetryConfiguration retryCount", strconv.Itoa(eff.Tries), attempts(eff.Tries) + " in all"},
		{"RedLockRetryConfiguration retryDelayMs", strconv.FormatInt(wait, 10),
			fmt.Sprintf("each wait uniform in [0, %d) ms, RedLock.net's only shape: it keeps the recommendation's longest wait (%v + %v), not its shortest (%v)",
				wait, r.RetryDelay, r.RetryJitter, max(r.RetryDelay-r.RetryJitter, 0))},
	}
	var b strings.Builder
	fmt.Fprintf(&b, `// RedLock.net 2.3.2: the settings redlock-sim tune recommended.
// dotnet add package RedLock.net --version 2.3.2
using System;
using System.Collections.Generic;
using System.Net;
using RedLockNet.SERedis;
using RedLockNet.SERedis.Configuration;

// One endpoint per independent master (your hosts here). SyncTimeout, in ms, is each
// node's wait.
var endPoints = new List<RedLockEndPoint>
{
    new RedLockEndPoint(new DnsEndPoint("redis-1", 6379)) { SyncTimeout = %d },
    new RedLockEndPoint(new DnsEndPoint("redis-2", 6379)) { SyncTimeout = %d },
    new RedLockEndPoint(new DnsEndPoint("redis-3", 6379)) { SyncTimeout = %d },
};

// %s, each wait uniform in [0, %d) ms: RedLock.net has no other retry shape.
var factory = RedLockFactory.Create(endPoints, new RedLockRetryConfiguration(retryCount: %d, retryDelayMs: %d));

var expiry = TimeSpan.FromMilliseconds(%d);

// The synchronous CreateLock waits SyncTimeout exactly; CreateLockAsync's calls time out
// only on StackExchange.Redis's 1 s heartbeat. The drift (0.01 × expiry + 2 ms) is fixed.
using (var redLock = factory.CreateLock("resource", expiry))
{
    if (redLock.IsAcquired)
    {
        // The work. RedLock.net extends the lock every expiry/2 (%d ms) until it is
        // disposed, whatever the work does.
    }
}
`, timeout, timeout, timeout, attempts(eff.Tries), wait, eff.Tries, wait, ttl, ttl/2)
	b.WriteString(fencingLine(r, "// "))
	return rendering{opts: opts, code: b.String(), eff: eff}
}

// Redisson 3.43.0

func renderRedisson(r Recommendation, redLock bool) rendering {
	ttl, timeout := millis(r.TTL), millis(r.Timeout)
	eff := r
	eff.TTL, eff.DriftFactor, eff.DriftPad = time.Duration(ttl)*time.Millisecond, 0, 0
	eff.Timeout = msDuration(r.Timeout)
	eff.RetryDelay, eff.RetryJitter, eff.Tries = 1500*time.Millisecond, 0, 4
	eff.ExtendEvery, eff.MaxExtensions = 0, 0
	if r.Extend {
		eff.ExtendEvery, eff.MaxExtensions = time.Duration(ttl/3)*time.Millisecond, 1000000
	}
	opts := []Option{}
	if r.Extend {
		opts = append(opts, Option{"Config.setLockWatchdogTimeout", strconv.FormatInt(ttl, 10),
			notes(fmt.Sprintf("ms, with lock(): the watchdog renews every %d ms, without limit", ttl/3), roundedNote(r.TTL))})
	} else {
		opts = append(opts, Option{"lock(leaseTime, unit)", fmt.Sprintf("lock(%d, TimeUnit.MILLISECONDS)", ttl),
			notes("no watchdog: the key expires after the lease", roundedNote(r.TTL))})
	}
	opts = append(opts, Option{"setTimeout", strconv.FormatInt(timeout, 10), notes("ms, on each server config", roundedNote(r.Timeout))})
	var b strings.Builder
	b.WriteString("// Redisson 3.43.0: the settings redlock-sim tune recommended.\n// Maven: org.redisson:redisson:3.43.0\n")
	if redLock {
		b.WriteString("import java.util.List;\n")
	}
	if !r.Extend {
		b.WriteString("import java.util.concurrent.TimeUnit;\n")
	}
	if redLock {
		b.WriteString("import org.redisson.RedissonRedLock;\n")
	}
	b.WriteString(`import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

public class LockSettings {
`)
	watchdog := ""
	if r.Extend {
		watchdog = fmt.Sprintf("        // The lease (ms); lock() renews it every %d ms (a third) while held, without limit.\n        config.setLockWatchdogTimeout(%d);\n", ttl/3, ttl)
	}
	fmt.Fprintf(&b, `    // client connects to one master. Redisson computes no validity: there is no drift to
    // set, and its retryInterval and retryAttempts (a command's resends) keep their values.
    static RedissonClient client(String address) {
        Config config = new Config();
%s        config.useSingleServer()
                .setAddress(address)
                .setTimeout(%d); // ms: each command's wait for its reply
        return Redisson.create(config);
    }
`, watchdog, timeout)
	lockCall := "lock.lock(); // waits for the holder's unlock message, without limit"
	if !r.Extend {
		lockCall = fmt.Sprintf("lock.lock(%d, TimeUnit.MILLISECONDS); // the lease, without a watchdog", ttl)
	}
	if redLock {
		fmt.Fprintf(&b, `
    // withLock runs work holding name on a majority of masters (one client each), as
    // RedissonRedLock (deprecated) takes it: one master after another.
    static void withLock(List<RedissonClient> masters, String name, Runnable work) {
        RLock lock = new RedissonRedLock(masters.stream().map(c -> c.getLock(name)).toArray(RLock[]::new));
        %s
        try {
            work.run();
        } finally {
            lock.unlock();
        }
    }
}
`, lockCall)
	} else {
		fmt.Fprintf(&b, `
    // withLock runs work holding name.
    static void withLock(RedissonClient redisson, String name, Runnable work) {
        RLock lock = redisson.getLock(name);
        %s
        try {
            work.run();
        } finally {
            lock.unlock();
        }
    }
}
`, lockCall)
	}
	b.WriteString(fencingLine(r, "// "))
	return rendering{opts: opts, code: b.String(), eff: eff}
}
