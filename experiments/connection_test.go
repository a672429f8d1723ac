package experiments

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// stoppedServers is redsync's Lock, Extend and Unlock with two of five servers stopped
// (SIGSTOP) after a first cycle warmed the connections, continued at 30s.
const stoppedServers = `name: stopped-servers
story: two of five servers stopped while client1 locks, extends and unlocks
knobs: {client: redsync, timeout: 5s, clients: 1, max_cycles: 2, hold: const(6s), think: const(1s), extend_every: 1ms, max_extensions: 1, duration: 30500ms}
start: {client1: 10ms}
schedule:
  - at: 6500ms
    pause_node: {node: redis1, for: 23500ms}
  - at: 6500ms
    pause_node: {node: redis2, for: 23500ms}
`

// TestConnectionSemantics holds the connection knob to its promise (with redsync's waits
// bounded by a 5s timeout of the algorithm's own, as go-redis's read timeout bounds them
// with its retries off). Under drop (go-redis without retries),
// a stopped server runs the SET written on its warm connection when it continues, but never
// the extension or the release, which wait for a new connection's handshake that it does
// not answer: it keeps a stale key. Under queued, it runs all three, and the key is gone.
func TestConnectionSemantics(t *testing.T) {
	sc, err := scenarios.ParseFile("stopped-servers.yaml", []byte(stoppedServers))
	require.NoError(t, err)
	ran := func(connection string) (cmds []string, leftover bool) {
		rp, _, err := ReplayScenario(context.Background(), sc, []knobs.KV{{Name: "connection", Value: connection}}, 1)
		require.NoError(t, err)
		for _, m := range rp.Messages {
			if m.Kind == "request" && m.To == "redis1" && m.SentNs >= 6_500_000_000 && m.Fate == "delivered" {
				cmds = append(cmds, strings.Fields(m.Text)[0])
			}
		}
		last := rp.States[len(rp.States)-1]
		return cmds, len(last.Nodes[0].Keys) > 0
	}
	cmds, leftover := ran("drop")
	assert.Equal(t, []string{"SET", "PING", "PING"}, cmds, "the SET, and two handshakes (extension, release) it answers only when it continues")
	assert.True(t, leftover, "the SET that timed out leaves its key")
	cmds, leftover = ran("queued")
	assert.Equal(t, []string{"SET", "EVALSHA", "EVALSHA"}, cmds, "the SET, the extension and the release (scripts loaded by the first cycle)")
	assert.False(t, leftover)
}

// TestDropConnectsOnFirstUse: under drop a fresh process's first request to each server
// waits for a handshake, one round trip, as go-redis's pool dials on first use.
func TestDropConnectsOnFirstUse(t *testing.T) {
	rp, _, err := ReplayScenario(context.Background(), mustScenario(t, "baseline"),
		[]knobs.KV{{Name: "client", Value: "redsync"}, {Name: "connection", Value: "drop"}, {Name: "timeout", Value: "5s"},
			{Name: "clients", Value: "1"}, {Name: "max_cycles", Value: "2"}}, 1)
	require.NoError(t, err)
	var toRedis3 []string
	for _, m := range rp.Messages {
		if m.Kind == "request" && m.To == "redis3" {
			toRedis3 = append(toRedis3, strings.Fields(m.Text)[0])
		}
	}
	require.GreaterOrEqual(t, len(toRedis3), 3)
	assert.Equal(t, []string{"PING", "SET"}, toRedis3[:2])
	assert.NotContains(t, toRedis3[2:], "PING", "one connection, kept while nothing times out")
}

func mustScenario(t *testing.T, name string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.LookupScenario(name)
	require.NoError(t, err)
	return sc
}

