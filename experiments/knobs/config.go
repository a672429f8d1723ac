package knobs

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// Limits of the world's own knobs (the algorithm's come from package redlock, the network's
// and the nodes' from theirs). Each bounds memory or run time, so that a typo in a sweep
// spec is an error rather than a run that never ends.
const (
	// MaxClients is as many clients as the oracle judges (oracle.MaxClients: it keeps one
	// contention round's clients in a 64-bit set), stated here so that knobs needs no oracle;
	// experiments/world's TestMaxClientsIsTheOracles ties the two.
	MaxClients     = 64
	MaxResources   = 1000
	MaxReplicas    = redis.MaxGroupNodes - 1
	MaxDuration    = 10000 * time.Hour
	MaxSpreadPPM   = 100000 // ±10%: already absurd for a quartz clock
	MaxSpread      = 24 * time.Hour
	MaxFaultRate   = 100.0 // node crashes or clock jumps per node per simulated second
	MaxCycles      = 1_000_000_000
	defaultLatency = "uniform(200µs,800µs)"
)

// Config is one world: every knob of the nodes, clients, clocks, network, persistence,
// faults, algorithm and workload. The zero value is not valid; start from DefaultConfig and
// change knobs with Set, by the names `redlock-sim params` lists.
type Config struct {
	Duration time.Duration // simulated run length

	Client    string         // the client profile the knobs started from (see Profile)
	Algorithm string         // the lock algorithm the clients run, by its registered name
	Lock      redlock.Config // Redlock's knobs, nodes included
	Replicas  int            // replicas behind each Redlock node, asynchronously replicated (see replicas())
	Clients   int
	Resources int

	Hold, Think    dist.Dist
	StartSpread    time.Duration // clients start at uniform times in [0, StartSpread]
	ExtendEvery    time.Duration
	StopAtDeadline bool
	// ReleaseAfterAck: clients release only once the storage acknowledged their last
	// write (else at once after sending it, and the write can land after the next
	// holder's: a stale write the workload made, not the lock).
	ReleaseAfterAck bool
	MaxCycles       int
	// Connection is what a client's connection to a node does after a timed-out request
	// (a client profile sets its driver's).
	Connection redis.Connection
	// WallValidity: clients read their lock's validity on the wall clock (the knob
	// validity_clock = wall), as node-redlock (Date.now()) and redlock-py (time.time()) do.
	WallValidity bool

	ClientDriftPPM, NodeDriftPPM float64       // each process draws its drift in [−v, +v]
	ClientOffset, NodeOffset     time.Duration // and its wall-clock offset in [−v, +v]
	NodeJumpRate                 float64       // forward wall-clock jumps per node per second
	NodeJump                     dist.Dist     // their sizes

	Latency        network.Latency
	Loss, Dup      float64
	FIFO           bool
	PartitionRate  float64 // random isolations of one endpoint per second
	PartitionLen   dist.Dist
	ClogRate       float64 // random clogs of one link per second
	ClogLen        dist.Dist
	Persistence    redis.Persistence
	ServiceTime    time.Duration
	Hz             int
	PreloadScripts bool
	ReplDelay      time.Duration
	ReplJitter     time.Duration
	FailoverAfter  time.Duration
	NodeCrashRate  float64 // power losses of a node per node per second
	NodeDown       dist.Dist
	NodePauseRate  float64 // stalls (SIGSTOP) of a node per node per second
	NodePauseLen   dist.Dist
	PauseRate      float64 // stop-the-world pauses per client per second
	PauseLen       dist.Dist
	// ClientCrashRate is client crashes per client per second; each crashed client
	// restarts ClientDown later, holding nothing.
	ClientCrashRate float64
	ClientDown      dist.Dist
	// ZK holds the ZooKeeper ensemble's and Curator's knobs (algorithm curator).
	ZK ZooKeeper
}

