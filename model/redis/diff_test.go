package redis

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// The differential test runs the same seeded random command sequences against a real
// redis-server and against the model, and requires identical replies. The model is fed
// the real wall time (this is test code, so it may read the machine's clock), taken just
// before each pipeline is sent; the server executes the pipeline a little later, so PTTL
// may differ by the pipeline's round trip, and only PTTL gets that tolerance.
const (
	diffSequences = 2000
	diffLength    = 50
)

var (
	diffKeys   = []string{"k1", "k2", "k3", "lock"}
	diffValues = []string{"v1", "v2", "v3", "1", "41", "-5", "9223372036854775807", "abc", "01", ""}
	scripts    = []resp.Script{resp.ScriptRelease, resp.ScriptExtend, resp.ScriptExtendOrSet}
	// luaScripts run in the model's Lua VM: the shapes lock libraries use (compare and
	// delete, compare and extend, all-or-nothing acquire of several keys with EXISTS,
	// counted release), Redis's conversions (numbers truncated, booleans, nil, status and
	// error tables, numbers as arguments) and its errors (redis.call's, pcall's, error(),
	// the globals protection), each on several lines so the error suffix's line counts.
	// They avoid what the model does not reproduce: array replies, math.random, and the
	// texts of Lua's own runtime and syntax errors.
	luaScripts = []string{
		"if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n    return redis.call(\"del\",KEYS[1])\nelse\n    return 0\nend",
		"local val = redis.call(\"GET\", KEYS[1])\nif val == ARGV[1] then\n\treturn redis.call(\"PEXPIRE\", KEYS[1], ARGV[2])\nelseif val == false then\n\treturn -1\nelse\n\treturn 0\nend",
		"for _, key in ipairs(KEYS) do\n  if redis.call(\"exists\", key) == 1 then\n    return 0\n  end\nend\nfor _, key in ipairs(KEYS) do\n  redis.call(\"set\", key, ARGV[1], \"PX\", ARGV[2])\nend\nreturn #KEYS",
		"local count = 0\nfor _, key in ipairs(KEYS) do\n  if redis.call(\"get\", key) == ARGV[1] then\n    redis.call(\"del\", key)\n    count = count + 1\n  end\nend\nreturn count",
		"local r = redis.pcall(\"incrby\", KEYS[1], ARGV[1])\nif type(r) == \"table\" and r.err then\n  return redis.error_reply(\"LOCKERR \" .. r.err)\nend\nreturn r",
		"redis.call(\"set\", KEYS[1], ARGV[1])\nreturn redis.call(\"incrby\", KEYS[1], 2.7)",
		"return redis.call(\"pexpire\", KEYS[1], ARGV[1], ARGV[2])",
		"local t = redis.call(\"set\", KEYS[1], ARGV[1], \"NX\")\nif t then\n  return t\nend\nreturn redis.status_reply(\"TAKEN\")",
		"return ARGV[1] == nil",
		"return tonumber(ARGV[1])",
		"local n = redis.call(\"ttl\", KEYS[1])\nreturn n + 0.5",
		"return undefined_global",
		"\nreturn redis.call(\"setnx\", KEYS[1])",
		"error({err = \"CUSTOM \" .. tostring(#KEYS)})",
		"local ok = redis.call(\"unlink\", KEYS[1]) + redis.call(\"exists\", KEYS[1])\nglobal_write = ok",
		"return {KEYS[1], ARGV[1], redis.call(\"exists\", KEYS[1]), {ok = \"x\"}, false, 2.5, {ARGV[2]}}",
		"return {redis.call(\"pttl\", KEYS[1]) > 0, redis.call(\"get\", KEYS[1]), redis.pcall(\"incr\", KEYS[1])}",
		"if redis.call(\"exists\", KEYS[1]) == 0 or redis.call(\"hexists\", KEYS[1], ARGV[1]) == 1 then\n  redis.call(\"hincrby\", KEYS[1], ARGV[1], 1)\n  redis.call(\"pexpire\", KEYS[1], ARGV[2])\n  return nil\nend\nreturn redis.call(\"pttl\", KEYS[1])",
		"if redis.call(\"hexists\", KEYS[1], ARGV[1]) == 0 then\n  return nil\nend\nlocal n = redis.call(\"hincrby\", KEYS[1], ARGV[1], -1)\nif n > 0 then\n  redis.call(\"pexpire\", KEYS[1], ARGV[2])\n  return 0\nend\nredis.call(\"del\", KEYS[1])\nredis.call(\"publish\", \"unlock:\" .. KEYS[1], 0)\nreturn 1",
		"return {redis.call(\"hset\", KEYS[1], \"f1\", ARGV[1]), redis.call(\"hlen\", KEYS[1]), redis.call(\"hget\", KEYS[1], \"f1\"), redis.call(\"hdel\", KEYS[1], \"f1\", \"f2\")}",
	}
)