// TestRandomNodeStalls: node_pause_rate stalls each node's master at random, for
// node_pause_len, from the node's own stream: the same seed stalls the same nodes at the
// same times, and a stall is a pause the node answers late from (no request lost).
func TestRandomNodeStalls(t *testing.T) {
	settings := []knobs.KV{{Name: "node_pause_rate", Value: "0.5"}, {Name: "node_pause_len", Value: "const(300ms)"}, {Name: "duration", Value: "20s"}}
	stalls := func() (pauses, resumes int, hash string) {
		var b strings.Builder
		rec, err := Run(context.Background(), "", settings, 3, Options{Trace: &b, Narrate: report.TraceOptions{Only: []string{"faults"}}})
		require.NoError(t, err)
		for _, line := range strings.Split(b.String(), "\n") {
			switch {
			case !strings.Contains(line, "!! redis"):
			case strings.Contains(line, " pause queued="):
				pauses++
			case strings.Contains(line, " resume queued="):
				resumes++
			}
		}
		return pauses, resumes, rec.TraceHash
	}
	p1, r1, h1 := stalls()
	p2, r2, h2 := stalls()
	assert.Equal(t, h1, h2)
	assert.Equal(t, p1, p2)
	assert.Greater(t, p1, 20, "about 0.5/s × 20s × 5 nodes = 50 stalls, fewer where they overlap")
	assert.Equal(t, p1, r1, "every stall ends")
	assert.Equal(t, p2, r2)
}

// TestRefusedHandshake: under drop, a client's handshake to a killed server (its host
// refuses the connection) fails at once, and so does the request parked on it, as
// go-redis's dial error does: redsync's first lock round is decided by the other four
// servers without waiting out the 5s read timeout.
func TestRefusedHandshake(t *testing.T) {
	sc, err := scenarios.ParseFile("killed.yaml", []byte(`name: killed
story: redis1 is killed before redsync's first lock
knobs: {client: redsync, connection: drop, timeout: 5s, clients: 1, max_cycles: 1, duration: 10s}
start: {client1: 100ms}
schedule:
  - at: 10ms
    kill_node: {node: redis1}
`))
	require.NoError(t, err)
	rp, rec, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	acquired := firstStep(t, rp, "client1", "acquired")
	assert.Less(t, acquired, 110*time.Millisecond)
	assert.EqualValues(t, 1, rec.Liveness.Acquired)
}

// killedFor is node-redlock's lock() while redis3 is killed: for 3s (its host refusing
// connections meanwhile), or for good.
func killedFor(restart string) string {
	return `name: killed-server
story: redis3 is killed as client1 locks; ioredis queues its command and reconnects
knobs: {client: node-redlock, clients: 1, max_cycles: 1, duration: 60s}
start: {client1: 10ms}
schedule:
  - at: 5ms
    kill_node: {node: redis3, restart_after: ` + restart + `}
`
}

