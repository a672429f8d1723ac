package experiments

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// These tests hold connection=go-redis (the redsync profile's) to go-redis v9.23.0's
// defaults, each on the code path the issue that added them measured against the real
// library: the retry of a timed-out command on a new connection, the dial retries against
// a server whose process is gone, and the context redsync hands Lock but not Unlock.

// goRedisRun replays a one-client redsync scenario with the given knobs and schedule:
// client1 starts at 10ms (its first requests dial every server).
func goRedisRun(t *testing.T, knobs, schedule string) *report.Replay {
	t.Helper()
	return goRedisRunWith(t, "redsync", knobs, schedule)
}

// goRedisRunWith is goRedisRun with another client profile.
func goRedisRunWith(t *testing.T, client, knobs, schedule string) *report.Replay {
	t.Helper()
	sc, err := scenarios.ParseFile("goredis.yaml", []byte(`name: goredis
story: client1 locks, holds and unlocks while a server misbehaves
knobs: {client: `+client+`, clients: 1, duration: 40s, `+knobs+`}
start: {client1: 10ms}
schedule:
`+schedule))
	require.NoError(t, err)
	rp, _, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	return rp
}

// lastStep returns when actor last said something beginning with text.
func lastStep(t *testing.T, rp *report.Replay, actor, text string) time.Duration {
	t.Helper()
	at := time.Duration(-1)
	for _, s := range rp.Steps {
		if s.Actor == actor && strings.HasPrefix(s.Text, text) {
			at = time.Duration(s.AtNs)
		}
	}
	require.GreaterOrEqual(t, at, time.Duration(0), "%s never said %q", actor, text)
	return at
}

// ranOn returns the commands server ran (delivered to it) from true time from on, by name.
func ranOn(rp *report.Replay, server string, from time.Duration) []string {
	var cmds []string
	for _, m := range rp.Messages {
		if m.Kind == "request" && m.To == server && m.Fate == "delivered" && time.Duration(m.SentNs) >= from {
			cmds = append(cmds, strings.Fields(m.Text)[0])
		}
	}
	return cmds
}

// TestGoRedisRetriesAStalledUnlock: Unlock meets a master stalled for 7s with its
// connection warm. go-redis's read times out at 5s, the command is retried on a new
// connection whose HELLO waits for the stalled server, and when it continues the server
// runs the first EVALSHA (read by nobody), the HELLO and the retried EVALSHA: the script
// runs twice, and Unlock takes the stall's length, not the read timeout.
func TestGoRedisRetriesAStalledUnlock(t *testing.T) {
	// The first cycle (10ms to 1.01s) warms the connections and loads the scripts; the
	// second locks at 2.02s and unlocks at 3.02s, while redis1 is stalled from 2.5s to 9.5s.
	rp := goRedisRun(t, "max_cycles: 2, hold: const(1s), think: const(1s)", `  - at: 2500ms
    pause_node: {node: redis1, for: 7s}
`)
	start := lastStep(t, rp, "client1", "release-start")
	end := lastStep(t, rp, "client1", "released")
	assert.InDelta(t, (9500*time.Millisecond - start).Seconds(), (end - start).Seconds(), 0.05,
		"Unlock ends as the stall does, at 9.5s, not at the read timeout (%v)", start+5*time.Second)
	assert.Equal(t, []string{"EVALSHA", "PING", "EVALSHA"}, ranOn(rp, "redis1", 2500*time.Millisecond),
		"the timed-out EVALSHA, the new connection's handshake, the retry")
}

// TestGoRedisStalledExtendGivesUpAfterTheHandshake: a stall longer than two read timeouts.
// The retry's handshake times out too, which go-redis does not retry (the command was
// never written): Extend gives up after about 10s, one read timeout for the command and
// one for the handshake.
func TestGoRedisStalledExtendGivesUpAfterTheHandshake(t *testing.T) {
	rp := goRedisRun(t, "ttl: 30s, max_cycles: 1, hold: const(20s), extend_every: 2s, max_extensions: 1", `  - at: 1500ms
    pause_node: {node: redis1, for: 30s}
`)
	start := firstStep(t, rp, "client1", "extend-start")
	end := firstStep(t, rp, "client1", "extended")
	took := end - start
	assert.Greater(t, took, 10*time.Second, "a read timeout, a backoff, a handshake's read timeout")
	assert.Less(t, took, 10*time.Second+100*time.Millisecond, "the backoff before retry 1 is under 30ms")
}

