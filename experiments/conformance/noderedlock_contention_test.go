package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/internal/redistest"
)

// nodeContention is a script where two node-redlock clients contend for one lock while
// server 0's process is gone for good (killed before either starts; its host refuses
// connections): client1 locks at once and holds for hold from its lock's return; client2
// starts lag later and retries every retryDelay (jitter 0). client2 is waited for cut from
// its start; after that it is pending.
type nodeContention struct {
	name       string // the simulated profile's
	version    int    // contention.js's: 4 or 5
	pkgs       []string
	ttl        time.Duration
	retryDelay time.Duration
	lag, hold  time.Duration
	cut        time.Duration
}

var nodeContentions = []nodeContention{
	// 4.2.0: every attempt waits for every server (redlock.js _lock's loop), and a lost
	// one unlocks everywhere before it retries, which waits for every server too. Server
	// 0's lock scripts wait in each client's ioredis offline queue until its 21st close,
	// 10.5s into the outage: client1 then wins with four votes (a 20s lock, 9.3s left);
	// client2's first attempt loses at the same flush (client1 held servers 1-4 from the
	// start), and its unlock of that attempt waits for the next flush, at the 42nd close,
	// 43s in. At 12s client2 is still in its first attempt's cleanup, on both sides:
	// one lock script and one unlock script on each live server.
	{name: "node-redlock", version: 4, pkgs: []string{"redlock", "ioredis"}, ttl: 20 * time.Second,
		retryDelay: 200 * time.Millisecond, lag: 100 * time.Millisecond, hold: 500 * time.Millisecond, cut: 12 * time.Second},
	// 5.0.0-beta.2: a round ends at a quorum for or against (_attemptOperation), so the
	// dead server costs nothing while four answer: client1 wins at once; client2's rounds,
	// at 0, 200, ... 800ms from its start, meet a quorum against at once (no release
	// between them); client1 releases 1s after its lock, at once too, and client2's 6th
	// round (1s) wins with servers 1-4. Its commands to server 0 wait in its offline queue.
	// Both edges are 100ms from client1's release.
	{name: "node-redlock-5", version: 5, pkgs: []string{"redlock5", "ioredis5"}, ttl: 10 * time.Second,
		retryDelay: 200 * time.Millisecond, lag: 100 * time.Millisecond, hold: time.Second, cut: 1500 * time.Millisecond},
}

// contentionOutcome is what the two clients saw, and client2's lock commands on each live
// server, in order.
type contentionOutcome struct {
	c1Acquired            bool
	c1Took                time.Duration
	c2Acquired, c2Pending bool
	c2Took                time.Duration
	c2Commands            [][]string
}

func (o contentionOutcome) String() string {
	return fmt.Sprintf("client1 acquired=%v in %v; client2 acquired=%v pending=%v after %v; client2's commands=%q",
		o.c1Acquired, o.c1Took.Round(time.Millisecond), o.c2Acquired, o.c2Pending, o.c2Took.Round(time.Millisecond), o.c2Commands)
}

// TestNodeRedlockContentionWithADeadMaster runs each contention script against the real
// node-redlock (4.2.0 and 5.0.0-beta.2) and through the simulator, and requires them to
// agree: client1 acquired, and in how long; client2 acquired or pending at the cut, and in
// how long ([sim − 50ms, sim + 1s]); client2's lock commands on each live server in order
// (which counts its attempts and their cleanups).
func TestNodeRedlockContentionWithADeadMaster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the 4.2.0 script waits out ioredis's 10.5s flush: not in -short")
	}
	redistest.Path(t)
	for _, nc := range nodeContentions {
		t.Run(nc.name, func(t *testing.T) {
			t.Parallel()
			nodeBin := needNode(t, nc.pkgs...)
			real := runNodeContention(t, nodeBin, nc)
			simd := simulateNodeContention(t, nc)
			t.Logf("real:      %s", real)
			t.Logf("simulated: %s", simd)
			assert.Equal(t, real.c1Acquired, simd.c1Acquired, "client1 acquired")
			near(t, "time client1's lock took", real.c1Took, simd.c1Took)
			assert.Equal(t, real.c2Acquired, simd.c2Acquired, "client2 acquired")
			assert.Equal(t, real.c2Pending, simd.c2Pending, "client2 pending after %v", nc.cut)
			if !real.c2Pending && !simd.c2Pending {
				near(t, "time client2's lock took", real.c2Took, simd.c2Took)
			}
			for i := 1; i < nodes; i++ {
				assert.Equal(t, real.c2Commands[i], simd.c2Commands[i], "client2's commands server %d ran", i)
			}
		})
	}
}

