package redis

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// luaVM runs the scripts that are not one of the three standard ones, in a real Lua 5.1
// (gopher-lua) with Redis 7.0's scripting environment: KEYS and ARGV, redis.call and
// redis.pcall onto the engine's own commands at the script's frozen wall time, Redis's
// conversions between Lua and RESP values, its error texts and its protection of the
// globals. One VM serves an engine from its first such script on; only the base,
// table, string and math libraries are opened, so no script reaches time, I/O or the
// process.
type luaVM struct {
	L      *lua.LState
	protos map[string]*lua.FunctionProto // compiled scripts by SHA1
	e      *Engine
	nowMs  int64
	sha    string
	line   int // the line where the script's last error was raised, for the suffix
	steps  stepBudget
}

// MaxScriptSteps is how many Lua instructions a script may run before the model stops it
// with an error. Redis has no such limit: a script that runs on blocks the server, which
// answers BUSY to every other client after five seconds until SCRIPT KILL. The simulator
// serves every command in the same ServiceTime and cannot answer BUSY, so it bounds the
// script instead, far above what any lock script needs (the libraries' scripts run under
// a hundred instructions), and says so in the reply.
const MaxScriptSteps = 10_000_000

// stepBudget counts a script's Lua instructions. gopher-lua asks its context's Done
// before every instruction, so a context whose Done counts is an instruction budget that
// is exact and deterministic, with no timer: it reports done once the budget is spent.
// gopher-lua derives a context (with a goroutine that watches it) only for coroutines,
// and the coroutine library is not opened.
type stepBudget struct {
	left int
	max  int // the budget each script starts with: MaxScriptSteps unless a test lowers it
}

// closedChan is the Done channel of a spent budget.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Done counts one instruction and reports whether the budget is spent.
func (b *stepBudget) Done() <-chan struct{} {
	if b.left--; b.left < 0 {
		return closedChan
	}
	return nil
}

// Err is the error gopher-lua raises in the script once the budget is spent.
func (b *stepBudget) Err() error {
	if b.left < 0 {
		return errors.New("redlock-sim: the script ran " + strconv.Itoa(b.max) +
			" Lua instructions without returning; Redis would run it on and answer BUSY to every other client")
	}
	return nil
}

// Deadline reports that the budget is counted in instructions, not time.
func (b *stepBudget) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value holds no values.
func (b *stepBudget) Value(any) any { return nil }

var _ context.Context = (*stepBudget)(nil)

// scriptChunk is the name Redis 7.0 gives a script's chunk: it prefixes runtime errors
// ("user_script:1: ...") and names the script in the error suffix ("@user_script:1").
const scriptChunk = "user_script"