// diffCmd is one generated command: a Command value (run through Engine.Exec) or a raw
// argv (run through Engine.Do). Every command also runs through Do on a second engine, so
// both paths are checked against the server.
type diffCmd struct {
	cmd  *resp.Command
	argv []string
}

func (c diffCmd) args() []string {
	if c.cmd != nil {
		return c.cmd.Args()
	}
	return c.argv
}

// gen draws commands. Expiry values are whole seconds (relative TTLs) or whole seconds
// plus 500 ms (PEXPIRE), so that PEXPIRE GT/LT never compares two expiries that only the
// pipeline's jitter could order, and nothing expires during a sequence.
type gen struct {
	r   *rand.Rand
	now int64 // the wall time in ms when the sequence is generated
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) key() string             { return g.pick(diffKeys) }
func (g *gen) value() string           { return g.pick(diffValues) }
func (g *gen) secs(max int) int64      { return int64(1 + g.r.IntN(max)) }

// scriptTTL is a script's ARGV[2]: mostly a valid TTL, sometimes 0 or negative (PEXPIRE
// deletes; SET refuses).
func (g *gen) scriptTTL() time.Duration {
	switch g.r.IntN(8) {
	case 0:
		return 0
	case 1:
		return -time.Second
	}
	return time.Duration(g.secs(60))*time.Second + 500*time.Millisecond
}

func (g *gen) command() diffCmd {
	switch x := g.r.IntN(100); {
	case x < 20:
		c := resp.Command{Op: resp.OpSet, Key: g.key(), Value: g.value(), Cond: resp.Cond(g.r.IntN(3))}
		switch g.r.IntN(6) {
		case 0, 1:
			c.TTL = time.Duration(g.secs(60)) * time.Second
		case 2:
			c.TTL, c.InSecs = time.Duration(g.secs(60))*time.Second, true
		case 3:
			c.TTL = 500 * time.Microsecond // renders as PX 0 (or EX 0): invalid expire time
			c.InSecs = g.r.IntN(2) == 0
		}
		return diffCmd{cmd: &c}
	case x < 28:
		return diffCmd{cmd: &resp.Command{Op: resp.OpGet, Key: g.key()}}
	case x < 33:
		return diffCmd{cmd: &resp.Command{Op: resp.OpDel, Key: g.key()}}
	case x < 40:
		ttl := []time.Duration{-2 * time.Second, -time.Millisecond, 0}[g.r.IntN(3)]
		if g.r.IntN(2) == 0 {
			ttl = time.Duration(g.secs(60))*time.Second + 500*time.Millisecond
		}
		return diffCmd{cmd: &resp.Command{Op: resp.OpPExpire, Key: g.key(), TTL: ttl}}
	case x < 48:
		return diffCmd{cmd: &resp.Command{Op: resp.OpPTTL, Key: g.key()}}
	case x < 54:
		return diffCmd{cmd: &resp.Command{Op: resp.OpIncr, Key: g.key()}}
	case x < 78:
		s := scripts[g.r.IntN(len(scripts))]
		op := resp.OpEvalSHA
		if g.r.IntN(3) == 0 {
			op = resp.OpEval
		}
		return diffCmd{cmd: &resp.Command{Op: op, Key: g.key(), Value: g.value(), TTL: g.scriptTTL(), Script: s}}
	}
	return diffCmd{argv: g.argv()}
}

