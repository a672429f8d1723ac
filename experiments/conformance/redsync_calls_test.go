package conformance_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/internal/redistest"
)

// callScript puts one of redsync's calls (Lock, Extend or Unlock, not only Lock) in front
// of a fault, on warm connections: the fault strikes servers just before the call begins,
// a stall (SIGSTOP) for stallFor, or a kill (SIGKILL, the host up and refusing connections,
// for good). Each script exercises one of go-redis's retry paths (redis.go
// processWithRetry; internal/pool/pool.go dialConn, tryDial): a read timeout retried on a
// new connection whose handshake the stalled server answers when it continues (the script
// runs twice), a handshake that times out and is not retried, dials retried 100ms apart
// against a dead server with no deadline (Extend, Unlock) and with redsync's context
// (Lock), which ends them.
type callScript struct {
	name     string
	before   string // "lock", "extend" or "unlock": the call the fault strikes
	servers  []int
	stallFor time.Duration // 0: the servers are killed
	// backoffs is how many of go-redis's randomised retry backoffs a call of the script
	// may wait (the real side draws them from the global math/rand, which a test cannot
	// seed): the real call may be shorter than the simulated one by their spread (20, 40
	// and 80ms for retries 1, 2 and 3), besides the machine's early margin.
	backoffs int
}

var redsyncCallScripts = []callScript{
	{name: "extend-meets-7s-stall", before: "extend", servers: []int{0}, stallFor: 7 * time.Second, backoffs: 1},
	{name: "unlock-meets-7s-stall", before: "unlock", servers: []int{0}, stallFor: 7 * time.Second, backoffs: 1},
	{name: "unlock-meets-13s-stall", before: "unlock", servers: []int{0}, stallFor: 13 * time.Second, backoffs: 1},
	// The master stays dead for the Extend and Unlock after Lock: each waits go-redis's
	// three retry backoffs.
	{name: "lock-meets-dead-master", before: "lock", servers: []int{0}, backoffs: 3},
	{name: "extend-meets-dead-master", before: "extend", servers: []int{0}, backoffs: 3},
	{name: "unlock-meets-dead-master", before: "unlock", servers: []int{0}, backoffs: 3},
}

// spread is the most a call's randomised backoffs can differ between the two sides.
func (cs callScript) spread() time.Duration {
	s := time.Duration(0)
	for a := 1; a <= cs.backoffs; a++ {
		s += 10 * time.Millisecond << a
	}
	return s
}

// TestRedsyncCallsMeetFaults runs each call script against redsync v4.17.0 over go-redis
// v9.23.0 (default options) on five real redis-servers, and through the simulator with
// client=redsync, and requires them to agree: acquired, the time each call took (the real
// side within [sim − early − the backoffs' spread, sim + late]), the validity, Extend's and
// Unlock's results, each server's lock commands in order (a script run twice shows twice)
// and the keys left.
func TestRedsyncCallsMeetFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("the scripts wait out stalls and read timeouts of up to 13s: not in -short")
	}
	redistest.Path(t)
	for _, cs := range redsyncCallScripts {
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			real := runRedsyncCall(t, cs)
			simd := runSimulatedCall(t, cs)
			t.Logf("real:      %s", real)
			t.Logf("simulated: %s", simd)
			within := func(what string, r, s time.Duration) {
				t.Helper()
				lo := s - early - cs.spread()
				assert.True(t, r >= lo && r <= s+late, "%s: real %v, simulated %v (allowed: %v to %v)", what, r, s, lo, s+late)
			}
			require.Equal(t, real.acquired, simd.acquired, "acquired")
			within("time Lock took", real.lockTook, simd.lockTook)
			within("validity returned (negated)", -real.validity, -simd.validity)
			assert.Equal(t, real.extended, simd.extended, "Extend reported success")
			within("time Extend took", real.extendTook, simd.extendTook)
			assert.Equal(t, real.unlocked, simd.unlocked, "Unlock reported success")
			within("time Unlock took", real.unlockTook, simd.unlockTook)
			for i := range nodes {
				assert.Equal(t, real.commands[i], simd.commands[i], "commands server %d ran", i)
			}
			assert.Equal(t, real.leftover, simd.leftover, "servers whose lock key outlived the unlock")
		})
	}
}

