package redis

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// TestFastPathAnswersAsTheVM runs the three standard scripts with random keys, values and
// argument counts on two engines, one answering them on the fast path and one in the Lua
// VM, with other commands in between, and requires the same replies (error texts
// included) and the same keys.
func TestFastPathAnswersAsTheVM(t *testing.T) {
	keys := []string{"lock", "k"}
	vals := []string{"v1", "v2", "10", "-5", "abc", "", "9223372036854775807", "1.5"}
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x1a))
		fast, _ := NewEngine(EngineConfig{})
		vm, _ := NewEngine(EngineConfig{})
		vm.noFastPath = true
		now := int64(DefaultEpochMs)
		for i := range 60 {
			now += r.Int64N(2000)
			var argv []string
			switch r.IntN(4) {
			case 0:
				argv = []string{"SET", keys[r.IntN(2)], vals[r.IntN(2)], "PX", strconv.Itoa(1 + r.IntN(5000))}
			case 1:
				argv = []string{"PEXPIRE", keys[r.IntN(2)], strconv.Itoa(r.IntN(5000) - 100)}
			default:
				s := scripts[r.IntN(len(scripts))]
				argv = []string{"EVAL", s.Source()}
				if r.IntN(2) == 0 {
					argv = []string{"EVALSHA", s.SHA()}
				}
				nk := r.IntN(2)
				if r.IntN(6) > 0 {
					nk = 1
				}
				argv = append(argv, strconv.Itoa(nk))
				if nk == 1 {
					argv = append(argv, keys[r.IntN(2)])
				}
				for range r.IntN(4) {
					argv = append(argv, vals[r.IntN(len(vals))])
				}
			}
			want := fast.Do(argv, now)
			require.Equalf(t, want, vm.Do(argv, now), "seed %d step %d: %q", seed, i, argv)
			for _, k := range keys {
				v1, e1, ok1 := fast.Peek(k, now)
				v2, e2, ok2 := vm.Peek(k, now)
				require.Equal(t, []any{v1, e1, ok1}, []any{v2, e2, ok2}, "seed %d step %d key %q", seed, i, k)
			}
		}
		require.NotNil(t, vm.vm, "the standard scripts ran in the VM")
		require.Nil(t, fast.vm, "and on the fast path")
	}
}

// TestLuaConversionsAndErrors pins Redis 7.0's conversions and error texts as
// redis-server 7.0.15 answers them (the differential test checks them live).
func TestLuaConversionsAndErrors(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	eval := func(src string, keysAndArgs ...string) resp.Reply {
		return e.Do(append([]string{"EVAL", src, strconv.Itoa(min(1, len(keysAndArgs)))}, keysAndArgs...), 1000)
	}
	sha := func(src string) string { return sha1hex(src) }
	require.Equal(t, resp.IntReply(1), eval("return 1.9"))
	require.Equal(t, resp.IntReply(-1), eval("return -1.9"))
	require.Equal(t, resp.IntReply(1), eval("return true"))
	require.Equal(t, resp.Nil, eval("return false"))
	require.Equal(t, resp.Nil, eval("return nil"))
	require.Equal(t, resp.Reply{Kind: resp.ReplyStatus, Str: "fine"}, eval(`return {ok="fine"}`))
	require.Equal(t, errReply("My Error"), eval(`return {err="My Error"}`))
	require.Equal(t, errReply("x y"), eval(`return redis.error_reply("x y")`))
	require.Equal(t, resp.Reply{Kind: resp.ReplyStatus, Str: "HI"}, eval(`return redis.status_reply("HI")`))
	require.Equal(t, bulkOf("boolean"), eval(`return type(redis.call("get","nokey"))`))
	require.Equal(t, bulkOf("table"), eval(`return type(redis.call("set","k","v"))`))
	require.Equal(t, resp.OK, eval(`return redis.call("set","k","v")`))
	src := "return redis.call(\"incrby\",\"k\",\"1\")"
	require.Equal(t, errReply("ERR value is not an integer or out of range script: "+sha(src)+", on @user_script:1."), eval(src))
	src = "\nlocal x = 1\nreturn redis.call(\"incrby\",\"k\",\"1\")"
	require.Equal(t, errReply("ERR value is not an integer or out of range script: "+sha(src)+", on @user_script:3."), eval(src),
		"the suffix names the line of the failing call")
	require.Equal(t, errReply("ERR value is not an integer or out of range"), eval(`return redis.pcall("incrby","k","1")`))
	for src, msg := range map[string]string{
		`return redis.call("nosuch")`:  "ERR Unknown Redis command called from script",
		`return redis.call("get")`:     "ERR Wrong number of args calling Redis command from script",
		`return redis.call("get", {})`: "ERR Lua redis lib command arguments must be strings or integers",
		`return redis.call()`:          "ERR Please specify at least one argument for this redis lib call",
		`return x`:                     "ERR user_script:1: Script attempted to access nonexistent global variable 'x'",
		`x = 1`:                        "ERR user_script:1: Attempt to modify a readonly table",
		`error('boom')`:                "ERR user_script:1: boom",
		`error({err='boom2'})`:         "boom2",
	} {
		require.Equal(t, errReply(msg+" script: "+sha(src)+", on @user_script:1."), eval(src), src)
	}
	require.Equal(t, resp.OK, eval(`return redis.call("set","n",1.5)`))
	require.Equal(t, bulkOf("1.5"), e.Do([]string{"GET", "n"}, 1000))
	require.Equal(t, resp.OK, eval(`return redis.call("set","n",1e20)`))
	require.Equal(t, bulkOf("1e+20"), e.Do([]string{"GET", "n"}, 1000))
	require.Equal(t, bulkOf("da39a3ee5e6b4b0d3255bfef95601890afd80709"), eval(`return redis.sha1hex("")`))
	require.Equal(t, bulkOf("aakk"), e.Do([]string{"EVAL", "return ARGV[1] .. KEYS[1]", "1", "kk", "aa"}, 1000))
	require.Equal(t, "ERR Error compiling script (new function): user_script: ", eval("return 1 +").Str[:len("ERR Error compiling script (new function): user_script: ")])
	require.Equal(t, errNoScript, e.Do([]string{"EVALSHA", sha("return 2"), "0"}, 1000))
	require.Equal(t, bulkOf(sha("return 2")), e.Do([]string{"SCRIPT", "LOAD", "return 2"}, 1000))
	require.Equal(t, resp.IntReply(2), e.Do([]string{"EVALSHA", sha("return 2"), "0"}, 1000))
	e.Reset()
	require.Equal(t, errNoScript, e.Do([]string{"EVALSHA", sha("return 2"), "0"}, 1000), "a restart empties the cache")
}

