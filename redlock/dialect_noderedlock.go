package redlock

import "github.com/redlock-sim/redlock-sim/redlock/resp"

// nodeRedlockRules are DialectNodeRedlock's, node-redlock 4.2.0 over ioredis: its lock,
// extend and unlock scripts, the lock script's 1 as the only vote, a value of 16 random
// bytes in hex, an Extend refused once the lock has expired, and an extension that is its
// acquire loop: a lost round unlocks everywhere and is retried (see Machine.endExtend).
var nodeRedlockRules = rules{
	acquire:             evalSHA(resp.ScriptNodeRedlockLock),
	voteIsOne:           true,
	extend:              evalSHA(resp.ScriptNodeRedlockExtend),
	release:             evalSHA(resp.ScriptNodeRedlockUnlock),
	newValue:            valueHex,
	refuseExpiredExtend: true,
	extendUnlocksOnLoss: true,
}
