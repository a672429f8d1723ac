package experiments

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// redissonWait is two Redisson clients on one lock: client1 takes it and works 25s (the
// watchdog renews its 30s lease at 10s and 20s), client2 asks at 1s and waits on the
// lock's channel.
const redissonWait = `name: redisson-wait
story: client2 waits on the lock's channel while client1 works 25s under the watchdog
knobs: {client: redisson, clients: 2, max_cycles: 1, hold: const(25s), duration: 90s}
start: {client1: 10ms, client2: 1s}
`

// firstStep returns the true time of actor's first narrated line that starts with text.
func firstStep(t *testing.T, rp *report.Replay, actor, text string) time.Duration {
	t.Helper()
	for _, s := range rp.Steps {
		if s.Actor == actor && strings.HasPrefix(s.Text, text) {
			return time.Duration(s.AtNs)
		}
	}
	t.Fatalf("%s never said %q", actor, text)
	return 0
}

// TestRedissonWakesOnUnlock holds the redisson profile to Redisson's RLock: the waiting
// client is woken by the holder's unlock message, within a round trip of the release,
// not when the lease would have run out; the watchdog keeps the lease alive past its 30s
// while the holder works; and when the holder dies without unlocking, the waiter is woken
// by its own timer when the key's remaining time to live (PTTL) has passed.
func TestRedissonWakesOnUnlock(t *testing.T) {
	sc, err := scenarios.ParseFile("redisson-wait.yaml", []byte(redissonWait))
	require.NoError(t, err)

	rp, rec, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	released := firstStep(t, rp, "client1", "released")
	acquired := firstStep(t, rp, "client2", "acquired")
	assert.Greater(t, released, 25*time.Second)
	assert.Greater(t, acquired, released)
	assert.Less(t, acquired-released, 10*time.Millisecond, "woken by the unlock message")
	extended := 0
	for _, s := range rp.Steps {
		if s.Actor == "client1" && strings.HasPrefix(s.Text, "extended") {
			extended++
		}
	}
	assert.Equal(t, 2, extended, "the watchdog renews at 10s and 20s of the 25s hold")
	assert.True(t, rec.Safety.LockSafe() && rec.Safety.ResourceSafe())

	// The holder dies at 5s, without unlocking and with its watchdog: its last lease,
	// taken at 10ms, ends near 30s, and client2 learns it only from its wait timer.
	crashed := []knobs.KV{{Name: "hold", Value: "const(60s)"}}
	sc2, err := scenarios.ParseFile("redisson-crash.yaml", []byte(redissonWait+"schedule:\n  - at: 5s\n    crash_client: {client: client1}\n"))
	require.NoError(t, err)
	rp, _, err = ReplayScenario(context.Background(), sc2, crashed, 1)
	require.NoError(t, err)
	acquired = firstStep(t, rp, "client2", "acquired")
	assert.Greater(t, acquired, 30*time.Second)
	assert.Less(t, acquired, 30*time.Second+50*time.Millisecond, "woken by the PTTL it was told, just after the lease ran out")
}

// redissonRedLockStall is a RedissonRedLock over five masters taken while redis2 stalls
// (SIGSTOP) for 20s, and a second client that comes after the first has released.
const redissonRedLockStall = `name: redisson-redlock-stall
story: redis2 stalls for 20s as client1 takes the RedissonRedLock; client2 comes at 25s
knobs: {client: redisson-redlock, clients: 2, max_cycles: 1, duration: 90s}
start: {client1: 10ms, client2: 25s}
schedule:
  - at: 5ms
    pause_node: {node: redis2, for: 20s}
`

// TestRedissonRedLockWaitsOutAStalledMaster holds the redisson-redlock profile to
// RedissonMultiLock.tryLock against single servers: the masters are taken one after
// another, so a stalled one holds the whole lock up for its trylock's response timeout
// (3s, not resent) and then for the unlock that answers a RedisResponseTimeoutException
// (3s more); the lock is then four masters. unlock() waits for the stalled master's
// unlock too. When redis2 continues it runs the queued trylock and then the unlocks, so
// it is left free: client2 takes all five.
func TestRedissonRedLockWaitsOutAStalledMaster(t *testing.T) {
	sc, err := scenarios.ParseFile("redisson-redlock-stall.yaml", []byte(redissonRedLockStall))
	require.NoError(t, err)
	rp, rec, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	acquired := firstStep(t, rp, "client1", "acquired")
	assert.InDelta(t, float64(6*time.Second), float64(acquired), float64(20*time.Millisecond),
		"3s for the trylock, 3s for its unlock")
	released := firstStep(t, rp, "client1", "released") - firstStep(t, rp, "client1", "release-start")
	assert.InDelta(t, float64(3*time.Second), float64(released), float64(20*time.Millisecond),
		"unlock() waits for the stalled master")
	var won1, won2 string
	for _, s := range rp.Steps {
		switch {
		case s.Actor == "client1" && strings.HasPrefix(s.Text, "acquired"):
			won1 = s.Text
		case s.Actor == "client2" && strings.HasPrefix(s.Text, "acquired"):
			won2 = s.Text
		}
	}
	assert.Contains(t, won1, "oks=4")
	assert.Contains(t, won2, "oks=5", "the queued unlock followed the queued trylock")
	assert.True(t, rec.Safety.LockSafe() && rec.Safety.ResourceSafe())
}

