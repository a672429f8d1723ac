package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
)

func TestBenchReportsEveryFigure(t *testing.T) {
	code, out, errOut := cli("bench", "--duration", "2s")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"standard workload", "10 clients sharing one lock", "hold 5ms, think 1ms",
		"simulated        2s", "GOMAXPROCS=1", "cycles", "events", "time compression", "target ≥ 2000×",
		"cycles / wall s", "target ≥ 300000", "events / wall s", "peak heap", "target < 64 MiB",
		"run              lock: SAFE (no overlaps) · resource: SAFE (0 stale writes accepted); trace "} {
		assert.Contains(t, out, want)
	}
}

func TestBenchJSON(t *testing.T) {
	code, out, errOut := cli("bench", "--duration", "2s", "--clients", "4", "--own-locks", "--json")
	require.Equal(t, 0, code, errOut)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	for _, k := range []string{"cycles", "events", "sim_time_s", "wall_time_s", "time_compression",
		"cycles_per_wall_s", "events_per_wall_s", "peak_heap_bytes", "trace_hash", "config"} {
		assert.Contains(t, m, k)
	}
	assert.Equal(t, "own", m["locks"])
	assert.Equal(t, "standard", m["workload"])
	assert.EqualValues(t, 4, m["clients"])
	assert.EqualValues(t, 1, m["gomaxprocs"])
	assert.EqualValues(t, 2, m["sim_time_s"])
	assert.Positive(t, m["cycles"])
	assert.Equal(t, "4", m["config"].(map[string]any)["resources"])
}

// TestBenchWithAClient: --client runs the workload with a profile's lock (curator: its
// mutex on a 5-server ZooKeeper ensemble), says so in the report and the JSON, and gives
// a run of its own (its trace is not the standard bench's).
func TestBenchWithAClient(t *testing.T) {
	code, out, errOut := cli("bench", "--duration", "2s", "--client", "curator", "--json")
	require.Equal(t, 0, code, errOut)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	assert.Equal(t, "curator", m["client"])
	assert.Equal(t, "curator", m["config"].(map[string]any)["algorithm"])
	assert.Positive(t, m["cycles"])
	code, std, errOut := cli("bench", "--duration", "2s", "--json")
	require.Equal(t, 0, code, errOut)
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(std), &s))
	assert.NotContains(t, s, "client", "the standard bench names no client")
	assert.NotEqual(t, s["trace_hash"], m["trace_hash"])
	code, out, errOut = cli("bench", "--duration", "2s", "--client", "curator")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "client curator, 5 servers")
}

func TestBenchRunsReportTheMedianRun(t *testing.T) {
	code, out, errOut := cli("bench", "--duration", "2s", "--runs", "3", "--json")
	require.Equal(t, 0, code, errOut)
	var r struct {
		Runs               int       `json:"runs"`
		CyclesPerWallS     float64   `json:"cycles_per_wall_s"`
		CyclesPerWallSRuns []float64 `json:"cycles_per_wall_s_runs"`
		Cycles             uint64    `json:"cycles"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, 3, r.Runs)
	require.Len(t, r.CyclesPerWallSRuns, 3)
	sorted := slices.Sorted(slices.Values(r.CyclesPerWallSRuns))
	assert.Equal(t, sorted[1], r.CyclesPerWallS, "the figures are the median run's")
	assert.Positive(t, r.Cycles)

	code, out, errOut = cli("bench", "--duration", "2s", "--runs", "3")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "GOMAXPROCS=1, the median of 3 runs")
	assert.Regexp(t, `runs: \d+ to \d+, [0-3] of 3 at or above the target`, out)

	code, out, errOut = cli("bench", "--duration", "2s", "--json")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"runs": 1`)
	assert.NotContains(t, out, "cycles_per_wall_s_runs", "one run lists no runs")
}

