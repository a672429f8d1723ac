package redis

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// libScript is one lock library's own script (redlock/resp/libscripts, provenance in
// SOURCES.md there) and how the library calls it: which keys, and which arguments.
type libScript struct {
	file string
	keys func(g *libGen) []string
	args func(g *libGen) []string
	// pttl: the script may answer a key's PTTL, which the server reads a little later
	// than the model's clock (compared as PTTL is).
	pttl bool
}

// libGen draws a library call's keys and arguments from small sets, so that the values
// the script compares meet the values the keyspace holds, with edges now and then.
type libGen struct {
	r *rand.Rand
}

func (g *libGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *libGen) resource() string { return g.pick("lock:a", "lock:b", "lock:c") }

func (g *libGen) resources() []string {
	keys := []string{g.resource()}
	for range g.r.IntN(3) {
		keys = append(keys, g.resource()) // a key named twice is a case too
	}
	return keys
}

func (g *libGen) value() string { return g.pick("v1", "v2", "", "0", "1") }

// ttl is a TTL in ms as the libraries send it, mostly valid (whole seconds plus 500 ms,
// so no reply depends on the pipeline's timing), sometimes not.
func (g *libGen) ttl() string {
	if g.r.IntN(8) == 0 {
		return g.pick("0", "-5", "abc", "1.5")
	}
	return strconv.Itoa((1+g.r.IntN(30))*1000 + 500)
}

func (g *libGen) holder() string { return g.pick("uuid-1:1", "uuid-1:2", "uuid-2:1") }

func one(g *libGen) []string { return []string{g.resource()} }

func valueArg(g *libGen) []string { return []string{g.value()} }

func valueTTL(g *libGen) []string { return []string{g.value(), g.ttl()} }

// libScripts are the scripts and their calls, as SOURCES.md describes them.
var libScripts = []libScript{
	{"redsync-v4.17.0-delete.lua", one, valueArg, false},
	{"redsync-v4.17.0-touch.lua", one, valueTTL, false},
	{"redsync-v4.17.0-touch-setnx.lua", one, valueTTL, false},
	{"node-redlock-v4.2.0-lock.lua", (*libGen).resources, valueTTL, false},
	{"node-redlock-v4.2.0-extend.lua", (*libGen).resources, valueTTL, false},
	{"node-redlock-v4.2.0-unlock.lua", (*libGen).resources, valueArg, false},
	{"node-redlock-v5.0.0-beta.2-acquire.lua", (*libGen).resources, valueTTL, false},
	{"node-redlock-v5.0.0-beta.2-extend.lua", (*libGen).resources, valueTTL, false},
	{"node-redlock-v5.0.0-beta.2-release.lua", (*libGen).resources, valueArg, false},
	{"redlock-py-1.0.8-unlock.lua", one, valueArg, false},
	{"redlock.net-2.3.2-unlock.lua", one, valueArg, false},
	{"redlock.net-2.3.2-extend.lua", one, valueTTL, false},
	{"redisson-3.43.0-trylock.lua", one, func(g *libGen) []string { return []string{g.ttl(), g.holder()} }, true},
	{"redisson-3.43.0-renew.lua", one, func(g *libGen) []string { return []string{g.ttl(), g.holder()} }, false},
	{"redisson-3.43.0-unlock.lua",
		func(g *libGen) []string {
			k := g.resource()
			return []string{k, "redisson_lock__channel:{" + k + "}", "redisson_unlock_latch:{" + k + "}"}
		},
		func(g *libGen) []string { return []string{"0", g.ttl(), g.holder(), "publish", g.ttl()} }, false},
	{"redisson-3.52.0-renew-batch.lua", (*libGen).resources, func(g *libGen) []string {
		args := []string{g.ttl()}
		for range 3 {
			args = append(args, g.holder())
		}
		return args
	}, false},
}

