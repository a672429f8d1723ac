package resp

import (
	"crypto/sha1"
	"encoding/hex"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetRendering: SET renders its condition and TTL as a Redis client sends them, PX in
// milliseconds or, with InSecs, EX in seconds, and prints in redis-cli syntax.
func TestSetRendering(t *testing.T) {
	for _, tc := range []struct {
		c    Command
		args []string
	}{
		{Set("lock", "7f3a9c", CondNX, 10*time.Second), []string{"SET", "lock", "7f3a9c", "NX", "PX", "10000"}},
		{Set("lock", "v", CondXX, 250*time.Millisecond), []string{"SET", "lock", "v", "XX", "PX", "250"}},
		{Set("lock", "v", CondNone, 0), []string{"SET", "lock", "v"}},
		{Command{Op: OpSet, Key: "lock", Value: "v", Cond: CondNX, TTL: 30 * time.Second, InSecs: true},
			[]string{"SET", "lock", "v", "NX", "EX", "30"}},
		{Command{Op: OpSet, Key: "lock", Value: "v", InSecs: true}, []string{"SET", "lock", "v"}},
	} {
		assert.Equal(t, tc.args, tc.c.Args())
		assert.Equal(t, strings.Join(tc.args, " "), tc.c.String())
	}
}

// TestOtherCommands: every other command's argv, and its redis-cli line.
func TestOtherCommands(t *testing.T) {
	for _, tc := range []struct {
		c    Command
		line string
	}{
		{Command{Op: OpGet, Key: "lock"}, "GET lock"},
		{Command{Op: OpDel, Key: "lock"}, "DEL lock"},
		{Command{Op: OpPTTL, Key: "lock"}, "PTTL lock"},
		{Command{Op: OpIncr, Key: "lock:fence"}, "INCR lock:fence"},
		{Command{Op: OpPExpire, Key: "lock", TTL: 1500 * time.Millisecond}, "PEXPIRE lock 1500"},
		{Command{Op: OpPing}, "PING"},
		{Command{Op: OpSubscribe, Key: "ch"}, "SUBSCRIBE ch"},
		{Command{Op: OpUnsubscribe, Key: "ch"}, "UNSUBSCRIBE ch"},
		{Wait(2, 100*time.Millisecond), "WAIT 2 100"},
		{Wait(1, 0), "WAIT 1 0"},
		{Command{Op: OpInfo}, "INFO replication"},
	} {
		assert.Equal(t, tc.line, tc.c.String())
		assert.Equal(t, strings.Fields(tc.line), tc.c.Args())
	}
	assert.Equal(t, "OP(99)", Op(99).String())
	assert.Equal(t, "OP(0)", Op(0).String())
}

// TestScriptRendering: EVALSHA sends the digest and EVAL the source, each with the KEYS
// count, KEYS and ARGV as the script's library lays them out; the printed line names the
// script instead, so traces stay readable.
func TestScriptRendering(t *testing.T) {
	rel := EvalSHA(ScriptRelease, "lock", "v1", 0)
	assert.Equal(t, []string{"EVALSHA", ScriptRelease.SHA(), "1", "lock", "v1"}, rel.Args())
	assert.Equal(t, "EVALSHA <release> 1 lock v1", rel.String())

	ext := EvalSHA(ScriptExtend, "lock", "v1", 10*time.Second)
	assert.Equal(t, []string{"EVALSHA", ScriptExtend.SHA(), "1", "lock", "v1", "10000"}, ext.Args())
	assert.Equal(t, "EVALSHA <extend> 1 lock v1 10000", ext.String())

	py := Command{Op: OpEval, Script: ScriptRedlockPyUnlock, Key: "lock", Value: "v1"}
	args := py.Args()
	require.Len(t, args, 5)
	assert.Equal(t, "EVAL", args[0])
	assert.Equal(t, ScriptRedlockPyUnlock.Source(), args[1], "EVAL sends the source itself")
	assert.Equal(t, []string{"1", "lock", "v1"}, args[2:])
	assert.Equal(t, "EVAL <redlock-py-unlock> 1 lock v1", py.String())

	try := Command{Op: OpEval, Script: ScriptRedissonTryLock, Key: "lock", Value: "uuid:1", TTL: 30 * time.Second}
	assert.Equal(t, "EVAL <redisson-trylock> 1 lock 30000 uuid:1", try.String(), "Redisson's ARGV: the lease, then the lock name")

	unlock := Command{Op: OpEval, Script: ScriptRedissonUnlock, Key: "lock",
		Value: RedissonUnlockValue("uuid:1", "req7"), TTL: 30 * time.Second}
	assert.Equal(t, "EVAL <redisson-unlock> 3 lock redisson_lock__channel:{lock} redisson_unlock_latch:{lock}:req7 "+
		"0 30000 uuid:1 PUBLISH 13500", unlock.String())
	assert.Equal(t, "redisson_lock__channel:{a}b", RedissonChannel("{a}b"), "a name with braces keeps its own")
}

// TestScriptArgvFollowsTTLArg: every script takes the lock value as ARGV[1] and, exactly
// when TTLArg says so, the TTL in milliseconds as ARGV[2] (Redisson's scripts, which lay
// out their own ARGV, are covered above).
func TestScriptArgvFollowsTTLArg(t *testing.T) {
	for s := ScriptRelease; s < scriptEnd; s++ {
		if s == ScriptRedissonTryLock || s == ScriptRedissonRenew || s == ScriptRedissonUnlock {
			continue
		}
		args := EvalSHA(s, "lock", "v", 2*time.Second).Args()
		want := []string{"EVALSHA", s.SHA(), "1", "lock", "v"}
		if s.TTLArg() {
			want = append(want, "2000")
		}
		assert.Equal(t, want, args, s.String())
	}
}

var hex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

// TestScripts: every script has a name, a source and the digest Redis gives it (the
// lowercase hex SHA1 of the source); library scripts' digests are the ones
// libscripts/SOURCES.md records; ScriptBySHA finds each standard script by its digest in
// either case and no library script (those run in the Lua VM, not on the fast path).
func TestScripts(t *testing.T) {
	sources, err := os.ReadFile("libscripts/SOURCES.md")
	require.NoError(t, err)
	seen := map[string]Script{}
	for s := ScriptRelease; s < scriptEnd; s++ {
		name := s.String()
		assert.NotContains(t, name, "script(", "script %d has no name", s)
		require.NotEmpty(t, s.Source(), name)
		sum := sha1.Sum([]byte(s.Source()))
		assert.Equal(t, hex.EncodeToString(sum[:]), s.SHA(), name)
		assert.Regexp(t, hex40, s.SHA(), name)
		if prev, dup := seen[s.SHA()]; dup {
			t.Errorf("%s has the digest of %s", name, prev)
		}
		seen[s.SHA()] = s

		if s.Standard() {
			assert.Equal(t, s, ScriptBySHA(s.SHA()), name)
			assert.Equal(t, s, ScriptBySHA(strings.ToUpper(s.SHA())), name)
		} else {
			assert.Equal(t, ScriptNone, ScriptBySHA(s.SHA()), name)
			assert.Contains(t, string(sources), "| "+s.SHA()+" |", "%s's digest is not the one SOURCES.md records", name)
		}
	}
	assert.Equal(t, []bool{false, true, true, true, false},
		[]bool{ScriptNone.Standard(), ScriptRelease.Standard(), ScriptExtend.Standard(),
			ScriptExtendOrSet.Standard(), ScriptRedsyncDelete.Standard()})
	assert.Equal(t, ScriptNone, ScriptBySHA(""))
	assert.Equal(t, ScriptNone, ScriptBySHA(strings.Repeat("0", 40)))
	assert.Equal(t, "", scriptEnd.Source())
	assert.Equal(t, "", scriptEnd.SHA())
	assert.False(t, scriptEnd.TTLArg())
	assert.Equal(t, "script(200)", Script(200).String())
}

// TestQuoting: an argument redis-cli would split or misread (space, tab, newline, quotes,
// backslash, nothing) prints quoted with Go's escapes; any other prints bare.
func TestQuoting(t *testing.T) {
	for value, shown := range map[string]string{
		"plain":    "plain",
		"a:b{c}":   "a:b{c}",
		"a b":      `"a b"`,
		"a\tb":     `"a\tb"`,
		"a\nb":     `"a\nb"`,
		`say "hi"`: `"say \"hi\""`,
		"it's":     `"it's"`,
		`back\`:    `"back\\"`,
		"":         `""`,
	} {
		assert.Equal(t, "SET lock "+shown+" NX PX 1000", Set("lock", value, CondNX, time.Second).String(), "value %q", value)
		assert.Equal(t, value, Set("lock", value, CondNX, time.Second).Args()[2], "argv carries %q unquoted", value)
	}
}

// TestArrayRoundTrip: an array reply holds its elements as RESP2 writes them and gives
// them back, nested arrays, empty bulks and bulks holding CRLF included; two arrays of
// the same elements are equal with ==; no reply inside an array reads back as nil.
func TestArrayRoundTrip(t *testing.T) {
	assert.Equal(t, Reply{Kind: ReplyArray, Int: 2, Str: ":1\r\n+OK\r\n"}, ArrayReply(IntReply(1), OK))

	elems := []Reply{
		IntReply(-3), OK, Nil,
		{Kind: ReplyBulk, Str: "a\r\nb"},
		{Kind: ReplyBulk, Str: ""},
		{Kind: ReplyError, Str: "NOSCRIPT No matching script. Please use EVAL."},
		ArrayReply(IntReply(2), ArrayReply(), Reply{Kind: ReplyBulk, Str: "x"}),
		ArrayReply(),
		IntReply(9),
	}
	arr := ArrayReply(elems...)
	assert.Equal(t, ReplyArray, arr.Kind)
	assert.Equal(t, int64(len(elems)), arr.Int)
	assert.Equal(t, elems, arr.Elems())
	assert.True(t, arr == ArrayReply(elems...), "arrays compare with ==")
	assert.False(t, arr == ArrayReply(elems[:len(elems)-1]...))
	nested := arr.Elems()[6].Elems()
	require.Len(t, nested, 3)
	assert.Equal(t, Reply{Kind: ReplyBulk, Str: "x"}, nested[2])

	assert.Equal(t, []Reply{Nil}, ArrayReply(NoReply).Elems(), "no reply has no wire form")
	assert.Empty(t, ArrayReply().Elems())
	assert.Nil(t, IntReply(3).Elems(), "not an array")
}

// TestReplyString: each reply prints as redis-cli shows it.
func TestReplyString(t *testing.T) {
	for r, want := range map[Reply]string{
		Nil:                               "(nil)",
		OK:                                "OK",
		IntReply(42):                      "(integer) 42",
		{Kind: ReplyBulk, Str: "v 1"}:     `"v 1"`,
		{Kind: ReplyError, Str: "ERR no"}: "(error) ERR no",
		NoReply:                           "(no reply)",
		ArrayReply():                      "(empty array)",
		ArrayReply(IntReply(1), Nil, OK):  "1) (integer) 1 2) (nil) 3) OK",
	} {
		assert.Equal(t, want, r.String())
	}
	assert.True(t, OK.IsOK())
	assert.False(t, Reply{Kind: ReplyBulk, Str: "OK"}.IsOK(), "a bulk OK is not the status OK")
}

// TestCommandSize holds the size Command's comment promises on 64-bit machines: the
// simulator copies commands by value on its hot path.
func TestCommandSize(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the 48 bytes are a 64-bit layout")
	}
	assert.Equal(t, uintptr(48), unsafe.Sizeof(Command{}))
}