// redissonStall is Redisson's RLock on a master that stalls for 20s while client1, one
// thread, calls lock() again after each timeout; client2 asks at 21s.
const redissonStall = `name: redisson-stall
story: the master stalls for 20s while client1 keeps calling lock()
knobs: {client: redisson, clients: 2, duration: 120s}
start: {client1: 10ms, client2: 21s}
schedule:
  - at: 5ms
    pause_node: {node: redis1, for: 20s}
`

// TestRedissonLockAfterATimeoutLeavesItsCount: each lock() that timed out on the stalled
// master (its trylock is not resent, and nothing unlocks it) runs when the master
// continues, adding one to client1's re-entrant count. client1's next lock() re-enters,
// and its unlock only counts down (0: not deleted, no unlock message), so as long as the
// same thread keeps cycling the key never goes: client2 waits for the whole run.
func TestRedissonLockAfterATimeoutLeavesItsCount(t *testing.T) {
	sc, err := scenarios.ParseFile("redisson-stall.yaml", []byte(redissonStall))
	require.NoError(t, err)
	rp, _, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	failed, countedDown := 0, 0
	for _, s := range rp.Steps {
		switch {
		case s.Actor == "client1" && s.AtNs < int64(20*time.Second) && strings.HasPrefix(s.Text, "acquire-failed"):
			failed++
		case s.Actor == "redis1" && strings.Contains(s.Text, "<redisson-unlock>") && strings.HasSuffix(s.Text, "→ (integer) 0"):
			countedDown++
		case s.Actor == "client2" && strings.HasPrefix(s.Text, "acquired"):
			t.Errorf("client2 acquired at %v: %s", time.Duration(s.AtNs), s.Text)
		}
	}
	assert.GreaterOrEqual(t, failed, 5, "a lock() timing out every 3s or so of the stall")
	assert.Greater(t, countedDown, 100, "client1's unlocks only count down")
}

// redlockPyKilled is redlock-py with one of three servers killed: its host refuses
// connections, which redis-py raises as a ConnectionError at once.
const redlockPyKilled = `name: redlock-py-killed
story: one of three servers is killed; redlock-py wins the other two and gives up
knobs: {client: redlock-py, nodes: 3, clients: 1, max_cycles: 1, duration: 5s}
start: {client1: 100ms}
schedule:
  - at: 10ms
    kill_node: {node: redis3}
`

// TestRedlockPyGivesUpOnAServerError holds the redlock-py profile to redlock-py 1.0.8's
// lock(): with a server's connection refused, an attempt that wins the other two raises
// MultipleRedlockException at once, without unlocking, so its keys stay for their whole
// TTL; and under a power loss (nothing answers) the same attempt waits, as redis-py has
// no socket timeout.
func TestRedlockPyGivesUpOnAServerError(t *testing.T) {
	sc, err := scenarios.ParseFile("redlock-py-killed.yaml", []byte(redlockPyKilled))
	require.NoError(t, err)
	rp, rec, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	failed := firstStep(t, rp, "client1", "acquire-failed")
	assert.Less(t, failed, 110*time.Millisecond, "the refused connection is an error at once")
	var text string
	for _, s := range rp.Steps {
		if s.Actor == "client1" && strings.HasPrefix(s.Text, "acquire-failed") {
			text = s.Text
		}
	}
	assert.Contains(t, text, "server-error")
	assert.Zero(t, rec.Liveness.Acquired)
	// A sweep counts these failures in a column of their own.
	assert.Positive(t, rec.Liveness.FailuresByReason.ServerError)
	col := -1.0
	for _, m := range rec.Metrics() {
		if m.Name == MetricFailuresServerError {
			col = m.Value
		}
	}
	assert.Equal(t, float64(rec.Liveness.FailuresByReason.ServerError), col, MetricFailuresServerError)
	// The keys it won stay: no unlock was sent.
	last := rp.States[len(rp.States)-1]
	assert.Len(t, last.Nodes[0].Keys, 1, "redis1 keeps the key")
	assert.Len(t, last.Nodes[1].Keys, 1, "redis2 keeps the key")

	crashed := strings.Replace(redlockPyKilled, "kill_node", "crash_node", 1)
	sc, err = scenarios.ParseFile("redlock-py-crashed.yaml", []byte(crashed))
	require.NoError(t, err)
	rp, _, err = ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	for _, s := range rp.Steps {
		assert.False(t, s.Actor == "client1" && strings.HasPrefix(s.Text, "acquire-failed"),
			"after a power loss the third SET waits (no socket timeout): %s", s.Text)
	}
}