// TestOfflineQueue holds connection=offline-queue (node-redlock's profile) to ioredis: a
// refused request is queued and the connection retried after 50ms, 100ms, 150ms, ...;
// node-redlock 4.2.0's attempt, which waits for every server, ends only when the server
// is back (3s: the reconnect after it takes it, five votes) or when the 21st close fails
// the queued command, 10.5s after the first (then too late: the validity is spent).
// Under node-redlock 5.0.0-beta.2, which acquires and releases on a quorum of the other
// four, both commands wait in the queue and go out together at the reconnect; the
// restarted server's empty script cache answers each EVALSHA NOSCRIPT, and each is sent
// again as EVAL, in order, as the real library does (the conformance script kill-3s in
// experiments/conformance): the key is set, then deleted.
func TestOfflineQueue(t *testing.T) {
	sc, err := scenarios.ParseFile("killed-3s.yaml", []byte(killedFor("3s")))
	require.NoError(t, err)
	rp, _, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	pings := 0
	for _, s := range rp.Steps {
		if s.Actor == "redis3" && strings.Contains(s.Text, "cmd=PING") {
			pings++
		}
	}
	assert.Equal(t, 10, pings, "reconnects refused at 50ms, 150ms, ..., 2.75s")
	ended := firstStep(t, rp, "client1", "attempt-ended")
	assert.InDelta(t, float64(3315*time.Millisecond), float64(ended), float64(20*time.Millisecond), "the reconnect at 3.31s")
	var won string
	for _, s := range rp.Steps {
		if s.Actor == "client1" && strings.HasPrefix(s.Text, "acquired") {
			won = s.Text
		}
	}
	assert.Contains(t, won, "oks=5", "redis3 ran the queued lock script")

	sc, err = scenarios.ParseFile("killed.yaml", []byte(killedFor("never")))
	require.NoError(t, err)
	rp, _, err = ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	ended = firstStep(t, rp, "client1", "attempt-ended")
	assert.InDelta(t, float64(10520*time.Millisecond), float64(ended), float64(20*time.Millisecond),
		"the queued command fails at the 21st close: 50ms × (1 + ... + 20) after the first")
	var text string
	for _, s := range rp.Steps {
		if s.Actor == "client1" && strings.HasPrefix(s.Text, "attempt-ended") {
			text = s.Text
			break
		}
	}
	assert.Contains(t, text, "reason=validity-expired")

	// Under queued, the refusal is a failed vote at once.
	rp, _, err = ReplayScenario(context.Background(), sc, []knobs.KV{{Name: "connection", Value: "queued"}}, 1)
	require.NoError(t, err)
	assert.Less(t, firstStep(t, rp, "client1", "acquired"), 20*time.Millisecond)

	sc, err = scenarios.ParseFile("killed-3s-5.yaml", []byte(killedFor("3s")))
	require.NoError(t, err)
	rp, _, err = ReplayScenario(context.Background(), sc, []knobs.KV{{Name: "client", Value: "node-redlock-5"},
		{Name: "hold", Value: "const(10ms)"}}, 1)
	require.NoError(t, err)
	assert.Less(t, firstStep(t, rp, "client1", "released"), 50*time.Millisecond, "started at 10ms, held 10ms: acquired and released on the other four")
	var ran []string
	for _, s := range rp.Steps {
		if f := strings.Fields(s.Text); s.Actor == "redis3" && len(f) > 1 && strings.HasPrefix(f[0], "EVAL") {
			ran = append(ran, f[0]+" "+f[1]+" "+s.Text[strings.Index(s.Text, "→"):])
		}
	}
	assert.Equal(t, []string{
		"EVALSHA <node-redlock-5-acquire> → (error) NOSCRIPT No matching script. Please use EVAL.",
		"EVALSHA <node-redlock-5-release> → (error) NOSCRIPT No matching script. Please use EVAL.",
		"EVAL <node-redlock-5-acquire> → (integer) 1",
		"EVAL <node-redlock-5-release> → (integer) 1",
	}, ran, "redis3's commands after its restart")
	last := rp.States[len(rp.States)-1]
	assert.Empty(t, last.Nodes[2].Keys, "redis3 deleted the key it was given")
}

// poweredOff is node-redlock's lock() while redis3 has lost power (crash_node): back
// after restart (its host booting anew), or never.
func poweredOff(restart string) string {
	return `name: power-loss
story: redis3 loses power as client1 locks; ioredis learns of it only from TCP
knobs: {client: node-redlock, clients: 1, max_cycles: 1, duration: 1300s}
start: {client1: 10ms}
schedule:
  - at: 5ms
    crash_node: {node: redis3, restart_after: ` + restart + `}
`
}

// sentTo returns when client1 sent each message to redis3 whose text begins with prefix,
// and the texts.
func sentTo(rp *report.Replay, prefix string) (at []time.Duration, texts []string) {
	for _, m := range rp.Messages {
		if m.From == "client1" && m.To == "redis3" && strings.HasPrefix(m.Text, prefix) {
			at, texts = append(at, time.Duration(m.SentNs)), append(texts, m.Text)
		}
	}
	return at, texts
}

