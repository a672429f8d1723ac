package resp

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Op names a Redis command. The set is exactly what Redlock implementations send, plus
// GET for inspection: the simulated node (package model) implements these and nothing else.
type Op uint8

// The commands, in redis-cli spelling.
const (
	OpSet     Op = iota + 1 // SET key value [NX|XX] [PX ms|EX s]
	OpGet                   // GET key
	OpDel                   // DEL key
	OpPExpire               // PEXPIRE key ms
	OpPTTL                  // PTTL key
	OpIncr                  // INCR key (fencing counters)
	OpEval                  // EVAL <script source> 1 key argv...
	OpEvalSHA               // EVALSHA <sha1> 1 key argv...
	// OpPing is PING: the round trip a client that opens a new connection waits for
	// before it sends a command on it (go-redis's HELLO handshake).
	OpPing
	// OpSubscribe is SUBSCRIBE channel (Key): a client waiting for a lock's release
	// message (Redisson) listens on the lock's channel. Its subscriptions live on a
	// connection of their own, as Redisson and go-redis keep them.
	OpSubscribe
	// OpUnsubscribe is UNSUBSCRIBE channel (Key).
	OpUnsubscribe
	// OpWait is WAIT numreplicas (Value, in decimal) timeout (TTL): the master answers,
	// once that many replicas acknowledged every write it made before the WAIT or the
	// timeout passed (0: none), how many did. Redisson sends it after a lock's script when
	// the master has replicas. See Wait.
	OpWait
	// OpInfo is INFO replication: the master's replication section, whose
	// connected_slaves line Redisson reads to know how many replicas a WAIT should wait
	// for.
	OpInfo
	opEnd // one past the last Op; TestEveryOpHasItsAttributes holds each below it to a row of ops
)

// Route says which part of a simulated Redis server answers a command.
type Route uint8

// The routes.
const (
	// RouteNode: the node's engine runs it, in the node's queue, on its own clock.
	RouteNode Route = iota + 1
	// RouteGroup: the node's replication group answers it, from what it knows of its
	// replicas (WAIT, INFO replication).
	RouteGroup
)

// ops holds each Op's attributes, indexed by Op: its redis-cli name and its route. A new
// Op gets its row here; one without fails TestEveryOpHasItsAttributes.
var ops = [opEnd]struct {
	name  string
	route Route
}{
	OpSet: {"SET", RouteNode}, OpGet: {"GET", RouteNode}, OpDel: {"DEL", RouteNode},
	OpPExpire: {"PEXPIRE", RouteNode}, OpPTTL: {"PTTL", RouteNode}, OpIncr: {"INCR", RouteNode},
	OpEval: {"EVAL", RouteNode}, OpEvalSHA: {"EVALSHA", RouteNode}, OpPing: {"PING", RouteNode},
	OpSubscribe: {"SUBSCRIBE", RouteNode}, OpUnsubscribe: {"UNSUBSCRIBE", RouteNode},
	OpWait: {"WAIT", RouteGroup}, OpInfo: {"INFO", RouteGroup},
}

func (o Op) String() string {
	if int(o) < len(ops) && ops[o].name != "" {
		return ops[o].name
	}
	return "OP(" + strconv.Itoa(int(o)) + ")"
}

// Route returns which part of a Redis server answers o. An Op with no row (0, or past the
// last) goes to the node, whose engine refuses what it does not know. It reads a bit of
// groupRouted, one constant word, on the node's command path rather than ops' rows.
func (o Op) Route() Route {
	if o < 64 && groupRouted>>o&1 == 1 {
		return RouteGroup
	}
	return RouteNode
}

// groupRouted has bit o set for each Op whose row in ops routes it to the group;
// TestEveryOpHasItsAttributes holds the two to each other.
const groupRouted uint64 = 1<<OpWait | 1<<OpInfo

// Cond is SET's existence condition.
type Cond uint8

// The SET conditions.
const (
	CondNone Cond = iota
	CondNX        // only if the key does not exist
	CondXX        // only if the key exists
)