// TestLuaEnvironment pins which globals and redis.* functions a script sees, as in
// redis-server 7.0.15.
func TestLuaEnvironment(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	eval := func(src string) resp.Reply { return e.Do([]string{"EVAL", src, "0"}, 1000) }
	for _, name := range []string{"loadstring", "load", "collectgarbage", "setmetatable", "rawset", "unpack"} {
		require.Equal(t, bulkOf("function"), eval("return type("+name+")"), name)
	}
	for _, name := range []string{"print", "dofile", "getfenv", "setfenv", "module", "require", "newproxy", "os", "io"} {
		src := "return type(" + name + ")"
		require.Equal(t, errReply("ERR user_script:1: Script attempted to access nonexistent global variable '"+name+
			"' script: "+sha1hex(src)+", on @user_script:1."), eval(src), name)
	}
	require.Equal(t, bulkOf("table"), eval("return type(_G)"))
	require.Equal(t, bulkOf("356a192b7913b04c54574d18c28d46e6395428ab"), eval("return redis.sha1hex(1)"))
	src := "return redis.sha1hex()"
	require.Equal(t, errReply("ERR wrong number of arguments script: "+sha1hex(src)+", on @user_script:1."), eval(src))
	require.Equal(t, errReply("ERR wrong number or type of arguments"), eval("return redis.error_reply(1)"))
	require.Equal(t, errReply("ERR wrong number or type of arguments"), eval("return redis.status_reply()"))
	src = `return redis.call("get", "a", nil)`
	require.Equal(t, errReply("ERR Lua redis lib command arguments must be strings or integers script: "+sha1hex(src)+", on @user_script:1."), eval(src))
	src = `return redis.call("eval", "return 1", "0")`
	require.Equal(t, errReply("ERR This Redis command is not allowed from script script: "+sha1hex(src)+", on @user_script:1."), eval(src))
	require.Equal(t, resp.IntReply(3), eval("return redis.LOG_WARNING"))
	require.Equal(t, bulkOf("7.0.15"), eval("return redis.REDIS_VERSION"))
	require.Equal(t, bulkOf("function"), eval("return type(redis.log)"))
}

