package redlock

import "github.com/redlock-sim/redlock-sim/redlock/resp"

// nodeRedlock5Rules are DialectNodeRedlock5's, node-redlock 5.0.0-beta.2 over ioredis:
// its acquire, extend and release scripts, the acquire script's 1 as the only vote, a
// value of 16 random bytes in hex; rounds that end once a quorum voted for or against;
// no release between attempts, only after the last; validity counted from the start of
// acquire() (or extend()) and never checked; an Extend refused once the lock has expired,
// and lost extension rounds retried without a release; and a release retried like an
// acquire until a quorum deleted the key.
var nodeRedlock5Rules = rules{
	acquire:                  evalSHA(resp.ScriptNodeRedlock5Acquire),
	voteIsOne:                true,
	extend:                   evalSHA(resp.ScriptNodeRedlock5Extend),
	release:                  evalSHA(resp.ScriptNodeRedlock5Release),
	newValue:                 valueHex,
	againstRule:              true,
	releaseFailsFast:         true,
	refuseExpiredExtend:      true,
	retryExtend:              true,
	noCleanupBetweenAttempts: true,
	validityFromStart:        true,
	unchecked:                true,
	retryRelease:             true,
}