// sha1hex is the hex SHA1 that names a script, as redis.sha1hex and SCRIPT LOAD compute it.
func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func newLuaVM(e *Engine) *luaVM {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	vm := &luaVM{L: L, protos: map[string]*lua.FunctionProto{}, e: e, steps: stepBudget{max: MaxScriptSteps}}
	L.SetContext(&vm.steps)
	g := L.G.Global
	for _, name := range []string{"dofile", "loadfile", "require", "module", "newproxy", "print", "_printregs", "getfenv", "setfenv"} {
		g.RawSetString(name, lua.LNil)
	}
	// math.random is Redis's, not gopher-lua's (which draws from Go's global generator):
	// see Engine.rand48.
	if m, ok := g.RawGetString("math").(*lua.LTable); ok {
		m.RawSetString("random", L.NewFunction(vm.random))
		m.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
			e.rand48 = srand48(int32(L.CheckInt(1)))
			return 0
		}))
	}
	redis := L.NewTable()
	redis.RawSetString("call", L.NewFunction(func(L *lua.LState) int { return vm.call(L, true) }))
	redis.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int { return vm.call(L, false) }))
	redis.RawSetString("sha1hex", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() != 1 {
			vm.line = currentLine(L)
			L.Error(lua.LString("wrong number of arguments"), 0)
		}
		L.Push(lua.LString(sha1hex(L.ToString(1))))
		return 1
	}))
	redis.RawSetString("error_reply", L.NewFunction(func(L *lua.LState) int { return replyTable(L, "err") }))
	redis.RawSetString("status_reply", L.NewFunction(func(L *lua.LState) int { return replyTable(L, "ok") }))
	// What a script may call that changes nothing the model keeps: logging, effects
	// replication (always on in 7.0), the debugger (off); and the version.
	redis.RawSetString("log", L.NewFunction(func(L *lua.LState) int {
		if L.GetTop() < 2 {
			vm.line = currentLine(L)
			L.Error(lua.LString("redis.log() requires two arguments or more."), 0)
		}
		return 0
	}))
	redis.RawSetString("replicate_commands", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LTrue); return 1 }))
	redis.RawSetString("breakpoint", L.NewFunction(func(L *lua.LState) int { L.Push(lua.LFalse); return 1 }))
	redis.RawSetString("debug", L.NewFunction(func(*lua.LState) int { return 0 }))
	redis.RawSetString("set_repl", L.NewFunction(func(*lua.LState) int { return 0 }))
	for _, unsupported := range []string{"setresp", "acl_check_cmd"} {
		redis.RawSetString(unsupported, L.NewFunction(vm.unmodelled("redis."+unsupported)))
	}
	// A slice, not a map: a table's fields iterate (pairs) in the order they were set.
	for _, c := range []struct {
		name string
		v    int
	}{{"LOG_DEBUG", 0}, {"LOG_VERBOSE", 1}, {"LOG_NOTICE", 2}, {"LOG_WARNING", 3}, {"REPL_NONE", 0},
		{"REPL_AOF", 1}, {"REPL_REPLICA", 2}, {"REPL_SLAVE", 2}, {"REPL_ALL", 3}, {"REDIS_VERSION_NUM", 0x07000f}} {
		redis.RawSetString(c.name, lua.LNumber(c.v))
	}
	redis.RawSetString("REDIS_VERSION", lua.LString("7.0.15"))
	g.RawSetString("redis", redis)
	// error() notes its line, which Redis names in the error's suffix.
	baseError := g.RawGetString("error").(*lua.LFunction)
	g.RawSetString("error", L.NewFunction(func(L *lua.LState) int {
		vm.line = currentLine(L)
		n := L.GetTop()
		L.Push(baseError)
		for i := 1; i <= n; i++ {
			L.Push(L.Get(i))
		}
		L.Call(n, 0)
		return 0
	}))
	// Redis 7.0's globals protection: reading an undefined global or writing any is an error.
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		vm.line = currentLine(L)
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", L.ToString(2))
		return 0
	}))
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		vm.line = currentLine(L)
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	L.SetMetatable(g, mt)
	return vm
}

// The generator behind math.random is Redis's rand.c, the 48-bit linear congruential
// generator of lrand48: a process starts it at lrand48's default state and never reseeds
// it between scripts (Redis 7.0), so a script's draws depend on the draws before it on
// that process, and a restart starts the sequence again; math.randomseed(n) sets the
// state as srand48(n).
const (
	rand48Start = 0x1234ABCD330E
	rand48A     = 0x5DEECE66D
	rand48C     = 0xB
	rand48Mask  = 1<<48 - 1
	lrand48Max  = math.MaxInt32 // REDIS_LRAND48_MAX
)

func srand48(seed int32) uint64 { return uint64(uint32(seed))<<16 | 0x330E }

// lrand48 advances state x and returns its top 31 bits.
func lrand48(x *uint64) int32 {
	*x = (*x*rand48A + rand48C) & rand48Mask
	return int32(*x >> 17)
}

// random is Lua 5.1's math.random over Redis's generator: a float in [0, 1) without
// arguments, an integer in [1, m] or [m, n] with them.
func (vm *luaVM) random(L *lua.LState) int {
	r := float64(lrand48(&vm.e.rand48)%lrand48Max) / lrand48Max
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.RaiseError("bad argument #1 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.RaiseError("bad argument #2 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (vm *luaVM) unmodelled(name string) lua.LGFunction {
	return func(L *lua.LState) int {
		vm.line = currentLine(L)
		L.RaiseError("redlock-sim: %s is not modelled", name)
		return 0
	}
}

// replyTable is redis.error_reply / redis.status_reply: a table {err=s} or {ok=s}, or,
// given anything but one string, an error table returned (not raised), as Redis 7.0 does.
func replyTable(L *lua.LState, field string) int {
	t := L.NewTable()
	if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
		t.RawSetString("err", lua.LString("ERR wrong number or type of arguments"))
		L.Push(t)
		return 1
	}
	t.RawSetString(field, L.Get(1))
	L.Push(t)
	return 1
}

