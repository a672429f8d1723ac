package redlock

import (
	"bytes"
	"math/rand/v2"

	"github.com/google/uuid"
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
func valueGUID(rng *rand.Rand) string {
	raw := randomBytes(rng)
	return uuidFrom(raw[:])
}

// uuidFrom returns the random (version 4) UUID whose 16 random bytes are raw, in its text
// form (8-4-4-4-12 hex digits): the lock value of libraries that use one (RedLock.net's
// Guid, Redisson's instance id), drawn from the machine's seeded stream rather than the
// system's.
func uuidFrom(raw []byte) string {
	u, _ := uuid.NewRandomFromReader(bytes.NewReader(raw)) // cannot fail: the 16 bytes are there
	return u.String()
}