// Script names a Lua script a lock client sends: one of the standard Redlock scripts, or a
// lock library's own script, byte for byte as that library sends it. The exact source text
// lives here, once, and everything else (the simulated node, the real driver, traces)
// derives the digest and the argv from it.
type Script uint8

// The scripts. ARGV[1] is the lock value, ARGV[2] (when the script takes one) the TTL in ms.
const (
	ScriptNone Script = iota
	// ScriptRelease deletes the key only if it holds our value (compare-and-delete).
	ScriptRelease
	// ScriptExtend resets the TTL only if the key holds our value (compare-and-pexpire).
	ScriptExtend
	// ScriptExtendOrSet extends like ScriptExtend, or takes the key with SET NX PX when it
	// is missing, in the spirit of redsync's WithSetNXOnExtend. It is not redsync's script
	// byte for byte (ScriptRedsyncTouchSetNX is): redsync tries the SET NX whenever the
	// value does not match (which can only succeed when the key is missing, so the keys end
	// the same) and then answers 1, where this script answers SET's OK; the machine counts
	// both as extended.
	ScriptExtendOrSet
	// ScriptRedsyncDelete is redsync v4.17.0's release (deleteScript): DEL's 1 when the
	// value is ours, 0 when another value is there, -1 when the key is missing.
	ScriptRedsyncDelete
	// ScriptRedsyncTouch is redsync v4.17.0's extension (touchScript): PEXPIRE when the
	// value is ours, else 0.
	ScriptRedsyncTouch
	// ScriptRedsyncTouchSetNX is redsync v4.17.0's extension with WithSetNXOnExtend
	// (touchWithSetNXScript): PEXPIRE when the value is ours, else SET NX PX, answering 1
	// when that took the key and 0 otherwise.
	ScriptRedsyncTouchSetNX
	// ScriptNodeRedlockLock is node-redlock 4.2.0's acquire (lockScript): 0 when any of
	// KEYS exists (its own leftover key too), else SET PX on each and the number of KEYS.
	ScriptNodeRedlockLock
	// ScriptNodeRedlockExtend is node-redlock 4.2.0's extension (extendScript): 0 unless
	// every key holds the value, else SET PX on each and the number of KEYS.
	ScriptNodeRedlockExtend
	// ScriptNodeRedlockUnlock is node-redlock 4.2.0's release (unlockScript): DEL of each
	// key that holds the value; the number deleted.
	ScriptNodeRedlockUnlock
	// ScriptRedissonTryLock is Redisson 3.43.0's RLock acquire (tryLockInnerAsync): a hash
	// whose field, the holder's lock name (Value), counts re-entries; nil when taken (or
	// re-entered) with the lease (TTL) set, else the key's PTTL. Its ARGV is the lease,
	// then the lock name.
	ScriptRedissonTryLock
	// ScriptRedissonRenew is Redisson 3.43.0's watchdog renewal (renewExpirationAsync): 1
	// after PEXPIRE with the lease when the field is there, else 0. ARGV as TryLock's.
	ScriptRedissonRenew
	// ScriptRedissonUnlock is Redisson 3.43.0's RLock release (unlockInnerAsync): with
	// three keys (the lock, its channel, and an unlock latch that makes a retried unlock
	// idempotent) it decrements the field's count and, at 0, deletes the lock and
	// publishes the unlock message on the channel; nil when the field is not ours. Value
	// holds the lock name, then a NUL byte and the unlock's request id (the latch key's
	// suffix), see RedissonUnlockValue.
	ScriptRedissonUnlock
	// ScriptRedlockPyUnlock is redlock-py 1.0.8's release (Redlock.unlock_script): the
	// page's compare-and-delete with its own whitespace, always sent by EVAL.
	ScriptRedlockPyUnlock
	// ScriptRedlockNetUnlock is RedLock.net 2.3.2's release (Unlock.lua): DEL's 1 when
	// the value is ours, else 0.
	ScriptRedlockNetUnlock
	// ScriptRedlockNetExtend is RedLock.net 2.3.2's extension (Extend.lua): PEXPIRE when
	// the value is ours; SET PX, answering 1, when the key is gone; -1 when another value
	// is there.
	ScriptRedlockNetExtend
	// ScriptNodeRedlock5Acquire is node-redlock 5.0.0-beta.2's ACQUIRE_SCRIPT: 0 when any
	// of KEYS exists (its own leftover key too), else SET PX on each and the number of KEYS.
	ScriptNodeRedlock5Acquire
	// ScriptNodeRedlock5Extend is node-redlock 5.0.0-beta.2's EXTEND_SCRIPT: 0 unless
	// every key holds the value, else SET PX on each and the number of KEYS.
	ScriptNodeRedlock5Extend
	// ScriptNodeRedlock5Release is node-redlock 5.0.0-beta.2's RELEASE_SCRIPT: DEL of each
	// key that holds the value; the number deleted.
	ScriptNodeRedlock5Release
	scriptEnd
)

