package redis

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// TestExecAgreesWithDoOnArgs checks the Command path against the argv path for arbitrary
// Command values, odd ones included (unknown ops and scripts, sub-millisecond and
// negative TTLs, EX below a second): Exec(c) must answer exactly what Do(c.Args())
// answers, since c.Args() is what the real driver sends to a real server, and leave the
// same keyspace behind.
func TestExecAgreesWithDoOnArgs(t *testing.T) {
	ttls := []time.Duration{0, -time.Second, -time.Millisecond, 500 * time.Microsecond, time.Millisecond,
		1500 * time.Millisecond, 10 * time.Second, 999 * time.Millisecond, 1 << 62}
	keys := []string{"a", "b", ""}
	vals := []string{"v", "1", "w", "9223372036854775807", "x y"}
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		viaExec, _ := NewEngine(EngineConfig{MaxKeys: 2})
		viaDo, _ := NewEngine(EngineConfig{MaxKeys: 2})
		now := int64(DefaultEpochMs)
		for i := range 200 {
			c := resp.Command{Op: resp.Op(r.IntN(10)), Key: keys[r.IntN(len(keys))], Value: vals[r.IntN(len(vals))],
				Cond: resp.Cond(r.IntN(4)), TTL: ttls[r.IntN(len(ttls))], InSecs: r.IntN(3) == 0, Script: resp.Script(r.IntN(5))}
			now += r.Int64N(3000)
			want := viaDo.Do(c.Args(), now)
			require.Equalf(t, want, viaExec.Exec(c, now), "seed %d step %d: %s (%q)", seed, i, c, c.Args())
			for _, k := range keys {
				v1, e1, ok1 := viaExec.Peek(k, now)
				v2, e2, ok2 := viaDo.Peek(k, now)
				require.Equal(t, []any{v2, e2, ok2}, []any{v1, e1, ok1}, "seed %d step %d key %q", seed, i, k)
			}
		}
	}
}

func TestExpiryIsNowGreaterThanWhen(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	require.Equal(t, resp.OK, e.Do([]string{"SET", "k", "v", "PX", "100"}, 1000))
	assert.Equal(t, resp.IntReply(0), e.Do([]string{"PTTL", "k"}, 1100), "at the expiry instant the key still exists")
	assert.Equal(t, bulkOf("v"), e.Do([]string{"GET", "k"}, 1100))
	assert.Equal(t, resp.Nil, e.Do([]string{"GET", "k"}, 1101))
	assert.Equal(t, resp.IntReply(-2), e.Do([]string{"PTTL", "k"}, 1101))
}

func TestEffectsCarryAbsoluteExpiry(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	e.Exec(set("k", "v", resp.CondNX, 10*time.Second), 5000)
	require.Len(t, e.effects, 1)
	assert.Equal(t, effect{key: "k", val: "v", exp: 15000}, e.effects[0], "SET PX is logged as SET PXAT")
	e.Exec(resp.Command{Op: resp.OpIncr, Key: "k"}, 6000)
	assert.Empty(t, e.effects, "a failed INCR writes nothing")
	e.Exec(get("k"), 15001)
	assert.Equal(t, []effect{{key: "k", exp: NoExpiry, del: true, expired: true}}, e.effects, "lazy expiry is a DEL")
}

func TestKeyspaceHeapStaysConsistent(t *testing.T) {
	// 6 keys stay within a slab small enough to scan; 50 make the keyspace build its index.
	for _, keys := range []int{6, 50} {
		t.Run(fmt.Sprint(keys, " keys"), func(t *testing.T) { checkKeyspace(t, keys) })
	}
}