// TestOfflineQueueAfterPowerLoss holds connection=offline-queue to ioredis over Linux's
// TCP when a server's host loses power: nothing answers, so ioredis, which has no timeout
// of its own, learns of it only when the kernel's retransmission of the unanswered
// command (the tail-loss probe at 200ms, then timeouts of 200ms doubling) reaches the host
// booted again, which resets the connection; ioredis then reconnects after 50ms and sends
// the command again. A host that never comes back fails the connection with ETIMEDOUT
// after the probe and 15 retransmissions (924.8s); each reconnect's SYN then goes
// unanswered until connectTimeout (10s), and the 21st close fails the queued command. A
// host that is merely stalled acknowledges the first probe, and the client waits without
// reconnecting.
func TestOfflineQueueAfterPowerLoss(t *testing.T) {
	rp := replayFile(t, "power-loss-3s.yaml", poweredOff("3s"))
	probes, texts := sentTo(rp, "probe")
	require.Len(t, probes, 5, "retransmissions until the host is back at 3.005s: %v", probes)
	for k, want := range []time.Duration{210, 410, 810, 1610, 3210} { // the command went at 10ms
		assert.InDelta(t, float64(want*time.Millisecond), float64(probes[k]), float64(time.Millisecond), "retransmission %d", k+1)
		assert.Equal(t, "probe boot=1", texts[k], "bound to the host's first boot")
	}
	reset := firstStep(t, rp, "client1", "← redis3: (no reply)")
	assert.Greater(t, reset, probes[4], "the rebooted host resets the connection the 5th retransmission names")
	pings, _ := sentTo(rp, "PING")
	require.Len(t, pings, 1, "one reconnect, answered")
	assert.InDelta(t, float64(reset+50*time.Millisecond), float64(pings[0]), float64(time.Millisecond), "ioredis reconnects 50ms after the close")
	acquired := firstStep(t, rp, "client1", "acquired")
	assert.InDelta(t, float64(3265*time.Millisecond), float64(acquired), float64(5*time.Millisecond))
	assert.Contains(t, stepsText(rp, "client1"), "acquired resource=lock attempt=1 oks=5",
		"the command sent again after the reconnect ran on the rebooted redis3")

	rp = replayFile(t, "power-loss.yaml", poweredOff("never"))
	probes, _ = sentTo(rp, "probe")
	require.Len(t, probes, 16, "the tail-loss probe and tcp_retries2 retransmissions")
	assert.InDelta(t, float64(10*time.Millisecond+(924800-120000)*time.Millisecond), float64(probes[15]), float64(10*time.Millisecond),
		"the last retransmission, 120s (TCP_RTO_MAX) before the timeout")
	pings, _ = sentTo(rp, "PING")
	ended := firstStep(t, rp, "client1", "attempt-ended")
	before := 0
	for _, p := range pings {
		if p < ended {
			before++
		}
	}
	// The ETIMEDOUT close at 924.81s is the first; the 21st fails the command. Each
	// reconnect's SYN goes at 0, 1, 2, 3, 4, 5 and 7s, and connectTimeout closes it at 10s.
	assert.Equal(t, 20*7, before, "twenty reconnects, each SYN sent seven times")
	assert.Greater(t, len(pings), before, "ioredis goes on reconnecting")
	want := 10*time.Millisecond + 924800*time.Millisecond + 20*10*time.Second + 10500*time.Millisecond
	assert.InDelta(t, float64(want), float64(ended), float64(50*time.Millisecond),
		"ETIMEDOUT, then 20 connects of 10s, 50ms × (1 + ... + 20) apart")

	// A stalled host acknowledges the retransmission: no reconnect, the command runs when
	// the server continues.
	stalled := strings.Replace(poweredOff("never"), "crash_node: {node: redis3, restart_after: never}", "pause_node: {node: redis3, for: 2s}", 1)
	rp = replayFile(t, "stalled.yaml", stalled)
	probes, _ = sentTo(rp, "probe")
	assert.Len(t, probes, 1, "acknowledged at once by the stalled host's kernel")
	pings, _ = sentTo(rp, "PING")
	assert.Empty(t, pings, "no reconnect")
	assert.InDelta(t, float64(2007*time.Millisecond), float64(firstStep(t, rp, "client1", "acquired")), float64(5*time.Millisecond))
}