// Redisson's names for a lock's keys and messages (RedissonLock, LockPubSub), with the
// defaults of Redisson 3.43.0's Config: the unlock latch lives for (timeout +
// retryInterval) × retryAttempts = (3000 + 1500) × 3 ms.
const (
	RedissonUnlockMessage   = "0"
	RedissonLatchTimeoutMs  = 13500
	redissonChannelPrefix   = "redisson_lock__channel:"
	redissonLatchPrefix     = "redisson_unlock_latch:"
	redissonUnlockSeparator = "\x00"
)

// RedissonChannel returns the channel Redisson publishes a lock's release on
// (RedissonBaseLock.getChannelName via prefixName): the name in braces, unless it has
// braces already.
func RedissonChannel(lock string) string { return redissonChannelPrefix + redissonBraced(lock) }

// RedissonLatch returns the unlock latch key of one unlock request (getUnlockLatchName).
func RedissonLatch(lock, requestID string) string {
	return redissonLatchPrefix + redissonBraced(lock) + ":" + requestID
}

func redissonBraced(name string) string {
	if strings.Contains(name, "{") {
		return name
	}
	return "{" + name + "}"
}

// RedissonUnlockValue packs ScriptRedissonUnlock's two strings into a Command's Value.
func RedissonUnlockValue(lockName, requestID string) string {
	return lockName + redissonUnlockSeparator + requestID
}

// scriptArgv returns the KEYS and ARGV of c's script, as its library lays them out.
func scriptArgv(c *Command, ms string) (keys, argv []string) {
	switch c.Script {
	case ScriptRedissonTryLock, ScriptRedissonRenew:
		return []string{c.Key}, []string{ms, c.Value}
	case ScriptRedissonUnlock:
		name, id, _ := strings.Cut(c.Value, redissonUnlockSeparator)
		return []string{c.Key, RedissonChannel(c.Key), RedissonLatch(c.Key, id)},
			[]string{RedissonUnlockMessage, ms, name, "PUBLISH", strconv.Itoa(RedissonLatchTimeoutMs)}
	}
	if c.Script.TTLArg() {
		return []string{c.Key}, []string{c.Value, ms}
	}
	return []string{c.Key}, []string{c.Value}
}

// libscripts holds the lock libraries' scripts, each file exactly the bytes its library
// sends (provenance and digests in libscripts/SOURCES.md).
//
//go:embed libscripts/*.lua
var libscripts embed.FS

// script describes one Script: its source, its name in traces, whether its ARGV carries
// the TTL, and its digest.
type script struct {
	src, name string
	ttlArg    bool
	sha       string
}