// DefaultConfig returns a fault-free world: five ideal Redis nodes, three clients taking
// turns on one lock with the Redlock page's algorithm and the common library defaults,
// sub-millisecond latency, one simulated minute.
func DefaultConfig() Config {
	return Config{
		Duration:      60 * time.Second,
		Client:        "spec",
		Algorithm:     "redlock",
		Lock:          redlock.DefaultConfig(),
		Clients:       3,
		Resources:     1,
		Hold:          dist.Uniform(10*time.Millisecond, 100*time.Millisecond),
		Think:         dist.Uniform(0, 100*time.Millisecond),
		StartSpread:   100 * time.Millisecond,
		MaxCycles:     0,
		NodeJump:      dist.Constant(time.Second),
		Latency:       network.Latency{Fast: dist.Uniform(200*time.Microsecond, 800*time.Microsecond)},
		FIFO:          true,
		PartitionLen:  dist.Constant(time.Second),
		ClogLen:       dist.Constant(100 * time.Millisecond),
		Persistence:   redis.PersistNone,
		Hz:            redis.DefaultHz,
		ReplDelay:     time.Millisecond,
		FailoverAfter: 5 * time.Second,
		NodeDown:      dist.Constant(time.Second),
		NodePauseLen:  dist.Constant(time.Second),
		PauseLen:      dist.Exponential(0, 100*time.Millisecond),
		ClientDown:    dist.Constant(time.Second),
		ZK:            defaultZooKeeper(),
	}
}

// Param describes one knob for `redlock-sim params` and for error messages.
type Param struct {
	Name    string `json:"name"`
	Group   string `json:"group"` // run, world, algorithm, workload, clocks, network, nodes, faults
	Unit    string `json:"unit"`  // count, duration, ppm, probability, 1/s, dist, bool, enum, number
	Default string `json:"default"`
	Allowed string `json:"allowed"`
	Help    string `json:"help"`
}

// knob is a Param with its accessors. set parses and range-checks a value; get returns
// the canonical text.
type knob struct {
	Param
	set func(c *Config, v string) error
	get func(c *Config) string
}

// knobTable is the registry, built once: it is read-only after package initialisation, and
// rebuilding it (closures, formatted ranges) on every Set and Get was a tenth of the cost
// of a short run in a sweep. It is built in init, not in its declaration, because the
// client knob's setter sets other knobs through the table.
var knobTable []knob

func init() { knobTable = registry() }

// registry returns every knob in its fixed order: the order of `params`, of records'
// config, of CSV columns.