// runRedsyncCall plays the script against real servers and the real library: a warm
// cycle, then Lock, Extend and Unlock with the fault just before the one it strikes.
func runRedsyncCall(t *testing.T, cs callScript) outcome {
	servers, rs, monitors := warmRedsync(t)

	continued := make(chan struct{})
	close(continued) // nothing to wait for until a stall begins
	strike := func(call string) {
		if call != cs.before {
			return
		}
		if cs.stallFor == 0 {
			// Redis writes MONITOR's lines after the replies of the same loop: let the
			// last call's lines reach the monitors before the kill cuts them off.
			time.Sleep(100 * time.Millisecond)
		}
		for _, i := range cs.servers {
			if cs.stallFor == 0 {
				servers[i].Kill()
				continue
			}
			require.NoError(t, servers[i].Pause())
		}
		if cs.stallFor == 0 {
			time.Sleep(100 * time.Millisecond) // go-redis's pooled connections see the close
			return
		}
		done := make(chan struct{})
		continued = done
		time.AfterFunc(cs.stallFor, func() {
			for _, i := range cs.servers {
				_ = servers[i].Resume()
			}
			close(done)
		})
	}
	t.Cleanup(func() { <-continued })

	m := rs.NewMutex("lock")
	var o outcome
	strike("lock")
	start := time.Now()
	err := m.Lock()
	o.lockTook, o.acquired = time.Since(start), err == nil
	require.True(t, o.acquired, "every script's Lock wins: %v", err)
	o.validity = time.Until(m.Until())
	strike("extend")
	start = time.Now()
	o.extended, _ = m.Extend()
	o.extendTook = time.Since(start)
	strike("unlock")
	start = time.Now()
	o.unlocked, _ = m.Unlock()
	o.unlockTook = time.Since(start)
	<-continued
	time.Sleep(300 * time.Millisecond) // the continued servers run what waited in their sockets

	value := m.Value()
	o.commands = make([][]string, nodes)
	o.leftover = make([]bool, nodes)
	for i, s := range servers {
		for _, argv := range monitors[i].stop() {
			if c, ok := canon(argv, value); ok {
				o.commands[i] = append(o.commands[i], c)
			}
		}
		if cs.stallFor == 0 && slices.Contains(cs.servers, i) {
			continue // killed: nothing left to ask
		}
		got, err := s.Client().Get(context.Background(), "lock").Result()
		o.leftover[i] = err == nil && got == value
	}
	return o
}

