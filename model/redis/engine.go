package redis

import (
	"fmt"
	"math"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// NoExpiry is the expiry of a key that has none. No key can be given it: SET refuses
// expiries at or below 0 and PEXPIRE deletes a key whose new expiry is not in the future.
const NoExpiry int64 = math.MinInt64

// MaxKeysLimit bounds EngineConfig.MaxKeys: a Redlock world holds a handful of keys per
// node, so millions mean a runaway workload.
const MaxKeysLimit = 1 << 24

// DefaultMaxKeys is the key limit when the configuration leaves it zero.
const DefaultMaxKeys = 1 << 16

// Engine is the data path of one redis-server process: the keyspace with absolute expiries
// in milliseconds on the process's wall clock, and the script cache. It executes commands
// given as resp.Command values (the simulator's path, allocation-free) or as argv (the
// differential test's path), always at a wall time the caller supplies, so it holds no
// notion of time itself and a test can drive it with real time.
//
// Every write is recorded as an effect — the full new state of one key, with its expiry
// absolute, as Redis 7 propagates SET PX as SET PXAT — which the node feeds to its AOF
// and its replicas.
type Engine struct {
	ks      keyspace
	maxKeys int
	scripts uint8 // bit s set when standard script s is in the script cache
	effects []effect
	// userScripts is the rest of the script cache, by SHA1: scripts run by the Lua VM,
	// which starts at the first of them.
	userScripts map[string]string
	vm          *luaVM
	rand48      uint64 // math.random's generator state (see lrand48)
	// noFastPath sends the standard scripts to the Lua VM too: the test that the fast
	// path answers as the VM does sets it.
	noFastPath bool
	// ps is the subscription table, sent the messages the last command published, and
	// conn the connection the command being executed came from (SUBSCRIBE's subscriber).
	ps   pubsub
	sent []Delivery
	conn Subscriber
}

// effect is one key's new state after a write: present with a value and an expiry
// (NoExpiry for none), or deleted. Effects are idempotent and order-sensitive only per
// key, which is what lets the AOF keep only the latest effect per key between fsyncs.
type effect struct {
	key     string
	val     string
	hash    []hashField // a hash key's fields (its val is then empty); nil for a string
	exp     int64
	del     bool
	expired bool // a deletion because the key expired (traced as an expiry)
}

// EngineConfig configures an Engine.
type EngineConfig struct {
	// MaxKeys bounds the keyspace: a write that would create a key beyond it gets Redis's
	// OOM error, as a server at maxmemory with noeviction does. 0 means DefaultMaxKeys.
	MaxKeys int
}

// NewEngine returns an empty engine, or a *sim.ParamError for a bad configuration.
func NewEngine(cfg EngineConfig) (*Engine, error) {
	if cfg.MaxKeys < 0 || cfg.MaxKeys > MaxKeysLimit {
		return nil, sim.BadParam("max_keys", cfg.MaxKeys, fmt.Sprintf("[0, %d] (0 = %d)", MaxKeysLimit, DefaultMaxKeys))
	}
	if cfg.MaxKeys == 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	return &Engine{ks: newKeyspace(), maxKeys: cfg.MaxKeys, rand48: rand48Start}, nil
}

// Len returns the number of keys held, including keys that have expired but were not yet
// removed (as DBSIZE counts them).
func (e *Engine) Len() int { return e.ks.len() }

// ScriptLoaded reports whether the standard script s is in the script cache.
func (e *Engine) ScriptLoaded(s resp.Script) bool { return s.Standard() && e.scripts&(1<<s) != 0 }

// LoadScript puts the standard script s in the script cache, as SCRIPT LOAD does.
func (e *Engine) LoadScript(s resp.Script) {
	if s.Standard() {
		e.scripts |= 1 << s
	}
}

// FlushScripts empties the script cache, as SCRIPT FLUSH (or a restart) does.
func (e *Engine) FlushScripts() {
	e.scripts = 0
	clear(e.userScripts)
}

// Reset empties the keyspace and the script cache: a process that just started.
func (e *Engine) Reset() {
	e.ks.clear()
	e.FlushScripts()
	e.effects = e.effects[:0]
	e.rand48 = rand48Start
	e.resetPubSub()
}

// NextExpiry returns the earliest expiry among the keys, if any key has one.
func (e *Engine) NextExpiry() (int64, bool) {
	i, ok := e.ks.minExp()
	if !ok {
		return 0, false
	}
	return e.ks.ents[i].exp, true
}

// ExpireDue removes every key whose expiry has passed at wall time nowMs (nowMs > expiry,
// as Redis's keyIsExpired) and returns how many it removed: active expiry. The removals
// are recorded as effects.
func (e *Engine) ExpireDue(nowMs int64) int {
	e.effects = e.effects[:0]
	n := 0
	for {
		i, ok := e.ks.minExp()
		if !ok || nowMs <= e.ks.ents[i].exp {
			return n
		}
		e.expire(i)
		n++
	}
}

// ExecFrom is Exec for a command that came on connection conn: the subscriber, if the
// command is SUBSCRIBE or UNSUBSCRIBE.
func (e *Engine) ExecFrom(conn Subscriber, c resp.Command, nowMs int64) resp.Reply {
	e.conn = conn
	return e.exec(&c, nowMs)
}

// Exec executes one command at wall time nowMs (milliseconds, the node's gettimeofday)
// and returns Redis's reply, exactly as a redis-server 7 would answer c.Args(). It
// allocates nothing on the paths Redlock uses.
func (e *Engine) Exec(c resp.Command, nowMs int64) resp.Reply { return e.exec(&c, nowMs) }

// exec is Exec without copying the command, for the node's hot path.
func (e *Engine) exec(c *resp.Command, nowMs int64) resp.Reply {
	e.effects = e.effects[:0]
	switch c.Op {
	case resp.OpSet:
		o := setOpts{cond: c.Cond}
		if c.TTL > 0 {
			var r resp.Reply
			if o.exp, r = setExpiry(c, nowMs); r.Kind == resp.ReplyError {
				return r
			}
			o.hasExp = true
		}
		return e.set(c.Key, c.Value, o, nowMs)
	case resp.OpGet:
		return e.get(c.Key, nowMs)
	case resp.OpDel:
		return resp.IntReply(e.del(c.Key, nowMs))
	case resp.OpPExpire:
		return e.pexpire(c.Key, c.TTL.Milliseconds(), 0, nowMs)
	case resp.OpPTTL:
		return e.pttl(c.Key, nowMs)
	case resp.OpIncr:
		return e.incr(c.Key, nowMs)
	case resp.OpSubscribe:
		return e.Subscribe(e.conn, c.Key)
	case resp.OpUnsubscribe:
		return e.Unsubscribe(e.conn, c.Key)
	case resp.OpEval:
		if !c.Script.Standard() {
			return e.Do(c.Args(), nowMs) // a library's script: the Lua VM's
		}
		e.LoadScript(c.Script)
		return e.runScript(c.Script, cmdArgs(c), nowMs)
	case resp.OpEvalSHA:
		if !c.Script.Standard() {
			return e.Do(c.Args(), nowMs)
		}
		if !e.ScriptLoaded(c.Script) {
			return errNoScript
		}
		return e.runScript(c.Script, cmdArgs(c), nowMs)
	default:
		return e.Do(c.Args(), nowMs)
	}
}

// setExpiry turns SET's PX/EX of a Command into an absolute expiry, with Redis's checks.
func setExpiry(c *resp.Command, nowMs int64) (int64, resp.Reply) {
	var ms int64
	if c.InSecs {
		s := int64(c.TTL / time.Second)
		if s <= 0 {
			return 0, errExpireSet
		}
		ms = s * 1000
	} else {
		ms = c.TTL.Milliseconds()
		if ms <= 0 {
			return 0, errExpireSet
		}
	}
	when := ms + nowMs
	if when <= 0 {
		return 0, errExpireSet
	}
	return when, resp.Reply{}
}

// cmdArgs gives a script its KEYS[1], ARGV[1] and ARGV[2] as Command.Args renders them.
func cmdArgs(c *resp.Command) scriptArgs {
	a := scriptArgs{k1: strArg(c.Key), a1: strArg(c.Value)}
	if c.Script.TTLArg() {
		a.a2 = optArg{n: c.TTL.Milliseconds(), kind: argInt}
	}
	return a
}

// The replies the engine reuses; building them once keeps the hot path allocation-free.
var (
	errSyntax      = errReply("ERR syntax error")
	errNotInt      = errReply("ERR value is not an integer or out of range")
	errOverflow    = errReply("ERR increment or decrement would overflow")
	errNoScript    = errReply("NOSCRIPT No matching script. Please use EVAL.")
	errWrongType   = errReply("WRONGTYPE Operation against a key holding the wrong kind of value")
	errOOM         = errReply("OOM command not allowed when used memory > 'maxmemory'.")
	errExpireSet   = errReply("ERR invalid expire time in 'set' command")
	errExpirePExp  = errReply("ERR invalid expire time in 'pexpire' command")
	errLuaArgs     = errReply("ERR Lua redis lib command arguments must be strings or integers")
	errTooManyKeys = errReply("ERR Number of keys can't be greater than number of args")
	errNegKeys     = errReply("ERR Number of keys can't be negative")
)

func errReply(s string) resp.Reply { return resp.Reply{Kind: resp.ReplyError, Str: s} }

func bulk(s string) resp.Reply { return resp.Reply{Kind: resp.ReplyBulk, Str: s} }

// lookup finds key, first removing it if it has expired at nowMs (lazy expiry, as
// Redis's expireIfNeeded: a key is gone once now > expiry).
func (e *Engine) lookup(key string, nowMs int64) (int32, bool) {
	i, ok := e.ks.find(key)
	if !ok {
		return 0, false
	}
	if e.ks.hasExp(i) && nowMs > e.ks.ents[i].exp {
		e.expire(i)
		return 0, false
	}
	return i, true
}

func (e *Engine) expire(i int32) {
	e.effects = append(e.effects, effect{key: e.ks.ents[i].key, exp: NoExpiry, del: true, expired: true})
	e.ks.remove(i)
}

func (e *Engine) remove(i int32) {
	e.effects = append(e.effects, effect{key: e.ks.ents[i].key, exp: NoExpiry, del: true})
	e.ks.remove(i)
}

// logKey records slot i's new state.
func (e *Engine) logKey(i int32) {
	k := &e.ks.ents[i]
	exp := NoExpiry
	if k.hpos >= 0 {
		exp = k.exp
	}
	e.effects = append(e.effects, effect{key: k.key, val: k.val, hash: k.hash.snapshot(), exp: exp})
}

type setOpts struct {
	cond    resp.Cond
	get     bool  // SET ... GET: reply with the old value
	keepTTL bool  // SET ... KEEPTTL
	hasExp  bool  // PX/EX/PXAT/EXAT given
	exp     int64 // the absolute expiry when hasExp
}

func (e *Engine) set(key, val string, o setOpts, nowMs int64) resp.Reply {
	i, found := e.lookup(key, nowMs)
	reply := resp.OK
	if o.get {
		reply = resp.Nil
		if found {
			if e.ks.ents[i].hash != nil {
				return errWrongType
			}
			reply = bulk(e.ks.ents[i].val)
		}
	}
	if (o.cond == resp.CondNX && found) || (o.cond == resp.CondXX && !found) {
		if o.get {
			return reply
		}
		return resp.Nil
	}
	if !found {
		if e.ks.len() >= e.maxKeys {
			return errOOM
		}
		i = e.ks.insert(key, val)
	} else {
		e.ks.ents[i].val, e.ks.ents[i].hash = val, nil // SET replaces a key of any type
		if !o.keepTTL {
			e.ks.clearExp(i)
		}
	}
	if o.hasExp {
		e.ks.setExp(i, o.exp)
	}
	e.logKey(i)
	return reply
}

func (e *Engine) get(key string, nowMs int64) resp.Reply {
	if i, ok := e.lookup(key, nowMs); ok {
		if e.ks.ents[i].hash != nil {
			return errWrongType
		}
		return bulk(e.ks.ents[i].val)
	}
	return resp.Nil
}

func (e *Engine) del(key string, nowMs int64) int64 {
	i, ok := e.lookup(key, nowMs)
	if !ok {
		return 0
	}
	e.remove(i)
	return 1
}

func (e *Engine) pttl(key string, nowMs int64) resp.Reply {
	i, ok := e.lookup(key, nowMs)
	switch {
	case !ok:
		return resp.IntReply(-2)
	case !e.ks.hasExp(i):
		return resp.IntReply(-1)
	}
	return resp.IntReply(max(e.ks.ents[i].exp-nowMs, 0))
}

func (e *Engine) incr(key string, nowMs int64) resp.Reply { return e.incrBy(key, 1, nowMs) }

// incrBy is INCRBY (and INCR, by 1): the value must parse as a 64-bit integer, and a sum
// beyond it is refused, as incrDecrCommand does. The expiry stays (dbOverwrite).
func (e *Engine) incrBy(key string, by int64, nowMs int64) resp.Reply {
	i, found := e.lookup(key, nowMs)
	var old int64
	if found {
		if e.ks.ents[i].hash != nil {
			return errWrongType
		}
		var ok bool
		if old, ok = parseInt(e.ks.ents[i].val); !ok {
			return errNotInt
		}
	}
	if (by < 0 && old < 0 && by < math.MinInt64-old) || (by > 0 && old > 0 && by > math.MaxInt64-old) {
		return errOverflow
	}
	if !found {
		if e.ks.len() >= e.maxKeys {
			return errOOM
		}
		i = e.ks.insert(key, "")
	}
	e.ks.ents[i].val = formatInt(old + by)
	e.logKey(i)
	return resp.IntReply(old + by)
}

// exists counts key if it is there (EXISTS counts a key named twice twice).
func (e *Engine) exists(key string, nowMs int64) int64 {
	if _, ok := e.lookup(key, nowMs); ok {
		return 1
	}
	return 0
}

// ttl is TTL: PTTL in seconds, rounded to the nearest (ttlGenericCommand's (ttl+500)/1000).
func (e *Engine) ttl(key string, nowMs int64) resp.Reply {
	r := e.pttl(key, nowMs)
	if r.Int >= 0 {
		r.Int = (r.Int + 500) / 1000
	}
	return r
}

// persist is PERSIST: 1 when the key had an expiry and now has none, else 0.
func (e *Engine) persist(key string, nowMs int64) resp.Reply {
	i, ok := e.lookup(key, nowMs)
	if !ok || !e.ks.hasExp(i) {
		return resp.IntReply(0)
	}
	e.ks.clearExp(i)
	e.logKey(i)
	return resp.IntReply(1)
}

// PEXPIRE's NX/XX/GT/LT options.
const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

func (e *Engine) pexpire(key string, ms int64, flags int, nowMs int64) resp.Reply {
	// Redis checks `when > LLONG_MAX - basetime` with wrapping arithmetic; so do we.
	if ms > math.MaxInt64-nowMs {
		return errExpirePExp
	}
	return e.expireAt(key, ms+nowMs, flags, nowMs)
}

// expireAt is the end of Redis 7.0's expireGenericCommand, shared by PEXPIRE, EXPIRE,
// PEXPIREAT and EXPIREAT once each has turned its argument into an absolute expiry when
// (ms): the NX/XX/GT/LT conditions, then an expiry not in the future deletes the key.
func (e *Engine) expireAt(key string, when int64, flags int, nowMs int64) resp.Reply {
	i, ok := e.lookup(key, nowMs)
	if !ok {
		return resp.IntReply(0)
	}
	if flags != 0 && !expireAllowed(flags, e.ks.hasExp(i), e.ks.ents[i].exp, when) {
		return resp.IntReply(0)
	}
	if when <= nowMs {
		// checkAlreadyExpired: a master turns an expiry in the past into a DEL.
		e.remove(i)
		return resp.IntReply(1)
	}
	e.ks.setExp(i, when)
	e.logKey(i)
	return resp.IntReply(1)
}

// expireAllowed applies PEXPIRE's NX/XX/GT/LT; a key without expiry counts as infinite.
func expireAllowed(flags int, has bool, cur, when int64) bool {
	switch {
	case flags&expNX != 0 && has:
		return false
	case flags&expXX != 0 && !has:
		return false
	case flags&expGT != 0 && (!has || when <= cur):
		return false
	case flags&expLT != 0 && has && when >= cur:
		return false
	}
	return true
}

// Peek returns key's value and absolute expiry (NoExpiry for none) as a GET at nowMs
// would see it, without GET's side effects: nothing is expired or recorded. For a hash
// key the value is its first field's name: the holder of a Redisson lock, whose field is
// the holder's lock name. Tests, the timeline and the viewer inspect a node with it.
func (e *Engine) Peek(key string, nowMs int64) (val string, expMs int64, ok bool) {
	i, found := e.ks.find(key)
	if !found {
		return "", NoExpiry, false
	}
	k := &e.ks.ents[i]
	val, expMs = k.val, NoExpiry
	if k.hash != nil && len(k.hash.fields) > 0 {
		val = k.hash.fields[0].f
	}
	if k.hpos >= 0 {
		if nowMs > k.exp {
			return "", NoExpiry, false
		}
		expMs = k.exp
	}
	return val, expMs, true
}

// apply installs a key state received from elsewhere (a master's write, the AOF on
// reload, a full sync) as it is: no expiry check, no effect recorded, no key limit (the
// sender enforced it).
func (e *Engine) apply(ef *effect) {
	i, found := e.ks.find(ef.key)
	if ef.del {
		if found {
			e.ks.remove(i)
		}
		return
	}
	if !found {
		i = e.ks.insert(ef.key, ef.val)
	} else {
		e.ks.ents[i].val = ef.val
	}
	e.ks.ents[i].hash = hashOf(ef.hash)
	if ef.exp == NoExpiry {
		e.ks.clearExp(i)
	} else {
		e.ks.setExp(i, ef.exp)
	}
}

// copyKeys replaces e's keys with src's, in src's slab order (a full resynchronisation).
func (e *Engine) copyKeys(src *Engine) {
	e.ks.clear()
	e.effects = e.effects[:0]
	src.ks.each(func(k *kentry) {
		i := e.ks.insert(k.key, k.val)
		e.ks.ents[i].hash = hashOf(k.hash.snapshot())
		if k.hpos >= 0 {
			e.ks.setExp(i, k.exp)
		}
	})
}
