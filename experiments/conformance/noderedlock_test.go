package conformance_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
)

// RequireNodeEnv names the environment variable that turns a missing Node.js or a missing
// `npm ci` in experiments/conformance/node from a skip into a failure (CI sets it).
const RequireNodeEnv = "REDLOCK_SIM_REQUIRE_NODE"

var nodeRedlockScripts = []faultScript{
	{name: "all-up", extend: true},
	{name: "2-of-5-stopped-for-2s", stopped: []int{0, 1}, stopFor: 2 * time.Second, extend: true},
	// The held keys expire midway between the 3rd and 4th attempts (200ms apart), so that a
	// loaded machine's slower rounds, tens of ms over three attempts, cannot move the
	// win to another attempt on the real side.
	{name: "3-of-5-held-500ms", held: []int{0, 1, 2}, heldFor: 500 * time.Millisecond, retryDelay: 200 * time.Millisecond},
}

// TestNodeRedlockConformance runs each script against node-redlock 4.2.0 over ioredis
// 4.31.0 (npm ci in experiments/conformance/node) on five real redis-servers, and through
// the simulator with client=node-redlock, and requires them to agree.
func TestNodeRedlockConformance(t *testing.T) {
	redistest.Path(t)
	nodeBin, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("node", "node_modules", "redlock", "package.json"))
	}
	if err != nil {
		msg := "node-redlock conformance needs Node.js and `npm ci --prefix experiments/conformance/node`: " + err.Error()
		if os.Getenv(RequireNodeEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, fs := range nodeRedlockScripts {
		t.Run(fs.name, func(t *testing.T) {
			t.Parallel()
			real := runNodeRedlock(t, nodeBin, fs)
			simd := runSimulated(t, "node-redlock", fs)
			t.Logf("real:      %s", real)
			t.Logf("simulated: %s", simd)
			assert.Equal(t, real.acquired, simd.acquired, "acquired")
			near(t, "time lock() took", real.lockTook, simd.lockTook)
			if real.acquired && simd.acquired {
				near(t, "validity returned (negated)", -real.validity, -simd.validity)
				assert.Equal(t, real.unlocked, simd.unlocked, "unlock() succeeded")
				near(t, "time unlock() took", real.unlockTook, simd.unlockTook)
				if fs.extend {
					assert.Equal(t, real.extended, simd.extended, "extend() succeeded")
					near(t, "time extend() took", real.extendTook, simd.extendTook)
				}
			}
			for i := range nodes {
				assert.Equal(t, real.commands[i], simd.commands[i], "commands server %d ran", i)
			}
			assert.Equal(t, real.leftover, simd.leftover, "servers whose lock key outlived the unlock")
		})
	}
}

// runNodeRedlock plays the script with the real library: noderedlock.js does the
// library's part (it stops and continues the servers itself, so that its clock and theirs
// agree); this side starts the servers and reads their MONITOR streams.
func runNodeRedlock(t *testing.T, nodeBin string, fs faultScript) outcome {
	type server struct {
		Host string `json:"host"`
		Port int    `json:"port"`
		Pid  int    `json:"pid"`
	}
	in := map[string]any{"ttl_ms": 10000, "stopped": fs.stopped, "stop_for_ms": fs.stopFor.Milliseconds(),
		"held": fs.held, "held_for_ms": fs.heldFor.Milliseconds(), "extend": fs.extend}
	if fs.stopped == nil {
		in["stopped"] = []int{}
	}
	if fs.held == nil {
		in["held"] = []int{}
	}
	if fs.retryDelay > 0 {
		in["retry_delay_ms"], in["retry_jitter_ms"] = fs.retryDelay.Milliseconds(), 0
	}
	servers := make([]server, nodes)
	monitors := make([]*monitor, nodes)
	for i := range servers {
		s := redistest.Start(t)
		servers[i] = server{Host: "127.0.0.1", Port: s.Port(), Pid: s.Pid()}
		monitors[i] = startMonitor(t, s.Addr())
	}
	in["servers"] = servers
	arg, err := json.Marshal(in)
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(nodeBin, filepath.Join("node", "noderedlock.js"), string(arg))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var got struct {
		Acquired     bool    `json:"acquired"`
		LockTookMs   float64 `json:"lock_took_ms"`
		ValidityMs   float64 `json:"validity_ms"`
		Extended     bool    `json:"extended"`
		ExtendTookMs float64 `json:"extend_took_ms"`
		Unlocked     bool    `json:"unlocked"`
		UnlockTookMs float64 `json:"unlock_took_ms"`
		Value        string  `json:"value"`
		Leftover     []bool  `json:"leftover"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	o := outcome{acquired: got.Acquired, lockTook: ms(got.LockTookMs), validity: ms(got.ValidityMs),
		extended: got.Extended, extendTook: ms(got.ExtendTookMs), unlocked: got.Unlocked,
		unlockTook: ms(got.UnlockTookMs), leftover: got.Leftover, commands: make([][]string, nodes)}
	for i, m := range monitors {
		for _, argv := range m.stop() {
			// The warm-up's commands carry another value: only the compared lock's count.
			if got.Value == "" || !strings.Contains(strings.Join(argv, "\x00"), got.Value) {
				continue
			}
			if c, ok := canon(argv, got.Value); ok {
				o.commands[i] = append(o.commands[i], c)
			}
		}
	}
	return o
}