// TestOfflineQueueResetAfterReboot: a connection idle through its host's power loss and
// reboot learns of it from the next command, which the new boot resets; the command goes
// again after the reconnect.
func TestOfflineQueueResetAfterReboot(t *testing.T) {
	rp := replayFile(t, "reboot.yaml", `name: reboot
story: redis3 loses power between two cycles of client1 and is back before the second
knobs: {client: node-redlock, clients: 1, max_cycles: 2, hold: const(50ms), think: const(2s), duration: 60s}
start: {client1: 10ms}
schedule:
  - at: 500ms
    crash_node: {node: redis3, restart_after: 500ms}
`)
	var reset time.Duration = -1
	for _, s := range rp.Steps {
		if s.Actor == "redis3" && strings.HasPrefix(s.Text, "drop reason=reset") {
			reset = time.Duration(s.AtNs)
			break
		}
	}
	require.Positive(t, reset, "the rebooted host resets the old connection's command")
	assert.Greater(t, reset, 2*time.Second, "at the second cycle, not before")
	probes, _ := sentTo(rp, "probe")
	assert.Empty(t, probes, "the reset came at once: nothing to retransmit")
	assert.Equal(t, 2, strings.Count(stepsText(rp, "client1"), "acquired resource=lock attempt=1 oks=5"), "both cycles won all five")
}

// stepsText joins an actor's narrated steps.
func stepsText(rp *report.Replay, actor string) string {
	var b strings.Builder
	for _, s := range rp.Steps {
		if s.Actor == actor {
			b.WriteString(s.Text + "\n")
		}
	}
	return b.String()
}

// TestOfflineQueueConnectsAsTheProcessStarts: a restarted process connects to every
// server as it starts (ioredis connects on construction), so its first lock command waits
// in the offline queue for the handshake, and its connections are bound to the hosts'
// boots of that moment.
func TestOfflineQueueConnectsAsTheProcessStarts(t *testing.T) {
	rp := replayFile(t, "client-restart.yaml", `name: client-restart
story: client1 dies between two cycles and restarts
knobs: {client: node-redlock, clients: 1, max_cycles: 3, hold: const(50ms), think: const(5s), duration: 10s}
start: {client1: 10ms}
schedule:
  - at: 1s
    crash_client: {client: client1, restart_after: 1s}
`)
	var pings []string
	for _, m := range rp.Messages {
		if m.From == "client1" && strings.HasPrefix(m.Text, "PING") {
			assert.InDelta(t, float64(2*time.Second), float64(m.SentNs), float64(time.Millisecond), "as the process restarts")
			pings = append(pings, m.To)
		}
	}
	slices.Sort(pings)
	assert.Equal(t, []string{"redis1", "redis2", "redis3", "redis4", "redis5"}, pings, "one handshake per server, only after the restart")
	restarted := 2 * time.Second
	var lockAt time.Duration
	for _, m := range rp.Messages {
		if m.From == "client1" && m.Kind == "request" && time.Duration(m.SentNs) > restarted && strings.HasPrefix(m.Text, "EVAL") {
			lockAt = time.Duration(m.SentNs)
			break
		}
	}
	require.Positive(t, lockAt)
	assert.Greater(t, lockAt, restarted, "the lock command waited for the handshake's answer")
}

// replayFile replays the scenario file text (named file) at seed 1.
func replayFile(t *testing.T, file, text string) *report.Replay {
	t.Helper()
	sc, err := scenarios.ParseFile(file, []byte(text))
	require.NoError(t, err)
	rp, _, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	return rp
}