func TestBenchIsDeterministicInItsCounts(t *testing.T) {
	counts := func() map[string]any {
		code, out, errOut := cli("bench", "--duration", "1s", "--zero-hold", "--json")
		require.Equal(t, 0, code, errOut)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		return map[string]any{"cycles": m["cycles"], "events": m["events"], "hash": m["trace_hash"]}
	}
	assert.Equal(t, counts(), counts())
}

func TestBenchWritesACPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	code, _, errOut := cli("bench", "--duration", "2s", "--cpuprofile", path)
	require.Equal(t, 0, code, errOut)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Positive(t, st.Size())
}

func TestBenchErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--duration", "0s"},
		{"--duration", "25h"},
		{"--clients", "0"},
		{"--clients", "65"},
		{"--gomaxprocs", "0"},
		{"--real-duration", "0s"},
		{"--runs", "0"},
		{"--runs", "101"},
		{"--client", "zookeeper"},
		{"--client", "curator", "--real"},
		{"--no-such-flag"},
		{"extra-argument"},
	} {
		code, _, errOut := cli(append([]string{"bench"}, args...)...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
	}
	code, _, errOut := cli("bench", "--runs", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--runs 0: want [1, 100]")
	code, _, errOut = cli("bench", "--duration", "1s", "--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "--cpuprofile")
}

func TestBenchRealWithoutRedisSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, _, errOut := cli("bench", "--real", "--real-duration", "1s", "--duration", "1s")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "redis-server not found")
	assert.Contains(t, errOut, "apt-get install -y redis-server")
}

