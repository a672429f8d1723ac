package tune

import (
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
	// Session says the lock is held by a ZooKeeper session (Curator's InterProcessMutex):
	// tune works out its session timeout, not a ttl (session.go).
	Session bool
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
		nodeRedlockLibrary(true), redlockPyLibrary(false), redlockPyLibrary(true), redlockNetLibrary(),
		redissonLibrary(false), redissonLibrary(true), hybridLibrary(), curatorLibrary()}
}

// hybridLibrary is the seeds' hybrid lock: not a library but a composite, whose Redis
// side is the Redlock page's algorithm with the page's settings; tune's arithmetic, which
// is Redlock's, sizes that side, and its confirmation runs the composite, so the verdict
// shows what the ZooKeeper side's escalations add (a client that gives Redis up holds
// through ZooKeeper beside Redis's holder: docs/zookeeper.md, "The hybrid lock").
func hybridLibrary() Library {
	l := specLibrary()
	l.Profile = "hybrid"
	l.Name = "the seeds' hybrid lock: Redlock as the page describes it, Curator's InterProcessMutex when Redis gives up"
	l.render = func(r Recommendation) rendering {
		out := renderSpec(r)
		out.code = "# The hybrid lock's Redis side; its ZooKeeper side keeps Curator's defaults, and an acquire\n" +
			"# Redis gives up escalates to it whatever these settings: the lock is two locks.\n" + out.code
		return out
	}
	return l
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
	srcCurator     = "Apache Curator 5.4.0 "
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
			{Knob: "timeout", Access: FactorOfTTL, Unit: "factor of the expiry", Fixed: "1h",
				Option: "redsync.WithTimeoutFactor(timeout / ttl), with ContextTimeoutEnabled: true on every go-redis client",
				Why: "redsync has no per-node wait of its own: it gives each attempt and its cleanup a context of expiry × timeoutFactor, " +
					"but go-redis reads with context.Background() unless the client has ContextTimeoutEnabled, so without it every node's " +
					"wait is go-redis's: its ReadTimeout (5s), then up to MaxRetries (3) tries on new connections, cut short only where " +
					"the context is read, between dials and retries (the profile models all of it: connection = go-redis, context_factor); " +
					"Extend and Unlock pass no deadline and go through every retry. The factor with ContextTimeoutEnabled is the honest setting, because a short " +
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

// redlockPyLibrary is redlock-py over redis-py 3.1 to 6.x, or (redis8) over redis-py 8,
// whose retries the snippet turns off so that the recommended socket_timeout is each
// node's whole wait.
func redlockPyLibrary(redis8 bool) Library {
	src := srcRedlockPy
	profile, name := "redlock-py", "redlock-py 1.0.8 over redis-py 3.1 to 6.x"
	timeoutWhy := "redlock-py has no timeout and redis-py's socket_timeout is None by default (1h in the profile); "
	if redis8 {
		profile, name = "redlock-py-redis8", "redlock-py 1.0.8 over redis-py 8.1"
		timeoutWhy = "redlock-py has no timeout; redis-py 8's socket_timeout is 5 s, and a timed-out or failed command is retried " +
			"up to 10 times on a new connection (1h in the profile: the driver decides), so the snippet passes retry=Retry(NoBackoff(), 0) " +
			"with the recommended socket_timeout, which then bounds each node's wait; "
	}
	return Library{
		Profile: profile, Name: name, Language: "python",
		Rules: []KnobRule{
			{Knob: "ttl", Access: Settable, Option: "dlm.lock(resource, ttl)", Unit: "ms", Fixed: "10s",
				Why: "the keys' PX, which must be an int; the library has no default", Source: src + "Redlock.lock, lock_instance"},
			{Knob: "drift_factor", Access: Settable, Option: "dlm.clock_drift_factor (a class attribute, set on the instance)", Unit: "factor of the ttl", Fixed: "0.01",
				Why: "lock() reads self.clock_drift_factor; the constructor takes no drift argument", Source: src + "Redlock.lock"},
			{Knob: "drift_pad", Access: Fixed, Fixed: "2ms",
				Why: "drift = int(ttl × clock_drift_factor) + 2: the 2 ms is a constant of the code", Source: src + "Redlock.lock"},
			{Knob: "timeout", Access: Driver, Option: "socket_timeout in each connection dict (redis-py)", Unit: "s", Fixed: "1h",
				Why: timeoutWhy +
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
		render: func(r Recommendation) rendering { return renderRedlockPy(r, redis8) },
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

// curatorLibrary is Curator's InterProcessMutex on a ZooKeeper ensemble: not Redlock, so
// its recommendation is a session's (session.go), in CuratorFrameworkFactory's builder, the
// retry policy, the application's ConnectionStateListener and fencing, and zoo.cfg.
func curatorLibrary() Library {
	src := srcCurator
	zk := "ZooKeeper 3.8.0 "
	return Library{
		Profile: "curator", Name: "Apache Curator 5.4.0 InterProcessMutex on ZooKeeper 3.8", Language: "java", Session: true,
		Rules: []KnobRule{
			{Knob: "session_timeout", Access: Settable, Option: "CuratorFrameworkFactory.builder().sessionTimeoutMs(session_timeout)", Unit: "ms", Fixed: "1m",
				Why: "the session the lock node lives by: the leader expires it after this long without a word, the client gives its server up after two thirds of it; " +
					"the ensemble clamps it to [minSessionTimeout, maxSessionTimeout], 2 and 20 ticks by default (40s with a 2s tick)",
				Source: src + "CuratorFrameworkFactory.java DEFAULT_SESSION_TIMEOUT_MS; " + zk + "ZooKeeperServer.java processConnectRequest; ClientCnxn.java readTimeout"},
			{Knob: "connection_timeout", Access: Settable, Option: "CuratorFrameworkFactory.builder().connectionTimeoutMs(connection_timeout)", Unit: "ms", Fixed: "15s",
				Why:    "how long a request sent while disconnected waits for the connection before it fails with CONNECTIONLOSS; Curator warns when the session timeout is less than it",
				Source: src + "CuratorFrameworkFactory.java DEFAULT_CONNECTION_TIMEOUT_MS; CuratorZookeeperClient.java (constructor, internalBlockUntilConnectedOrTimedOut)"},
			{Knob: "retry_delay", Access: Settable, Option: "new ExponentialBackoffRetry(baseSleepTimeMs, maxRetries)", Unit: "ms", Fixed: "1s",
				Why:    "the k-th retry of an operation sleeps baseSleepTimeMs × max(1, random[0, 2^(k+1))): the delay is the base of an exponential backoff, not a fixed wait",
				Source: src + "retry/ExponentialBackoffRetry.java getSleepTimeMs"},
			{Knob: "tries", Access: Settable, Option: "new ExponentialBackoffRetry(baseSleepTimeMs, maxRetries = tries − 1)", Unit: "count", Fixed: "4",
				Why:    "maxRetries counts the retries of one operation after its first try (at most 29); an acquire waits for its turn without counting tries",
				Source: src + "retry/SleepingRetry.java allowRetry; retry/ExponentialBackoffRetry.java MAX_RETRIES_LIMIT"},
			{Knob: "on_suspended", Access: AppCode, Option: "a ConnectionStateListener that stops work on the lock at SUSPENDED", Unit: "ConnectionState", Fixed: "carry-on",
				Why:    "the mutex ignores SUSPENDED and LOST: a held lock stays held in Curator's eyes until the application stops relying on it, which Curator's documentation recommends at SUSPENDED",
				Source: src + "state/ConnectionStateManager.java; framework/imps/CuratorFrameworkImpl.java processStateChanged"},
			{Knob: "fence_token", Access: AppCode, Option: "the lock node's czxid (checkExists().forPath(lock path).getCzxid()), sent with every write and checked by the resource", Unit: "long", Fixed: "none",
				Why:    "Curator returns no token: the application reads its node's stat; the czxid grows with every node created, so the resource can refuse an older holder's writes",
				Source: src + "InterProcessMutex.java getLockPath; " + zk + "data/Stat.java czxid"},
			{Knob: "zk_tick_time", Access: Settable, Option: "zoo.cfg tickTime", Unit: "ms", Fixed: "2s",
				Why:    "the unit of the ensemble's limits, of the session clamp (2 to 20 ticks) and of session expiry's buckets",
				Source: zk + "ZooKeeperServer.java getMinSessionTimeout, getMaxSessionTimeout; ExpiryQueue.java roundToNextInterval"},
			{Knob: "zk_init_limit", Access: Settable, Option: "zoo.cfg initLimit", Unit: "ticks", Fixed: "10",
				Why: "ticks a new leader waits for a quorum to sync: kept at its default length when the tick changes", Source: zk + "Leader.java, Learner.java"},
			{Knob: "zk_sync_limit", Access: Settable, Option: "zoo.cfg syncLimit", Unit: "ticks", Fixed: "5",
				Why: "ticks of silence after which a leader and a follower give each other up: kept at its default length when the tick changes", Source: zk + "Learner.java, LearnerHandler.java"},
			{Knob: "zk_max_session_timeout", Access: Settable, Option: "zoo.cfg maxSessionTimeout", Unit: "ms", Fixed: "0s",
				Why:    "a longer session asked for is cut to it (20 ticks when unset, 0s in the knob)",
				Source: zk + "ZooKeeperServer.java processConnectRequest"},
		},
		render: renderCurator,
	}
}