// redlockNetLong is one RedLock.net client holding its lock 12s, past its 10s expiry,
// while redis1 loses power at 4s and comes back empty at 4.5s.
const redlockNetLong = `name: redlock-net-long
story: a RedLock.net holder works past its expiry while its lock extends itself
knobs: {client: redlock-net, clients: 1, max_cycles: 1, hold: const(12s), duration: 20s}
start: {client1: 10ms}
schedule:
  - at: 4s
    crash_node: {node: redis1, restart_after: 500ms}
`

// TestRedlockNetExtendsItself holds the redlock-net profile to RedLock.net 2.3.2: the
// lock extends itself every expiry/2 while held (at 5s and 10s of a 12s hold), with its
// own extend script, which takes back a key that is gone (SET PX) rather than failing:
// redis1, restarted empty, holds the key again after the first extension.
func TestRedlockNetExtendsItself(t *testing.T) {
	sc, err := scenarios.ParseFile("redlock-net-long.yaml", []byte(redlockNetLong))
	require.NoError(t, err)
	rp, rec, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	var extended []report.Step
	for _, s := range rp.Steps {
		if s.Actor == "client1" && strings.HasPrefix(s.Text, "extended") {
			extended = append(extended, s)
		}
	}
	require.Len(t, extended, 2)
	assert.InDelta(t, float64(5010*time.Millisecond), float64(extended[0].AtNs), float64(10*time.Millisecond), "expiry/2 after acquiring")
	assert.InDelta(t, float64(10010*time.Millisecond), float64(extended[1].AtNs), float64(10*time.Millisecond))
	assert.Len(t, rp.States[extended[0].State].Nodes[0].Keys, 1, "redis1 has the key back")
	assert.True(t, rec.Safety.LockSafe() && rec.Safety.ResourceSafe())
	assert.EqualValues(t, 1, rec.Liveness.Acquired)
}

// wallStep is a node-redlock lock whose holder's wall clock is stepped back 5s while it
// holds it; the holder stops working at its deadline as it reads it, and client2 comes
// just before the keys expire.
const wallStep = `name: wall-clock-validity
story: client1's wall clock is stepped back 5s while it holds a node-redlock lock
knobs: {client: node-redlock, clients: 2, max_cycles: 1, hold: const(20s), stop_at_deadline: true, duration: 40s}
start: {client1: 10ms, client2: 9500ms}
schedule:
  - at: 2s
    clock_step: {node: client1, by: -5s}
`

// TestWallClockValidity holds validity_clock to what node-redlock's Date.now() does: on
// the wall clock, a step back of 5s while the lock is held moves the holder's deadline 5s
// later in true time, past the keys' expiry, so client2's lock overlaps it; on the
// monotonic clock (the knob overridden) the step changes nothing and nothing overlaps.
func TestWallClockValidity(t *testing.T) {
	sc, err := scenarios.ParseFile("wall-clock-validity.yaml", []byte(wallStep))
	require.NoError(t, err)
	_, rec, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	require.Len(t, rec.Violations, 2, "a validity and a usage overlap")
	for _, v := range rec.Violations {
		assert.InDelta(t, 14.9, v.EndS, 0.05, "%s ends at client1's wall deadline, 5s after the keys expired", v.Kind)
	}
	_, rec, err = ReplayScenario(context.Background(), sc, []knobs.KV{{Name: "validity_clock", Value: "monotonic"}}, 1)
	require.NoError(t, err)
	assert.True(t, rec.Safety.LockSafe(), "%v", rec.Violations)
}