var scripts = func() (t [scriptEnd]script) {
	lib := func(file string) string {
		b, err := libscripts.ReadFile("libscripts/" + file)
		if err != nil {
			panic("resp: a library script is missing from the binary: " + err.Error())
		}
		return string(b)
	}
	t[ScriptRelease] = script{name: "release",
		src: `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`}
	t[ScriptExtend] = script{name: "extend", ttlArg: true,
		src: `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) else return 0 end`}
	t[ScriptExtendOrSet] = script{name: "extend-or-set", ttlArg: true,
		src: `local v = redis.call("GET", KEYS[1]) ` +
			`if v == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) ` +
			`elseif v == false then return redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX") ` +
			`else return 0 end`}
	t[ScriptRedsyncDelete] = script{name: "redsync-delete", src: lib("redsync-v4.17.0-delete.lua")}
	t[ScriptRedsyncTouch] = script{name: "redsync-touch", ttlArg: true, src: lib("redsync-v4.17.0-touch.lua")}
	t[ScriptRedsyncTouchSetNX] = script{name: "redsync-touch-setnx", ttlArg: true, src: lib("redsync-v4.17.0-touch-setnx.lua")}
	t[ScriptNodeRedlockLock] = script{name: "node-redlock-lock", ttlArg: true, src: lib("node-redlock-v4.2.0-lock.lua")}
	t[ScriptNodeRedlockExtend] = script{name: "node-redlock-extend", ttlArg: true, src: lib("node-redlock-v4.2.0-extend.lua")}
	t[ScriptNodeRedlockUnlock] = script{name: "node-redlock-unlock", src: lib("node-redlock-v4.2.0-unlock.lua")}
	t[ScriptRedissonTryLock] = script{name: "redisson-trylock", ttlArg: true, src: lib("redisson-3.43.0-trylock.lua")}
	t[ScriptRedissonRenew] = script{name: "redisson-renew", ttlArg: true, src: lib("redisson-3.43.0-renew.lua")}
	t[ScriptRedlockNetUnlock] = script{name: "redlock-net-unlock", src: lib("redlock.net-2.3.2-unlock.lua")}
	t[ScriptRedlockNetExtend] = script{name: "redlock-net-extend", ttlArg: true, src: lib("redlock.net-2.3.2-extend.lua")}
	t[ScriptRedlockPyUnlock] = script{name: "redlock-py-unlock", src: lib("redlock-py-1.0.8-unlock.lua")}
	t[ScriptRedissonUnlock] = script{name: "redisson-unlock", ttlArg: true, src: lib("redisson-3.43.0-unlock.lua")}
	t[ScriptNodeRedlock5Acquire] = script{name: "node-redlock-5-acquire", ttlArg: true, src: lib("node-redlock-v5.0.0-beta.2-acquire.lua")}
	t[ScriptNodeRedlock5Extend] = script{name: "node-redlock-5-extend", ttlArg: true, src: lib("node-redlock-v5.0.0-beta.2-extend.lua")}
	t[ScriptNodeRedlock5Release] = script{name: "node-redlock-5-release", src: lib("node-redlock-v5.0.0-beta.2-release.lua")}
	for i := range t {
		if t[i].src != "" {
			sum := sha1.Sum([]byte(t[i].src))
			t[i].sha = hex.EncodeToString(sum[:])
		}
	}
	return t
}()

// Standard reports whether s is one of the standard Redlock scripts, which the simulated
// node runs on a native fast path held to the Lua VM's answers; a library's script runs in
// the VM.
func (s Script) Standard() bool { return s >= ScriptRelease && s <= ScriptExtendOrSet }

// TTLArg reports whether the script takes the TTL in milliseconds as ARGV[2].
func (s Script) TTLArg() bool { return s < scriptEnd && scripts[s].ttlArg }

// Source returns the Lua text of the script, as sent by EVAL or SCRIPT LOAD.
func (s Script) Source() string {
	if s < scriptEnd {
		return scripts[s].src
	}
	return ""
}

// SHA returns the lowercase hex SHA1 of the script's source, as Redis computes it.
func (s Script) SHA() string {
	if s < scriptEnd {
		return scripts[s].sha
	}
	return ""
}

func (s Script) String() string {
	if s < scriptEnd && scripts[s].name != "" {
		return scripts[s].name
	}
	return "script(" + strconv.Itoa(int(s)) + ")"
}

// ScriptBySHA returns the standard script with the given digest, or ScriptNone: the
// scripts the simulated node may answer on its fast path.
func ScriptBySHA(sha string) Script {
	for s := ScriptRelease; s.Standard(); s++ {
		if strings.EqualFold(scripts[s].sha, sha) {
			return s
		}
	}
	return ScriptNone
}