// TestGoRedisDialRetriesWithoutADeadline: Unlock against a master whose process is gone
// (its host refuses connections). The pool's health check drops the closed connection,
// and each of go-redis's four tries dials five times, 100ms apart: Unlock costs about
// 1.6s plus three backoffs, where go-redis with its retries off fails at once.
func TestGoRedisDialRetriesWithoutADeadline(t *testing.T) {
	rp := goRedisRun(t, "max_cycles: 1, hold: const(1s)", `  - at: 500ms
    kill_node: {node: redis1}
`)
	start := firstStep(t, rp, "client1", "release-start")
	end := firstStep(t, rp, "client1", "released")
	took := end - start
	assert.GreaterOrEqual(t, took, 4*400*time.Millisecond+30*time.Millisecond, "4 tries × 4 pauses of 100ms, and 3 backoffs of at least 10ms")
	assert.Less(t, took, 4*400*time.Millisecond+170*time.Millisecond, "backoffs under 30, 50 and 90ms")
}

// TestGoRedisLockContextCutsTheDials: Lock against a master whose process is gone. The
// context redsync gives each attempt (0.05 × ttl = 400ms) ends the dials, and the retry's
// backoff returns at once: the vote fails at 400ms, and redsync, waiting for every
// server, acquires then, its validity 400ms shorter.
func TestGoRedisLockContextCutsTheDials(t *testing.T) {
	rp := goRedisRun(t, "max_cycles: 1, hold: const(1s)", `  - at: 5ms
    kill_node: {node: redis1}
`)
	start := firstStep(t, rp, "client1", "acquire-start")
	got := firstStep(t, rp, "client1", "acquired")
	assert.InDelta(t, 0.4, (got - start).Seconds(), 0.01, "the context's 400ms, not go-redis's 1.6s of dials")
}

// TestGoRedisPoolFailsFastAfterItsSize: client2 contends for a lock client1 holds while
// redis1's process is gone. Each of its attempts fails two connection attempts on redis1
// (the attempt's and its cleanup's, each four dials cut by the 400ms context); after 20
// (go-redis's PoolSize here) the pool fails every dial at once, and only its probe still
// dials, once a second: the attempts get short.
func TestGoRedisPoolFailsFastAfterItsSize(t *testing.T) {
	sc, err := scenarios.ParseFile("pool.yaml", []byte(`name: pool
story: redis1's process is gone; client1 holds for 14s; client2 retries every 200ms
knobs: {client: redsync, ttl: 20s, context_factor: 0.02, clients: 2, max_cycles: 1, hold: const(14100ms), retry_delay: 200ms, retry_jitter: 0s, duration: 20s}
start: {client1: 10ms, client2: 110ms}
schedule:
  - at: 5ms
    kill_node: {node: redis1, restart_after: never}
`))
	require.NoError(t, err)
	rp, _, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	dials := func(from, to time.Duration) int {
		n := 0
		for _, m := range rp.Messages {
			at := time.Duration(m.SentNs)
			if m.From == "client2" && m.To == "redis1" && m.Kind == "tcp" && at >= from && at < to {
				n++
			}
		}
		return n
	}
	assert.Equal(t, 81, dials(0, 10*time.Second+110*time.Millisecond),
		"10 attempts × 2 connection attempts × 4 dials, and the probe's first, at the 20th failure")
	late := dials(11*time.Second, 14*time.Second)
	assert.GreaterOrEqual(t, late, 2, "the probe dials once a second")
	assert.LessOrEqual(t, late, 4, "only the probe dials")
	var ends []time.Duration
	for _, s := range rp.Steps {
		if s.Actor == "client2" && strings.HasPrefix(s.Text, "attempt-ended") {
			ends = append(ends, time.Duration(s.AtNs))
		}
	}
	require.Greater(t, len(ends), 12)
	assert.InDelta(t, 1.0, (ends[5] - ends[4]).Seconds(), 0.01, "before: the context twice, and the retry delay")
	assert.Less(t, ends[12]-ends[11], 700*time.Millisecond, "after: the backoffs and the retry delay")
}