// lostExtension is a node-redlock lock whose extension loses: two of five masters lost
// power and came back empty (their votes are 0), and a third was killed, its refused
// connection an error at once (ioredis with enableOfflineQueue: false, connection =
// queued here), so only two of five extend.
const lostExtension = `name: node-redlock-lost-extension
story: client1's extension loses, and node-redlock unlocks the lock it meant to extend
knobs: {client: node-redlock, connection: queued, clients: 2, max_cycles: 1, hold: const(20s), extend_every: 2s, duration: 30s}
start: {client1: 10ms, client2: 2500ms}
schedule:
  - at: 1s
    crash_node: {node: redis4, restart_after: 10ms}
  - at: 1s
    crash_node: {node: redis5, restart_after: 10ms}
  - at: 1500ms
    kill_node: {node: redis3}
`

// TestNodeRedlockUnlocksOnALostExtension holds the node-redlock profile to node-redlock
// 4.2.0's extend(), which runs its acquire loop with the extend script: the lost round
// unlocks the lock on every server, so client2 takes redis1 and redis2 (with the two empty
// ones) at once, while client1 still believes its lock valid until its first deadline.
// Had the keys stayed, client2 could not have had three masters before they expired.
func TestNodeRedlockUnlocksOnALostExtension(t *testing.T) {
	sc, err := scenarios.ParseFile("node-redlock-lost-extension.yaml", []byte(lostExtension))
	require.NoError(t, err)
	rp, rec, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	unlocked := firstStep(t, rp, "redis1", "EVAL <node-redlock-unlock>")
	assert.InDelta(t, float64(2015*time.Millisecond), float64(unlocked), float64(10*time.Millisecond),
		"the unlock right after the extension round lost")
	var overlap bool
	for _, v := range rec.Violations {
		if v.Kind == "validity_overlap" && v.First == "client1" && v.Second == "client2" {
			overlap = true
			assert.InDelta(t, 2.5, v.StartS, 0.01, "client2 acquires at once")
			assert.InDelta(t, 9.9, v.EndS, 0.05, "client1 believes its first deadline")
		}
	}
	assert.True(t, overlap, "%v", rec.Violations)
}

// redissonRefused is one Redisson client whose master is killed before it locks: its
// host refuses connections. TestRedissonRetriesARefusedConnection varies the profile, the
// masters and the one killed.
const redissonRefused = `name: redisson-refused
story: a master is killed before client1 locks; Redisson keeps trying for a connection
knobs: {client: redisson, clients: 1, max_cycles: 1, duration: 30s}
start: {client1: 100ms}
schedule:
  - at: 10ms
    kill_node: {node: redis1}
`

