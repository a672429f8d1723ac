package redlock

import (
	"math/rand/v2"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// redlockNetRules are DialectRedlockNet's, RedLock.net 2.3.2 over StackExchange.Redis:
// StringSet's EX for a TTL of whole seconds; its own unlock and extend scripts (the
// extension takes a missing key back with SET PX); a value that is a GUID's text.
var redlockNetRules = rules{
	acquire:   setNXPX,
	setInSecs: true,
	extend:    evalSHA(resp.ScriptRedlockNetExtend),
	release:   evalSHA(resp.ScriptRedlockNetUnlock),
	newValue:  valueGUID,
}

// valueGUID returns Guid.NewGuid().ToString() from 16 random bytes.
//
//go:noinline
func valueGUID(rng *rand.Rand) string { return UUID(randomBytes(rng)) }