func TestBenchRealComparesWithTheSimulator(t *testing.T) {
	redistest.Path(t) // skips without redis-server, unless REDLOCK_SIM_REQUIRE_REDIS=1
	code, out, errOut := cli("bench", "--real", "--real-duration", "1s", "--duration", "10s", "--json")
	require.Equal(t, 0, code, errOut)
	var r struct {
		Real struct {
			Servers    int     `json:"servers"`
			Cycles     uint64  `json:"cycles"`
			CyclesPerS float64 `json:"cycles_per_s"`
			WallTimeS  float64 `json:"wall_time_s"`
			Errors     uint64  `json:"errors"`
		} `json:"real"`
		Sim struct {
			Workload       string  `json:"workload"`
			Cycles         uint64  `json:"cycles"`
			CyclesPerWallS float64 `json:"cycles_per_wall_s"`
		} `json:"sim"`
		Ratio float64 `json:"ratio"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, 5, r.Real.Servers)
	assert.Positive(t, r.Real.Cycles)
	assert.Zero(t, r.Real.Errors)
	assert.GreaterOrEqual(t, r.Real.WallTimeS, 1.0, "the real phase lasts its duration")
	assert.Equal(t, "zero-hold", r.Sim.Workload)
	assert.Positive(t, r.Sim.Cycles)
	assert.InDelta(t, r.Sim.CyclesPerWallS/r.Real.CyclesPerS, r.Ratio, 1e-9)

	code, out, errOut = cli("bench", "--real", "--real-duration", "1s", "--duration", "10s")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"zero-hold workload", "real Redis", "5 redis-server", "simulator", "ratio", "target ≥ 50×"} {
		assert.Contains(t, out, want)
	}
}

// benchChildEnv holds the arguments of a re-executed test binary that acts as redlock-sim.
const benchChildEnv = "REDLOCK_SIM_BENCH_CHILD_ARGS"

// TestBenchChild is the redlock-sim process of TestBenchRealFailsWhenServersDie; on its
// own it skips.
func TestBenchChild(t *testing.T) {
	args := os.Getenv(benchChildEnv)
	if args == "" {
		t.Skip("child process of TestBenchRealFailsWhenServersDie")
	}
	os.Exit(run(strings.Fields(args), os.Stdout, os.Stderr))
}

// TestBenchRealFailsWhenServersDie runs `bench --real` as a process, kills its five
// redis-servers once they have served 500 commands (mid-run, whatever the machine's
// speed), and checks that it fails with exit 1, naming every server and the cause, with
// the refused commands counted as errors in the JSON and not as lost locks.
func TestBenchRealFailsWhenServersDie(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the child's redis-servers through /proc")
	}
	redistest.Path(t)
	const bound = 2 * time.Minute // the real phase's length: it must end by failing long before
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), benchChildEnv+"=bench --real --json --duration 1s --real-duration "+bound.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	servers := awaitServers(t, cmd.Process.Pid, 5, exited, &stderr)
	awaitCommands(t, servers[0].port, 500)
	for _, s := range servers {
		p, err := os.FindProcess(s.pid)
		require.NoError(t, err)
		require.NoError(t, p.Kill())
	}
	var err error
	select {
	case err = <-exited:
	case <-time.After(bound + time.Minute):
		t.Fatalf("bench --real still running %v after its servers died", bound+time.Minute)
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", &stderr)
	assert.Equal(t, 1, ee.ExitCode(), "stderr: %s", &stderr)

	errOut := stderr.String()
	assert.Contains(t, errOut, "redlock-sim: bench --real: the real phase failed")
	assert.Contains(t, errOut, "the redis-servers stopped answering")
	for _, s := range servers {
		assert.Contains(t, errOut, "127.0.0.1:"+strconv.Itoa(s.port)+" (node ")
	}
	assert.Contains(t, errOut, "the redis-server process died (signal: killed)")
	assert.NotContains(t, errOut, "connection pool", "go-redis's own log lines are silenced")
	assert.NotContains(t, stdout.String(), "met")

	var r struct {
		Real struct {
			Cycles uint64 `json:"cycles"`
			Failed uint64 `json:"failed"`
			Errors uint64 `json:"errors"`
		} `json:"real"`
		Sim   any    `json:"sim"`
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &r), "stdout: %s", &stdout)
	assert.Positive(t, r.Real.Cycles, "the servers were killed mid-run")
	assert.Positive(t, r.Real.Errors)
	assert.Nil(t, r.Sim, "no comparison without a real figure")
	assert.Contains(t, r.Error, "the redis-servers stopped answering")
}

type childServer struct{ pid, port int }

// awaitServers waits until the process pid has n redis-server children and returns them.
func awaitServers(t *testing.T, pid, n int, exited <-chan error, stderr *bytes.Buffer) []childServer {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("bench exited before its servers were up: %v; stderr: %s", err, stderr)
		default:
		}
		if servers := redisChildren(pid); len(servers) == n {
			return servers
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("bench did not start %d redis-servers within 2 minutes", n)
	return nil
}

// redisChildren lists the redis-server processes whose parent is pid, from /proc.
func redisChildren(pid int) []childServer {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []childServer
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || close < open || string(b[open+1:close]) != "redis-server" {
			continue
		}
		f := strings.Fields(string(b[close+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		child, _ := strconv.Atoi(strings.TrimSpace(string(b[:open])))
		args, err := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		if err != nil {
			continue
		}
		// redis-server retitles itself "/usr/bin/redis-server 127.0.0.1:PORT"; before it
		// does, the command line still holds "--port PORT".
		argv := strings.Fields(strings.ReplaceAll(string(args), "\x00", " "))
		for i, a := range argv {
			port := ""
			if a == "--port" && i+1 < len(argv) {
				port = argv[i+1]
			} else if p, ok := strings.CutPrefix(a, "127.0.0.1:"); ok {
				port = p
			}
			if n, err := strconv.Atoi(port); err == nil {
				out = append(out, childServer{pid: child, port: n})
				break
			}
		}
	}
	return out
}

// awaitCommands waits until the server on port has processed at least n commands.
func awaitCommands(t *testing.T, port, n int) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, DisableIdentity: true})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		info, err := rdb.Info(ctx, "stats").Result()
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the server on port %d processed fewer than %d commands in 2 minutes", port, n)
		}
		if err == nil {
			for line := range strings.Lines(info) {
				if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
					if got, _ := strconv.Atoi(strings.TrimSpace(v)); got >= n {
						return
					}
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}
