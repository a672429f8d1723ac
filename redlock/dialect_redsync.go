package redlock

import "github.com/redlock-sim/redlock-sim/redlock/resp"

// redsyncRules are DialectRedsync's, redsync v4.17.0 over go-redis v9: SetNX's EX for a
// TTL of whole seconds; its delete, touch and touch-with-SET-NX scripts; a value of 16
// random bytes in base64; and its fail-fast, which counts refusals only ("taken") and
// applies to every round, unlock and the cleanup after a lost attempt included.
var redsyncRules = rules{
	acquire:          setNXPX,
	setInSecs:        true,
	extend:           evalSHA(resp.ScriptRedsyncTouch),
	extendOrSet:      resp.ScriptRedsyncTouchSetNX,
	release:          evalSHA(resp.ScriptRedsyncDelete),
	newValue:         valueBase64,
	takenRule:        true,
	releaseFailsFast: true,
}