// TestRedissonRetriesARefusedConnection holds both Redisson profiles to RedisExecutor's
// handling of a connection it cannot get: no command fails at once. Each attempt is
// followed by another retryInterval (1.5s) after it began, retryAttempts (3) times, the
// trylock's noRetry notwithstanding, and the fourth refusal fails the command with a
// connection error. RLock.lock() on a killed master throws after 4.5s (four trylocks, at
// 0.1, 1.6, 3.1 and 4.6s), or, when the master is back at 2s, takes the lock with the
// third. RedissonRedLock.lock() over five masters with redis2 killed has the lock after
// 4.5s, four masters, with no unlock sent to redis2 (tryLock unlocks only after a
// response timeout), and its unlock() waits 4.5s for redis2. Over three masters with the
// first killed, each tryLock spends its whole 4.5s wait on redis1 and ends before asking
// the other two: lock() never returns.
func TestRedissonRetriesARefusedConnection(t *testing.T) {
	type sends struct{ trylocks, unlocks []time.Duration }
	// run runs a scenario and returns its replay and, for each node, when it was sent
	// (ran, or refused) each trylock and unlock.
	run := func(yaml string) (*report.Replay, map[string]sends) {
		t.Helper()
		sc, err := scenarios.ParseFile("redisson-refused.yaml", []byte(yaml))
		require.NoError(t, err)
		rp, _, err := ReplayScenario(context.Background(), sc, nil, 1)
		require.NoError(t, err)
		by := map[string]sends{}
		for _, s := range rp.Steps {
			n, at := by[s.Actor], time.Duration(s.AtNs)
			switch {
			case !strings.HasPrefix(s.Actor, "redis"):
				continue
			case strings.Contains(s.Text, "<redisson-trylock>"):
				n.trylocks = append(n.trylocks, at)
			case strings.Contains(s.Text, "<redisson-unlock>"):
				n.unlocks = append(n.unlocks, at)
			}
			by[s.Actor] = n
		}
		return rp, by
	}
	near := func(want, got time.Duration, msg string) {
		t.Helper()
		assert.InDelta(t, float64(want), float64(got), float64(10*time.Millisecond), "%s: %v", msg, got)
	}

	rp, by := run(redissonRefused)
	require.Len(t, by["redis1"].trylocks, 4, "RLock: four attempts")
	for i, at := range by["redis1"].trylocks {
		near(100*time.Millisecond+time.Duration(i)*1500*time.Millisecond, at, "RLock: an attempt every 1.5s")
	}
	near(4600*time.Millisecond, firstStep(t, rp, "client1", "acquire-failed"), "RLock: lock() throws after 4.5s")

	back := strings.Replace(redissonRefused, "{node: redis1}", "{node: redis1, restart_after: 2s}", 1)
	rp, by = run(back)
	assert.Len(t, by["redis1"].trylocks, 3)
	near(3100*time.Millisecond, firstStep(t, rp, "client1", "acquired"), "RLock: the third attempt reaches the master that came back")

	redlock := strings.Replace(strings.Replace(redissonRefused, "client: redisson,", "client: redisson-redlock, nodes: 5,", 1),
		"{node: redis1}", "{node: redis2}", 1)
	rp, by = run(redlock)
	acquired := firstStep(t, rp, "client1", "acquired")
	near(4600*time.Millisecond, acquired, "RedLock: lock() after redis2's 4.5s")
	var won string
	for _, s := range rp.Steps {
		if s.Actor == "client1" && strings.HasPrefix(s.Text, "acquired") {
			won = s.Text
		}
	}
	assert.Contains(t, won, "oks=4")
	assert.Len(t, by["redis2"].trylocks, 4)
	require.NotEmpty(t, by["redis2"].unlocks)
	assert.Greater(t, by["redis2"].unlocks[0], acquired, "no unlock of redis2 before the lock: only unlock() sends one")
	released := firstStep(t, rp, "client1", "released") - firstStep(t, rp, "client1", "release-start")
	near(4500*time.Millisecond, released, "RedLock: unlock() waits out redis2's attempts")

	three := strings.Replace(redissonRefused, "client: redisson,", "client: redisson-redlock, nodes: 3,", 1)
	rp, by = run(three)
	for _, s := range rp.Steps {
		assert.False(t, s.Actor == "client1" && strings.HasPrefix(s.Text, "acquired"), "three masters, the first killed: %s", s.Text)
	}
	assert.Empty(t, by["redis2"].trylocks, "redis2 is never asked")
	assert.GreaterOrEqual(t, len(by["redis1"].trylocks), 6*4, "a tryLock of four refused attempts every 4.5s for 30s")
}

// redissonFailover is Redisson's RLock on a master with one replica (50ms behind), whose
// master loses power the moment client1 has the lock; the replica is promoted after 1s.
const redissonFailover = `name: redisson-failover
story: the master loses power as soon as client1 has the lock; its replica is promoted
knobs: {client: redisson, clients: 2, replicas: 1, replication_delay: 50ms, failover_after: 1s, max_cycles: 1, hold: const(20s), duration: 40s}
start: {client1: 10ms, client2: 3s}
schedule:
  - on: {event: acquired, client: client1}
    crash_node: {node: redis1}
`

// TestRedissonWaitsForItsReplica holds the redisson profile to Redisson's syncedEval
// with replicas: the trylock's answer counts only once WAIT found the replica synced (50ms
// later), so the promoted replica has the lock and client2 waits for client1's release;
// after the failover the master has no replica, so client1's next renewal finds none
// synced and fails, and client2's INFO replication then reads 0 and asks no WAIT.
func TestRedissonWaitsForItsReplica(t *testing.T) {
	sc, err := scenarios.ParseFile("redisson-failover.yaml", []byte(redissonFailover))
	require.NoError(t, err)
	rp, rec, err := ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	acquired := firstStep(t, rp, "client1", "acquired")
	assert.InDelta(t, float64(62*time.Millisecond), float64(acquired), float64(3*time.Millisecond), "after the replica applied the trylock")
	assert.True(t, rec.Safety.LockSafe() && rec.Safety.ResourceSafe(), "%v", rec.Violations)
	released := firstStep(t, rp, "client1", "released")
	assert.Greater(t, firstStep(t, rp, "client2", "acquired"), released, "client2 waits for client1's release")
	assert.Greater(t, firstStep(t, rp, "client1", "extend-failed"), 10*time.Second, "the renewal after the failover")
}