func registry() []knob {
	ks := []knob{
		durKnob("duration", "run", "simulated run length", time.Millisecond, MaxDuration, "",
			func(c *Config) *time.Duration { return &c.Duration }),
		lockKnob("nodes", "world", "count", fmt.Sprintf("[1, %d]", redlock.MaxNodes),
			"N, the independent Redis masters (single-instance variants use 1)",
			func(c *Config) string { return strconv.Itoa(c.Lock.Nodes) }),
		intKnob("replicas", "world", "replicas behind each node (async replication, failover); at least 1 with variant = single-instance-failover", 0, MaxReplicas, "",
			func(c *Config) *int { return &c.Replicas }),
		intKnob("clients", "world", "client processes contending for the locks", 1, MaxClients, "",
			func(c *Config) *int { return &c.Clients }),
		intKnob("resources", "world", "distinct locks (lock, or lock1..lockK); clients take them round-robin", 1, MaxResources, "",
			func(c *Config) *int { return &c.Resources }),
	}
	ks = append(ks, knob{Param: Param{Name: "client", Group: "algorithm", Unit: "enum",
		Allowed: oneOf(profileNames()),
		Help:    "the lock library the clients behave as: its defaults and semantics (docs/clients.md); other knobs given with it, in any order, override its values"},
		set: func(c *Config, v string) error { return c.setClient(v) },
		get: func(c *Config) string { return c.Client }})
	ks = append(ks, knob{Param: Param{Name: "algorithm", Group: "algorithm", Unit: "enum",
		Allowed: oneOf(algorithmNames(algorithmTable)),
		Help:    "the lock algorithm the clients run"},
		set: func(c *Config, v string) error {
			names := algorithmNames(algorithmTable)
			for _, n := range names {
				if n == v {
					c.Algorithm = v
					return nil
				}
			}
			return asValueError("algorithm", v, oneOf(names), unknownChoice(v, names))
		},
		get: func(c *Config) string { return c.Algorithm }})
	ks = append(ks, lockKnobs()...)
	ks = append(ks, knob{Param: Param{Name: "connection", Group: "algorithm", Unit: "enum",
		Allowed: oneOf(enumNames(redis.Connections())),
		Help:    "what the Redis driver's connection does: after a request to a node times out, it is kept and the request still runs when the node continues (queued), or closed, and requests wait for a new connection's handshake (drop: go-redis with its retries off); go-redis as its defaults run it: closed after a timeout, and the command tried again on a new connection, up to 3 retries, 5 dials each, with the request's context read between them (go-redis); or ioredis's: kept through timeouts, reconnected when refused while requests wait in its offline queue, and a lost host found by the kernel's TCP retransmissions (offline-queue)"},
		set: func(c *Config, v string) error {
			conn, err := redis.ParseConnection(v)
			if err != nil {
				names := enumNames(redis.Connections())
				return asValueError("connection", v, oneOf(names), unknownChoice(v, names))
			}
			c.Connection = conn
			return nil
		},
		get: func(c *Config) string { return c.Connection.String() }})
	ks = append(ks, knob{Param: Param{Name: "validity_clock", Group: "algorithm", Unit: "enum",
		Allowed: oneOf(validityClocks[:]),
		Help: "the clock on which a holder reads its lock's validity: monotonic (Go's time.Now, a Stopwatch), " +
			"or wall (Date.now(), time.time()): a wall clock stepped back while the lock is held makes it " +
			"believe in the lock longer"},
		set: func(c *Config, v string) error {
			for i, n := range validityClocks {
				if n == v {
					c.WallValidity = i == 1
					return nil
				}
			}
			return asValueError("validity_clock", v, oneOf(validityClocks[:]), unknownChoice(v, validityClocks[:]))
		},
		get: func(c *Config) string { return validityClocks[btoi(c.WallValidity)] }})
	ks = append(ks,
		distKnob("hold", "workload", "work per hold, on the client's monotonic clock",
			func(c *Config) *dist.Dist { return &c.Hold }),
		distKnob("think", "workload", "rest between cycles, and after a failed acquire",
			func(c *Config) *dist.Dist { return &c.Think }),
		durKnob("start_spread", "workload", "clients start at uniform true times in [0, start_spread]", 0, MaxSpread, "",
			func(c *Config) *time.Duration { return &c.StartSpread }),
		durKnob("extend_every", "workload", "while working, extend the lock this often (local time)", 0, MaxSpread, " (0 = never)",
			func(c *Config) *time.Duration { return &c.ExtendEvery }),
		boolKnob("stop_at_deadline", "workload", "a careful client stops working (and writing) when validity runs out",
			func(c *Config) *bool { return &c.StopAtDeadline }),
		boolKnob("release_after_ack", "workload", "before releasing, wait for the storage to acknowledge the last write (at most a node reply timeout); else it can land after the next holder's",
			func(c *Config) *bool { return &c.ReleaseAfterAck }),
		intKnob("max_cycles", "workload", "acquires each client starts", 0, MaxCycles, " (0 = unlimited)",
			func(c *Config) *int { return &c.MaxCycles }),
		floatKnob("client_clock_drift_ppm", "clocks", "ppm", "each client's clock drifts at a uniform rate in [-v, +v] ppm", 0, MaxSpreadPPM,
			func(c *Config) *float64 { return &c.ClientDriftPPM }),
		durKnob("client_clock_offset", "clocks", "each client's wall clock is offset by a uniform draw in [-v, +v]", 0, MaxSpread, "",
			func(c *Config) *time.Duration { return &c.ClientOffset }),
		floatKnob("node_clock_drift_ppm", "clocks", "ppm", "each node's clock drifts at a uniform rate in [-v, +v] ppm", 0, MaxSpreadPPM,
			func(c *Config) *float64 { return &c.NodeDriftPPM }),
		durKnob("node_clock_offset", "clocks", "each node's wall clock is offset by a uniform draw in [-v, +v]", 0, MaxSpread, "",
			func(c *Config) *time.Duration { return &c.NodeOffset }),
		floatKnob("node_clock_jump_rate", "clocks", "1/s", "forward wall-clock jumps per node per simulated second (Poisson)", 0, MaxFaultRate,
			func(c *Config) *float64 { return &c.NodeJumpRate }),
		distKnob("node_clock_jump", "clocks", "size of each wall-clock jump (forward: keys expire early)",
			func(c *Config) *dist.Dist { return &c.NodeJump }),
		knob{Param: Param{Name: "latency", Group: "network", Unit: "dist", Allowed: latencySyntax,
			Help: "one-way delay of every link"},
			set: func(c *Config, v string) error {
				l, err := ParseLatency(v)
				if err == nil {
					err = l.Validate("latency")
				}
				if err != nil {
					return asValueError("latency", v, latencySyntax, err)
				}
				c.Latency = l
				return nil
			},
			get: func(c *Config) string { return FormatLatency(c.Latency) }},
		probKnob("loss", "network", "probability that a message is lost", func(c *Config) *float64 { return &c.Loss }),
		probKnob("dup", "network", "probability that a message arrives twice", func(c *Config) *float64 { return &c.Dup }),
		boolKnob("fifo", "network", "links keep send order, like TCP connections", func(c *Config) *bool { return &c.FIFO }),
		floatKnob("partition_rate", "network", "1/s", "random isolations of one endpoint per simulated second", 0, network.MaxRate,
			func(c *Config) *float64 { return &c.PartitionRate }),
		distKnob("partition_len", "network", "how long each random isolation lasts",
			func(c *Config) *dist.Dist { return &c.PartitionLen }),
		floatKnob("clog_rate", "network", "1/s", "random clogs of one link per simulated second (held, then delivered in a burst)", 0, network.MaxRate,
			func(c *Config) *float64 { return &c.ClogRate }),
		distKnob("clog_len", "network", "how long each random clog lasts", func(c *Config) *dist.Dist { return &c.ClogLen }),
		knob{Param: Param{Name: "persistence", Group: "nodes", Unit: "enum", Allowed: oneOf(persistenceNames()),
			Help: "what a node keeps across a crash: nothing, the AOF fsynced every second, or every write"},
			set: func(c *Config, v string) error {
				p, err := redis.ParsePersistence(v)
				if err != nil {
					names := persistenceNames()
					return asValueError("persistence", v, oneOf(names), unknownChoice(v, names))
				}
				c.Persistence = p
				return nil
			},
			get: func(c *Config) string { return c.Persistence.String() }},
		durKnob("service_time", "nodes", "true time a node spends on each command", 0, redis.MaxServiceTime, "",
			func(c *Config) *time.Duration { return &c.ServiceTime }),
		intKnob("hz", "nodes", "node cron frequency: active expiry and everysec fsync checks", 1, redis.MaxHz, "",
			func(c *Config) *int { return &c.Hz }),
		boolKnob("preload_scripts", "nodes", "nodes load the lock scripts at boot (else EVALSHA meets NOSCRIPT after a restart)",
			func(c *Config) *bool { return &c.PreloadScripts }),
		durKnob("replication_delay", "nodes", "master-to-replica delay of each write", 0, redis.MaxReplDelay, "",
			func(c *Config) *time.Duration { return &c.ReplDelay }),
		durKnob("replication_jitter", "nodes", "extra uniform replication delay in [0, v]", 0, redis.MaxReplDelay, "",
			func(c *Config) *time.Duration { return &c.ReplJitter }),
		durKnob("failover_after", "nodes", "a replica is promoted after the master has been down this long", 0, redis.MaxFailoverWait, " (0 = never)",
			func(c *Config) *time.Duration { return &c.FailoverAfter }),
		floatKnob("node_crash_rate", "faults", "1/s", "power losses of each Redlock node's master per simulated second (Poisson)", 0, MaxFaultRate,
			func(c *Config) *float64 { return &c.NodeCrashRate }),
		distKnob("node_down", "faults", "how long a crashed node stays down before it restarts",
			func(c *Config) *dist.Dist { return &c.NodeDown }),
		floatKnob("node_pause_rate", "faults", "1/s", "stalls of each Redlock node's master per simulated second (Poisson): SIGSTOP, a long fork, swapping; it keeps its connections and queue and answers late", 0, MaxFaultRate,
			func(c *Config) *float64 { return &c.NodePauseRate }),
		distKnob("node_pause_len", "faults", "how long each random stall of a node lasts",
			func(c *Config) *dist.Dist { return &c.NodePauseLen }),
		floatKnob("pause_rate", "faults", "1/s", "stop-the-world pauses per client per simulated second (Poisson)", 0, model.MaxPauseRate,
			func(c *Config) *float64 { return &c.PauseRate }),
		distKnob("pause_len", "faults", "length of each random pause", func(c *Config) *dist.Dist { return &c.PauseLen }),
		floatKnob("client_crash_rate", "faults", "1/s", "crashes of each client process per simulated second (Poisson); a holder that dies keeps the lock until its keys expire", 0, model.MaxCrashRate,
			func(c *Config) *float64 { return &c.ClientCrashRate }),
		distKnob("client_down", "faults", "how long a crashed client stays down before it restarts, holding nothing, and acquires again", func(c *Config) *dist.Dist { return &c.ClientDown }),
	)
	ks = append(ks, zkKnobs()...)
	ks = append(ks, hybridKnobs()...)
	def := DefaultConfig()
	for i := range ks {
		ks[i].Default = ks[i].get(&def)
	}
	return ks
}