// argv draws the commands a Command cannot express: every SET and PEXPIRE option in any
// order (valid or not), wrong arities, odd EVAL numkeys, SCRIPT subcommands, unknown
// commands, odd capitalisation.
func (g *gen) argv() []string {
	switch g.r.IntN(24) {
	case 0, 1, 2:
		argv := []string{g.caps("SET"), g.key(), g.value()}
		for range g.r.IntN(5) {
			argv = append(argv, g.setToken()...)
		}
		return argv
	case 3:
		argv := []string{g.caps("PEXPIRE"), g.key(), g.intArg()}
		for range g.r.IntN(3) {
			argv = append(argv, g.caps(g.pick([]string{"NX", "XX", "GT", "LT", "foo"})))
		}
		return argv
	case 4:
		return g.pick2(arityCases)
	case 5, 18:
		return g.evalArgv()
	case 6:
		s := scripts[g.r.IntN(len(scripts))]
		switch g.r.IntN(5) {
		case 0:
			return []string{"SCRIPT", g.caps("load"), s.Source()}
		case 1, 2:
			return []string{"SCRIPT", g.caps("load"), g.pick(luaScripts)}
		case 3:
			argv := []string{"SCRIPT", g.caps("exists")}
			for range 1 + g.r.IntN(3) {
				sha := g.pick([]string{s.SHA(), sha1hex(g.pick(luaScripts)), "nope"})
				argv = append(argv, g.caps(sha))
			}
			return argv
		}
		return []string{"SCRIPT", "FLUSH"}
	case 7:
		argv := []string{g.caps(g.pick([]string{"foo", "GETX", "hello world"}))}
		for range g.r.IntN(4) {
			argv = append(argv, g.pick([]string{"a", "b c", strings.Repeat("x", 100), "line\nbreak"}))
		}
		return argv
	case 8:
		argv := []string{"DEL"}
		for range 1 + g.r.IntN(4) {
			argv = append(argv, g.key())
		}
		return argv
	case 9:
		return []string{g.caps("INCR"), g.key()}
	case 10:
		return []string{g.caps("GET"), g.key()}
	case 11:
		return g.expireArgv()
	case 12:
		return []string{g.caps("INCRBY"), g.key(), g.pick([]string{"1", "-1", "100", "-100", "abc", "9223372036854775807", "-9223372036854775808", "0"})}
	case 13:
		return []string{g.caps("SETNX"), g.key(), g.value()}
	case 14, 15:
		argv := []string{g.caps(g.pick([]string{"EXISTS", "UNLINK"}))}
		for range 1 + g.r.IntN(4) {
			argv = append(argv, g.key())
		}
		return argv
	case 16:
		return []string{g.caps("TTL"), g.key()}
	case 19, 20, 22:
		return g.hashArgv()
	case 21:
		if g.r.IntN(4) == 0 {
			return append([]string{g.caps("PING")}, []string{"hi", ""}[:g.r.IntN(3)]...)
		}
		return []string{g.caps("PUBLISH"), g.pick([]string{"redisson_lock__channel:{lock}", "c"}), g.value()}
	case 17:
		return []string{g.caps("PERSIST"), g.key()}
	}
	return []string{g.caps("PTTL"), g.key()}
}

