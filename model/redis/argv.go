package redis

import (
	"math"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// Do executes a command given as argv, as a client would send it, at wall time nowMs,
// and returns redis-server 7.0's reply: the modelled commands with every option Redis 7.0
// accepts for them (SET NX|XX|GET|KEEPTTL|EX|PX|EXAT|PXAT, SETNX, GET, DEL and UNLINK and
// EXISTS of several keys, PEXPIRE, EXPIRE, PEXPIREAT and EXPIREAT with NX|XX|GT|LT, PTTL,
// TTL, PERSIST, INCR, INCRBY, HSET, HGET, HEXISTS, HINCRBY, HDEL, HLEN, PUBLISH, SUBSCRIBE and
// UNSUBSCRIBE of one channel (as connection DoFrom's conn), EVAL, EVALSHA,
// SCRIPT LOAD|EXISTS|FLUSH|KILL), Redis's arity, syntax and WRONGTYPE errors,
// and the unknown-command error for anything else. It is the differential test's path,
// and how a caller issues what resp.Command cannot express (SCRIPT LOAD).
func (e *Engine) Do(argv []string, nowMs int64) resp.Reply { return e.DoFrom(0, argv, nowMs) }

// DoFrom is Do for a command that came on connection conn: the subscriber, if the command
// is SUBSCRIBE or UNSUBSCRIBE.
func (e *Engine) DoFrom(conn Subscriber, argv []string, nowMs int64) resp.Reply {
	e.conn = conn
	e.effects = e.effects[:0]
	return e.doInScript(argv, nowMs)
}

// doInScript is Do without starting a new list of effects: a script's commands add to
// the list of the EVAL they run in.
func (e *Engine) doInScript(argv []string, nowMs int64) resp.Reply {
	if len(argv) == 0 {
		return errReply("ERR redlock-sim: empty command")
	}
	name, n := argv[0], len(argv)
	switch {
	case eqFold(name, "set"):
		if n < 3 {
			return arityErr("set")
		}
		return e.doSet(argv, nowMs)
	case eqFold(name, "get"):
		if n != 2 {
			return arityErr("get")
		}
		return e.get(argv[1], nowMs)
	case eqFold(name, "ping"):
		switch n {
		case 1:
			return resp.Reply{Kind: resp.ReplyStatus, Str: "PONG"}
		case 2:
			return bulk(argv[1])
		}
		return arityErr("ping")
	case eqFold(name, "del"):
		if n < 2 {
			return arityErr("del")
		}
		var count int64
		for _, k := range argv[1:] {
			count += e.del(k, nowMs)
		}
		return resp.IntReply(count)
	case eqFold(name, "pexpire"):
		if n < 3 {
			return arityErr("pexpire")
		}
		return e.doPExpire(argv, nowMs)
	case eqFold(name, "pttl"):
		if n != 2 {
			return arityErr("pttl")
		}
		return e.pttl(argv[1], nowMs)
	case eqFold(name, "incr"):
		if n != 2 {
			return arityErr("incr")
		}
		return e.incr(argv[1], nowMs)
	case eqFold(name, "incrby"):
		if n != 3 {
			return arityErr("incrby")
		}
		by, ok := parseInt(argv[2])
		if !ok {
			return errNotInt
		}
		return e.incrBy(argv[1], by, nowMs)
	case eqFold(name, "setnx"):
		if n != 3 {
			return arityErr("setnx")
		}
		if r := e.set(argv[1], argv[2], setOpts{cond: resp.CondNX}, nowMs); r.Kind == resp.ReplyError || r == resp.Nil {
			return zeroOr(r)
		}
		return resp.IntReply(1)
	case eqFold(name, "exists"):
		if n < 2 {
			return arityErr("exists")
		}
		var count int64
		for _, k := range argv[1:] {
			count += e.exists(k, nowMs)
		}
		return resp.IntReply(count)
	case eqFold(name, "unlink"):
		if n < 2 {
			return arityErr("unlink")
		}
		var count int64
		for _, k := range argv[1:] {
			count += e.del(k, nowMs)
		}
		return resp.IntReply(count)
	case eqFold(name, "hset"):
		if n < 4 || n%2 != 0 {
			return arityErr("hset")
		}
		return e.hset(argv[1], argv[2:], nowMs)
	case eqFold(name, "hget"), eqFold(name, "hexists"):
		if n != 3 {
			return arityErr(lower(name))
		}
		if eqFold(name, "hget") {
			return e.hget(argv[1], argv[2], nowMs)
		}
		return e.hexists(argv[1], argv[2], nowMs)
	case eqFold(name, "hincrby"):
		if n != 4 {
			return arityErr("hincrby")
		}
		return e.hincrby(argv[1], argv[2], argv[3], nowMs)
	case eqFold(name, "hdel"):
		if n < 3 {
			return arityErr("hdel")
		}
		return e.hdel(argv[1], argv[2:], nowMs)
	case eqFold(name, "hlen"):
		if n != 2 {
			return arityErr("hlen")
		}
		return e.hlen(argv[1], nowMs)
	case eqFold(name, "publish"):
		if n != 3 {
			return arityErr("publish")
		}
		return resp.IntReply(e.publish(argv[1], argv[2]))
	case eqFold(name, "subscribe"), eqFold(name, "unsubscribe"):
		if n != 2 {
			// Redis answers one frame per channel (and UNSUBSCRIBE alone, one per
			// subscription); a reply here is one value, so only one channel is modelled.
			return errReply("ERR redlock-sim: only " + lower(name) + " of exactly one channel is modelled")
		}
		if eqFold(name, "subscribe") {
			return e.Subscribe(e.conn, argv[1])
		}
		return e.Unsubscribe(e.conn, argv[1])
	case eqFold(name, "ttl"):
		if n != 2 {
			return arityErr("ttl")
		}
		return e.ttl(argv[1], nowMs)
	case eqFold(name, "persist"):
		if n != 2 {
			return arityErr("persist")
		}
		return e.persist(argv[1], nowMs)
	case eqFold(name, "expire"), eqFold(name, "expireat"), eqFold(name, "pexpireat"):
		if n < 3 {
			return arityErr(lower(name))
		}
		return e.doExpire(argv, lower(name), nowMs)
	case eqFold(name, "eval"), eqFold(name, "evalsha"):
		if n < 3 {
			return arityErr(lower(name))
		}
		return e.doEval(argv, eqFold(name, "evalsha"), nowMs)
	case eqFold(name, "script"):
		if n < 2 {
			return arityErr("script")
		}
		return e.doScript(argv)
	}
	return unknownCommand(argv)
}

// SET's option flags, named as in Redis's t_string.c.
const (
	setNX = 1 << iota
	setXX
	setGet
	setKeepTTL
	setEX
	setPX
	setEXAT
	setPXAT
)

// doSet parses SET's options exactly as Redis 7.0's parseExtendedStringArgumentsOrReply
// does (which combinations are a syntax error, which repetitions are allowed), then
// validates the expiry as getExpireMillisecondsOrReply does.
func (e *Engine) doSet(argv []string, nowMs int64) resp.Reply {
	flags := 0
	var expire string
	for j := 3; j < len(argv); j++ {
		opt := cstr(argv[j])
		next := j < len(argv)-1
		switch {
		case eqFold(opt, "nx") && flags&setXX == 0:
			flags |= setNX
		case eqFold(opt, "xx") && flags&setNX == 0:
			flags |= setXX
		case eqFold(opt, "get"):
			flags |= setGet
		case eqFold(opt, "keepttl") && flags&(setEX|setEXAT|setPX|setPXAT) == 0:
			flags |= setKeepTTL
		case eqFold(opt, "ex") && flags&(setKeepTTL|setEXAT|setPX|setPXAT) == 0 && next:
			flags |= setEX
			j++
			expire = argv[j]
		case eqFold(opt, "px") && flags&(setKeepTTL|setEX|setEXAT|setPXAT) == 0 && next:
			flags |= setPX
			j++
			expire = argv[j]
		case eqFold(opt, "exat") && flags&(setKeepTTL|setEX|setPX|setPXAT) == 0 && next:
			flags |= setEXAT
			j++
			expire = argv[j]
		case eqFold(opt, "pxat") && flags&(setKeepTTL|setEX|setEXAT|setPX) == 0 && next:
			flags |= setPXAT
			j++
			expire = argv[j]
		default:
			return errSyntax
		}
	}
	o := setOpts{get: flags&setGet != 0, keepTTL: flags&setKeepTTL != 0}
	switch {
	case flags&setNX != 0:
		o.cond = resp.CondNX
	case flags&setXX != 0:
		o.cond = resp.CondXX
	}
	if flags&(setEX|setPX|setEXAT|setPXAT) != 0 {
		exp, r := expiryArg(expire, flags, nowMs)
		if r.Kind == resp.ReplyError {
			return r
		}
		o.hasExp, o.exp = true, exp
	}
	return e.set(argv[1], argv[2], o, nowMs)
}

// expiryArg is getExpireMillisecondsOrReply: the absolute expiry in ms for SET's EX, PX,
// EXAT or PXAT argument.
func expiryArg(arg string, flags int, nowMs int64) (int64, resp.Reply) {
	ms, ok := parseInt(arg)
	if !ok {
		return 0, errNotInt
	}
	secs := flags&(setEX|setEXAT) != 0
	if ms <= 0 || (secs && ms > math.MaxInt64/1000) {
		return 0, errExpireSet
	}
	if secs {
		ms *= 1000
	}
	if flags&(setEX|setPX) != 0 {
		ms += nowMs // wraps on overflow, as in C, and is caught just below
	}
	if ms <= 0 {
		return 0, errExpireSet
	}
	return ms, resp.Reply{}
}

// doPExpire parses PEXPIRE's options (parseExtendedExpireArgumentsOrReply), then its
// integer argument.
func (e *Engine) doPExpire(argv []string, nowMs int64) resp.Reply {
	flags, r := expireFlags(argv[3:])
	if r.Kind == resp.ReplyError {
		return r
	}
	ms, ok := parseInt(argv[2])
	if !ok {
		return errNotInt
	}
	return e.pexpire(argv[1], ms, flags, nowMs)
}

// expireFlags parses the expire commands' NX/XX/GT/LT options
// (parseExtendedExpireArgumentsOrReply).
func expireFlags(opts []string) (int, resp.Reply) {
	flags := 0
	for _, a := range opts {
		opt := cstr(a)
		switch {
		case eqFold(opt, "nx"):
			flags |= expNX
		case eqFold(opt, "xx"):
			flags |= expXX
		case eqFold(opt, "gt"):
			flags |= expGT
		case eqFold(opt, "lt"):
			flags |= expLT
		default:
			return 0, errReply("ERR Unsupported option " + sanitize(opt))
		}
	}
	if flags&expNX != 0 && flags&(expXX|expGT|expLT) != 0 {
		return 0, errReply("ERR NX and XX, GT or LT options at the same time are not compatible")
	}
	if flags&expGT != 0 && flags&expLT != 0 {
		return 0, errReply("ERR GT and LT options at the same time are not compatible")
	}
	return flags, resp.Reply{}
}

// doExpire is EXPIRE, EXPIREAT and PEXPIREAT (named in lower case): the options, then the
// integer, then Redis 7.0's overflow checks (expireGenericCommand's order), then expireAt.
func (e *Engine) doExpire(argv []string, name string, nowMs int64) resp.Reply {
	flags, r := expireFlags(argv[3:])
	if r.Kind == resp.ReplyError {
		return r
	}
	when, ok := parseInt(argv[2])
	if !ok {
		return errNotInt
	}
	bad := errReply("ERR invalid expire time in '" + name + "' command")
	if name != "pexpireat" { // seconds
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			return bad
		}
		when *= 1000
	}
	if name == "expire" {
		if when > math.MaxInt64-nowMs {
			return bad
		}
		when += nowMs
	}
	return e.expireAt(argv[1], when, flags, nowMs)
}

