package conformance_test

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// faultScript is one situation both sides are put in. Every script starts with warm
// connections (a lock, extend and unlock cycle on all nodes first, as a long-running
// service has them), then stops some servers with SIGSTOP (or kills them with SIGKILL:
// the node-redlock scripts), locks, optionally extends, unlocks if it got the lock, and
// continues the stopped servers.
type faultScript struct {
	name     string
	stopped  []int // the servers stopped before Lock and continued after Unlock
	tries    int   // 0: the library's default
	failFast bool
	extend   bool
	// retryDelay fixes the delay between attempts on both sides (redsync's
	// WithRetryDelay): its default draws from math/rand, which a test cannot seed.
	retryDelay time.Duration
	// held are servers where another client holds the lock's key for heldFor, taken just
	// before Lock.
	held    []int
	heldFor time.Duration
	// heldForEach, when set, gives each server in held its own hold (heldForEach[k] for
	// held[k]) in place of heldFor: another client's key that outlives the others' shows
	// what a library does with a server it can never win.
	heldForEach []time.Duration
	// stopFor, when set, continues the stopped servers that long after Lock began (for a
	// library that waits for every server however long it takes), rather than after Unlock.
	stopFor time.Duration
	ttl     time.Duration // 0: the profile's
	// hold is how long the simulated client works between Lock and Unlock (0: 6s, which
	// puts a stop at 6.5s between its two cycles). The real side unlocks at once, so a
	// script whose TTL is shorter than 6s needs a shorter hold for its Unlock to find
	// the keys the real one finds.
	hold time.Duration
	// killed are servers killed with SIGKILL just before Lock begins, once the library's
	// connections to them have seen the close: their hosts stay up and refuse
	// connections, as after a crash of the process alone. restartAfter, when set, starts
	// them again that long after the kill, on the same port with an empty dataset (the
	// scripts have no persistence); 0 leaves them dead to the end. (runNodeRedlock plays
	// them; runRedsync has no script that kills.)
	killed       []int
	restartAfter time.Duration
	// poweredOff are servers whose host loses power just before Lock begins: every packet
	// to or from them is dropped, their sockets vanish without a word and the process is
	// killed (powerOff). bootAfter, when set, boots the host again that long after: the
	// packets flow, and the server starts on its port, empty, knowing none of the old
	// connections; 0 leaves them off to the end.
	poweredOff []int
	bootAfter  time.Duration
	// unlockWait, when set, is how long the real side waits for Unlock before it reports
	// the unlock still pending: node-redlock 4.2.0's unlock waits for every server, and
	// ioredis fails a command queued for a dead one only at its 42nd close, about 43s
	// into the outage, past what a test can wait.
	unlockWait time.Duration
}

// heldTTL is how long another client holds the lock's key on server held[k].
func (fs faultScript) heldTTL(k int) time.Duration {
	if fs.heldForEach != nil {
		return fs.heldForEach[k]
	}
	return fs.heldFor
}

// outcome is what a user of the library sees, plus what the servers ran.
type outcome struct {
	acquired                         bool
	lockTook, extendTook, unlockTook time.Duration
	validity                         time.Duration
	extended, unlocked               bool
	// unlockPending says Unlock had not returned after the script's unlockWait.
	unlockPending bool
	// attempts is how many attempts the acquire made (filled by the simulated side and by
	// the node-redlock scripts, which report it).
	attempts int
	// commands are the lock commands each server ran, in order, in a canonical form (see
	// canon); leftover says whether the lock's key is still there just after the stopped
	// servers continued.
	commands [][]string
	leftover []bool
}

const (
	nodes = 5
	// early and late bound how much shorter and longer a duration measured on the real
	// side may be than the simulated one. A loaded machine only ever makes the real side
	// slower (goroutines, sockets, timers firing late), so late is generous and early is
	// not: the figures that matter differ by seconds (a driver's 5s timeout against
	// redsync's 400ms context), far beyond either.
	early = 50 * time.Millisecond
	late  = time.Second
)

