package knobs

import "slices"

// Profile is a lock library as the simulated clients run it: the values of its defaults
// and the semantics it implements, as settings of the knobs that carry them (the dialect
// knob among them: whose scripts, SET spelling and fail-fast rule). It is the value of the
// `client` knob, and docs/clients.md documents each one beside its library's source.
type Profile struct {
	Name    string
	Library string // the library and the version modelled
	Help    string
	// Sets holds the profile's value of every knob in ProfileKnobs, so that choosing a
	// profile leaves nothing from another one behind.
	Sets []KV
}

// ProfileKnobs are the knobs a profile sets: everything in which the libraries differ.
// Choosing a profile sets them all; the other knobs of the same settings (Apply moves the
// profile first, whatever the order) and a scenario's knobs override its values.
var ProfileKnobs = []string{"algorithm", "ttl", "drift_factor", "drift_pad", "retry_delay",
	"retry_jitter", "tries", "mode", "timeout", "timeout_factor", "context_factor", "extend_timeout",
	"release_timeout", "fail_fast", "max_extensions", "set_nx_on_extend", "dialect", "connection",
	"extend_every", "validity_clock"}

// profileTable is the registry of client profiles, read-only after package
// initialisation. spec comes first: it is the default.
var profileTable = []Profile{
	{Name: "spec", Library: "the Redlock page (redis.io, Distributed Locks with Redis)",
		Help: "the page's algorithm with the common library defaults: ttl 10s, drift 0.01 × ttl + 2ms, " +
			"retry 200ms ± 100ms, 10 tries, per-node timeout 0.05 × ttl",
		Sets: kvs("algorithm", "redlock", "ttl", "10s", "drift_factor", "0.01", "drift_pad", "2ms",
			"retry_delay", "200ms", "retry_jitter", "100ms", "tries", "10", "mode", "multiplexed",
			"timeout", "0s", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "10", "set_nx_on_extend", "false", "dialect", "spec",
			"connection", "queued", "extend_every", "0s", "validity_clock", "monotonic")},
	{Name: "redsync", Library: "redsync v4.17.0 (github.com/go-redsync/redsync) over go-redis v9.23.0 with its default options",
		Help: "expiry 8s, drift 0.01 × ttl, retry uniform in [50ms, 250ms), 32 tries; no wait of its " +
			"own: each node's answer is go-redis's, with its defaults (5s read timeout, the connection " +
			"closed after it, 3 retries on new connections, 5 dials 100ms apart); each attempt and its " +
			"cleanup pass go-redis a context of 0.05 × ttl, which it reads only between dials and " +
			"retries, Extend and Unlock none; no extension limit; redsync's scripts and fail-fast",
		Sets: kvs("algorithm", "redlock", "ttl", "8s", "drift_factor", "0.01", "drift_pad", "0s",
			"retry_delay", "150ms", "retry_jitter", "100ms", "tries", "32", "mode", "multiplexed",
			"timeout", "1h", "timeout_factor", "0.05", "context_factor", "0.05", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "1000000", "set_nx_on_extend", "false", "dialect", "redsync",
			"connection", "go-redis", "extend_every", "0s", "validity_clock", "monotonic")},
	{Name: "node-redlock", Library: "node-redlock 4.2.0 (github.com/mike-marcacci/node-redlock; npm's latest) over ioredis 4",
		Help: "no default ttl (the spec's 10s here); drift round(0.01 × ttl) + 2ms; retry 200ms ± 100ms, " +
			"11 attempts; no timeout of its own: an attempt waits for every server (1h here, the longest " +
			"a knob allows); its own lock, extend and unlock scripts; validity on Date.now(), the wall clock",
		Sets: kvs("algorithm", "redlock", "ttl", "10s", "drift_factor", "0.01", "drift_pad", "2ms",
			"retry_delay", "200ms", "retry_jitter", "100ms", "tries", "11", "mode", "multiplexed",
			"timeout", "1h", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "1000000", "set_nx_on_extend", "false", "dialect", "node-redlock",
			"connection", "offline-queue", "extend_every", "0s", "validity_clock", "wall")},
	{Name: "node-redlock-5", Library: "node-redlock 5.0.0-beta.2 (github.com/mike-marcacci/node-redlock; a beta: npm's latest is 4.2.0) over ioredis 5",
		Help: "acquire(resources, duration) as node-redlock 5.0.0-beta.2 runs it: drift round(0.01 × ttl) + 2ms, " +
			"retry 200ms ± 100ms, 11 attempts, each ending once a quorum voted for or against; no release " +
			"between attempts (its acquire script then refuses its own leftover keys), one after the last; " +
			"validity on Date.now() from the start of acquire(), never checked (it can return an expired lock); " +
			"extensions and releases retried like acquires, releasing nothing; no timeout of its own (1h here); " +
			"ioredis's offline queue; its own scripts",
		Sets: kvs("algorithm", "redlock", "ttl", "10s", "drift_factor", "0.01", "drift_pad", "2ms",
			"retry_delay", "200ms", "retry_jitter", "100ms", "tries", "11", "mode", "multiplexed",
			"timeout", "1h", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "true", "max_extensions", "1000000", "set_nx_on_extend", "false", "dialect", "node-redlock-5",
			"connection", "offline-queue", "extend_every", "0s", "validity_clock", "wall")},
	{Name: "redlock-py", Library: "redlock-py 1.0.8 (github.com/SPSCommerce/redlock-py, master 42ef491) over redis-py 3.1 to 6.x (docs/clients.md: which redis-py)",
		Help: "no default ttl (the spec's 10s here); drift int(0.01 × ttl) + 2ms; 3 tries 200ms apart, no jitter; " +
			"SET NX PX one server after another; no timeout (redis-py's socket_timeout is None: 1h here); " +
			"its own compare-and-delete by EVAL; a won attempt that saw a server error is given up " +
			"without releasing (MultipleRedlockException); no extension; validity on time.time(), the wall clock",
		Sets: kvs("algorithm", "redlock", "ttl", "10s", "drift_factor", "0.01", "drift_pad", "2ms",
			"retry_delay", "200ms", "retry_jitter", "0s", "tries", "3", "mode", "sequential",
			"timeout", "1h", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "0", "set_nx_on_extend", "false", "dialect", "redlock-py",
			"connection", "queued", "extend_every", "0s", "validity_clock", "wall")},
	{Name: "redlock-py-redis8", Library: "redlock-py 1.0.8 (github.com/SPSCommerce/redlock-py, master 42ef491) over redis-py 8.1, what pip installs on Python 3.10 and later (docs/clients.md: which redis-py)",
		Help: "redlock-py as the redlock-py profile, over redis-py 8's defaults: no wait of its own (1h here), but " +
			"redis-py's: a 5s socket timeout, a failed or timed-out command retried up to 10 times on a new " +
			"connection and each connect up to 10 times, with a jittered backoff from 10ms to 1s; a dead " +
			"connection found as the pool hands it out is reconnected, and a connect that still fails raises",
		Sets: kvs("algorithm", "redlock", "ttl", "10s", "drift_factor", "0.01", "drift_pad", "2ms",
			"retry_delay", "200ms", "retry_jitter", "0s", "tries", "3", "mode", "sequential",
			"timeout", "1h", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "0", "set_nx_on_extend", "false", "dialect", "redlock-py",
			"connection", "redis-py-8", "extend_every", "0s", "validity_clock", "wall")},
	{Name: "redlock-net", Library: "RedLock.net 2.3.2 (github.com/samcook/RedLock.net) over StackExchange.Redis, connections it manages itself",
		Help: "no default expiry (the spec's 10s here); drift 0.01 × ttl + 2ms; 3 attempts, each after a random " +
			"wait in [0, 400ms); a 1s per-node timeout (its connections' SyncTimeout); the lock extends itself every " +
			"expiry/2 while held (5s here: set extend_every to half your ttl), its extension taking a missing key " +
			"back; its own unlock and extend scripts; a GUID as the value",
		Sets: kvs("algorithm", "redlock", "ttl", "10s", "drift_factor", "0.01", "drift_pad", "2ms",
			"retry_delay", "200ms", "retry_jitter", "200ms", "tries", "3", "mode", "multiplexed",
			"timeout", "1s", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "1000000", "set_nx_on_extend", "false", "dialect", "redlock-net",
			"connection", "queued", "extend_every", "5s", "validity_clock", "monotonic")},
	{Name: "redisson", Library: "Redisson 3.43.0 (github.com/redisson/redisson) RLock, lock() with the watchdog",
		Help: "not Redlock: a re-entrant hash lock on one master (nodes is ignored; replicas add failover) " +
			"with a 30s watchdog lease renewed every 10s; a taken lock is waited for on its pub/sub channel " +
			"or for its remaining TTL, without limit; each command waits 3s; a renewal is sent again after " +
			"1.5s up to 3 times, the trylock and unlock only with replicas; Redisson's own scripts by EVAL",
		Sets: kvs("algorithm", "redisson", "ttl", "30s", "drift_factor", "0", "drift_pad", "0s",
			"retry_delay", "1500ms", "retry_jitter", "0s", "tries", "4", "mode", "multiplexed",
			"timeout", "3s", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "1000000", "set_nx_on_extend", "false", "dialect", "spec",
			"connection", "queued", "extend_every", "10s", "validity_clock", "monotonic")},
	{Name: "redisson-redlock", Library: "Redisson 3.43.0 (github.com/redisson/redisson) RedissonRedLock (deprecated), lock() with the watchdog",
		Help: "an RLock on each master, taken one after another with RLock.tryLock(1.5s) each; a master may fail " +
			"N − (N/2 + 1) times, one more failure unlocks and starts over; N/2 + 1 masters taken is the lock, " +
			"the rest never asked, no validity check; each master's lock keeps its own 30s watchdog lease " +
			"renewed every 10s; each command waits 3s (a trylock that timed out is unlocked), a renewal is sent " +
			"again after 1.5s up to 3 times; unlock() on every master",
		Sets: kvs("algorithm", "redisson-redlock", "ttl", "30s", "drift_factor", "0", "drift_pad", "0s",
			"retry_delay", "1500ms", "retry_jitter", "0s", "tries", "4", "mode", "multiplexed",
			"timeout", "3s", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "1000000", "set_nx_on_extend", "false", "dialect", "spec",
			"connection", "queued", "extend_every", "10s", "validity_clock", "monotonic")},
	{Name: "hybrid", Library: "the seeds' hybrid lock (\"Redis Redlock vs ZooKeeper in production\"): Redlock first, Curator 5.4's InterProcessMutex as arbiter",
		Help: "not a library: the blog's composite (algorithm hybrid) of the spec profile's Redlock on the nodes " +
			"masters and, when Redis gives the acquire up, Curator's mutex on a zk_servers ensemble (its " +
			"defaults: a 60s session clamped to 40s, a 15s connection timeout, carrying on until LOST, no " +
			"token); retry_delay and tries are Redlock's and, as ExponentialBackoffRetry(retry_delay, tries − 1), " +
			"Curator's",
		Sets: kvs("algorithm", "hybrid", "ttl", "10s", "drift_factor", "0.01", "drift_pad", "2ms",
			"retry_delay", "200ms", "retry_jitter", "100ms", "tries", "10", "mode", "multiplexed",
			"timeout", "0s", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "10", "set_nx_on_extend", "false", "dialect", "spec",
			"connection", "queued", "extend_every", "0s", "validity_clock", "monotonic")},
	{Name: "curator", Library: "Apache Curator 5.4.0 (github.com/apache/curator) InterProcessMutex on ZooKeeper 3.8, CuratorFrameworkFactory's defaults",
		Help: "not Redis: an ephemeral sequential node under /<lock> on a ZooKeeper ensemble of nodes servers, " +
			"held while lowest, each waiter watching its predecessor; a 60s session (clamped by the ensemble " +
			"to 20 ticks, 40s by default) and a 15s connection timeout; ExponentialBackoffRetry(1000, 3) as " +
			"Curator's documentation writes it (retry_delay 1s, tries 4); acquire() without a limit; the " +
			"application carries on until LOST (on_suspended) and writes without a fencing token (fence_token: " +
			"czxid or sequence sends one); the Redlock knobs below are not read (its session, ensemble and " +
			"recipe knobs are the zk_* ones, session_timeout, connection_timeout, acquire_timeout, on_suspended, " +
			"fence_token and recipe)",
		Sets: kvs("algorithm", "curator", "ttl", "10s", "drift_factor", "0", "drift_pad", "0s",
			"retry_delay", "1s", "retry_jitter", "0s", "tries", "4", "mode", "multiplexed",
			"timeout", "0s", "timeout_factor", "0.05", "context_factor", "0", "extend_timeout", "0s", "release_timeout", "0s",
			"fail_fast", "false", "max_extensions", "0", "set_nx_on_extend", "false", "dialect", "spec",
			"connection", "queued", "extend_every", "0s", "validity_clock", "monotonic")},
}

