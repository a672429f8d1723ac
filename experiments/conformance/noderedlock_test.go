package conformance_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
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
	// Server 0 is killed as lock() begins and restarted, empty, 3s later. ioredis queues
	// the lock script for it and reconnects after 50ms, 100ms, ... (refused until the
	// restart); lock(), which waits for every server, returns when the reconnect at 3.3s
	// runs it (EVALSHA, NOSCRIPT from the empty script cache, EVAL): five votes.
	{name: "kill-3s", killed: []int{0}, restartAfter: 3 * time.Second, extend: true},
	// Server 0 is killed for good. ioredis fails its queued lock script at the 21st close,
	// 10.5s into the outage (maxRetriesPerRequest 20); the other four are a quorum, and a
	// 20s TTL leaves the lock 9.3s of validity. unlock() waits for the dead server too,
	// whose command ioredis fails only at its 42nd close, 43s into the outage: the real
	// side stops waiting after 1s, the simulated one runs to the end.
	{name: "killed-for-good", killed: []int{0}, ttl: 20 * time.Second, hold: 10 * time.Millisecond, unlockWait: time.Second},
	// Server 0's host loses power just before lock() and boots again 2s later. Nothing
	// answers the lock script, and ioredis has no timeout: the kernel probes and
	// retransmits it (0.2, 0.4, 0.8, 1.6, 3.2s after it was sent; 204ms timeouts on
	// loopback make the last 3.26s), and the one at 3.2s reaches the new boot, which
	// resets the connection. ioredis reconnects 50ms later and sends the script again
	// (NOSCRIPT from the empty cache, then EVAL): five votes, after about 3.25s. Needs
	// root and iptables (powerOff).
	{name: "power-loss-2s", poweredOff: []int{0}, bootAfter: 2 * time.Second, extend: true},
}

// TestNodeRedlockConformance runs each script against node-redlock 4.2.0 over ioredis
// 4.31.0 (npm ci in experiments/conformance/node) on five real redis-servers, and through
// the simulator with client=node-redlock, and requires them to agree.
func TestNodeRedlockConformance(t *testing.T) {
	// Its scripts mostly wait (the killed-for-good one 10.5s for ioredis's flush), so it
	// runs beside TestNodeRedlock5Conformance rather than after it.
	t.Parallel()
	redistest.Path(t)
	nodeBin := needNode(t, "redlock", "ioredis")
	for _, fs := range nodeRedlockScripts {
		t.Run(fs.name, func(t *testing.T) {
			t.Parallel()
			agreeNodeRedlock(t, runNodeRedlock(t, nodeBin, "noderedlock.js", fs), runSimulated(t, "node-redlock", fs),
				fs, "lock()", "unlock()")
		})
	}
}