// runSimulatedCall plays the script through the simulator with client=redsync: client1's
// first cycle (lock, extend, unlock; 10ms to 7.51s) warms the connections and loads the
// scripts; its second (from 8.5s) is compared, with the fault struck as the call begins (on client1's second
// acquire-start, acquired, whose extension begins 1ms later, or work-end, which the release
// follows at once).
func runSimulatedCall(t *testing.T, cs callScript) outcome {
	trigger := map[string]string{"lock": "acquire-start", "extend": "acquired", "unlock": "work-end"}[cs.before]
	require.NotEmpty(t, trigger, cs.before)
	var b strings.Builder
	fmt.Fprintf(&b, "name: conformance-%s\nstory: the conformance script %s\n", cs.name, cs.name)
	// The hold outlasts the longest Extend (7s) and ends before the extended keys expire
	// (8s), so the release finds what the real Unlock, right after Extend, finds.
	b.WriteString("knobs: {client: redsync, clients: 1, max_cycles: 2, hold: const(7500ms), think: const(1s), extend_every: 1ms, max_extensions: 1, duration: 60s}\n")
	b.WriteString("start: {client1: 10ms}\nschedule:\n")
	for _, i := range cs.servers {
		fmt.Fprintf(&b, "  - on: {event: %s, client: client1, nth: 2}\n", trigger)
		if cs.stallFor == 0 {
			fmt.Fprintf(&b, "    kill_node: {node: redis%d, restart_after: never}\n", i+1)
			continue
		}
		fmt.Fprintf(&b, "    pause_node: {node: redis%d, for: %v}\n", i+1, cs.stallFor)
	}
	sc, err := scenarios.ParseFile(cs.name+".yaml", []byte(b.String()))
	require.NoError(t, err, b.String())
	rp, _, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)

	var o outcome
	from := int64(8 * time.Second) // after the first cycle
	at := func(text string, after int64) (int64, int) {
		for i, s := range rp.Steps {
			if s.Actor == "client1" && s.AtNs >= after && strings.HasPrefix(s.Text, text) {
				return s.AtNs, i
			}
		}
		return -1, -1
	}
	acqStart, _ := at("acquire-start", from)
	require.Positive(t, acqStart)
	got, i := at("acquired", acqStart)
	require.Positive(t, got, "the simulated Lock wins")
	o.acquired, o.lockTook = true, time.Duration(got-acqStart)
	o.validity = time.Duration(rp.States[rp.Steps[i].State].Clients[0].ValidNs)
	extStart, _ := at("extend-start", got)
	require.Positive(t, extStart)
	if e, _ := at("extended", extStart); e >= 0 {
		o.extended, o.extendTook = true, time.Duration(e-extStart)
	} else if e, _ := at("extend-failed", extStart); e >= 0 {
		o.extendTook = time.Duration(e - extStart)
	}
	relStart, _ := at("release-start", extStart)
	rel, j := at("released", relStart)
	require.Positive(t, rel, "the release ends within the run")
	o.unlockTook = time.Duration(rel - relStart)
	o.unlocked = oksAtLeast(rp.Steps[j].Text, nodes/2+1)
	o.commands, o.leftover = simulatedCommands(t, rp, acqStart)
	return o
}

// simulatedCommands returns the lock commands each server ran from true time from on (the
// value, of the first SET sent from then, written $v) and which servers hold the lock's key
// at the end.
func simulatedCommands(t *testing.T, rp *report.Replay, from int64) ([][]string, []bool) {
	value := ""
	for _, m := range rp.Messages {
		if f := strings.Fields(m.Text); m.Kind == "request" && m.SentNs >= from && len(f) > 2 && f[0] == "SET" {
			value = f[2]
			break
		}
	}
	require.NotEmpty(t, value)
	return serverCommands(t, rp, value, "", from, 0)
}

