package redis

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// luaGen writes small random Lua programs over the commands the model supports: locals
// bound to redis.call and redis.pcall results, branches on them, loops over KEYS,
// arithmetic, and returns of every shape Redis converts (numbers, strings, booleans,
// status and error tables, arrays with holes), with arguments of every type a script can
// pass (strings, integers, fractions, nil, tables, booleans). It leaves out what the
// model does not reproduce (doc.go's divergences): Lua's own runtime error texts
// (indexing, comparing or concatenating the wrong type), tostring of numbers, and values
// that depend on the server's clock (a TTL's exact value, which only top-level PTTLs
// compare with a tolerance).
type luaGen struct {
	r    *rand.Rand
	b    strings.Builder
	vars []luaVar // in scope, innermost last
	loop bool     // inside a loop over KEYS, where k is the key
	n    int      // locals declared so far, for fresh names
}

// luaVar is a local and what it may hold: a command's reply (call), a reply or an
// error table (pcall), or a number (num).
type luaVar struct {
	name string
	kind string
}

func (g *luaGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *luaGen) line(depth int, s string) {
	g.b.WriteString(strings.Repeat("  ", depth))
	g.b.WriteString(s)
	g.b.WriteByte('\n')
}

// varOf is a local of one of the kinds, or "" if none is in scope.
func (g *luaGen) varOf(kinds ...string) string {
	var names []string
	for _, v := range g.vars {
		for _, k := range kinds {
			if v.kind == k {
				names = append(names, v.name)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return names[g.r.IntN(len(names))]
}

func (g *luaGen) key() string {
	if g.loop && g.r.IntN(2) == 0 {
		return "k"
	}
	return g.pick("KEYS[1]", "KEYS[1]", "KEYS[#KEYS]", `"k1"`, `"k2"`)
}

// value is an argument: mostly strings and integers, now and then a fraction (sent as
// %.17g), a number local, or a value no command takes (nil, a table, a boolean).
func (g *luaGen) value() string {
	switch g.r.IntN(14) {
	case 0:
		return g.pick("2.5", "-0.5", "1e3", "0.1")
	case 1:
		if v := g.varOf("num"); v != "" {
			return v
		}
	case 2:
		if v := g.varOf("call", "pcall"); v != "" && g.r.IntN(3) == 0 {
			return v // a string works; false and tables are Redis's argument error
		}
	case 3:
		if g.r.IntN(4) == 0 {
			return g.pick("KEYS[3]", "{}", "true")
		}
	case 4:
		return "#KEYS"
	case 5:
		return `ARGV[1] .. "x"`
	}
	return g.pick("ARGV[1]", "ARGV[2]", `"v1"`, `"7"`, `""`, "3", "-2", `"abc"`)
}

// ttl is a TTL in ms, mostly valid and far from a second's boundary, sometimes invalid;
// never a valid one of a few milliseconds (an ARGV such as "7"), which the server, running
// the pipeline later than the model's frozen clock on a loaded machine, could see expire.
func (g *luaGen) ttl() string {
	if g.r.IntN(6) == 0 {
		return g.pick("0", "-1", `"abc"`, "2.5")
	}
	return strconv.Itoa((1+g.r.IntN(30))*1000 + 500)
}

// call is a command with its arguments, as redis.call's argument list.
func (g *luaGen) call() string {
	k := g.key()
	var args []string
	if g.r.IntN(15) == 0 { // a call Redis refuses before running it
		if g.r.IntN(2) == 0 {
			return g.pick(`"get"`, `"hset", "h"`, `"set", `+k) // too few arguments
		}
		return g.pick(`"nosuch", `+k, `"eval", "return 1", "0"`, `"script", "flush"`)
	}
	hk := g.pick(`"h"`, `"h"`, `"h"`, `"h"`, `"h"`, k) // hash commands mostly on the hash key
	switch g.r.IntN(19) {
	case 0, 1:
		args = []string{`"get"`, k}
	case 2, 3:
		args = []string{`"set"`, k, g.value()}
		switch g.r.IntN(6) {
		case 0:
			args = append(args, `"PX"`, g.ttl())
		case 1:
			args = append(args, `"NX"`)
		case 2:
			args = append(args, `"XX"`, `"PX"`, g.ttl())
		case 3:
			args = append(args, `"GET"`)
		case 4:
			args = append(args, `"KEEPTTL"`)
		}
	case 4:
		args = []string{`"setnx"`, k, g.value()}
	case 5:
		args = []string{g.pick(`"del"`, `"unlink"`, `"exists"`), k}
		if g.r.IntN(3) == 0 {
			args = append(args, g.key())
		}
	case 6:
		args = []string{`"pexpire"`, k, g.ttl()}
		if g.r.IntN(3) == 0 {
			args = append(args, g.pick(`"NX"`, `"XX"`, `"GT"`, `"LT"`))
		}
	case 7:
		if g.r.IntN(2) == 0 { // seconds from now: none short enough to run out during the test
			args = []string{`"expire"`, k, g.pick("100", `"99999999999999"`, "0", "-5")}
		} else { // an absolute time in ms: far past (deleted at once) or far future
			args = []string{`"pexpireat"`, k, g.pick("1", "100", `"99999999999999"`, "0")}
		}
	case 8:
		args = []string{`"persist"`, k}
	case 9:
		args = []string{`"incr"`, k}
	case 10:
		args = []string{`"incrby"`, k, g.pick("1", "-1", "5", `"x"`, "2.5", "ARGV[2]")}
	case 11, 12:
		args = []string{`"hset"`, hk, g.pick(`"f1"`, `"f2"`, "ARGV[1]"), g.value()}
	case 13:
		args = []string{g.pick(`"hget"`, `"hexists"`, `"hdel"`), hk, g.pick(`"f1"`, `"f2"`, "ARGV[1]")}
	case 14:
		args = []string{`"hincrby"`, hk, g.pick(`"f1"`, `"f2"`), g.pick("1", "-1", "3", `"y"`)}
	case 15:
		args = []string{`"hlen"`, hk}
	case 16:
		args = []string{`"publish"`, `"chan"`, g.value()}
	case 17:
		args = []string{`"ping"`}
		if g.r.IntN(2) == 0 {
			args = append(args, g.value())
		}
	default:
		args = []string{`"GET"`, k}
	}
	return strings.Join(args, ", ")
}

// cond is a branch condition that cannot raise a Lua runtime error.
func (g *luaGen) cond() string {
	if v := g.varOf("call", "pcall"); v != "" && g.r.IntN(3) != 0 {
		return g.pick(v+" == ARGV[1]", v+" == false", v+" == 1", v+" == 0", `type(`+v+`) == "table"`, "not "+v)
	}
	if v := g.varOf("num"); v != "" && g.r.IntN(2) == 0 {
		return v + g.pick(" > 3", " == 0", " < 0")
	}
	return g.pick(`redis.call("exists", `+g.key()+`) == 1`, "#KEYS > 1", `ARGV[2] == "v1"`,
		`redis.call("pttl", `+g.key()+`) > 0`)
}

// expr is a value to return.
func (g *luaGen) expr() string {
	switch g.r.IntN(10) {
	case 0:
		return g.pick("1", "-7", "2.9", "-2.9", "0", "1e300", "-1e300")
	case 1:
		return g.pick(`"s"`, "ARGV[1]", "KEYS[1]", "true", "false", "nil")
	case 2:
		return g.pick(`redis.status_reply("FINE")`, `redis.error_reply("NOPE no")`, `{ok = "YES"}`, `{err = "ERR own"}`)
	case 3:
		parts := make([]string, 1+g.r.IntN(4))
		for i := range parts {
			parts[i] = g.expr()
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case 4:
		return "#KEYS"
	case 5, 6:
		if v := g.varOf("num"); v != "" {
			return v
		}
	}
	if v := g.varOf("call", "pcall"); v != "" {
		return v
	}
	return "redis.call(" + g.call() + ")"
}

// block writes n statements at depth.
func (g *luaGen) block(depth, n int) {
	mark := len(g.vars)
	for range n {
		g.statement(depth)
	}
	g.vars = g.vars[:mark]
}

func (g *luaGen) fresh(kind string) string {
	g.n++
	name := "v" + strconv.Itoa(g.n)
	g.vars = append(g.vars, luaVar{name, kind})
	return name
}

func (g *luaGen) statement(depth int) {
	switch c := g.r.IntN(12); {
	case c < 4:
		fn := g.pick("call", "call", "pcall")
		call := "redis." + fn + "(" + g.call() + ")"
		g.line(depth, "local "+g.fresh(fn)+" = "+call)
	case c < 5:
		g.line(depth, "redis."+g.pick("call", "pcall")+"("+g.call()+")")
	case c < 6:
		src := g.pick("ARGV[1]", "ARGV[2]")
		if v := g.varOf("call", "pcall"); v != "" && g.r.IntN(2) == 0 {
			src = v
		}
		g.line(depth, "local "+g.fresh("num")+" = (tonumber("+src+") or 0) + "+g.pick("1", "-3", "0.5", "10"))
	case c < 8 && depth < 2:
		g.line(depth, "if "+g.cond()+" then")
		g.block(depth+1, 1+g.r.IntN(2))
		if g.r.IntN(2) == 0 {
			g.line(depth, "else")
			g.block(depth+1, 1+g.r.IntN(2))
		}
		g.line(depth, "end")
	case c < 9 && depth < 2 && !g.loop:
		g.line(depth, "for _, k in ipairs(KEYS) do")
		g.loop = true
		g.block(depth+1, 1+g.r.IntN(2))
		g.loop = false
		g.line(depth, "end")
	case c < 10:
		if v := g.varOf("pcall"); v != "" {
			g.line(depth, "if type("+v+`) == "table" and `+v+".err then")
			g.line(depth+1, g.pick("return "+v, `return redis.error_reply("WRAP " .. `+v+".err)", "error("+v+")"))
			g.line(depth, "end")
			return
		}
		fallthrough
	case c < 11:
		g.line(depth, "if "+g.cond()+" then")
		g.line(depth+1, "return "+g.expr())
		g.line(depth, "end")
	default:
		if g.r.IntN(3) == 0 {
			g.line(depth, g.pick(`error("boom")`, `error({err = "CUSTOM e"})`, `redis.call("get", "h")`))
		} else {
			g.line(depth, "local "+g.fresh("call")+" = redis.call("+g.call()+")")
		}
	}
}

// program is a whole script: a few statements and, mostly, a return.
func (g *luaGen) program() string {
	g.b.Reset()
	g.vars, g.n = g.vars[:0], 0
	g.block(0, 1+g.r.IntN(5))
	if g.r.IntN(6) != 0 {
		g.line(0, "return "+g.expr())
	}
	return g.b.String()
}

// TestRandomLuaProgramsAgainstRealRedis runs small generated Lua programs (luaGen) with
// random keys and arguments on random keyspaces, against a real redis-server and the
// model, and requires the same replies, script by script, and the same keys after each.
func TestRandomLuaProgramsAgainstRealRedis(t *testing.T) {
	rc := startRedis(t)
	const sequences, perSequence = 600, 8
	seen := map[string]int{}
	reads := [][]string{}
	for _, k := range []string{"k1", "k2", "h"} {
		reads = append(reads, []string{"EXISTS", k}, []string{"PTTL", k}, []string{"GET", k},
			[]string{"HGET", k, "f1"}, []string{"HLEN", k})
	}
	for seed := uint64(1); seed <= sequences; seed++ {
		g := &luaGen{r: rand.New(rand.NewPCG(seed, 0x1a6e))}
		batch := [][]string{{"FLUSHALL"}, {"SCRIPT", "FLUSH"}}
		for _, k := range []string{"k1", "k2", "h"} {
			switch g.r.IntN(4) {
			case 0:
				batch = append(batch, []string{"SET", k, g.pick("v1", "7", "abc", "")})
			case 1:
				batch = append(batch, []string{"HSET", k, "f1", g.pick("1", "v1")})
			}
		}
		var scripts []int // batch indexes of the scripts
		for range perSequence {
			argv := []string{"EVAL", g.program()}
			keys := []string{g.pick("k1", "k2", "k1", "k2", "h")}
			if g.r.IntN(2) == 0 {
				keys = append(keys, g.pick("k1", "k2", "k1", "k2", "h"))
			}
			argv = append(argv, strconv.Itoa(len(keys)))
			argv = append(argv, keys...)
			for range 1 + g.r.IntN(2) {
				argv = append(argv, g.pick("v1", "7", "01", "", "abc", "1500", "9223372036854775807", "f1"))
			}
			scripts = append(scripts, len(batch))
			batch = append(append(batch, argv), reads...)
		}
		e, err := NewEngine(EngineConfig{})
		require.NoError(t, err)
		t0 := time.Now().UnixMilli()
		real, err := rc.do(batch)
		require.NoError(t, err)
		tol := time.Now().UnixMilli() - t0 + 1
		for i, argv := range batch {
			got := e.Do(argv, t0)
			if i < 2 {
				continue
			}
			require.Truef(t, sameReply(argv, real[i], got, tol),
				"seed %d command %d:\n%s\nredis %v\nmodel %v", seed, i, strings.Join(argv, " | "), real[i], got)
		}
		for _, i := range scripts {
			seen[replyClass(real[i])]++
		}
	}
	t.Logf("%d generated scripts, 0 divergences; replies by class: %s", sequences*perSequence, classes(seen))
	for _, k := range []string{"OK", "nil", "bulk", "int:0", "int:1", "int:ttl", "array", "FINE", "YES",
		"script:ERR Wrong number", "script:ERR Lua", "script:WRONGTYPE", "script:ERR user_script", "script:CUSTOM",
		"script:ERR Unknown Redis command called from script", "script:ERR This Redis command is not allowed from script",
		"other error: NOPE no", "other error: ERR own", "other error: WRAP WRONGTYPE Operation against a key holding the wrong kind of value"} {
		require.NotZerof(t, seen[k], "no script answered %q: the generator proves little", k)
	}
}
