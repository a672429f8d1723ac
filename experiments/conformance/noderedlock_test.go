package conformance_test

import (
	"bytes"
	"cmp"
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
	nodeBin := needNode(t, "redlock", "ioredis")
	for _, fs := range nodeRedlockScripts {
		t.Run(fs.name, func(t *testing.T) {
			t.Parallel()
			real := runNodeRedlock(t, nodeBin, "noderedlock.js", fs)
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

// needNode returns the path of the node binary, once it checked that `npm ci` installed
// each of pkgs in experiments/conformance/node; without them it skips the test, or fails
// it under REDLOCK_SIM_REQUIRE_NODE.
func needNode(t *testing.T, pkgs ...string) string {
	t.Helper()
	nodeBin, err := exec.LookPath("node")
	for _, p := range pkgs {
		if err == nil {
			_, err = os.Stat(filepath.Join("node", "node_modules", p, "package.json"))
		}
	}
	if err != nil {
		msg := "node-redlock conformance needs Node.js and `npm ci --prefix experiments/conformance/node`: " + err.Error()
		if os.Getenv(RequireNodeEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return nodeBin
}

// runNodeRedlock plays the script with the real library: script (noderedlock.js or
// noderedlock5.js, in node/) does the library's part (it stops and continues the servers
// itself, so that its clock and theirs agree); this side starts the servers and reads
// their MONITOR streams.
func runNodeRedlock(t *testing.T, nodeBin, script string, fs faultScript) outcome {
	type server struct {
		Host string `json:"host"`
		Port int    `json:"port"`
		Pid  int    `json:"pid"`
	}
	ttl := cmp.Or(fs.ttl, 10*time.Second)
	heldFor := make([]int64, len(fs.held))
	for k := range fs.held {
		heldFor[k] = fs.heldTTL(k).Milliseconds()
	}
	in := map[string]any{"ttl_ms": ttl.Milliseconds(), "stopped": fs.stopped, "stop_for_ms": fs.stopFor.Milliseconds(),
		"held": fs.held, "held_for_ms": fs.heldFor.Milliseconds(), "held_for_each_ms": heldFor, "extend": fs.extend}
	if fs.stopped == nil {
		in["stopped"] = []int{}
	}
	if fs.held == nil {
		in["held"] = []int{}
	}
	if fs.tries > 0 {
		in["retry_count"] = fs.tries - 1
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
	cmd := exec.Command(nodeBin, filepath.Join("node", script), string(arg))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var got struct {
		Acquired     bool    `json:"acquired"`
		Attempts     int     `json:"attempts"`
		LockTookMs   float64 `json:"lock_took_ms"`
		ValidityMs   float64 `json:"validity_ms"`
		Extended     bool    `json:"extended"`
		ExtendTookMs float64 `json:"extend_took_ms"`
		Unlocked     bool    `json:"unlocked"`
		UnlockTookMs float64 `json:"unlock_took_ms"`
		Value        string  `json:"value"`
		WarmValue    string  `json:"warm_value"`
		Leftover     []bool  `json:"leftover"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	o := outcome{acquired: got.Acquired, attempts: got.Attempts, lockTook: ms(got.LockTookMs), validity: ms(got.ValidityMs),
		extended: got.Extended, extendTook: ms(got.ExtendTookMs), unlocked: got.Unlocked,
		unlockTook: ms(got.UnlockTookMs), leftover: got.Leftover, commands: make([][]string, nodes)}
	lines := make([][][]string, nodes)
	value := got.Value
	for i, m := range monitors {
		lines[i] = m.stop()
		if value == "" && got.WarmValue != "" { // a failed acquire returns no lock to ask
			value = scriptValueIn(lines[i], got.WarmValue)
		}
	}
	for i := range monitors {
		for _, argv := range lines[i] {
			// The warm-up's commands carry another value: only the compared lock's count.
			if value == "" || !strings.Contains(strings.Join(argv, "\x00"), value) {
				continue
			}
			if c, ok := canon(argv, value); ok {
				o.commands[i] = append(o.commands[i], c)
			}
		}
	}
	return o
}

// scriptValueIn returns the lock value of the first one-key EVAL or EVALSHA among lines
// (a node-redlock command: script, 1, key, value, ...) whose value is not skip, or "".
func scriptValueIn(lines [][]string, skip string) string {
	for _, argv := range lines {
		if len(argv) >= 5 && (strings.EqualFold(argv[0], "evalsha") || strings.EqualFold(argv[0], "eval")) &&
			argv[2] == "1" && argv[4] != skip {
			return argv[4]
		}
	}
	return ""
}