// lockKnobs are the algorithm's knobs (nodes excepted, which heads the world group); they
// parse through redlock.Config.Set so both layers agree on syntax.
func lockKnobs() []knob {
	delay := fmt.Sprintf("[0s, %v]", redlock.MaxDelay)
	return []knob{
		lockKnob("variant", "algorithm", "enum", oneOf(enumNames(redlock.Variants())),
			"the algorithm, or a teaching variant with one named deviation",
			func(c *Config) string { return c.Lock.Variant.String() }),
		lockKnob("ttl", "algorithm", "duration", fmt.Sprintf("whole milliseconds in [1ms, %v]", redlock.MaxTTL),
			"the key's expiry (SET PX) and the base of validity",
			func(c *Config) string { return c.Lock.TTL.String() }),
		lockKnob("drift_factor", "algorithm", "factor", "[0, 0.5), as a number or in % or ppm (1% = 10000ppm = 0.01)", "validity loses ttl × drift_factor + drift_pad for clock drift",
			func(c *Config) string { return formatFloat(c.Lock.DriftFactor) }),
		lockKnob("drift_pad", "algorithm", "duration", delay, "constant part of the drift allowance",
			func(c *Config) string { return c.Lock.DriftPad.String() }),
		lockKnob("retry_delay", "algorithm", "duration", delay, "pause after a lost attempt",
			func(c *Config) string { return c.Lock.RetryDelay.String() }),
		lockKnob("retry_jitter", "algorithm", "duration", delay, "the pause is retry_delay plus a uniform draw in [-v, +v]",
			func(c *Config) string { return c.Lock.RetryJitter.String() }),
		lockKnob("tries", "algorithm", "count", fmt.Sprintf("[1, %d]", redlock.MaxTries), "attempts per acquire",
			func(c *Config) string { return strconv.Itoa(c.Lock.Tries) }),
		lockKnob("mode", "algorithm", "enum", oneOf(enumNames(redlock.Modes())), "SET to all nodes at once, or one after another",
			func(c *Config) string { return c.Lock.Mode.String() }),
		lockKnob("timeout", "algorithm", "duration", delay+" (0 = ttl × timeout_factor)", "how long to wait for one node's reply",
			func(c *Config) string { return c.Lock.Timeout.String() }),
		lockKnob("timeout_factor", "algorithm", "number", fmt.Sprintf("(0, %g]", redlock.MaxTimeoutFactor), "the reply timeout as a fraction of ttl, when timeout = 0",
			func(c *Config) string { return formatFloat(c.Lock.TimeoutFactor) }),
		lockKnob("context_factor", "algorithm", "number", fmt.Sprintf("[0, %g] (0 = no deadline)", redlock.MaxTimeoutFactor),
			"the deadline of the context an acquire attempt and its cleanup hand the driver, as a fraction of ttl (redsync's timeoutFactor); go-redis reads it only between dials and retries",
			func(c *Config) string { return formatFloat(c.Lock.ContextFactor) }),
		lockKnob("extend_timeout", "algorithm", "duration", delay+" (0 = as timeout)", "how long an extension waits for one node's reply",
			func(c *Config) string { return c.Lock.ExtendTimeout.String() }),
		lockKnob("release_timeout", "algorithm", "duration", delay+" (0 = as timeout)", "how long a release waits for one node's reply",
			func(c *Config) string { return c.Lock.ReleaseTimeout.String() }),
		lockKnob("fail_fast", "algorithm", "bool", "true or false", "stop waiting once the quorum outcome is decided",
			func(c *Config) string { return strconv.FormatBool(c.Lock.FailFast) }),
		lockKnob("max_extensions", "algorithm", "count", fmt.Sprintf("[0, %d]", redlock.MaxExtensions), "extensions allowed per acquired lock",
			func(c *Config) string { return strconv.Itoa(c.Lock.MaxExtensions) }),
		lockKnob("set_nx_on_extend", "algorithm", "bool", "true or false", "an extension also takes nodes whose key is gone",
			func(c *Config) string { return strconv.FormatBool(c.Lock.SetNXOnExtend) }),
		lockKnob("fencing", "algorithm", "enum", oneOf(enumNames(redlock.Fencings())),
			"take a fencing token (INCR on node 0, or on a majority) and send it with storage writes",
			func(c *Config) string { return c.Lock.Fencing.String() }),
		lockKnob("dialect", "algorithm", "enum", oneOf(enumNames(redlock.Dialects())),
			"whose scripts, SET spelling and fail-fast rule the clients use (a client profile sets it)",
			func(c *Config) string { return c.Lock.Dialect.String() }),
	}
}