// agreeNodeRedlock requires what a node-redlock user sees of a script to agree between
// the real library and the simulated profile: acquired or not, after how many attempts
// and how long, the validity returned, the extension and the release (or that the
// release was still pending after the script's unlockWait on both sides), each server's
// commands in order and the keys left behind. acquire and release are the library's
// names for the two calls.
func agreeNodeRedlock(t *testing.T, real, simd outcome, fs faultScript, acquire, release string) {
	t.Helper()
	t.Logf("real:      %s", real)
	t.Logf("simulated: %s", simd)
	assert.Equal(t, real.acquired, simd.acquired, "acquired")
	assert.Equal(t, real.attempts, simd.attempts, "attempts %s made", acquire)
	near(t, "time "+acquire+" took", real.lockTook, simd.lockTook)
	if real.acquired && simd.acquired {
		near(t, "validity returned (negated)", -real.validity, -simd.validity)
		assert.Equal(t, real.unlockPending, simd.unlockPending, "%s still pending after %v", release, fs.unlockWait)
		if !real.unlockPending && !simd.unlockPending {
			assert.Equal(t, real.unlocked, simd.unlocked, "%s succeeded", release)
			near(t, "time "+release+" took", real.unlockTook, simd.unlockTook)
		}
		if fs.extend {
			assert.Equal(t, real.extended, simd.extended, "extend() succeeded")
			near(t, "time extend() took", real.extendTook, simd.extendTook)
		}
	}
	for i := range nodes {
		assert.Equal(t, real.commands[i], simd.commands[i], "commands server %d ran", i)
	}
	assert.Equal(t, real.leftover, simd.leftover, "servers whose lock key outlived the %s", release)
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
// noderedlock5.js, in node/) does the library's part (it stops, continues and kills the
// servers itself, so that its clock and theirs agree); this side starts the servers,
// reads their MONITOR streams, and restarts a killed server when the script asks (a line
// "restart i" on its stdout, answered with "restarted i" on its stdin), reattaching
// MONITOR to it.
func runNodeRedlock(t *testing.T, nodeBin, script string, fs faultScript) outcome {
	return runNodeRedlockStrike(t, nodeBin, script, fs, "lock")
}

// runNodeRedlockStrike is runNodeRedlock with the script's stops and kills struck just
// before the call strike names ("lock", "extend" or "unlock") rather than before lock().
func runNodeRedlockStrike(t *testing.T, nodeBin, script string, fs faultScript, strike string) outcome {
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
	if len(fs.poweredOff) > 0 {
		needFirewall(t)
	}
	in := map[string]any{"ttl_ms": ttl.Milliseconds(), "stopped": fs.stopped, "stop_for_ms": fs.stopFor.Milliseconds(),
		"held": fs.held, "held_for_ms": fs.heldFor.Milliseconds(), "held_for_each_ms": heldFor, "extend": fs.extend,
		"killed": fs.killed, "restart_after_ms": fs.restartAfter.Milliseconds(), "unlock_wait_ms": fs.unlockWait.Milliseconds(),
		"powered_off": fs.poweredOff, "boot_after_ms": fs.bootAfter.Milliseconds(), "strike_before": strike}
	for _, k := range []string{"stopped", "held", "killed", "powered_off"} {
		if v, _ := in[k].([]int); v == nil {
			in[k] = []int{}
		}
	}
	if fs.tries > 0 {
		in["retry_count"] = fs.tries - 1
	}
	if fs.retryDelay > 0 {
		in["retry_delay_ms"], in["retry_jitter_ms"] = fs.retryDelay.Milliseconds(), 0
	}
	servers := make([]server, nodes)
	procs := make([]*redistest.Server, nodes)
	// monitors are each server's MONITOR streams in order: a killed server's ends at the
	// kill, and a restarted one has a second.
	monitors := make([][]*monitor, nodes)
	for i := range servers {
		procs[i] = redistest.Start(t)
		servers[i] = server{Host: "127.0.0.1", Port: procs[i].Port(), Pid: procs[i].Pid()}
		monitors[i] = []*monitor{startMonitor(t, procs[i].Addr())}
	}
	in["servers"] = servers
	arg, err := json.Marshal(in)
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd := exec.Command(nodeBin, filepath.Join("node", script), string(arg))
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // after Wait, harmless; before, a failed test's script
	// requests counts the script's requests to come: a restart per killed server, a power
	// loss and maybe a boot per powered-off one.
	requests := len(fs.poweredOff)
	if fs.restartAfter > 0 {
		requests += len(fs.killed)
	}
	if fs.bootAfter > 0 {
		requests += len(fs.poweredOff)
	}
	if requests == 0 {
		require.NoError(t, stdin.Close())
	}
	var result []byte
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		verb, v, _ := strings.Cut(lines.Text(), " ")
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 || i >= nodes {
			result = append(result, lines.Bytes()...)
			continue
		}
		var answer string
		switch verb {
		case "restart":
			monitors[i] = append(monitors[i], restartServer(t, procs[i]))
			answer = "restarted"
		case "poweroff":
			powerOff(t, procs[i])
			answer = "poweredoff"
		case "boot":
			powerOn(t, procs[i])
			monitors[i] = append(monitors[i], restartServer(t, procs[i]))
			answer = "booted"
		default:
			result = append(result, lines.Bytes()...)
			continue
		}
		_, err = fmt.Fprintf(stdin, "%s %d\n", answer, i)
		require.NoError(t, err)
		if requests--; requests == 0 {
			require.NoError(t, stdin.Close())
		}
	}
	require.NoError(t, cmd.Wait(), stderr.String())
	var got struct {
		Acquired      bool    `json:"acquired"`
		Attempts      int     `json:"attempts"`
		LockTookMs    float64 `json:"lock_took_ms"`
		ValidityMs    float64 `json:"validity_ms"`
		Extended      bool    `json:"extended"`
		ExtendTookMs  float64 `json:"extend_took_ms"`
		Unlocked      bool    `json:"unlocked"`
		UnlockTookMs  float64 `json:"unlock_took_ms"`
		UnlockPending bool    `json:"unlock_pending"`
		Value         string  `json:"value"`
		WarmValue     string  `json:"warm_value"`
		Leftover      []bool  `json:"leftover"`
	}
	require.NoError(t, json.Unmarshal(result, &got), string(result))
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	o := outcome{acquired: got.Acquired, attempts: got.Attempts, lockTook: ms(got.LockTookMs), validity: ms(got.ValidityMs),
		extended: got.Extended, extendTook: ms(got.ExtendTookMs), unlocked: got.Unlocked,
		unlockTook: ms(got.UnlockTookMs), unlockPending: got.UnlockPending, leftover: got.Leftover,
		commands: make([][]string, nodes)}
	ran := make([][][]string, nodes)
	value := got.Value
	for i := range monitors {
		for _, m := range monitors[i] {
			ran[i] = append(ran[i], m.stop()...)
		}
		if value == "" && got.WarmValue != "" { // a failed acquire returns no lock to ask
			value = scriptValueIn(ran[i], got.WarmValue)
		}
	}
	for i := range ran {
		for _, argv := range ran[i] {
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

// restartServer starts a killed server again on its port, empty (the scripts keep
// nothing on disk), and returns its new MONITOR stream. The library reconnects on its
// own timer (ioredis's retryStrategy, hundreds of milliseconds apart by then), so the
// stream must be attached before that reconnect, or the commands the library had queued
// would run unseen: it checks, through CLIENT LIST's ids (the server numbers its
// connections in order), that no other client connected before MONITOR did.
func restartServer(t *testing.T, s *redistest.Server) *monitor {
	s.Restart()
	m := startMonitor(t, s.Addr())
	list, err := s.Client().ClientList(context.Background()).Result()
	require.NoError(t, err)
	monitorID, earlier := int64(-1), []string{}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		id, flags, cmdName := int64(-1), "", ""
		for _, f := range strings.Fields(line) {
			switch k, v, _ := strings.Cut(f, "="); k {
			case "id":
				id, _ = strconv.ParseInt(v, 10, 64)
			case "flags":
				flags = v
			case "cmd":
				cmdName = v
			}
		}
		switch {
		case strings.Contains(flags, "O"):
			monitorID = id
		case cmdName != "client|list":
			earlier = append(earlier, line)
		}
	}
	require.Positive(t, monitorID, "MONITOR is attached: %s", list)
	for _, line := range earlier {
		f := strings.Fields(line)
		id, _ := strconv.ParseInt(strings.TrimPrefix(f[0], "id="), 10, 64)
		require.Greater(t, id, monitorID, "the library reconnected before MONITOR was attached (a loaded machine?): %s", line)
	}
	return m
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

// RequireFirewallEnv names the environment variable that turns a missing iptables (or a
// test not run as root) from a skip into a failure for the power-loss scripts (CI sets it).
const RequireFirewallEnv = "REDLOCK_SIM_REQUIRE_IPTABLES"

// needFirewall skips a power-loss script, or fails it under REDLOCK_SIM_REQUIRE_IPTABLES,
// unless iptables and ss can cut a loopback port here: root, and the tools on PATH.
func needFirewall(t *testing.T) {
	t.Helper()
	var err error
	switch {
	case runtime.GOOS != "linux":
		err = fmt.Errorf("a power loss is played with Linux's iptables and ss, not on %s", runtime.GOOS)
	case os.Geteuid() != 0:
		err = errors.New("a power loss is played with iptables and ss -K, which need root")
	default:
		for _, tool := range []string{"iptables", "ss"} {
			if _, e := exec.LookPath(tool); e != nil && err == nil {
				err = fmt.Errorf("a power loss is played with %s: %w (apt-get install -y iptables iproute2)", tool, e)
			}
		}
	}
	if err != nil {
		if os.Getenv(RequireFirewallEnv) != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// firewallRules are the iptables rules (after -A or -D INPUT) that drop every packet to
// and from port on the loopback interface: the host behind it answers nothing.
func firewallRules(port int) [][]string {
	p := strconv.Itoa(port)
	return [][]string{
		{"-i", "lo", "-p", "tcp", "--dport", p, "-j", "DROP"},
		{"-i", "lo", "-p", "tcp", "--sport", p, "-j", "DROP"},
	}
}

// powerOff plays a power loss of s's host: from now on nothing comes from it or reaches
// it (the firewall drops both ways), its connections vanish from the kernel without a
// word to the other side (ss -K sends a reset, which the firewall drops), and the
// process dies. The client's kernel still believes in its connection, and retransmits
// what it sends until a host answers. The rules are removed when the test ends, if
// powerOn did not.
func powerOff(t *testing.T, s *redistest.Server) {
	t.Helper()
	port := s.Port()
	for _, r := range firewallRules(port) {
		out, err := exec.Command("iptables", append([]string{"-w", "-A", "INPUT"}, r...)...).CombinedOutput()
		require.NoError(t, err, "iptables: %s", out)
		t.Cleanup(func() { _ = exec.Command("iptables", append([]string{"-w", "-D", "INPUT"}, r...)...).Run() })
	}
	out, err := exec.Command("ss", "-K", "-tn", "( sport = :"+strconv.Itoa(port)+" )").CombinedOutput()
	require.NoError(t, err, "ss -K: %s", out)
	s.Kill()
}

// powerOn lets packets reach s's port again, as its host boots: its kernel knows no
// connection, so a segment of an old one is answered with a reset.
func powerOn(t *testing.T, s *redistest.Server) {
	t.Helper()
	for _, r := range firewallRules(s.Port()) {
		out, err := exec.Command("iptables", append([]string{"-w", "-D", "INPUT"}, r...)...).CombinedOutput()
		require.NoError(t, err, "iptables: %s", out)
	}
}