// Command is one Redis command as a value: the redlock state machine emits it, the
// simulated node executes it, the real driver sends it, and traces print it. It is a
// plain struct so that emitting and executing commands allocates nothing; its one-byte
// fields come last, together, so that it is 48 bytes rather than 64.
type Command struct {
	Key    string
	Value  string        // SET's value; a script's ARGV[1]
	TTL    time.Duration // SET PX (or EX when InSecs), PEXPIRE, a script's ARGV[2]; 0 = none
	Op     Op
	Cond   Cond   // SET NX / XX
	InSecs bool   // render SET's TTL as EX seconds instead of PX milliseconds
	Script Script // which script EVAL / EVALSHA runs
}

// Set returns SET key value NX PX ttl, the acquire command of Redlock.
func Set(key, value string, cond Cond, ttl time.Duration) Command {
	return Command{Op: OpSet, Key: key, Value: value, Cond: cond, TTL: ttl}
}

// EvalSHA returns EVALSHA of a standard script on key with the lock value (and TTL for the
// extend scripts).
func EvalSHA(s Script, key, value string, ttl time.Duration) Command {
	return Command{Op: OpEvalSHA, Key: key, Value: value, TTL: ttl, Script: s}
}

// Wait returns WAIT numreplicas timeout.
func Wait(numreplicas int, timeout time.Duration) Command {
	return Command{Op: OpWait, Value: strconv.Itoa(numreplicas), TTL: timeout}
}

// Args returns the command's argv as a Redis client sends it. It allocates, so the
// simulator never calls it on its hot path; the real driver and the differential test do.
func (c Command) Args() []string {
	ms := strconv.FormatInt(c.TTL.Milliseconds(), 10)
	switch c.Op {
	case OpSet:
		args := []string{"SET", c.Key, c.Value}
		switch c.Cond {
		case CondNX:
			args = append(args, "NX")
		case CondXX:
			args = append(args, "XX")
		}
		switch {
		case c.TTL > 0 && c.InSecs:
			args = append(args, "EX", strconv.FormatInt(int64(c.TTL/time.Second), 10))
		case c.TTL > 0:
			args = append(args, "PX", ms)
		}
		return args
	case OpPExpire:
		return []string{"PEXPIRE", c.Key, ms}
	case OpPing:
		return []string{"PING"}
	case OpWait:
		return []string{"WAIT", c.Value, ms}
	case OpInfo:
		return []string{"INFO", "replication"}
	case OpEval, OpEvalSHA:
		head := c.Script.SHA()
		if c.Op == OpEval {
			head = c.Script.Source()
		}
		keys, argv := scriptArgv(&c, ms)
		args := append([]string{c.Op.String(), head, strconv.Itoa(len(keys))}, keys...)
		return append(args, argv...)
	default:
		return []string{c.Op.String(), c.Key}
	}
}

// String renders the command in redis-cli syntax. A script is shown by name
// (EVALSHA <release> 1 lock v) rather than by digest or source, so traces stay readable.
func (c Command) String() string {
	args := c.Args()
	if c.Op == OpEval || c.Op == OpEvalSHA {
		args[1] = "<" + c.Script.String() + ">"
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteArg(a))
	}
	return b.String()
}

// quoteArg quotes an argument the way redis-cli would need it typed back.
func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n\"'\\") {
		return a
	}
	return strconv.Quote(a)
}

// ReplyKind is the RESP type of a reply.
type ReplyKind uint8

// The reply kinds a Redlock command can get.
const (
	ReplyNil    ReplyKind = iota // nil bulk: SET NX lost, GET of a missing key
	ReplyStatus                  // simple string, e.g. OK
	ReplyInt                     // integer
	ReplyBulk                    // bulk string
	ReplyError                   // error, e.g. "NOSCRIPT No matching script. Please use EVAL."
	// ReplyNone means no reply arrived: the request or reply was lost or the node was down.
	// It never comes from Redis itself; drivers use it to report a timeout uniformly.
	ReplyNone
	// ReplyArray is a multi-bulk reply (a script's table, SCRIPT EXISTS): Int elements,
	// held in Str as RESP2 puts them on the wire after the array's header, so that the
	// reply stays a comparable value. Build one with ArrayReply, read it with Elems.
	ReplyArray
)