// runNodeContention plays the script with the real library: five servers, MONITOR on
// the four that live, contention.js for the clients.
func runNodeContention(t *testing.T, nodeBin string, nc nodeContention) contentionOutcome {
	type server struct {
		Host string `json:"host"`
		Port int    `json:"port"`
		Pid  int    `json:"pid"`
	}
	servers := make([]server, nodes)
	monitors := make([]*monitor, nodes)
	for i := range servers {
		p := redistest.Start(t)
		servers[i] = server{Host: "127.0.0.1", Port: p.Port(), Pid: p.Pid()}
		if i > 0 {
			monitors[i] = startMonitor(t, p.Addr())
		}
	}
	in := map[string]any{"version": nc.version, "servers": servers, "killed": []int{0}, "ttl_ms": nc.ttl.Milliseconds(),
		"retry_delay_ms": nc.retryDelay.Milliseconds(), "lag_ms": nc.lag.Milliseconds(), "hold_ms": nc.hold.Milliseconds(),
		"cut_ms": nc.cut.Milliseconds()}
	arg, err := json.Marshal(in)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(nodeBin, filepath.Join("node", "contention.js"), string(arg))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	time.Sleep(100 * time.Millisecond) // the last commands' MONITOR lines reach the monitors
	var got struct {
		C1 struct {
			Acquired bool    `json:"acquired"`
			TookMs   float64 `json:"took_ms"`
			Value    string  `json:"value"`
		} `json:"c1"`
		C2 struct {
			Acquired bool    `json:"acquired"`
			Pending  bool    `json:"pending"`
			TookMs   float64 `json:"took_ms"`
			Value    string  `json:"value"`
		} `json:"c2"`
	}
	line := bufio.NewScanner(&stdout)
	require.True(t, line.Scan(), "contention.js printed nothing: %s", stderr.String())
	require.NoError(t, json.Unmarshal(line.Bytes(), &got), line.Text())
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	o := contentionOutcome{c1Acquired: got.C1.Acquired, c1Took: ms(got.C1.TookMs), c2Acquired: got.C2.Acquired,
		c2Pending: got.C2.Pending, c2Took: ms(got.C2.TookMs), c2Commands: make([][]string, nodes)}
	for i := 1; i < nodes; i++ {
		lines := monitors[i].stop()
		value := got.C2.Value
		if value == "" { // a pending lock returned no value: client2's is the one that is not client1's
			value = scriptValueIn(lines, got.C1.Value)
		}
		require.NotEmpty(t, value, "client2's value on server %d", i)
		for _, argv := range lines {
			if !strings.Contains(strings.Join(argv, "\x00"), value) {
				continue
			}
			if c, ok := canon(argv, value); ok {
				o.c2Commands[i] = append(o.c2Commands[i], c)
			}
		}
	}
	return o
}

// simulateNodeContention plays the script through the simulator: redis1 killed for good
// at 5ms, client1 from 10ms, client2 lag later, one cycle each.
func simulateNodeContention(t *testing.T, nc nodeContention) contentionOutcome {
	start1 := 10 * time.Millisecond
	yaml := fmt.Sprintf(`name: conformance-contention-%s
story: redis1's process is gone; client1 holds for %v; client2 starts %v later and retries every %v
knobs: {client: %s, ttl: %v, clients: 2, max_cycles: 1, hold: const(%v), retry_delay: %v, retry_jitter: 0s, duration: %v}
start: {client1: %v, client2: %v}
schedule:
  - at: 5ms
    kill_node: {node: redis1, restart_after: never}
`, nc.name, nc.hold, nc.lag, nc.retryDelay, nc.name, nc.ttl, nc.hold, nc.retryDelay, nc.cut+2*time.Second, start1, start1+nc.lag)
	sc, err := scenarios.ParseFile("contention-"+nc.name+".yaml", []byte(yaml))
	require.NoError(t, err, yaml)
	rp, _, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	first := func(actor, text string) int64 {
		for _, s := range rp.Steps {
			if s.Actor == actor && strings.HasPrefix(s.Text, text) {
				return s.AtNs
			}
		}
		return -1
	}
	var o contentionOutcome
	if got := first("client1", "acquired"); got >= 0 {
		o.c1Acquired, o.c1Took = true, time.Duration(got-first("client1", "acquire-start"))
	}
	began := first("client2", "acquire-start")
	require.Positive(t, began, "client2 starts")
	cut := began + int64(nc.cut)
	end := first("client2", "acquired")
	o.c2Acquired = end >= 0 && end < cut
	if !o.c2Acquired {
		end = first("client2", "acquire-failed")
	}
	if o.c2Pending = end < 0 || end >= cut; !o.c2Pending {
		o.c2Took = time.Duration(end - began)
	}
	o.c2Commands, _ = simulatedScriptCommands(t, rp, "client2", began, cut)
	return o
}