var arityCases = [][]string{
	{"GET"}, {"GET", "k1", "k2"}, {"SET"}, {"SET", "k1"}, {"DEL"}, {"PTTL"}, {"PTTL", "k1", "k2"},
	{"INCR"}, {"INCR", "k1", "k2"}, {"PEXPIRE"}, {"PEXPIRE", "k1"}, {"EVAL"}, {"EVAL", "return 1"},
	{"EVALSHA"}, {"EVALSHA", "x"}, {"SCRIPT"}, {"SCRIPT", "LOAD"}, {"SCRIPT", "LOAD", "a", "b"},
	{"SCRIPT", "EXISTS"}, {"SCRIPT", "KILL", "x"}, {"SCRIPT", "KILL"}, {"SCRIPT", "FLUSH", "x"},
	{"SCRIPT", "nope"}, {"get"}, {"Set", "k1"},
	{"EXISTS"}, {"UNLINK"}, {"TTL"}, {"TTL", "k1", "k2"}, {"PERSIST"}, {"PERSIST", "k1", "k2"},
	{"INCRBY", "k1"}, {"INCRBY", "k1", "1", "2"}, {"SETNX", "k1"}, {"SETNX", "k1", "v", "x"},
	{"EXPIRE", "k1"}, {"EXPIREAT"}, {"PEXPIREAT", "k1"},
	{"HSET", "k1"}, {"HSET", "k1", "f"}, {"HGET", "k1"}, {"HEXISTS", "k1", "f", "g"}, {"HINCRBY", "k1", "f"},
	{"HDEL", "k1"}, {"HLEN"}, {"HLEN", "k1", "k2"}, {"PUBLISH", "c"}, {"PUBLISH", "c", "m", "x"},
	{"PING", "a", "b"},
}

// hashArgv is a hash command on any key (string keys answer WRONGTYPE) or on a key only
// hash commands use, with fields from a small set so that they meet, and increments at
// the edges.
func (g *gen) hashArgv() []string {
	field := func() string { return g.pick([]string{"f1", "f2", "holder:1"}) }
	key := func() string { return g.pick([]string{g.key(), "hash"}) } // "hash" stays a hash for longer
	switch g.r.IntN(8) {
	case 0, 1:
		argv := []string{g.caps("HSET"), key()}
		for range 1 + g.r.IntN(2) {
			argv = append(argv, field(), g.pick([]string{g.value(), "1", "abc"}))
		}
		if g.r.IntN(10) == 0 {
			argv = argv[:len(argv)-1] // a field without its value
		}
		return argv
	case 2:
		return []string{g.caps("HGET"), key(), field()}
	case 3:
		return []string{g.caps("HEXISTS"), key(), field()}
	case 4, 5:
		return []string{g.caps("HINCRBY"), key(), field(), g.pick([]string{"1", "-1", "abc", "9223372036854775807", "-9223372036854775808"})}
	case 6:
		argv := []string{g.caps("HDEL"), key()}
		for range 1 + g.r.IntN(3) {
			argv = append(argv, field())
		}
		return argv
	}
	return []string{g.caps("HLEN"), key()}
}

// expireArgv is EXPIRE, EXPIREAT or PEXPIREAT with an argument in its unit (relative
// seconds, or an absolute time that is past, near or far), edges that overflow, and
// options valid or not. Relative times are whole seconds and absolute ones sit 250 ms
// off a second, so that no reply depends on when within its millisecond the server ran.
func (g *gen) expireArgv() []string {
	name := g.pick([]string{"EXPIRE", "EXPIREAT", "PEXPIREAT"})
	var arg string
	switch name {
	case "EXPIRE":
		arg = g.pick([]string{strconv.FormatInt(g.secs(60), 10), "0", "-1", "abc", "9223372036854775", "9223372036854776", "-9223372036854776"})
	case "EXPIREAT":
		arg = g.pick([]string{strconv.FormatInt(g.now/1000+g.secs(60)+100, 10), "1", "0", "-1", "9223372036854775", "9223372036854776"})
	default:
		arg = g.pick([]string{strconv.FormatInt(g.now+g.secs(60)*1000+100250, 10), "1", "-1", "9223372036854775807", "0100"})
	}
	argv := []string{g.caps(name), g.key(), arg}
	for range g.r.IntN(3) {
		argv = append(argv, g.caps(g.pick([]string{"NX", "XX", "GT", "LT", "foo"})))
	}
	return argv
}

func (g *gen) pick2(xs [][]string) []string { return xs[g.r.IntN(len(xs))] }

