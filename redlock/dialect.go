package redlock

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// rules is a library dialect (and a teaching variant) resolved into the values the machine
// follows: the commands it sends, how it counts a reply, and how its rounds and retries
// end. New resolves a Config's Dialect into rules once, from the dialect's own file
// (dialect_spec.go, dialect_redsync.go, ...), so the machine reads fields on its hot path
// and never asks which library it imitates. A new library dialect is a Dialect constant in
// config.go, its rules in a file of its own, and its entry in dialectRules.
type rules struct {
	// acquire, extend and release are the round's commands without their key and value,
	// which sendAcquire, the extension and releaseCommand fill in (a release's value only
	// when it runs a script).
	acquire, extend, release resp.Command
	// extendOrSet is the extension's script with set_nx_on_extend; ScriptNone when the
	// library has no such option and extends as without it.
	extendOrSet resp.Script
	// setInSecs: SET spells a TTL of whole seconds as EX, as go-redis's SetNX and
	// StackExchange.Redis's StringSet do. Redis keeps the key for the same time either way.
	setInSecs bool
	// voteIsOne: an acquire is a vote when it answers the integer 1 (the lock script's
	// count of keys taken), not SET's OK.
	voteIsOne bool
	// newValue draws the lock value in the library's form, from the machine's rng. It runs
	// once per acquire.
	newValue func(*rand.Rand) string

	// takenRule: fail fast the way redsync does, once a quorum refused (round.takenRule).
	takenRule bool
	// againstRule: fail fast the way node-redlock 5 does, once a quorum voted against
	// (round.againstRule).
	againstRule bool
	// releaseFailsFast: release and cleanup rounds need a quorum and fail fast like the
	// acquire, rather than waiting for every node.
	releaseFailsFast bool
	// seqRelease: the cleanup and release rounds ask one node after another, each in turn
	// waiting its timeout, as redlock-py's `for server in self.servers: unlock_instance`.
	seqRelease bool
	// giveUpOnServerError: a won attempt that saw any error reply or timeout is given up
	// without releasing anything.
	giveUpOnServerError bool
	// refuseExpiredExtend: Extend fails at once, sending nothing, when the lock's validity
	// has passed.
	refuseExpiredExtend bool
	// extendUnlocksOnLoss: a lost extension round releases the lock on every node and is
	// retried like an acquire (node-redlock 4.2.0's extend is its acquire loop).
	extendUnlocksOnLoss bool
	// retryExtend: a lost extension round backs off and is sent again, up to tries
	// rounds, releasing nothing.
	retryExtend bool
	// noCleanupBetweenAttempts: a lost attempt backs off without releasing; only the last
	// one is followed by a release round.
	noCleanupBetweenAttempts bool
	// validityFromStart: validity counts from the start of acquire() (or extend()), not of
	// the attempt (or round).
	validityFromStart bool
	// unchecked: validity is never checked, so a quorum wins however late it came.
	unchecked bool
	// retryRelease: a release that no quorum confirmed backs off and is sent again, up to
	// tries rounds.
	retryRelease bool

	// The teaching variants' deviations (see Variant).

	// expireSeparately: SET NX without an expiry, then a separate PEXPIRE after its OK.
	expireSeparately bool
	// getThenDel: a release is a GET, then a DEL when the value is the lock's.
	getThenDel bool
	// maxExtensions bounds Extend calls per lock (math.MaxInt when unlimited).
	maxExtensions int
}

// dialectRules holds each dialect's rules, indexed by Dialect.
var dialectRules = [...]*rules{
	DialectSpec:         &specRules,
	DialectRedsync:      &redsyncRules,
	DialectNodeRedlock:  &nodeRedlockRules,
	DialectRedlockPy:    &redlockPyRules,
	DialectRedlockNet:   &redlockNetRules,
	DialectNodeRedlock5: &nodeRedlock5Rules,
}

// A Dialect constant without its entry in dialectRules (or an entry without its name) does
// not compile: the index below is out of range unless both arrays have the same length.
var _ = [1]struct{}{}[len(dialectRules)-len(dialectNames)]

// resolveRules returns the rules a machine for cfg (valid and effective) follows: its
// dialect's, with the knobs and the teaching variant that change them folded in.
func resolveRules(cfg Config) rules {
	r := *dialectRules[cfg.Dialect]
	if cfg.SetNXOnExtend && r.extendOrSet != resp.ScriptNone {
		r.extend.Script = r.extendOrSet
	}
	r.extend.TTL = cfg.TTL
	if r.acquire.Op == resp.OpSet {
		r.acquire.InSecs = r.setInSecs && cfg.TTL%time.Second == 0
	}
	r.acquire.TTL = cfg.TTL
	r.maxExtensions = cfg.MaxExtensions
	switch cfg.Variant {
	case VariantSetNXThenExpire:
		r.expireSeparately = true
		r.acquire = resp.Set("", "", resp.CondNX, 0)
	case VariantUnsafeRelease:
		r.release = resp.Command{Op: resp.OpDel}
	case VariantGetThenDel:
		r.getThenDel = true
		r.release = resp.Command{Op: resp.OpGet}
	case VariantNoValidityCheck:
		r.unchecked = true
	case VariantUnlimitedExtension:
		r.maxExtensions = math.MaxInt
	}
	return r
}

// setNXPX is the acquire of the Redlock page: SET key value NX PX ttl.
var setNXPX = resp.Set("", "", resp.CondNX, 0)

// evalSHA is EVALSHA of script s, its key, value and TTL filled in later.
func evalSHA(s resp.Script) resp.Command { return resp.EvalSHA(s, "", "", 0) }

// randomBytes draws the 16 random bytes most libraries' lock values are made of.
func randomBytes(rng *rand.Rand) (raw [16]byte) {
	binary.LittleEndian.PutUint64(raw[:8], rng.Uint64())
	binary.LittleEndian.PutUint64(raw[8:], rng.Uint64())
	return raw
}

// valueBase64 returns 16 random bytes in base64, as redsync does: unique enough that no
// other client's release can match it. It is never inlined: it runs once per acquire.
//
//go:noinline
func valueBase64(rng *rand.Rand) string {
	raw := randomBytes(rng)
	var enc [24]byte
	base64.StdEncoding.Encode(enc[:], raw[:])
	return string(enc[:])
}

// valueHex returns 16 random bytes in hex, node-redlock's
// crypto.randomBytes(16).toString('hex').
//
//go:noinline
func valueHex(rng *rand.Rand) string {
	raw := randomBytes(rng)
	return hex.EncodeToString(raw[:])
}