func checkKeyspace(t *testing.T, keys int) {
	r := rand.New(rand.NewPCG(3, 3))
	ks := newKeyspace()
	ref := map[string]int64{} // key -> expiry, NoExpiry for none
	for step := range 20000 {
		k := fmt.Sprint("k", r.IntN(keys))
		i, ok := ks.find(k)
		switch x := r.IntN(10); {
		case x < 4:
			if !ok {
				i = ks.insert(k, "v")
				ref[k] = NoExpiry
			}
			exp := r.Int64N(1000)
			ks.setExp(i, exp)
			ref[k] = exp
		case x < 5 && ok:
			ks.clearExp(i)
			ref[k] = NoExpiry
		case x < 8 && ok:
			ks.remove(i)
			delete(ref, k)
		default:
			if !ok {
				ks.insert(k, "v")
				ref[k] = NoExpiry
			}
		}
		require.Equal(t, len(ref), ks.len())
		for j := range keys {
			rk := fmt.Sprint("k", j)
			i, ok := ks.find(rk)
			_, want := ref[rk]
			require.Equal(t, want, ok, "step %d key %s", step, rk)
			if ok {
				require.Equal(t, rk, ks.ents[i].key)
			}
		}
		// The heap's top is the smallest (expiry, key) among keys with an expiry.
		best, found := "", false
		for _, rk := range sortedKeys(ref) {
			if e := ref[rk]; e != NoExpiry && (!found || e < ref[best]) {
				best, found = rk, true
			}
		}
		top, ok := ks.minExp()
		require.Equal(t, found, ok, "step %d", step)
		if found {
			require.Equal(t, best, ks.ents[top].key, "step %d", step)
		}
	}
}

func TestParseIntIsRedisStrict(t *testing.T) {
	good := map[string]int64{"0": 0, "1": 1, "-1": -1, "9223372036854775807": 1<<63 - 1, "-9223372036854775808": -1 << 63}
	for s, want := range good {
		n, ok := parseInt(s)
		assert.True(t, ok, s)
		assert.Equal(t, want, n, s)
	}
	for _, s := range []string{"", "-", "-0", "01", "+1", " 1", "1 ", "9223372036854775808", "-9223372036854775809",
		"18446744073709551616", "1e3", "0x10", "000000000000000000001"} {
		_, ok := parseInt(s)
		assert.False(t, ok, "%q", s)
	}
}

func TestUnknownCommandText(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	long := fmt.Sprintf("%0200d", 0)
	r := e.Do([]string{"FOO", "x y", long, "never"}, 0)
	assert.Equal(t, "ERR unknown command 'FOO', with args beginning with: 'x y' '"+long[:122]+"' ", r.Str)
	assert.Equal(t, "ERR unknown command 'a b', with args beginning with: ", e.Do([]string{"a\nb"}, 0).Str)
	assert.Equal(t, "ERR unknown subcommand 'x'. Try SCRIPT HELP.", e.Do([]string{"script", "x"}, 0).Str)
	assert.Equal(t, resp.IntReply(1), e.Do([]string{"EVAL", "return 1", "0"}, 0), "any script runs, in the Lua VM")
	assert.Equal(t, bulkOf("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"), e.Do([]string{"SCRIPT", "LOAD", "return 1"}, 0))
	assert.Equal(t, "ERR redlock-sim: SCRIPT help is not modelled", e.Do([]string{"SCRIPT", "HELP"}, 0).Str)
	assert.Equal(t, "ERR redlock-sim: empty command", e.Do(nil, 0).Str)
}

func TestScriptLoadAndFlush(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	rel := resp.EvalSHA(resp.ScriptRelease, "k", "v", 0)
	assert.Equal(t, errNoScript, e.Exec(rel, 0))
	assert.Equal(t, bulkOf(resp.ScriptRelease.SHA()), e.Do([]string{"SCRIPT", "LOAD", resp.ScriptRelease.Source()}, 0))
	assert.Equal(t, resp.IntReply(0), e.Exec(rel, 0))
	assert.Equal(t, resp.OK, e.Do([]string{"script", "flush", "async"}, 0))
	assert.Equal(t, errNoScript, e.Exec(rel, 0))
}