// caps returns s in upper, lower or mixed case.
func (g *gen) caps(s string) string {
	switch g.r.IntN(4) {
	case 0:
		return strings.ToLower(s)
	case 1:
		b := []byte(strings.ToLower(s))
		for i := range b {
			if g.r.IntN(2) == 0 {
				b[i] = strings.ToUpper(string(b[i]))[0]
			}
		}
		return string(b)
	}
	return strings.ToUpper(s)
}

// intArg is an integer argument: mostly a valid relative TTL, sometimes an edge.
func (g *gen) intArg() string {
	switch g.r.IntN(10) {
	case 0:
		return "0"
	case 1:
		return "-5"
	case 2:
		return "abc"
	case 3:
		return "0100"
	case 4:
		return "9223372036854775807"
	}
	return strconv.FormatInt(g.secs(60)*1000+500, 10)
}

// setToken is one SET option, with its argument when it takes one (or sometimes not).
func (g *gen) setToken() []string {
	opt := g.pick([]string{"NX", "XX", "GET", "KEEPTTL", "EX", "PX", "EXAT", "PXAT", "bogus"})
	tok := []string{g.caps(opt)}
	if g.r.IntN(8) == 0 {
		return tok // EX/PX/EXAT/PXAT without a value, or followed by the next option
	}
	switch opt {
	case "EX":
		tok = append(tok, g.pick([]string{strconv.FormatInt(g.secs(60), 10), "0", "-1", "abc", "9223372036854775"}))
	case "PX":
		tok = append(tok, g.pick([]string{strconv.FormatInt(g.secs(60)*1000, 10), "0", "-5", "0100", "9223372036854775807"}))
	case "EXAT":
		tok = append(tok, g.pick([]string{strconv.FormatInt(g.now/1000+g.secs(60)+100, 10), "1", "0"}))
	case "PXAT":
		tok = append(tok, g.pick([]string{strconv.FormatInt(g.now+g.secs(60)*1000+100250, 10), "1", "-1"}))
	}
	return tok
}

// evalArgv is EVAL/EVALSHA with odd digests, numkeys and argument counts, of a standard
// script or one the Lua VM runs.
func (g *gen) evalArgv() []string {
	s := scripts[g.r.IntN(len(scripts))]
	src, digest := s.Source(), s.SHA()
	if g.r.IntN(2) == 0 {
		src = g.pick(luaScripts)
		digest = sha1hex(src)
	}
	head, sha := src, g.r.IntN(3) != 0
	if sha {
		head = digest
		switch g.r.IntN(6) {
		case 0:
			head = strings.ToUpper(head)
		case 1:
			head = head[:39]
		case 2:
			head = strings.Repeat("0", 40)
		}
	}
	name := "EVAL"
	if sha {
		name = "EVALSHA"
	}
	if src != s.Source() && g.r.IntN(2) == 0 { // well formed: keys, then a value and a TTL
		nk := 1 + g.r.IntN(2)
		argv := []string{g.caps(name), head, strconv.Itoa(nk)}
		for range nk {
			argv = append(argv, g.key())
		}
		return append(argv, g.value(), strconv.FormatInt(g.secs(60)*1000+500, 10))
	}
	argv := []string{g.caps(name), head, g.pick([]string{"0", "1", "1", "1", "2", "2", "-1", "abc", "01"})}
	for range g.r.IntN(6) {
		argv = append(argv, g.pick([]string{g.key(), g.value(), g.intArg()}))
	}
	return argv
}

// sameReply compares a real reply with the model's; a non-negative PTTL may be off by tol
// (the server ran later than the model's clock was read), and a TTL by one second (it
// rounds to the nearest second, so those few milliseconds can cross a half second).
func sameReply(argv []string, real, model resp.Reply, tol int64) bool {
	if real == model {
		return true
	}
	switch {
	case strings.EqualFold(argv[0], "pttl"):
	case strings.EqualFold(argv[0], "ttl"):
		tol = 1
	default:
		return false
	}
	return real.Kind == resp.ReplyInt && model.Kind == resp.ReplyInt &&
		real.Int >= 0 && model.Int >= 0 && real.Int <= model.Int && model.Int-real.Int <= tol
}

func startRedis(t *testing.T) *respConn {
	srv := redistest.Start(t)
	rc, err := dialRESP(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { rc.Close() })
	return rc
}