// near asserts that the real duration is within [sim − early, sim + late].
func near(t *testing.T, what string, real, simulated time.Duration) {
	t.Helper()
	assert.True(t, real >= simulated-early && real <= simulated+late,
		"%s: real %v, simulated %v (allowed: %v shorter to %v longer)", what, real, simulated, early, late)
}

var redsyncScripts = []faultScript{
	{name: "all-up", extend: true},
	{name: "2-of-5-stopped", stopped: []int{0, 1}, extend: true},
	{name: "3-of-5-stopped", stopped: []int{0, 1, 2}, tries: 2, retryDelay: 150 * time.Millisecond},
	{name: "3-of-5-stopped-fail-fast", stopped: []int{0, 1, 2}, tries: 2, failFast: true, retryDelay: 150 * time.Millisecond},
	// The held keys expire midway between the 3rd and 4th attempts (200ms apart), so that a
	// loaded machine's slower rounds, tens of ms over three attempts, cannot move the
	// win to another attempt on the real side.
	{name: "3-of-5-held-500ms", held: []int{0, 1, 2}, heldFor: 500 * time.Millisecond, retryDelay: 200 * time.Millisecond},
	{name: "2-of-5-held-650ms-fail-fast", held: []int{0, 1}, heldFor: 650 * time.Millisecond, failFast: true},
}

// TestRedsyncConformance runs each fault script against redsync v4.17.0 with go-redis
// v9.23.0 (their default options) on five real redis-servers, and through the simulator
// with client=redsync, and requires them to agree.
func TestRedsyncConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the stopped-server scripts wait on go-redis's 5s timeouts for a minute: not in -short")
	}
	redistest.Path(t)
	for _, fs := range redsyncScripts {
		t.Run(fs.name, func(t *testing.T) {
			t.Parallel()
			real := runRedsync(t, fs)
			simd := runSimulated(t, "redsync", fs)
			t.Logf("real:      %s", real)
			t.Logf("simulated: %s", simd)
			assert.Equal(t, real.acquired, simd.acquired, "acquired")
			near(t, "time Lock took", real.lockTook, simd.lockTook)
			if real.acquired && simd.acquired {
				// What the lock spent acquiring, validity no longer has: late on the
				// real side is validity short.
				near(t, "validity returned (negated)", -real.validity, -simd.validity)
				assert.Equal(t, real.unlocked, simd.unlocked, "Unlock reported success")
				near(t, "time Unlock took", real.unlockTook, simd.unlockTook)
				if fs.extend {
					assert.Equal(t, real.extended, simd.extended, "Extend reported success")
					near(t, "time Extend took", real.extendTook, simd.extendTook)
				}
			}
			for i := range nodes {
				realCmds, simdCmds := real.commands[i], simd.commands[i]
				if fs.failFast && slices.Contains(fs.held, i) {
					// With failFast, Lock returns at the quorum and cancels its context
					// (lockContext's defer cancel()); a goroutine of actOnPoolsAsync that had
					// not yet written its SET to a held server then never sends it, as a
					// loaded machine shows now and then. Which of the held servers' SETs went
					// out is the scheduler's, not the library's: leave them out.
					realCmds, simdCmds = withoutSET(realCmds), withoutSET(simdCmds)
				}
				assert.Equal(t, realCmds, simdCmds, "commands server %d ran", i)
			}
			assert.Equal(t, real.leftover, simd.leftover, "servers whose lock key outlived the unlock")
		})
	}
}

// withoutSET returns cmds without their SET commands.
func withoutSET(cmds []string) []string {
	var out []string
	for _, c := range cmds {
		if !strings.HasPrefix(c, "SET ") {
			out = append(out, c)
		}
	}
	return out
}

func (o outcome) String() string {
	return fmt.Sprintf("acquired=%v attempts=%d lock=%v validity=%v extend=%v/%v unlock=%v/%v pending=%v leftover=%v commands=%q",
		o.acquired, o.attempts, o.lockTook.Round(time.Millisecond), o.validity.Round(time.Millisecond),
		o.extended, o.extendTook.Round(time.Millisecond), o.unlocked, o.unlockTook.Round(time.Millisecond),
		o.unlockPending, o.leftover, o.commands)
}