func kvs(pairs ...string) []KV {
	out := make([]KV, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, KV{pairs[i], pairs[i+1]})
	}
	return out
}

// Profiles returns the registered client profiles, in table order.
func Profiles() []Profile {
	out := slices.Clone(profileTable)
	for i := range out {
		out[i].Sets = slices.Clone(out[i].Sets)
	}
	return out
}

func profileNames() []string {
	out := make([]string, len(profileTable))
	for i, p := range profileTable {
		out[i] = p.Name
	}
	return out
}

// LookupProfile returns the profile named name.
func LookupProfile(name string) (Profile, error) {
	for _, p := range profileTable {
		if p.Name == name {
			return p, nil
		}
	}
	names := profileNames()
	return Profile{}, asValueError("client", name, oneOf(names), unknownChoice(name, names))
}

// setClient applies profile name: every knob it sets, then the name itself. On error the
// config is unchanged.
func (c *Config) setClient(name string) error {
	p, err := LookupProfile(name)
	if err != nil {
		return err
	}
	next := *c
	for _, kv := range p.Sets {
		if err := next.Set(kv.Name, kv.Value); err != nil {
			return err // a bad table entry: TestProfilesSetEveryProfileKnob catches it
		}
	}
	next.Client = name
	*c = next
	return nil
}

// ClientFirst returns kvs with every `client` setting moved to the front, in order, so
// that a profile is the base the other settings override wherever it was named.
func ClientFirst(kvs []KV) []KV {
	out := make([]KV, 0, len(kvs))
	for _, kv := range kvs {
		if kv.Name == "client" {
			out = append(out, kv)
		}
	}
	for _, kv := range kvs {
		if kv.Name != "client" {
			out = append(out, kv)
		}
	}
	return out
}
