package redlock

import "github.com/redlock-sim/redlock-sim/redlock/resp"

// specRules are DialectSpec's: the Redlock page's SET NX PX, compare-and-delete and
// compare-and-pexpire (or extend-or-set with set_nx_on_extend), a value of 16 random bytes
// in base64, and a fail-fast that ends a round once its outcome cannot change.
var specRules = rules{
	acquire:     setNXPX,
	extend:      evalSHA(resp.ScriptExtend),
	extendOrSet: resp.ScriptExtendOrSet,
	release:     evalSHA(resp.ScriptRelease),
	newValue:    valueBase64,
}