// warmRedsync starts the five servers, a go-redis client for each (its default options)
// and redsync over them, runs a lock, extend and unlock cycle (warm connections, scripts
// loaded, as a long-running service has them), and starts a MONITOR on each server.
func warmRedsync(t *testing.T) ([]*redistest.Server, *redsync.Redsync, []*monitor) {
	servers := make([]*redistest.Server, nodes)
	pools := make([]redis.Pool, nodes)
	for i := range servers {
		servers[i] = redistest.Start(t)
		c := goredis.NewClient(&goredis.Options{Addr: servers[i].Addr()})
		t.Cleanup(func() { c.Close() })
		pools[i] = redsyncgoredis.NewPool(c)
	}
	rs := redsync.New(pools...)
	warm := rs.NewMutex("lock")
	require.NoError(t, warm.Lock())
	_, err := warm.Extend()
	require.NoError(t, err)
	_, err = warm.Unlock()
	require.NoError(t, err)
	monitors := make([]*monitor, nodes)
	for i, s := range servers {
		monitors[i] = startMonitor(t, s.Addr())
	}
	return servers, rs, monitors
}

// runRedsync plays the script against real servers and the real library.
func runRedsync(t *testing.T, fs faultScript) outcome {
	servers, rs, monitors := warmRedsync(t)
	var err error
	var opts []redsync.Option
	if fs.tries > 0 {
		opts = append(opts, redsync.WithTries(fs.tries))
	}
	if fs.failFast {
		opts = append(opts, redsync.WithFailFast(true))
	}
	if fs.retryDelay > 0 {
		opts = append(opts, redsync.WithRetryDelay(fs.retryDelay))
	}
	for _, i := range fs.stopped {
		require.NoError(t, servers[i].Pause())
	}
	continued := false
	defer func() {
		if !continued {
			for _, i := range fs.stopped {
				_ = servers[i].Resume()
			}
		}
	}()
	m := rs.NewMutex("lock", opts...)
	for k, i := range fs.held {
		ok, err := servers[i].Client().SetNX(context.Background(), "lock", scenarios.OutsideValue, fs.heldTTL(k)).Result()
		require.NoError(t, err)
		require.True(t, ok)
	}
	var o outcome
	start := time.Now()
	err = m.Lock()
	o.lockTook = time.Since(start)
	o.acquired = err == nil
	if o.acquired {
		o.validity = time.Until(m.Until())
		if fs.extend {
			start = time.Now()
			o.extended, _ = m.Extend()
			o.extendTook = time.Since(start)
		}
		start = time.Now()
		o.unlocked, _ = m.Unlock()
		o.unlockTook = time.Since(start)
	}
	for _, i := range fs.stopped {
		require.NoError(t, servers[i].Resume())
	}
	continued = true
	time.Sleep(300 * time.Millisecond) // the continued servers run what waited in their sockets
	value := m.Value()
	if value == "" {
		value = monitors[0].valueOrEmpty()
	}
	o.commands = make([][]string, nodes)
	o.leftover = make([]bool, nodes)
	for i, s := range servers {
		lines := monitors[i].stop()
		if value == "" {
			value = valueIn(lines)
		}
		for _, argv := range lines {
			if c, ok := canon(argv, value); ok {
				o.commands[i] = append(o.commands[i], c)
			}
		}
		got, err := s.Client().Get(context.Background(), "lock").Result()
		o.leftover[i] = err == nil && got == value
	}
	return o
}