// Reply is a Redis reply as a value, comparable with ==, so the differential test can
// compare the model with a real redis-server reply by reply.
type Reply struct {
	Kind ReplyKind
	Int  int64
	Str  string // status text, bulk value or error text; an array's elements
}

// ArrayReply returns the array reply of elems.
func ArrayReply(elems ...Reply) Reply {
	var b []byte
	for _, e := range elems {
		b = appendWire(b, e)
	}
	return Reply{Kind: ReplyArray, Int: int64(len(elems)), Str: string(b)}
}

// appendWire appends r as RESP2 writes it.
func appendWire(b []byte, r Reply) []byte {
	switch r.Kind {
	case ReplyStatus:
		b = append(append(append(b, '+'), r.Str...), "\r\n"...)
	case ReplyError:
		b = append(append(append(b, '-'), r.Str...), "\r\n"...)
	case ReplyInt:
		b = append(strconv.AppendInt(append(b, ':'), r.Int, 10), "\r\n"...)
	case ReplyBulk:
		b = append(strconv.AppendInt(append(b, '$'), int64(len(r.Str)), 10), "\r\n"...)
		b = append(append(b, r.Str...), "\r\n"...)
	case ReplyArray:
		b = append(strconv.AppendInt(append(b, '*'), r.Int, 10), "\r\n"...)
		b = append(b, r.Str...)
	default: // nil, and no reply (which has no wire form) as nil
		b = append(b, "$-1\r\n"...)
	}
	return b
}

// Elems returns an array reply's elements (nil for any other reply).
func (r Reply) Elems() []Reply {
	if r.Kind != ReplyArray {
		return nil
	}
	elems, _ := readWire(r.Str, int(r.Int))
	return elems
}

// readWire reads n replies off the front of s, as appendWire wrote them, and returns
// them with what follows.
func readWire(s string, n int) ([]Reply, string) {
	elems := make([]Reply, 0, n)
	for range n {
		if len(s) < 3 {
			return elems, ""
		}
		line, rest, _ := strings.Cut(s[1:], "\r\n")
		var r Reply
		switch s[0] {
		case '+':
			r = Reply{Kind: ReplyStatus, Str: line}
		case '-':
			r = Reply{Kind: ReplyError, Str: line}
		case ':':
			v, _ := strconv.ParseInt(line, 10, 64)
			r = IntReply(v)
		case '$':
			l, _ := strconv.Atoi(line)
			if l < 0 {
				r = Nil
				break
			}
			r, rest = Reply{Kind: ReplyBulk, Str: rest[:l]}, rest[l+2:]
		case '*':
			l, _ := strconv.Atoi(line)
			var sub []Reply
			start := rest
			sub, rest = readWire(rest, l)
			r = Reply{Kind: ReplyArray, Int: int64(len(sub)), Str: start[:len(start)-len(rest)]}
		}
		elems, s = append(elems, r), rest
	}
	return elems, s
}

// Replies that recur; using them avoids building the same value twice.
var (
	OK      = Reply{Kind: ReplyStatus, Str: "OK"}
	Nil     = Reply{Kind: ReplyNil}
	NoReply = Reply{Kind: ReplyNone}
)

// IntReply returns the integer reply n.
func IntReply(n int64) Reply { return Reply{Kind: ReplyInt, Int: n} }

// IsOK reports whether the reply is the status OK.
func (r Reply) IsOK() bool { return r.Kind == ReplyStatus && r.Str == "OK" }

// String renders the reply as redis-cli prints it.
func (r Reply) String() string {
	switch r.Kind {
	case ReplyNil:
		return "(nil)"
	case ReplyStatus:
		return r.Str
	case ReplyInt:
		return "(integer) " + strconv.FormatInt(r.Int, 10)
	case ReplyBulk:
		return strconv.Quote(r.Str)
	case ReplyError:
		return "(error) " + r.Str
	case ReplyArray:
		elems := r.Elems()
		if len(elems) == 0 {
			return "(empty array)"
		}
		parts := make([]string, len(elems))
		for i, e := range elems {
			parts[i] = strconv.Itoa(i+1) + ") " + e.String()
		}
		return strings.Join(parts, " ")
	default:
		return "(no reply)"
	}
}