func TestDifferentialAgainstRealRedis(t *testing.T) {
	rc := startRedis(t)
	kinds := map[string]int{}
	compared := 0
	for seed := uint64(1); seed <= diffSequences; seed++ {
		g := &gen{r: rand.New(rand.NewPCG(seed, 0xd1ff)), now: time.Now().UnixMilli()}
		cmds := make([]diffCmd, diffLength)
		batch := [][]string{{"FLUSHALL"}, {"SCRIPT", "FLUSH"}}
		for i := range cmds {
			cmds[i] = g.command()
			batch = append(batch, cmds[i].args())
		}
		viaExec, err := NewEngine(EngineConfig{})
		require.NoError(t, err)
		viaDo, err := NewEngine(EngineConfig{})
		require.NoError(t, err)

		t0 := time.Now().UnixMilli()
		real, err := rc.do(batch)
		require.NoError(t, err)
		tol := time.Now().UnixMilli() - t0 + 1
		require.Equal(t, resp.OK, real[0])
		require.Equal(t, resp.OK, real[1])
		for i, c := range cmds {
			argv := c.args()
			want := real[i+2]
			gotDo := viaDo.Do(argv, t0)
			require.Truef(t, sameReply(argv, want, gotDo, tol),
				"seed %d command %d %q (Do): redis %v, model %v", seed, i, argv, want, gotDo)
			if c.cmd != nil {
				gotExec := viaExec.Exec(*c.cmd, t0)
				require.Truef(t, sameReply(argv, want, gotExec, tol),
					"seed %d command %d %s (Exec): redis %v, model %v", seed, i, c.cmd, want, gotExec)
			} else {
				viaExec.Do(argv, t0)
			}
			compared++
			kinds[replyClass(want)]++
		}
	}
	t.Logf("%d sequences, %d commands, 0 divergences; replies by class: %s", diffSequences, compared, classes(kinds))
	// The generator must actually reach the interesting replies, or the test proves little.
	for _, k := range []string{"OK", "nil", "bulk", "int:0", "int:1", "int:-1", "int:-2", "int:ttl", "NOSCRIPT",
		"ERR syntax error", "ERR wrong number", "ERR invalid expire", "ERR value is not", "ERR unknown",
		"ERR increment", "script:ERR Lua", "script:ERR invalid expire", "script:ERR value is not",
		"ERR Number of keys", "ERR Unsupported", "ERR NX and XX", "ERR GT and LT",
		"script:ERR user_script", "script:ERR Wrong number", "script:CUSTOM", "LOCKERR", "TAKEN", "array", "PONG",
		"WRONGTYPE", "script:WRONGTYPE", "ERR hash value"} {
		require.NotZerof(t, kinds[k], "no reply of class %q was exercised", k)
	}
}

// replyClass buckets replies for the coverage check.
func replyClass(r resp.Reply) string {
	switch r.Kind {
	case resp.ReplyNil:
		return "nil"
	case resp.ReplyStatus:
		return r.Str
	case resp.ReplyBulk:
		return "bulk"
	case resp.ReplyInt:
		if r.Int > 1 {
			return "int:ttl"
		}
		return "int:" + strconv.FormatInt(r.Int, 10)
	case resp.ReplyArray:
		return "array"
	}
	head, _, inScript := strings.Cut(r.Str, " script: ")
	prefix := ""
	if inScript {
		prefix = "script:"
	}
	for _, p := range []string{"NOSCRIPT", "ERR syntax error", "ERR wrong number", "ERR invalid expire",
		"ERR value is not", "ERR Lua", "ERR unknown", "ERR increment", "ERR Number of keys", "ERR Unsupported",
		"ERR NX and XX", "ERR GT and LT", "NOTBUSY", "ERR SCRIPT FLUSH", "ERR user_script", "ERR Wrong number",
		"LOCKERR", "CUSTOM", "WRONGTYPE", "ERR hash value"} {
		if strings.HasPrefix(head, p) {
			return prefix + p
		}
	}
	if inScript {
		return prefix + head
	}
	return "other error: " + r.Str
}