// runSimulated plays the script through the simulator with the client profile. Client1's
// first cycle (lock, extend, unlock; all servers up) warms its connections; the servers
// stop at 6.5s (or, with stopFor, as its second cycle begins; killed servers are killed
// as it begins: kill_node, whose host refuses connections while the server is down); its
// second cycle, at 7.01s, is the one compared. (A script's shorter hold moves both
// earlier: the stop to hold + 0.5s, the second cycle to hold + 1.01s.)
func runSimulated(t *testing.T, client string, fs faultScript) outcome {
	hold := cmp.Or(fs.hold, 6*time.Second)
	stopAt, resumeAt := hold+500*time.Millisecond, 40*time.Second
	var b strings.Builder
	fmt.Fprintf(&b, "name: conformance-%s\nstory: the conformance script %s\n", fs.name, fs.name)
	fmt.Fprintf(&b, "knobs:\n  client: %s\n  clients: 1\n  max_cycles: 2\n  hold: const(%v)\n  think: const(1s)\n  max_extensions: 1\n", client, hold)
	if fs.ttl > 0 {
		fmt.Fprintf(&b, "  ttl: %v\n", fs.ttl)
	}
	end := resumeAt + 500*time.Millisecond
	if fs.unlockWait > 0 {
		end = time.Minute // long enough for an unlock that waits out ioredis's second flush
	}
	fmt.Fprintf(&b, "  duration: %v\n", end)
	if fs.extend {
		b.WriteString("  extend_every: 1ms\n")
	}
	if fs.tries > 0 {
		fmt.Fprintf(&b, "  tries: %d\n", fs.tries)
	}
	if fs.failFast {
		b.WriteString("  fail_fast: true\n")
	}
	if fs.retryDelay > 0 {
		fmt.Fprintf(&b, "  retry_delay: %v\n  retry_jitter: 0s\n", fs.retryDelay)
	}
	b.WriteString("start: {client1: 10ms}\n")
	if len(fs.stopped)+len(fs.held)+len(fs.killed)+len(fs.poweredOff) > 0 {
		b.WriteString("schedule:\n")
	}
	boot := "never"
	if fs.bootAfter > 0 {
		boot = fs.bootAfter.String()
	}
	for _, i := range fs.poweredOff {
		fmt.Fprintf(&b, "  - on: {event: acquire-start, client: client1, nth: 2}\n    crash_node: {node: redis%d, restart_after: %s}\n", i+1, boot)
	}
	restart := "never"
	if fs.restartAfter > 0 {
		restart = fs.restartAfter.String()
	}
	for _, i := range fs.killed {
		fmt.Fprintf(&b, "  - on: {event: acquire-start, client: client1, nth: 2}\n    kill_node: {node: redis%d, restart_after: %s}\n", i+1, restart)
	}
	for _, i := range fs.stopped {
		if fs.stopFor > 0 {
			fmt.Fprintf(&b, "  - on: {event: acquire-start, client: client1, nth: 2}\n    pause_node: {node: redis%d, for: %v}\n", i+1, fs.stopFor)
			continue
		}
		fmt.Fprintf(&b, "  - at: %v\n    pause_node: {node: redis%d, for: %v}\n", stopAt, i+1, resumeAt-stopAt)
	}
	for k, i := range fs.held {
		fmt.Fprintf(&b, "  - on: {event: acquire-start, client: client1, nth: 2}\n    outside_lock: {node: redis%d, ttl: %v}\n", i+1, fs.heldTTL(k))
	}
	sc, err := scenarios.ParseFile(fs.name+".yaml", []byte(b.String()))
	require.NoError(t, err, b.String())
	rp, _, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)

	var o outcome
	// The second cycle's events, on client1's lane.
	at := func(text string, from int64) (int64, int) {
		for i, s := range rp.Steps {
			if s.Actor == "client1" && s.AtNs >= from && strings.HasPrefix(s.Text, text) {
				return s.AtNs, i
			}
		}
		return -1, -1
	}
	cycle := int64(stopAt)
	acqStart, _ := at("acquire-start", cycle)
	require.GreaterOrEqual(t, acqStart, cycle, "the second cycle starts after the stop")
	if ok, i := at("acquired", acqStart); ok >= 0 {
		o.acquired = true
		o.lockTook = time.Duration(ok - acqStart)
		o.validity = time.Duration(rp.States[rp.Steps[i].State].Clients[0].ValidNs)
		o.attempts = field(rp.Steps[i].Text, "attempt")
	} else if failed, i := at("acquire-failed", acqStart); failed >= 0 {
		o.lockTook = time.Duration(failed - acqStart)
		o.attempts = field(rp.Steps[i].Text, "attempt")
	}
	if o.acquired {
		if fs.extend {
			s, _ := at("extend-start", acqStart)
			if e, _ := at("extended", s); e >= 0 {
				o.extended, o.extendTook = true, time.Duration(e-s)
			} else if e, _ := at("extend-failed", s); e >= 0 {
				o.extendTook = time.Duration(e - s)
			}
		}
		s, _ := at("release-start", acqStart)
		e, i := at("released", s)
		switch {
		case e < 0:
			require.Positive(t, fs.unlockWait, "the release ends within the run")
			o.unlockPending = true
		case fs.unlockWait > 0 && time.Duration(e-s) > fs.unlockWait:
			o.unlockPending = true
			fallthrough
		default:
			o.unlockTook = time.Duration(e - s)
			o.unlocked = strings.Contains(rp.Steps[i].Text, "oks=") && oksAtLeast(rp.Steps[i].Text, nodes/2+1)
		}
	}
	// The lock value of the second cycle: the first SET (or, for a library that acquires
	// with a script, EVAL or EVALSHA) after it began.
	value := ""
	for _, m := range rp.Messages {
		if m.Kind != "request" || m.SentNs < acqStart {
			continue
		}
		f := strings.Fields(m.Text)
		if f[0] == "SET" {
			value = f[2]
			break
		}
		if (f[0] == "EVAL" || f[0] == "EVALSHA") && len(f) > 4 {
			value = f[4]
			break
		}
	}
	require.NotEmpty(t, value)
	o.commands, o.leftover = serverCommands(t, rp, value, "", acqStart, 0)
	return o
}

