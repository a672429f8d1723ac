package redis

import "github.com/redlock-sim/redlock-sim/redlock/resp"

// optArg is one of a script's KEYS[1], ARGV[1], ARGV[2]: absent (Lua nil), a string, or
// an integer already known (a Command's TTL, so the hot path formats and parses nothing).
type optArg struct {
	s    string
	n    int64
	kind uint8
}

const (
	argNil uint8 = iota
	argStr
	argInt
)

func strArg(s string) optArg { return optArg{s: s, kind: argStr} }

// int parses the argument as a Redis integer argument.
func (a optArg) int() (int64, bool) {
	if a.kind == argInt {
		return a.n, true
	}
	return parseInt(a.s)
}

// eq is Lua's `v == ARGV[i]` for a GET result v held in slot i (found) or false.
func (a optArg) eq(val string) bool {
	switch a.kind {
	case argStr:
		return a.s == val
	case argInt:
		return formatInt(a.n) == val // never reached by Command paths: ARGV[1] is a string
	}
	return false
}

type scriptArgs struct{ k1, a1, a2 optArg }

// runScript runs a standard script the way its Lua would, including how the Lua fails
// when KEYS or ARGV are too short. Errors raised by redis.call inside the script carry
// Redis 7's suffix naming the script.
func (e *Engine) runScript(s resp.Script, a scriptArgs, nowMs int64) resp.Reply {
	if a.k1.kind == argNil {
		// redis.call("GET", nil): Lua's arguments fail to convert.
		return scriptErr(s, errLuaArgs)
	}
	i, found := e.lookup(a.k1.s, nowMs)
	if found && e.ks.ents[i].hash != nil {
		return scriptErr(s, errWrongType) // redis.call("GET", KEYS[1]) on a hash
	}
	match := found && a.a1.kind != argNil && a.a1.eq(e.ks.ents[i].val)
	switch {
	case s == resp.ScriptRelease && match:
		e.remove(i)
		return resp.IntReply(1)
	case s == resp.ScriptRelease:
		return resp.IntReply(0)
	case match:
		return e.scriptPExpire(s, a, nowMs)
	case s == resp.ScriptExtendOrSet && !found:
		return e.scriptSetNXPX(s, a, nowMs)
	}
	return resp.IntReply(0)
}

// scriptPExpire is redis.call("PEXPIRE", KEYS[1], ARGV[2]).
func (e *Engine) scriptPExpire(s resp.Script, a scriptArgs, nowMs int64) resp.Reply {
	if a.a2.kind == argNil {
		return scriptErr(s, errLuaArgs)
	}
	ms, ok := a.a2.int()
	if !ok {
		return scriptErr(s, errNotInt)
	}
	return scriptErr(s, e.pexpire(a.k1.s, ms, 0, nowMs))
}

// scriptSetNXPX is redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2], "NX").
func (e *Engine) scriptSetNXPX(s resp.Script, a scriptArgs, nowMs int64) resp.Reply {
	if a.a1.kind == argNil || a.a2.kind == argNil {
		return scriptErr(s, errLuaArgs)
	}
	ms, ok := a.a2.int()
	if !ok {
		return scriptErr(s, errNotInt)
	}
	if ms <= 0 || ms+nowMs <= 0 {
		return scriptErr(s, errExpireSet)
	}
	val := a.a1.s
	if a.a1.kind == argInt {
		val = formatInt(a.a1.n)
	}
	return scriptErr(s, e.set(a.k1.s, val, setOpts{cond: resp.CondNX, hasExp: true, exp: ms + nowMs}, nowMs))
}

// scriptErr adds Redis 7's script suffix to an error raised inside script s; other
// replies pass through.
func scriptErr(s resp.Script, r resp.Reply) resp.Reply {
	if r.Kind != resp.ReplyError {
		return r
	}
	return errReply(r.Str + " script: " + s.SHA() + ", on @user_script:1.")
}

// scriptBySource returns the standard script whose exact source is src, or ScriptNone.
func scriptBySource(src string) resp.Script {
	for s := resp.ScriptRelease; s.Standard(); s++ {
		if s.Source() == src {
			return s
		}
	}
	return resp.ScriptNone
}
