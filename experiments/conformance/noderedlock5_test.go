package conformance_test

import (
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
)

// nodeRedlock5Scripts are the situations node-redlock 5.0.0-beta.2 is put in. Every one
// that retries fixes the delay (retryJitter 0 on the real side, retry_jitter=0s on the
// simulated one): the library draws its jitter from Math.random, which a test cannot seed.
// Each retrying script keeps its attempts at least 100ms from any key's expiry, so that a
// loaded machine's slower rounds (a few ms each, and only ever later) cannot move a key's
// expiry to the other side of an attempt.
var nodeRedlock5Scripts = []faultScript{
	{name: "all-up", extend: true},
	// acquire() returns once the three live servers voted for; the two stopped ones run
	// the acquire, extend and release queued for them when they continue.
	{name: "2-of-5-stopped-for-2s", stopped: []int{0, 1}, stopFor: 2 * time.Second, extend: true},
	// As the 4.2.0 script, but 5.0.0 does not release between attempts: its first
	// attempt's keys on servers 3 and 4 refuse it from then on, and the 4th attempt, at
	// 600ms, wins with servers 0-2 alone. Validity counts from acquire()'s start.
	{name: "3-of-5-held-500ms", held: []int{0, 1, 2}, heldFor: 500 * time.Millisecond, retryDelay: 200 * time.Millisecond},
	// Self-blocking: servers 0-1 free at 700ms, server 2 never. The first attempt takes
	// 3-4 and the 5th (800ms) takes 0-1, but never three in one attempt: each server
	// refuses the value it holds itself. All 11 attempts lose (about 2s), then one release
	// round. Any client that released between attempts would win at 800ms.
	{name: "self-blocking", held: []int{0, 1, 2},
		heldForEach: []time.Duration{700 * time.Millisecond, 700 * time.Millisecond, time.Minute},
		retryDelay:  200 * time.Millisecond},
	// Expired lock: a 1000ms lock, servers 0-2 held 1.2s, attempts 350ms apart (0, 350,
	// 700, 1050, 1400ms). The first attempt's keys on 3-4 expire at 1000ms and are taken
	// again at 1050ms; at 1400ms servers 0-2 are free and win. acquire() returns the lock
	// 1.4s after it began, with an expiration 412ms in the past; extend() refuses it at
	// once, release() deletes all five keys. The simulated client holds it 10ms (less
	// than the TTL, as the real one, which releases at once).
	{name: "expired-lock", ttl: time.Second, hold: 10 * time.Millisecond, held: []int{0, 1, 2},
		heldFor: 1200 * time.Millisecond, retryDelay: 350 * time.Millisecond, extend: true},
	// Server 0 is killed as acquire() begins and restarted, empty, 3s later. acquire(),
	// extend() and release() each end at once on a quorum of the other four; server 0's
	// three commands wait in ioredis's offline queue and go out together at the reconnect
	// after the restart (3.3s): three EVALSHAs, each NOSCRIPT from the empty script cache,
	// then the three EVALs in order, which set, extend and delete the key: nothing is left.
	// The simulated client releases after 10ms, before the reconnect, as the real one does.
	{name: "kill-3s", killed: []int{0}, restartAfter: 3 * time.Second, hold: 10 * time.Millisecond, extend: true},
	// Server 0 killed for good, servers 1-2 held by another client for 5s, a 5s TTL. The
	// first attempt has two votes for (3-4) and two against (1-2), no quorum either way,
	// and waits for server 0's, which ioredis's 21st close fails 10.5s into the outage
	// (maxRetriesPerRequest 20): against, lost. The second attempt, 200ms later, finds
	// every live server's key expired and wins with four: acquire() took 10.7s and returns
	// a lock 5.8s expired (validity counts from its start). release() deletes the four keys
	// at once; its command for server 0 stays queued.
	{name: "killed-for-good", killed: []int{0}, held: []int{1, 2}, heldFor: 5 * time.Second, ttl: 5 * time.Second,
		hold: 10 * time.Millisecond, retryDelay: 200 * time.Millisecond},
	// Server 0's host loses power as acquire() begins and boots again 2s later.
	// acquire(), extend() and release() each end at once on the other four; server 0's
	// three commands sit unacknowledged on the connection ioredis still believes in, and
	// the kernel retransmits them until one reaches the new boot (3.2s after the first was
	// sent), which resets the connection. At the reconnect 50ms later ioredis sends the
	// three again (autoResendUnfulfilledCommands): each NOSCRIPT, then EVAL, in order;
	// nothing is left. Needs root and iptables (powerOff).
	{name: "power-loss-2s", poweredOff: []int{0}, bootAfter: 2 * time.Second, hold: 10 * time.Millisecond, extend: true},
}

// TestNodeRedlock5Conformance runs each script against node-redlock 5.0.0-beta.2 over
// ioredis 5 (the npm aliases redlock5 and ioredis5 in experiments/conformance/node) on
// five real redis-servers, and through the simulator with client=node-redlock-5, and
// requires them to agree: acquired or not, after how many attempts and how long, the
// validity acquire() returned (negative for an expired lock), extend() and release(),
// each server's commands in order and the keys left behind.
func TestNodeRedlock5Conformance(t *testing.T) {
	// Its scripts mostly wait (the killed-for-good one 10.5s for ioredis's flush), so it
	// runs beside TestNodeRedlockConformance rather than after it.
	t.Parallel()
	redistest.Path(t)
	nodeBin := needNode(t, "redlock5", "ioredis5")
	for _, fs := range nodeRedlock5Scripts {
		t.Run(fs.name, func(t *testing.T) {
			t.Parallel()
			agreeNodeRedlock(t, runNodeRedlock(t, nodeBin, "noderedlock5.js", fs), runSimulated(t, "node-redlock-5", fs),
				fs, "acquire()", "release()")
		})
	}
}