// serverCommands returns the lock commands each server of the replay ran, delivered to it
// from true time from on (and before until, when not 0), in canon's spelling with value
// as $v, and which servers hold a key with that value at the end. With client set, only
// the commands that carry that client's value count. What a powered-off server dropped
// and what a killed server's host refused reached it but never ran.
func serverCommands(t *testing.T, rp *report.Replay, value, client string, from, until int64) ([][]string, []bool) {
	type arrival struct {
		node string
		at   int64
		cmd  string
	}
	dropped := map[arrival]bool{}
	for _, s := range rp.Steps {
		if c, ok := strings.CutPrefix(s.Text, "drop reason=down cmd="); ok {
			dropped[arrival{s.Actor, s.AtNs, c}] = true
		}
	}
	cmds := make([][]string, nodes)
	for _, m := range rp.Messages {
		switch {
		case m.Kind != "request" || m.Fate != "delivered" || m.SentNs < from || (until > 0 && m.SentNs >= until):
			continue
		case dropped[arrival{m.To, m.AtNs, m.Text}]:
			continue
		case m.Pair >= 0 && rp.Messages[m.Pair].Text == resp.NoReply.String():
			continue // a killed server's host refused it: the server never ran it
		case client != "" && !slices.Contains(strings.Fields(m.Text), value):
			continue // another client's
		}
		n, err := strconv.Atoi(strings.TrimPrefix(m.To, "redis"))
		require.NoError(t, err, m.To)
		if c, ok := canon(strings.Fields(m.Text), value); ok {
			cmds[n-1] = append(cmds[n-1], c)
		}
	}
	last := rp.States[len(rp.States)-1]
	leftover := make([]bool, nodes)
	for i, n := range last.Nodes {
		leftover[i] = slices.ContainsFunc(n.Keys, func(k report.KeyState) bool { return k.Value == value })
	}
	return cmds, leftover
}

// oksAtLeast reads the oks= field of a released line: redsync's Unlock reports success
// when a quorum deleted its key.
func oksAtLeast(text string, q int) bool {
	return field(text, "oks") >= q
}

// field reads the whole number name=N of a narrated line, or -1 when it has none.
func field(text, name string) int {
	for _, f := range strings.Fields(text) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return -1
}