func TestMessageDescription(t *testing.T) {
	for _, tc := range []struct {
		m    model.Message
		want string
	}{
		{model.Request(3, pay(resp.Set("lock", "v", resp.CondNX, 10*time.Second))), "req=3 SET lock v NX PX 10000"},
		{model.Request(4, pay(resp.EvalSHA(resp.ScriptExtendOrSet, "lock", "v", 2*time.Second))), "req=4 EVALSHA <extend-or-set> 1 lock v 2000"},
		{model.Message{Kind: model.MsgReply, ReqID: 3, Body: resp.OK.Payload()}, "req=3 OK"},
		{model.Message{Kind: model.MsgReply, ReqID: 5, Body: resp.IntReply(-2).Payload()}, "req=5 (integer) -2"},
		{model.Message{Kind: model.MsgReply, ReqID: 6, Body: errNoScript.Payload()}, "req=6 (error) NOSCRIPT No matching script. Please use EVAL."},
		{model.StorageWrite(7, "file", "data", 34, true), `req=7 write file "data" token=34`},
		{model.StorageWrite(8, "file", "data", 0, false), `req=8 write file "data" unfenced`},
	} {
		f := model.Describe(&tc.m, resp.Protocol{})
		assert.Equal(t, tc.want, string(f.AppendValue(nil)))
		assert.Equal(t, tc.want, tc.m.Format(resp.Protocol{}))
	}
}

// FuzzDo feeds arbitrary argv to the argv path: it must answer every one without
// panicking, with a reply of a kind Redis could send.
func FuzzDo(f *testing.F) {
	for _, seed := range []string{"SET k v NX PX 100", "EVALSHA x 1 k", "PEXPIRE k 5 GT LT", "SCRIPT LOAD x", "DEL a b c",
		"EVAL " + resp.ScriptExtendOrSet.Source() + " 1 k v 10", "SET k v EXAT 5 KEEPTTL GET"} {
		f.Add(seed, int64(DefaultEpochMs))
	}
	f.Fuzz(func(t *testing.T, line string, now int64) {
		argv := splitArgs(line)
		e, _ := NewEngine(EngineConfig{MaxKeys: 4})
		for range 2 {
			r := e.Do(argv, now)
			if r.Kind > resp.ReplyError {
				t.Fatalf("%q: reply kind %d", argv, r.Kind)
			}
		}
	})
}

// splitArgs splits on spaces, except that the standard scripts' sources stay whole.
func splitArgs(line string) []string {
	out := []string{}
	for _, s := range scripts {
		if i := strings.Index(line, s.Source()); i >= 0 {
			return append(append(splitArgs(line[:i]), s.Source()), splitArgs(line[i+len(s.Source()):])...)
		}
	}
	return append(out, strings.Split(line, " ")...)
}

// TestExecRecordText checks that the compact exec field (command and common reply in one
// field) prints exactly as the two-field form does.
func TestExecRecordText(t *testing.T) {
	c := resp.Set("lock", "v", resp.CondNX, 10*time.Second)
	for _, r := range []resp.Reply{resp.OK, resp.Nil, resp.IntReply(-2), resp.IntReply(1 << 40),
		bulkOf("v"), {Kind: resp.ReplyStatus, Str: "QUEUED"}, errNoScript} {
		s, err := sim.New(sim.Config{Seed: 1})
		require.NoError(t, err)
		var rec sim.Record
		s.SetSink(keep{&rec})
		emitExecTexter(s.Texter(), traceNameOf("r", RecExec), &c, r)
		assert.Equal(t, "          0s r        exec cmd=SET lock v NX PX 10000 reply="+r.String(), rec.String())
		_, compact := execInt(&c, r)
		assert.Equal(t, r.Kind == resp.ReplyNil || r.IsOK() || (r.Kind == resp.ReplyInt && r.Int == -2), compact, "%v", r)
		assert.Len(t, rec.Fields, map[bool]int{true: 1, false: 2}[compact], "a common reply shares the command's field")
	}
}