func classes(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// TestDifferentialExpiry checks expiry itself against the real server: keys set with PX
// 50-200 ms (by SET, by the extend-or-set script, and by PEXPIRE) are read with GET and
// PTTL after real waits. The model's clock is the machine's, read just before each
// pipeline; a read whose key's expiry falls inside the pipelines' timing uncertainty may
// go either way on the server and is counted apart, every other read must agree.
func TestDifferentialExpiry(t *testing.T) {
	rc := startRedis(t)
	r := rand.New(rand.NewPCG(7, 0xe1))
	definite, boundary, expired, alive := 0, 0, 0, 0
	// Rounds go on until enough reads were clear of the timing uncertainty: at least 20,
	// at most 500. A loaded machine's pipelines take longer, more reads fall within their
	// uncertainty, and it takes more rounds to compare as many; the bound only stops a
	// machine that never gets a read clear.
	const minRounds, maxRounds, wantDefinite = 20, 500, 200
	round := 0
	for ; round < maxRounds && (round < minRounds || definite < wantDefinite || expired == 0 || alive == 0); round++ {
		m, err := NewEngine(EngineConfig{})
		require.NoError(t, err)
		keys := []string{"a", "b", "c", "d", "e", "f"}
		px := make([]int64, len(keys))
		var batch [][]string
		for i, k := range keys {
			px[i] = 50 + r.Int64N(151)
			ms := strconv.FormatInt(px[i], 10)
			switch i % 3 {
			case 0:
				batch = append(batch, []string{"SET", k, "v", "PX", ms})
			case 1:
				batch = append(batch, []string{"EVAL", resp.ScriptExtendOrSet.Source(), "1", k, "v", ms})
			case 2:
				batch = append(batch, []string{"SET", k, "v", "PX", "100000"}, []string{"PEXPIRE", k, ms})
			}
		}
		batch = append([][]string{{"FLUSHALL"}}, batch...)
		ts0 := time.Now().UnixMilli()
		_, err = rc.do(batch)
		require.NoError(t, err)
		ts1 := time.Now().UnixMilli()
		for _, argv := range batch[1:] {
			require.NotEqual(t, resp.ReplyError, m.Do(argv, ts0).Kind)
		}
		for range 4 {
			time.Sleep(time.Duration(r.IntN(70)) * time.Millisecond)
			var reads [][]string
			for _, k := range keys {
				reads = append(reads, []string{"GET", k}, []string{"PTTL", k})
			}
			r0 := time.Now().UnixMilli()
			real, err := rc.do(reads)
			require.NoError(t, err)
			r1 := time.Now().UnixMilli()
			tol := (ts1 - ts0) + (r1 - r0) + 1
			for i := range keys {
				get, pttl := m.Do(reads[2*i], r0), m.Do(reads[2*i+1], r0)
				// Expired iff read time - set time > px; that difference lies in
				// [r0-ts1, r1-ts0].
				if px[i] >= r0-ts1 && px[i] < r1-ts0 {
					boundary++
					continue
				}
				definite++
				if get.Kind == resp.ReplyNil {
					expired++
				} else {
					alive++
				}
				require.Equalf(t, real[2*i], get, "round %d key %s px %d: GET", round, keys[i], px[i])
				require.Truef(t, pttl == real[2*i+1] || (pttl.Int >= 0 && real[2*i+1].Int >= 0 &&
					abs(pttl.Int-real[2*i+1].Int) <= tol),
					"round %d key %s px %d: PTTL redis %v model %v (tolerance %d ms)", round, keys[i], px[i], real[2*i+1], pttl, tol)
			}
		}
	}
	t.Logf("expiry reads in %d rounds: %d compared (%d expired, %d alive), %d within the timing uncertainty", round, definite, expired, alive, boundary)
	require.NotZero(t, expired)
	require.NotZero(t, alive)
	require.GreaterOrEqual(t, definite, wantDefinite, "in %d rounds, too few reads were clear of the timing uncertainty", round)
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