// canon returns a lock command in one spelling for both sides: the command's name in
// capitals, SET's options in a fixed order, a script by its name, the lock's value as $v.
// Connection handshakes (HELLO, CLIENT, PING) and other commands report false.
func canon(argv []string, value string) (string, bool) {
	if len(argv) == 0 {
		return "", false
	}
	name := strings.ToUpper(argv[0])
	arg := func(a string) string {
		if a == value {
			return "$v"
		}
		return a
	}
	switch name {
	case "SET":
		if len(argv) < 3 || argv[2] == scenarios.OutsideValue { // the outside client's
			return "", false
		}
		out := []string{"SET", argv[1], arg(argv[2])}
		var cond, exp []string
		for i := 3; i < len(argv); i++ {
			switch o := strings.ToUpper(argv[i]); o {
			case "NX", "XX":
				cond = append(cond, o)
			case "EX", "PX":
				if i+1 < len(argv) {
					exp = append(exp, o, argv[i+1])
					i++
				}
			}
		}
		return strings.Join(append(append(out, cond...), exp...), " "), true
	case "EVAL", "EVALSHA":
		if len(argv) < 2 {
			return "", false
		}
		script := argv[1]
		if !strings.HasPrefix(script, "<") {
			script = "<" + scriptName(name == "EVALSHA", script) + ">"
		}
		out := []string{name, script}
		for _, a := range argv[2:] {
			out = append(out, arg(a))
		}
		return strings.Join(out, " "), true
	case "GET", "DEL", "PEXPIRE", "PTTL", "INCR":
		out := []string{name}
		for _, a := range argv[1:] {
			out = append(out, arg(a))
		}
		return strings.Join(out, " "), true
	}
	return "", false
}

// scriptName names the script with digest or source s among the ones the simulator
// knows, or "unknown".
func scriptName(bySHA bool, s string) string {
	for sc := resp.Script(1); sc.SHA() != ""; sc++ {
		if (bySHA && strings.EqualFold(sc.SHA(), s)) || (!bySHA && sc.Source() == s) {
			return sc.String()
		}
	}
	return "unknown"
}

// valueIn returns the value of the first SET among lines, or "".
func valueIn(lines [][]string) string {
	for _, argv := range lines {
		if len(argv) >= 3 && strings.EqualFold(argv[0], "set") {
			return argv[2]
		}
	}
	return ""
}

// monitor reads a server's MONITOR stream: every command it runs, as argv.
type monitor struct {
	conn  net.Conn
	mu    sync.Mutex
	lines [][]string
	done  chan struct{}
}

func startMonitor(t *testing.T, addr string) *monitor {
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	m := &monitor{conn: conn, done: make(chan struct{})}
	_, err = conn.Write([]byte("MONITOR\r\n"))
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	first, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", first)
	go func() {
		defer close(m.done)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if argv, ok := parseMonitorLine(strings.TrimRight(line, "\r\n")); ok {
				m.mu.Lock()
				m.lines = append(m.lines, argv)
				m.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { conn.Close() })
	return m
}

func (m *monitor) valueOrEmpty() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return valueIn(m.lines)
}

// stop closes the stream and returns what it read.
func (m *monitor) stop() [][]string {
	m.conn.Close()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lines
}

// parseMonitorLine reads `+1700000000.123456 [0 127.0.0.1:5555] "set" "k" "v"` into its
// quoted arguments, undoing Redis's escapes (\" \\ \n \r \t \a \b \xHH). A command a
// script ran (`[0 lua]`) reports false: the script's own line stands for it.
func parseMonitorLine(line string) ([]string, bool) {
	i := strings.Index(line, "] ")
	if i < 0 || strings.HasSuffix(line[:i], " lua") {
		return nil, false
	}
	s := line[i+2:]
	var argv []string
	for len(s) > 0 {
		if s[0] == ' ' {
			s = s[1:]
			continue
		}
		if s[0] != '"' {
			return nil, false
		}
		var b strings.Builder
		j := 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] != '\\' || j+1 >= len(s) {
				b.WriteByte(s[j])
				continue
			}
			j++
			switch s[j] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'x':
				if j+2 < len(s) {
					v, err := strconv.ParseUint(s[j+1:j+3], 16, 8)
					if err == nil {
						b.WriteByte(byte(v))
						j += 2
						continue
					}
				}
				b.WriteByte('x')
			default:
				b.WriteByte(s[j])
			}
		}
		argv = append(argv, b.String())
		s = s[min(j+1, len(s)):]
	}
	return argv, len(argv) > 0
}

