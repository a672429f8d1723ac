package redlock

import (
	"math/rand/v2"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// redlockPyRules are DialectRedlockPy's, redlock-py 1.0.8 over redis-py: SET NX PX; its
// own compare-and-delete, by EVAL every time (redis-py's eval), asked of one node after
// another; a value of 22 random letters and digits; and a won attempt that saw any server
// error given up without releasing anything (it raises MultipleRedlockException).
var redlockPyRules = rules{
	acquire:             setNXPX,
	extend:              evalSHA(resp.ScriptExtend),
	extendOrSet:         resp.ScriptExtendOrSet,
	release:             resp.Command{Op: resp.OpEval, Script: resp.ScriptRedlockPyUnlock},
	newValue:            valueAlnum22,
	seqRelease:          true,
	giveUpOnServerError: true,
}

// valueAlnum22 returns redlock-py's value, 22 × random.choice(ascii_letters + digits).
//
//go:noinline
func valueAlnum22(rng *rand.Rand) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var v [22]byte
	for i := range v {
		v[i] = chars[rng.IntN(len(chars))]
	}
	return string(v[:])
}