// doEval is EVAL / EVALSHA with Redis's checks in Redis's order: an EVALSHA digest that is
// not 40 bytes, then numkeys, then the script lookup.
func (e *Engine) doEval(argv []string, isSHA bool, nowMs int64) resp.Reply {
	if isSHA && len(argv[1]) != 40 {
		return errNoScript
	}
	numkeys, ok := parseInt(argv[2])
	switch {
	case !ok:
		return errNotInt
	case numkeys > int64(len(argv)-3):
		return errTooManyKeys
	case numkeys < 0:
		return errNegKeys
	}
	keys, args := argv[3:3+numkeys], argv[3+numkeys:]
	var s resp.Script
	if isSHA {
		if s = resp.ScriptBySHA(argv[1]); !e.ScriptLoaded(s) || e.noFastPath {
			return e.evalUser(lower(argv[1]), "", true, keys, args, nowMs)
		}
	} else {
		if s = scriptBySource(argv[1]); s == resp.ScriptNone || e.noFastPath {
			return e.evalUser(sha1hex(argv[1]), argv[1], false, keys, args, nowMs)
		}
		e.LoadScript(s)
	}
	var a scriptArgs
	if len(keys) > 0 {
		a.k1 = strArg(keys[0])
	}
	if len(args) > 0 {
		a.a1 = strArg(args[0])
	}
	if len(args) > 1 {
		a.a2 = strArg(args[1])
	}
	return e.runScript(s, a, nowMs)
}