// TestRedsyncContentionWithADeadMaster: two clients contend while one master's process is
// gone (killed before they start; its host refuses connections). Every attempt of the
// waiting client costs it redsync's context (20s × 0.02 = 400ms) on the dead master twice,
// in the attempt and in its cleanup, where go-redis with its retries off fails at once.
// In the long script the dead master's pool reaches go-redis's limit of failed dials
// (PoolSize, 20 here: two per attempt) after ten attempts and from then on fails its
// dials at once, so the later attempts are short again: both scripts get the same
// attempts, and the same time to acquire, on both sides.
func TestRedsyncContentionWithADeadMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("the long script waits 15s: not in -short")
	}
	redistest.Path(t)
	for _, tc := range []struct {
		name string
		// unlockAt is when client1 unlocks, from its start: its Lock takes 400ms.
		unlockAt time.Duration
		// within is how far apart the two sides' times to acquire may be: one attempt, in
		// the long script (after the pool's fail-fast each attempt waits six randomised
		// backoffs, which the real side draws from the global math/rand).
		within time.Duration
	}{
		// client2's attempts start at 0.1, 1.1, ... s; client1's unlock at 1.6s falls
		// midway in its second attempt's cleanup and retry delay: it wins its third.
		{name: "short", unlockAt: 1600 * time.Millisecond, within: 300 * time.Millisecond},
		// Attempts 1-10 take 1s each (0.1 to 10.1s); from the 11th, about 0.4s.
		{name: "long", unlockAt: 14500 * time.Millisecond, within: 450 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The keys outlive the long script's hold (20s), and each attempt's context is
			// still 400ms.
			const (
				lag           = 100 * time.Millisecond
				retryDelay    = 200 * time.Millisecond
				expiry        = 20 * time.Second
				timeoutFactor = 0.02
			)
			servers := make([]*redistest.Server, nodes)
			for i := range servers {
				servers[i] = redistest.Start(t)
			}
			servers[0].Kill()
			mutex := func() *redsync.Mutex {
				pools := make([]redis.Pool, nodes)
				for i, s := range servers {
					c := goredis.NewClient(&goredis.Options{Addr: s.Addr()})
					t.Cleanup(func() { c.Close() })
					pools[i] = redsyncgoredis.NewPool(c)
				}
				return redsync.New(pools...).NewMutex("lock", redsync.WithRetryDelay(retryDelay),
					redsync.WithExpiry(expiry), redsync.WithTimeoutFactor(timeoutFactor))
			}
			m1, m2 := mutex(), mutex()
			mon := startMonitor(t, servers[1].Addr())
			type result struct {
				took time.Duration
				err  error
			}
			second := make(chan result, 1)
			start := time.Now()
			require.NoError(t, m1.Lock())
			go func() {
				time.Sleep(lag - time.Since(start))
				s := time.Now()
				err := m2.Lock()
				second <- result{time.Since(s), err}
			}()
			time.Sleep(tc.unlockAt - time.Since(start))
			_, err := m1.Unlock()
			require.NoError(t, err)
			r := <-second
			require.NoError(t, r.err)
			realAttempts := 0
			for _, argv := range mon.stop() {
				if len(argv) >= 3 && strings.EqualFold(argv[0], "set") && argv[2] == m2.Value() {
					realAttempts++
				}
			}

			// The simulated side: redis1 killed at 5ms, client1 at 10ms, client2 100ms later;
			// client1 holds from its acquisition (400ms) to unlockAt.
			yaml := fmt.Sprintf(`name: conformance-contention-dead-master
story: redis1's process is gone; client1 holds until %v; client2 starts %v later and retries every %v
knobs: {client: redsync, ttl: 20s, context_factor: 0.02, clients: 2, max_cycles: 1, hold: const(%v), retry_delay: %v, retry_jitter: 0s, duration: 40s}
start: {client1: 10ms, client2: %v}
schedule:
  - at: 5ms
    kill_node: {node: redis1, restart_after: never}
`, tc.unlockAt, lag, retryDelay, tc.unlockAt-400*time.Millisecond, retryDelay, 10*time.Millisecond+lag)
			sc, err := scenarios.ParseFile("contention-dead-master.yaml", []byte(yaml))
			require.NoError(t, err)
			rp, _, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
			require.NoError(t, err)
			var began, got int64 = -1, -1
			for _, s := range rp.Steps {
				switch {
				case s.Actor != "client2":
				case strings.HasPrefix(s.Text, "acquire-start") && began < 0:
					began = s.AtNs
				case strings.HasPrefix(s.Text, "acquired") && got < 0:
					got = s.AtNs
				}
			}
			simAttempts := 0
			for _, m := range rp.Messages {
				if m.Kind == "request" && m.From == "client2" && m.To == "redis2" && strings.HasPrefix(m.Text, "SET ") {
					simAttempts++
				}
			}
			require.True(t, began >= 0 && got > began, "client2 acquires in the simulation")
			simTook := time.Duration(got - began)
			t.Logf("client2: real %d attempts in %v; simulated %d attempts in %v", realAttempts, r.took, simAttempts, simTook)
			assert.InDelta(t, simAttempts, realAttempts, 1, "client2's attempts")
			assert.InDelta(t, simTook.Seconds(), r.took.Seconds(), tc.within.Seconds(), "time client2's Lock took")
		})
	}
}