// currentLine is the line of the Lua code running the current Go function, or 0.
func currentLine(L *lua.LState) int {
	dbg, ok := L.GetStack(1)
	if !ok {
		return 0
	}
	if _, err := L.GetInfo("l", dbg, lua.LNil); err != nil {
		return 0
	}
	return dbg.CurrentLine
}

// compile compiles src as Redis compiles a script body, or returns Redis's compile error.
func (vm *luaVM) compile(sha, src string) (*lua.FunctionProto, resp.Reply) {
	if p, ok := vm.protos[sha]; ok {
		return p, resp.Reply{}
	}
	chunk, err := parse.Parse(strings.NewReader(src), scriptChunk)
	if err != nil {
		return nil, errReply("ERR Error compiling script (new function): " + scriptChunk + ": " + compileMessage(err))
	}
	p, err := lua.Compile(chunk, scriptChunk)
	if err != nil {
		return nil, errReply("ERR Error compiling script (new function): " + scriptChunk + ": " + compileMessage(err))
	}
	vm.protos[sha] = p
	return p, resp.Reply{}
}

// compileMessage is gopher-lua's parse error on one line. Its wording differs from
// Lua 5.1's (a documented divergence); the prefix is Redis's.
func compileMessage(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// run runs the compiled script p (named sha) with keys and args at wall time nowMs and
// converts its result to a reply.
func (vm *luaVM) run(p *lua.FunctionProto, sha string, keys, args []string, nowMs int64) resp.Reply {
	L := vm.L
	vm.nowMs, vm.sha, vm.line = nowMs, sha, 0
	vm.steps.left = vm.steps.max
	g := L.G.Global
	g.RawSetString("KEYS", stringTable(L, keys))
	g.RawSetString("ARGV", stringTable(L, args))
	L.SetTop(0)
	L.Push(L.NewFunctionFromProto(p))
	if err := L.PCall(0, 1, nil); err != nil {
		L.SetTop(0)
		return vm.scriptError(err)
	}
	v := L.Get(-1)
	L.SetTop(0)
	return luaToReply(v)
}

func stringTable(L *lua.LState, xs []string) *lua.LTable {
	t := L.CreateTable(len(xs), 0)
	for _, x := range xs {
		t.Append(lua.LString(x))
	}
	return t
}

// scriptError is the reply for a script that raised err: Redis 7.0 answers the error
// (a string gets "ERR " in front, a table's err field is taken as it is) followed by the
// script's name and the line it failed on.
func (vm *luaVM) scriptError(err error) resp.Reply {
	var msg string
	line := vm.line
	if ae, ok := err.(*lua.ApiError); ok {
		switch o := ae.Object.(type) {
		case *lua.LTable:
			if s, ok := o.RawGetString("err").(lua.LString); ok {
				msg = string(s)
			}
		case lua.LString:
			msg = "ERR " + string(o)
			if line == 0 {
				line = lineOf(string(o))
			}
		}
	}
	if msg == "" {
		msg = "ERR " + strings.TrimSpace(err.Error())
	}
	return errReply(msg + " script: " + vm.sha + ", on @" + scriptChunk + ":" + strconv.Itoa(line) + ".")
}

// lineOf reads the line from a runtime error's "user_script:N: " prefix.
func lineOf(msg string) int {
	rest, ok := strings.CutPrefix(msg, scriptChunk+":")
	if !ok {
		return 0
	}
	n, _, _ := strings.Cut(rest, ":")
	line, err := strconv.Atoi(n)
	if err != nil {
		return 0
	}
	return line
}

// call is redis.call (raise) and redis.pcall (return the error as a table): the
// arguments become a command run on the engine at the script's wall time.
func (vm *luaVM) call(L *lua.LState, raise bool) int {
	n := L.GetTop()
	fail := func(msg string) int {
		t := L.NewTable()
		t.RawSetString("err", lua.LString(msg))
		if raise {
			vm.line = currentLine(L)
			L.Error(t, 0)
			return 0
		}
		L.Push(t)
		return 1
	}
	if n == 0 {
		return fail("ERR Please specify at least one argument for this redis lib call")
	}
	argv := make([]string, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			argv[i-1] = string(v)
		case lua.LNumber:
			argv[i-1] = strconv.FormatFloat(float64(v), 'g', 17, 64)
		default:
			return fail("ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	if c, ok := scriptCommand(argv); !ok {
		return fail(c)
	}
	r := vm.e.doInScript(argv, vm.nowMs)
	if r.Kind == resp.ReplyError {
		return fail(r.Str)
	}
	L.Push(replyToLua(L, r))
	return 1
}

// scriptCommand checks that argv names a command a script may call, answering Redis's
// errors for an unknown one and a wrong arity (checked before the command runs, with
// the script's own wording).
func scriptCommand(argv []string) (string, bool) {
	a, ok := commandArity(argv[0])
	switch {
	case !ok:
		return "ERR Unknown Redis command called from script", false
	case (a > 0 && len(argv) != a) || (a < 0 && len(argv) < -a):
		return "ERR Wrong number of args calling Redis command from script", false
	case eqFold(argv[0], "eval"), eqFold(argv[0], "evalsha"), eqFold(argv[0], "script"),
		eqFold(argv[0], "subscribe"), eqFold(argv[0], "unsubscribe"):
		return "ERR This Redis command is not allowed from script", false
	}
	return "", true
}

// commandArity is Redis's arity of each modelled command: n exactly, or -n for at least n.
func commandArity(name string) (int, bool) {
	for _, c := range commandTable {
		if eqFold(name, c.name) {
			return c.arity, true
		}
	}
	return 0, false
}

var commandTable = []struct {
	name  string
	arity int
}{
	{"get", 2}, {"ping", -1}, {"set", -3}, {"setnx", 3}, {"del", -2}, {"unlink", -2}, {"exists", -2},
	{"pexpire", -3}, {"expire", -3}, {"pexpireat", -3}, {"expireat", -3}, {"pttl", 2}, {"ttl", 2},
	{"persist", 2}, {"incr", 2}, {"incrby", 3}, {"eval", -3}, {"evalsha", -3}, {"script", -2},
	{"hset", -4}, {"hget", 3}, {"hexists", 3}, {"hincrby", 4}, {"hdel", -3}, {"hlen", 2}, {"publish", 3},
	{"subscribe", -2}, {"unsubscribe", -1},
}

// replyToLua is Redis 7.0's RESP-to-Lua conversion: an integer is a number, a bulk a
// string, a nil bulk false, a status a table {ok=...}.
func replyToLua(L *lua.LState, r resp.Reply) lua.LValue {
	switch r.Kind {
	case resp.ReplyInt:
		return lua.LNumber(r.Int)
	case resp.ReplyBulk:
		return lua.LString(r.Str)
	case resp.ReplyStatus:
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(r.Str))
		return t
	}
	return lua.LFalse
}

// luaToReply is Redis 7.0's Lua-to-RESP conversion of a script's result: a number is an
// integer (truncated toward zero), a string a bulk, true 1, false and nil a nil bulk, a
// table with ok or err a status or an error, and any other table an array of its
// elements 1, 2, ... up to the first nil, each converted alike.
func luaToReply(v lua.LValue) resp.Reply {
	switch v := v.(type) {
	case lua.LNumber:
		f := float64(v)
		if math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
			return resp.IntReply(math.MinInt64) // C's conversion of an out-of-range double
		}
		return resp.IntReply(int64(f))
	case lua.LString:
		return bulk(string(v))
	case lua.LBool:
		if v {
			return resp.IntReply(1)
		}
		return resp.Nil
	case *lua.LTable:
		if s, ok := v.RawGetString("err").(lua.LString); ok {
			return errReply(string(s))
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			return resp.Reply{Kind: resp.ReplyStatus, Str: string(s)}
		}
		var elems []resp.Reply
		for i := 1; ; i++ {
			e := v.RawGetInt(i)
			if e == lua.LNil {
				break
			}
			elems = append(elems, luaToReply(e))
		}
		return resp.ArrayReply(elems...)
	}
	return resp.Nil
}