// enumNames returns the names of every value of an enum, in its table's order. The
// allowed text of an enum knob is derived from the enum's own table through it, so adding a
// value (a variant, a mode, a fencing scheme) cannot leave `redlock-sim params` or an error
// message stale.
func enumNames[E fmt.Stringer](all []E) []string {
	out := make([]string, len(all))
	for i, v := range all {
		out[i] = v.String()
	}
	return out
}

// persistenceNames returns every persistence mode's name, in model's table order. Package
// model exports no list of the modes, so it walks the values up from zero for as long as
// each one's name parses back to itself: the table and its parser are then the only source.
func persistenceNames() []string {
	var out []string
	for i := 0; ; i++ {
		p := redis.Persistence(i)
		if q, err := redis.ParsePersistence(p.String()); err != nil || q != p {
			return out
		}
		out = append(out, p.String())
	}
}

// enumPrefix heads the allowed text of every enum knob; checkSyntax reads the names back
// after it.
const enumPrefix = "one of "

// oneOf is the allowed text of an enum knob whose values are names.
func oneOf(names []string) string { return enumPrefix + strings.Join(names, ", ") }

func lockKnob(name, group, unit, allowed, help string, get func(c *Config) string) knob {
	return knob{Param: Param{Name: name, Group: group, Unit: unit, Allowed: allowed, Help: help},
		set: func(c *Config, v string) error {
			if err := checkSyntax(unit, v, allowed); err != nil {
				return asValueError(name, v, allowed, err)
			}
			l := c.Lock
			err := l.Set(name, v)
			if err == nil {
				err = l.Validate()
			}
			if err != nil {
				var pe *redlock.ParamError
				if errors.As(err, &pe) && pe.Param != name {
					return fmt.Errorf("%s = %s: %w", name, v, &sim.ParamError{Param: pe.Param, Value: pe.Value, Allowed: pe.Allowed})
				}
				return outOfRange(name, v, allowed)
			}
			c.Lock = l
			return nil
		},
		get: get}
}