// setup is a random keyspace around a call: each resource absent, a string holding one
// of the values, a Redisson hash holding a holder's count, or a latch, with or without
// a TTL.
func (g *libGen) setup() [][]string {
	var cmds [][]string
	for _, k := range []string{"lock:a", "lock:b", "lock:c"} {
		switch g.r.IntN(4) {
		case 0:
			continue
		case 1, 2:
			cmds = append(cmds, []string{"SET", k, g.value()})
		default:
			cmds = append(cmds, []string{"HSET", k, g.holder(), g.pick("1", "2", "x")})
		}
		if g.r.IntN(2) == 0 {
			cmds = append(cmds, []string{"PEXPIRE", k, strconv.Itoa((1+g.r.IntN(30))*1000 + 500)})
		}
		if g.r.IntN(4) == 0 {
			cmds = append(cmds, []string{"SET", "redisson_unlock_latch:{" + k + "}", g.pick("0", "1", "x")})
		}
	}
	return cmds
}

// TestLibraryScriptsAgainstRealRedis runs each lock library's own scripts, byte for
// byte as the library sends them, on random keyspaces with random calls shaped as the
// library makes them, against a real redis-server and the model, and requires the same
// replies, call by call and for the reads that follow (the keys' values, hash fields and
// TTLs). Each sequence makes several calls in a row, so a script meets what the previous
// ones left.
func TestLibraryScriptsAgainstRealRedis(t *testing.T) {
	rc := startRedis(t)
	srcs := make([]string, len(libScripts))
	for i, ls := range libScripts {
		b, err := os.ReadFile(filepath.Join("..", "..", "redlock", "resp", "libscripts", ls.file))
		require.NoError(t, err)
		srcs[i] = string(b)
	}
	calls := map[string]int{}
	outcomes := map[string]map[string]bool{} // per script, the reply classes seen (NOSCRIPT aside)
	script := map[int]libScript{}            // batch index of each call, to its script
	for seed := uint64(1); seed <= 400; seed++ {
		g := &libGen{r: rand.New(rand.NewPCG(seed, 0x11b))}
		clear(script)
		batch := [][]string{{"FLUSHALL"}, {"SCRIPT", "FLUSH"}}
		batch = append(batch, g.setup()...)
		for range 6 {
			i := g.r.IntN(len(libScripts))
			ls := libScripts[i]
			keys, args := ls.keys(g), ls.args(g)
			argv := []string{"EVAL", srcs[i]}
			if g.r.IntN(3) == 0 {
				argv = []string{"EVALSHA", sha1hex(srcs[i])}
			}
			argv = append(argv, strconv.Itoa(len(keys)))
			argv = append(append(argv, keys...), args...)
			script[len(batch)] = ls
			batch = append(batch, argv)
			calls[ls.file]++
			for _, k := range []string{"lock:a", "lock:b", "lock:c"} {
				batch = append(batch, []string{"EXISTS", k}, []string{"PTTL", k}, []string{"GET", k},
					[]string{"HGET", k, g.holder()}, []string{"HLEN", k}, []string{"GET", "redisson_unlock_latch:{" + k + "}"})
			}
		}
		e, err := NewEngine(EngineConfig{})
		require.NoError(t, err)
		t0 := time.Now().UnixMilli()
		real, err := rc.do(batch)
		require.NoError(t, err)
		tol := time.Now().UnixMilli() - t0 + 1
		require.Equal(t, resp.OK, real[0])
		require.Equal(t, resp.OK, real[1])
		for i, argv := range batch[2:] {
			i += 2
			got := e.Do(argv, t0)
			ls, isCall := script[i]
			like := argv
			if isCall && ls.pttl {
				like = []string{"pttl"}
			}
			require.Truef(t, sameReply(like, real[i], got, tol),
				"seed %d command %d %.120q: redis %v, model %v", seed, i, argv, real[i], got)
			if isCall && got != errNoScript {
				if outcomes[ls.file] == nil {
					outcomes[ls.file] = map[string]bool{}
				}
				class := replyClass(got)
				if got.Kind == resp.ReplyArray {
					class = got.String() // which keys were renewed
				}
				outcomes[ls.file][class] = true
			}
		}
	}
	for _, ls := range libScripts {
		require.GreaterOrEqualf(t, len(outcomes[ls.file]), 3, "%s answered only %v: the calls prove little", ls.file, outcomes[ls.file])
	}
	t.Logf("400 sequences of 6 library calls each, 0 divergences; calls per script: %v", calls)
}
