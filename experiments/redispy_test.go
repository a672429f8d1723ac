package experiments

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// These tests hold connection=redis-py-8 (the redlock-py-redis8 profile's) to redis-py
// 8.1's defaults on the paths docs/clients.md's "Which redis-py" table measured.

// TestRedisPy8ReconnectsAKilledServer: a server killed while the client's connection to it
// sits idle in the pool. The pool's health check finds the connection closed and connects
// again, retrying the connect 10 times with its backoff, then raises ConnectionError
// without retrying the command: 11 connects, about 4s (every backoff is at most
// min(1s, 10ms × 2^f)), where redis-py 3.1–6.x raises at once.
func TestRedisPy8ReconnectsAKilledServer(t *testing.T) {
	rp := goRedisRunWith(t, "redlock-py-redis8", "max_cycles: 2, hold: const(100ms), think: const(1s)", `  - at: 500ms
    kill_node: {node: redis1}
`)
	syns := 0
	for _, m := range rp.Messages {
		if m.From == "client1" && m.To == "redis1" && m.Kind == "tcp" && time.Duration(m.SentNs) > 500*time.Millisecond {
			syns++
		}
	}
	assert.Equal(t, 11, syns, "the health check's connect: 1 try and 10 retries")
	start := lastStep(t, rp, "client1", "acquire-start")
	var bound time.Duration
	for f := 1; f <= 10; f++ {
		bound += min(time.Second, 10*time.Millisecond<<f)
	}
	// The first SET (to redis1) waits out the connects; the other four answer at once.
	ended := lastStep(t, rp, "client1", "attempt-ended")
	assert.Greater(t, ended-start, 100*time.Millisecond, "ten backoffs, not an immediate ConnectionError")
	assert.Less(t, ended-start, bound+50*time.Millisecond, "at most the ten backoffs' caps")
}

// TestRedisPy8RetriesAStalledServer: a server stalled for 12s (a 30s ttl outlasts it). The
// SET times out after the 5s socket timeout; the retry's new connection waits on its
// handshake, which times out too (5s more), and the next retry's handshake is answered
// when the server continues, then its SET runs: lock() waits out the stall, and the
// server runs the SET twice.
func TestRedisPy8RetriesAStalledServer(t *testing.T) {
	rp := goRedisRunWith(t, "redlock-py-redis8", "ttl: 30s, max_cycles: 2, hold: const(100ms), think: const(1s)", `  - at: 500ms
    pause_node: {node: redis1, for: 12s}
`)
	start := lastStep(t, rp, "client1", "acquire-start")
	got := lastStep(t, rp, "client1", "acquired")
	assert.InDelta(t, (12500*time.Millisecond - start).Seconds(), (got - start).Seconds(), 0.1,
		"the SET to redis1 is answered when the stall ends, at 12.5s")
	sets := 0
	for _, c := range ranOn(rp, "redis1", start) {
		if c == "SET" {
			sets++
		}
	}
	assert.Equal(t, 2, sets, "the first try's SET, and the third try's, written once its handshake is answered (the second try's handshake timed out at 10s, so it wrote none)")
}