// checkSyntax parses v as a value of unit only to say, in the user's words, why it is not
// one; the algorithm's knobs are then set through redlock.Config.Set, so that both layers
// agree on what a value means.
func checkSyntax(unit, v, allowed string) error {
	var err error
	switch unit {
	case "duration":
		_, err = parseDur(v)
	case "count":
		_, err = parseWhole(v)
	case "number":
		_, err = parseNumber(v)
	case "factor":
		err = parseFactor(v)
	case "bool":
		_, err = parseBoolValue(v)
	case "enum":
		names := strings.Split(strings.TrimPrefix(allowed, enumPrefix), ", ")
		if !slices.Contains(names, v) {
			err = unknownChoice(v, names)
		}
	}
	return err
}

func durKnob(name, group, help string, lo, hi time.Duration, note string, field func(*Config) *time.Duration) knob {
	allowed := fmt.Sprintf("[%v, %v]%s", lo, hi, note)
	return knob{Param: Param{Name: name, Group: group, Unit: "duration", Allowed: allowed, Help: help},
		set: func(c *Config, v string) error {
			d, err := parseDur(v)
			if err != nil {
				return asValueError(name, v, allowed, err)
			}
			if d < lo || d > hi {
				return outOfRange(name, v, allowed)
			}
			*field(c) = d
			return nil
		},
		get: func(c *Config) string { return field(c).String() }}
}