// TestRedsyncContention is the script with all servers up and two clients: client1 locks
// and holds for 600ms; client2 starts 100ms later and retries every 200ms until client1's
// unlock lets it in, on its fourth attempt about 600ms after it started, on both sides.
// The unlock falls midway between client2's third and fourth attempts: 100ms either way
// for a loaded machine's delays.
func TestRedsyncContention(t *testing.T) {
	redistest.Path(t)
	const (
		hold       = 600 * time.Millisecond
		lag        = 100 * time.Millisecond
		retryDelay = 200 * time.Millisecond
	)
	// The real side: two processes' worth of go-redis clients on the same five servers.
	servers := make([]*redistest.Server, nodes)
	for i := range servers {
		servers[i] = redistest.Start(t)
	}
	mutex := func() *redsync.Mutex {
		pools := make([]redis.Pool, nodes)
		for i, s := range servers {
			c := goredis.NewClient(&goredis.Options{Addr: s.Addr()})
			t.Cleanup(func() { c.Close() })
			pools[i] = redsyncgoredis.NewPool(c)
		}
		return redsync.New(pools...).NewMutex("lock", redsync.WithRetryDelay(retryDelay))
	}
	m1, m2 := mutex(), mutex()
	mon := startMonitor(t, servers[0].Addr())
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
	time.Sleep(hold - time.Since(start))
	_, err := m1.Unlock()
	require.NoError(t, err)
	r := <-second
	require.NoError(t, r.err)
	_, err = m2.Unlock()
	require.NoError(t, err)
	realAttempts := 0
	for _, argv := range mon.stop() {
		if len(argv) >= 3 && strings.EqualFold(argv[0], "set") && argv[2] == m2.Value() {
			realAttempts++
		}
	}

	// The simulated side: the same two clients, client1 at 10ms, client2 at 60ms.
	yaml := fmt.Sprintf(`name: conformance-contention
story: client1 holds for %v; client2 starts %v later and retries every %v
knobs: {client: redsync, clients: 2, max_cycles: 1, hold: const(%v), retry_delay: %v, retry_jitter: 0s, duration: 3s}
start: {client1: 10ms, client2: %v}
`, hold, lag, retryDelay, hold, retryDelay, 10*time.Millisecond+lag)
	sc, err := scenarios.ParseFile("contention.yaml", []byte(yaml))
	require.NoError(t, err)
	rp, _, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	var began, got int64 = -1, -1
	simAttempts := 0
	for _, s := range rp.Steps {
		if s.Actor != "client2" {
			continue
		}
		switch {
		case strings.HasPrefix(s.Text, "acquire-start") && began < 0:
			began = s.AtNs
		case strings.HasPrefix(s.Text, "acquired") && got < 0:
			got = s.AtNs
		}
	}
	for _, m := range rp.Messages {
		if m.Kind == "request" && m.From == "client2" && m.To == "redis1" && strings.HasPrefix(m.Text, "SET ") {
			simAttempts++
		}
	}
	require.True(t, began >= 0 && got > began, "client2 acquires in the simulation")
	simTook := time.Duration(got - began)
	t.Logf("client2: real %d attempts in %v; simulated %d attempts in %v", realAttempts, r.took, simAttempts, simTook)
	assert.Equal(t, realAttempts, simAttempts, "client2's attempts")
	assert.Equal(t, 4, simAttempts, "refused at 0, 200 and 400ms; in at 600ms, after client1's unlock at 500ms")
	near(t, "time client2's Lock took", r.took, simTook)
}