// evalUser runs a script in the Lua VM: the one named sha from the cache (EVALSHA,
// byName) or src, compiled and cached first (EVAL).
func (e *Engine) evalUser(sha, src string, byName bool, keys, args []string, nowMs int64) resp.Reply {
	if byName {
		var ok bool
		if src, ok = e.userScripts[sha]; !ok {
			if s := resp.ScriptBySHA(sha); !e.ScriptLoaded(s) {
				return errNoScript
			}
			src = resp.ScriptBySHA(sha).Source()
		}
	}
	vm := e.lua()
	p, r := vm.compile(sha, src)
	if r.Kind == resp.ReplyError {
		return r
	}
	if e.userScripts == nil {
		e.userScripts = map[string]string{}
	}
	e.userScripts[sha] = src
	return vm.run(p, sha, keys, args, nowMs)
}

// lua returns the engine's Lua VM, starting it at its first use.
func (e *Engine) lua() *luaVM {
	if e.vm == nil {
		e.vm = newLuaVM(e)
	}
	if e.userScripts == nil {
		e.userScripts = map[string]string{}
	}
	return e.vm
}

// doScript is the SCRIPT container command: LOAD, EXISTS, FLUSH and KILL are modelled;
// HELP and DEBUG (a help text, a debugger) are not.
func (e *Engine) doScript(argv []string) resp.Reply {
	sub, n := argv[1], len(argv)
	switch {
	case eqFold(sub, "load"):
		if n != 3 {
			return arityErr("script|load")
		}
		if s := scriptBySource(argv[2]); s != resp.ScriptNone {
			e.LoadScript(s)
		}
		sha := sha1hex(argv[2])
		if _, r := e.lua().compile(sha, argv[2]); r.Kind == resp.ReplyError {
			return r
		}
		e.userScripts[sha] = argv[2]
		return bulk(sha)
	case eqFold(sub, "flush"):
		if n == 2 || (n == 3 && (eqFold(cstr(argv[2]), "sync") || eqFold(cstr(argv[2]), "async"))) {
			e.FlushScripts()
			return resp.OK
		}
		return errReply("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
	case eqFold(sub, "kill"):
		if n != 2 {
			return arityErr("script|kill")
		}
		return errReply("NOTBUSY No scripts in execution right now.")
	case eqFold(sub, "exists"):
		if n < 3 {
			return arityErr("script|exists")
		}
		found := make([]resp.Reply, n-2)
		for i, sha := range argv[2:] {
			_, user := e.userScripts[lower(sha)]
			found[i] = resp.IntReply(0)
			if user || e.ScriptLoaded(resp.ScriptBySHA(sha)) {
				found[i] = resp.IntReply(1)
			}
		}
		return resp.ArrayReply(found...)
	case eqFold(sub, "help"):
		if n != 2 {
			return arityErr("script|help")
		}
	case eqFold(sub, "debug"):
		if n != 3 {
			return arityErr("script|debug")
		}
	default:
		return errReply(sanitize("ERR unknown subcommand '" + trunc(cstr(sub), 128) + "'. Try SCRIPT HELP."))
	}
	return errReply("ERR redlock-sim: SCRIPT " + lower(sub) + " is not modelled")
}

// zeroOr is SETNX's reply for a SET NX that did not set: 0, or the error (OOM) it got.
func zeroOr(r resp.Reply) resp.Reply {
	if r.Kind == resp.ReplyError {
		return r
	}
	return resp.IntReply(0)
}

func arityErr(name string) resp.Reply {
	return errReply("ERR wrong number of arguments for '" + name + "' command")
}

// unknownCommand formats Redis 7.0's error for a command it does not know: the name and
// the arguments as C strings, each cut so the argument list stays near 128 bytes.
func unknownCommand(argv []string) resp.Reply {
	var args []byte
	for _, a := range argv[1:] {
		if len(args) >= 128 {
			break
		}
		room := 128 - len(args)
		args = append(args, '\'')
		args = append(args, trunc(cstr(a), room)...)
		args = append(args, '\'', ' ')
	}
	return errReply(sanitize("ERR unknown command '" + trunc(cstr(argv[0]), 128) +
		"', with args beginning with: " + string(args)))
}

func trunc(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) > n {
		return s[:n]
	}
	return s
}

// eqFold compares ASCII case-insensitively, as strcasecmp does (strings.EqualFold would
// also fold Unicode, so that "ſet" matched "set").
func eqFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