func intKnob(name, group, help string, lo, hi int, note string, field func(*Config) *int) knob {
	allowed := fmt.Sprintf("[%d, %d]%s", lo, hi, note)
	return knob{Param: Param{Name: name, Group: group, Unit: "count", Allowed: allowed, Help: help},
		set: func(c *Config, v string) error {
			n, err := parseWhole(v)
			if err != nil {
				return asValueError(name, v, allowed, err)
			}
			if n < lo || n > hi {
				return outOfRange(name, v, allowed)
			}
			*field(c) = n
			return nil
		},
		get: func(c *Config) string { return strconv.Itoa(*field(c)) }}
}

func floatKnob(name, group, unit, help string, lo, hi float64, field func(*Config) *float64) knob {
	allowed := fmt.Sprintf("[%g, %g]", lo, hi)
	return knob{Param: Param{Name: name, Group: group, Unit: unit, Allowed: allowed, Help: help},
		set: func(c *Config, v string) error {
			f, err := parseNumber(v)
			if err != nil {
				return asValueError(name, v, allowed, err)
			}
			if !(f >= lo && f <= hi) {
				return outOfRange(name, v, allowed)
			}
			*field(c) = f
			return nil
		},
		get: func(c *Config) string { return formatFloat(*field(c)) }}
}

func probKnob(name, group, help string, field func(*Config) *float64) knob {
	k := floatKnob(name, group, "probability", help, 0, 1, field)
	return k
}

func boolKnob(name, group, help string, field func(*Config) *bool) knob {
	return knob{Param: Param{Name: name, Group: group, Unit: "bool", Allowed: "true or false", Help: help},
		set: func(c *Config, v string) error {
			b, err := parseBoolValue(v)
			if err != nil {
				return asValueError(name, v, "true or false", err)
			}
			*field(c) = b
			return nil
		},
		get: func(c *Config) string { return strconv.FormatBool(*field(c)) }}
}