// TestLockClientStringCommands checks the string commands lock libraries send beyond
// Redlock's own, at a fixed wall time, against replies seen from redis-server 7.0.15
// (the differential test checks them at random against a live one).
func TestLockClientStringCommands(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	const now = 1_000_000
	do := func(args ...string) resp.Reply { return e.Do(args, now) }
	assert.Equal(t, resp.IntReply(1), do("SETNX", "k", "5"))
	assert.Equal(t, resp.IntReply(0), do("SETNX", "k", "6"), "SETNX never overwrites")
	assert.Equal(t, resp.IntReply(2), do("EXISTS", "k", "k", "nope"), "EXISTS counts a key named twice twice")
	assert.Equal(t, resp.IntReply(-1), do("TTL", "k"))
	assert.Equal(t, resp.IntReply(1), do("EXPIRE", "k", "10"))
	assert.Equal(t, resp.IntReply(10_000), do("PTTL", "k"))
	assert.Equal(t, resp.IntReply(1), do("PEXPIRE", "k", "1499"))
	assert.Equal(t, resp.IntReply(1), do("TTL", "k"), "TTL rounds to the nearest second")
	assert.Equal(t, resp.IntReply(1), do("PEXPIRE", "k", "1500"))
	assert.Equal(t, resp.IntReply(2), do("TTL", "k"))
	assert.Equal(t, resp.IntReply(0), do("EXPIRE", "k", "20", "NX"), "NX: the key has an expiry")
	assert.Equal(t, resp.IntReply(1), do("EXPIRE", "k", "20", "GT"))
	assert.Equal(t, "ERR invalid expire time in 'expire' command", do("EXPIRE", "k", "9223372036854775").Str,
		"seconds times 1000 fit, plus now does not")
	assert.Equal(t, "ERR invalid expire time in 'expireat' command", do("EXPIREAT", "k", "9223372036854776").Str)
	assert.Equal(t, resp.IntReply(1), do("PERSIST", "k"))
	assert.Equal(t, resp.IntReply(0), do("PERSIST", "k"), "nothing left to persist")
	assert.Equal(t, resp.IntReply(-1), do("PTTL", "k"))
	assert.Equal(t, resp.IntReply(1), do("PEXPIREAT", "k", "9223372036854775807"))
	assert.Equal(t, resp.IntReply(9223372036854775807-now), do("PTTL", "k"))
	assert.Equal(t, resp.IntReply(-9223372036854775802), do("INCRBY", "k", "-9223372036854775807"),
		"INCRBY keeps the expiry and counts down to the edge")
	assert.Equal(t, errOverflow, do("INCRBY", "k", "-10"))
	assert.Equal(t, errNotInt, do("INCRBY", "k", "abc"))
	assert.Equal(t, resp.IntReply(1), do("EXPIREAT", "k", "1000"), "an absolute time reached deletes the key")
	assert.Equal(t, resp.IntReply(0), do("EXISTS", "k"))
	assert.Equal(t, resp.IntReply(0), do("EXPIRE", "k", "10"), "no key, nothing to expire")
	assert.Equal(t, resp.IntReply(-2), do("TTL", "k"))
	assert.Equal(t, resp.OK, do("SET", "a", "1"))
	assert.Equal(t, resp.OK, do("SET", "b", "1"))
	assert.Equal(t, resp.IntReply(2), do("UNLINK", "a", "b", "c"))
	assert.Equal(t, "ERR Unsupported option foo", do("EXPIRE", "a", "10", "foo").Str)
	for _, argv := range [][]string{{"SETNX", "a"}, {"EXISTS"}, {"UNLINK"}, {"TTL"}, {"PERSIST"}, {"INCRBY", "a"}, {"EXPIRE", "a"}, {"PEXPIREAT", "a"}} {
		assert.Equal(t, "ERR wrong number of arguments for '"+strings.ToLower(argv[0])+"' command", e.Do(argv, now).Str)
	}
}

// TestSetAtAPastTimeKeepsTheKeyExpired pins redis-server 7.0.15's behaviour: SET with
// PXAT in the past stores the key (answering OK), which then reads as absent.
func TestSetAtAPastTimeKeepsTheKeyExpired(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	assert.Equal(t, resp.OK, e.Do([]string{"SET", "k", "v", "PXAT", "1"}, 5000))
	assert.Equal(t, 1, e.Len(), "counted until removed, as DBSIZE counts it")
	assert.Equal(t, resp.IntReply(0), e.Do([]string{"EXISTS", "k"}, 5000))
	assert.Equal(t, 0, e.Len())
	assert.Equal(t, resp.OK, e.Do([]string{"SET", "k", "v", "EXAT", "1", "NX"}, 5000), "NX sees no key")
}