// TestLuaRandomIsRedisGenerator checks math.random against the draws of a freshly started
// redis-server 7.0.15: the generator runs on across scripts, restarts with the process,
// and math.randomseed sets it.
func TestLuaRandomIsRedisGenerator(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	eval := func(src string) resp.Reply { return e.Do([]string{"EVAL", src, "0"}, 1000) }
	var got []int64
	for range 5 {
		got = append(got, eval("return math.random(100)").Int)
	}
	require.Equal(t, []int64{40, 85, 36, 45, 32}, got)
	require.Equal(t, resp.IntReply(5), eval("return {ok = tostring(math.random(5, 10))} and math.random(5, 10)"))
	require.Equal(t, resp.IntReply(267), eval("math.randomseed(7); return math.random(1000)"))
	require.Equal(t, resp.IntReply(683), eval("return math.random(1000)"))
	for src, msg := range map[string]string{
		"return math.random(0)":     "ERR user_script:1: bad argument #1 to 'random' (interval is empty)",
		"return math.random(1,2,3)": "ERR user_script:1: wrong number of arguments",
	} {
		require.Equal(t, errReply(msg+" script: "+sha1hex(src)+", on @user_script:1."), eval(src))
	}
	e.Reset()
	require.Equal(t, resp.IntReply(40), eval("return math.random(100)"), "a restart starts the sequence again")
}

// TestArrayReplies checks a script's table as an array and SCRIPT EXISTS, as
// redis-server 7.0.15 answers them.
func TestArrayReplies(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	got := e.Do([]string{"EVAL", "return {1,'a',{ok='x'},{err='bad'},true,false,2.5,{3,{4}}}", "0"}, 1000)
	want := resp.ArrayReply(resp.IntReply(1), bulkOf("a"), resp.Reply{Kind: resp.ReplyStatus, Str: "x"}, errReply("bad"),
		resp.IntReply(1), resp.Nil, resp.IntReply(2), resp.ArrayReply(resp.IntReply(3), resp.ArrayReply(resp.IntReply(4))))
	require.Equal(t, want, got)
	require.Equal(t, want.Elems(), got.Elems())
	require.Len(t, got.Elems(), 8)
	require.Equal(t, resp.ArrayReply(resp.IntReply(3), resp.ArrayReply(resp.IntReply(4))), got.Elems()[7])
	require.Equal(t, resp.ArrayReply(), e.Do([]string{"EVAL", "return {nil, 1}", "0"}, 1000), "an array ends at its first nil")
	require.Equal(t, "(empty array)", resp.ArrayReply().String())
	require.Equal(t, bulkOf("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"), e.Do([]string{"SCRIPT", "LOAD", "return 1"}, 1000))
	e.Do([]string{"EVAL", resp.ScriptRelease.Source(), "1", "k", "v"}, 1000)
	require.Equal(t, resp.ArrayReply(resp.IntReply(1), resp.IntReply(1), resp.IntReply(1), resp.IntReply(0)),
		e.Do([]string{"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB",
			resp.ScriptRelease.SHA(), resp.ScriptExtend.SHA()}, 1000), "case-insensitive; the standard scripts too")
	require.Equal(t, `1) (integer) 1 2) "a"`, resp.ArrayReply(resp.IntReply(1), bulkOf("a")).String())
}

// TestScriptStepBudget checks that a script that never returns is stopped with an error
// that says why, keeps the writes it made before (as a failing script's writes stay in
// Redis), cannot escape by catching the error, and leaves the engine serving.
func TestScriptStepBudget(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	e.lua().steps.max = 10_000
	eval := func(src string) resp.Reply { return e.Do([]string{"EVAL", src, "0"}, 1000) }
	for _, c := range []struct {
		src  string
		line int // where the loop runs when the budget ends
	}{
		{"while true do end", 1},
		{"redis.call('set','w','1')\nwhile true do end", 2},
		{"local n = 0\nwhile true do pcall(function() n = n + 1 end) end", 2},
		{"local function f() return f() end\nreturn f()", 1},
	} {
		r := eval(c.src)
		require.Equal(t, resp.ReplyError, r.Kind, c.src)
		require.Equal(t, "ERR user_script:"+strconv.Itoa(c.line)+": redlock-sim: the script ran 10000 Lua instructions without returning; "+
			"Redis would run it on and answer BUSY to every other client script: "+sha1hex(c.src)+", on @user_script:"+strconv.Itoa(c.line)+".", r.Str)
	}
	require.Equal(t, bulkOf("1"), e.Do([]string{"GET", "w"}, 1000), "the write before the loop stays")
	require.Equal(t, resp.IntReply(4950), eval("local s = 0\nfor i = 1, 99 do s = s + i end\nreturn s"),
		"each script starts with the whole budget")
	require.Equal(t, resp.IntReply(1), e.Do([]string{"EXISTS", "w"}, 1000))
}