func distKnob(name, group, help string, field func(*Config) *dist.Dist) knob {
	return knob{Param: Param{Name: name, Group: group, Unit: "dist", Allowed: DistSyntax, Help: help},
		set: func(c *Config, v string) error {
			d, err := ParseDist(v)
			if err == nil {
				err = d.Validate(name) // a backstop: ParseDist checks every range in the user's words
			}
			if err != nil {
				return asValueError(name, v, DistSyntax, err)
			}
			*field(c) = d
			return nil
		},
		get: func(c *Config) string { return FormatDist(*field(c)) }}
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Params returns every knob in registry order: name, unit, default, allowed range, help.
func Params() []Param {
	ks := knobTable
	out := make([]Param, len(ks))
	for i := range ks {
		out[i] = ks[i].Param
	}
	return out
}

// LookupParam returns the knob called name, or an *UnknownError with close matches.
func LookupParam(name string) (Param, error) {
	k, err := findKnob(knobTable, name)
	if err != nil {
		return Param{}, err
	}
	return k.Param, nil
}

// KnobNames returns the knob names in registry order.
func KnobNames() []string {
	ks := knobTable
	out := make([]string, len(ks))
	for i := range ks {
		out[i] = ks[i].Name
	}
	return out
}

func findKnob(ks []knob, name string) (*knob, error) {
	for i := range ks {
		if ks[i].Name == name {
			return &ks[i], nil
		}
	}
	return nil, Unknown("knob", name, KnobNames())
}

// Set parses value into the knob called name. A bad value is a *sim.ParamError naming the
// knob, the value and the allowed range; an unknown name is an *UnknownError with close
// matches. On error the config is unchanged.
func (c *Config) Set(name, value string) error {
	k, err := findKnob(knobTable, name)
	if err != nil {
		return err
	}
	return k.set(c, strings.TrimSpace(value))
}

// Get returns the canonical text of the knob called name, or "" for an unknown name.
func (c *Config) Get(name string) string {
	k, err := findKnob(knobTable, name)
	if err != nil {
		return ""
	}
	return k.get(c)
}

// KV is one knob setting as text.
type KV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Knobs returns every knob's canonical value, in registry order.
func (c *Config) Knobs() []KV {
	ks := knobTable
	out := make([]KV, len(ks))
	for i := range ks {
		out[i] = KV{ks[i].Name, ks[i].get(c)}
	}
	return out
}

// Apply sets each knob in order, a client profile first wherever it is named, stopping at
// the first error.
func (c *Config) Apply(kvs []KV) error {
	for _, kv := range ClientFirst(kvs) {
		if err := c.Set(kv.Name, kv.Value); err != nil {
			return err
		}
	}
	return nil
}

// Canonical validates one knob value and returns its canonical text ("200ms" for
// "0.2s"), for sweep specs: two spellings of one value make one point.
func Canonical(name, value string) (string, error) {
	c := DefaultConfig()
	if err := c.Set(name, value); err != nil {
		return "", err
	}
	return c.Get(name), nil
}

// Validate checks what single knobs cannot: the algorithm's own validation, and the
// limits a run would otherwise hit part way through (faults drawn from the rates over the
// run, messages in flight), as a *LimitError naming the knobs, their values and the limit.
func (c *Config) Validate() error {
	if err := c.Lock.Validate(); err != nil {
		var pe *redlock.ParamError
		if errors.As(err, &pe) {
			return &sim.ParamError{Param: pe.Param, Value: pe.Value, Allowed: pe.Allowed}
		}
		return err
	}
	if c.Lock.Variant == redlock.VariantSingleInstanceFailover && c.FailoverAfter == 0 {
		return &sim.ParamError{Param: "failover_after", Value: c.FailoverAfter,
			Allowed: "more than 0s with variant = single-instance-failover (0 = never: the replica would never be promoted)"}
	}
	return c.checkLimits()
}

// replicas returns the replicas the world really puts behind each node. The variant
// single-instance-failover means "one master with an asynchronously replicated replica that
// is promoted on failure" (redlock.VariantSingleInstanceFailover): just as the variant
// implies nodes = 1 (redlock.Config.Effective), it implies at least one replica, so
// `--set variant=single-instance-failover` alone runs the world its name promises rather
// than, silently, a plain single instance. Deriving beats refusing replicas = 0: a sweep
// over every variant then runs each one's own world without a per-variant replicas axis.
// An explicit replicas ≥ 1 is kept, and failover_after = 0 (never promote) is refused by
// Validate, since it contradicts the variant.
// EffectiveReplicas returns the replicas behind each node: the replicas knob, and at least
// one for the single-instance-failover variant, which needs one to fail over to.
func (c *Config) EffectiveReplicas() int {
	if c.Lock.Variant == redlock.VariantSingleInstanceFailover {
		return max(c.Replicas, 1)
	}
	return c.Replicas
}

// Limits on the faults drawn from rates per node, far beyond what a meaningful run uses.
const (
	MaxJumps   = 4096 // clock jumps of one node in one run
	MaxCrashes = 4096 // crashes of one node in one run
)

// validityClocks are the values of the validity_clock knob, false (monotonic) first.
var validityClocks = [...]string{"monotonic", "wall"}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