// TestHashesAndTypes checks the hash commands and key types against replies seen from
// redis-server 7.0.15, and that a hash travels whole in the effects that feed the AOF
// and the replicas.
func TestHashesAndTypes(t *testing.T) {
	e, _ := NewEngine(EngineConfig{})
	const now = 1_000_000
	do := func(args ...string) resp.Reply { return e.Do(args, now) }
	assert.Equal(t, resp.OK, do("SET", "s", "1"))
	assert.Equal(t, errWrongType, do("HSET", "s", "f", "1"))
	assert.Equal(t, resp.IntReply(2), do("HSET", "h", "f", "1", "g", "2"))
	assert.Equal(t, resp.IntReply(0), do("HSET", "h", "f", "3"), "an update adds no field")
	for _, argv := range [][]string{{"GET", "h"}, {"INCR", "h"}, {"SET", "h", "x", "GET"}, {"HGET", "s", "f"}, {"HLEN", "s"}} {
		assert.Equal(t, errWrongType, e.Do(argv, now), "%q", argv)
	}
	assert.Equal(t, bulkOf("3"), do("HGET", "h", "f"))
	assert.Equal(t, resp.IntReply(2), do("HLEN", "h"))
	assert.Equal(t, resp.IntReply(1), do("HEXISTS", "h", "g"))
	assert.Equal(t, errNotInt, do("HINCRBY", "h", "f", "abc"))
	assert.Equal(t, resp.IntReply(9223372036854775807), do("HINCRBY", "h", "nf", "9223372036854775807"))
	assert.Equal(t, errOverflow, do("HINCRBY", "h", "nf", "1"))
	assert.Equal(t, resp.IntReply(1), do("HSET", "h", "t", "abc"))
	assert.Equal(t, "ERR hash value is not an integer", do("HINCRBY", "h", "t", "1").Str)

	// A replica (or the AOF on reload) applying the effects sees the same hash, expiry
	// included; deleting every field deletes the key there too.
	replica, _ := NewEngine(EngineConfig{})
	sync := func(argv ...string) {
		e.Do(argv, now)
		for i := range e.effects {
			replica.apply(&e.effects[i])
		}
	}
	sync("HSET", "lock", "holder:1", "1")
	sync("HINCRBY", "lock", "holder:1", "1")
	sync("PEXPIRE", "lock", "30000")
	assert.Equal(t, bulkOf("2"), replica.Do([]string{"HGET", "lock", "holder:1"}, now))
	assert.Equal(t, resp.IntReply(30000), replica.Do([]string{"PTTL", "lock"}, now))
	sync("HDEL", "lock", "holder:1", "other")
	assert.Equal(t, resp.IntReply(0), replica.Do([]string{"EXISTS", "lock"}, now), "an emptied hash is gone")
	copied, _ := NewEngine(EngineConfig{})
	copied.copyKeys(e)
	assert.Equal(t, bulkOf("3"), copied.Do([]string{"HGET", "h", "f"}, now), "a full resync copies hashes")
	assert.Equal(t, resp.OK, do("SET", "h", "x"), "SET replaces a hash")
	assert.Equal(t, bulkOf("x"), do("GET", "h"))
	assert.Equal(t, bulkOf("3"), copied.Do([]string{"HGET", "h", "f"}, now), "the copy is not shared")
}

// TestPeekNamesAHashsHolder: Peek shows a hash key (a Redisson lock) by its first field,
// the holder's lock name, with its expiry, so that timelines and the viewer can tell
// whose lock it is.
func TestPeekNamesAHashsHolder(t *testing.T) {
	e, err := NewEngine(EngineConfig{})
	require.NoError(t, err)
	e.Do([]string{"HSET", "lock", "uuid:1", "1"}, 1000)
	val, exp, ok := e.Peek("lock", 1000)
	require.True(t, ok)
	require.Equal(t, "uuid:1", val)
	require.Equal(t, NoExpiry, exp)
	e.Do([]string{"PEXPIRE", "lock", "500"}, 1000)
	val, exp, ok = e.Peek("lock", 1200)
	require.Equal(t, []any{"uuid:1", int64(1500), true}, []any{val, exp, ok})
	_, _, ok = e.Peek("lock", 1501)
	require.False(t, ok, "expired")
}
