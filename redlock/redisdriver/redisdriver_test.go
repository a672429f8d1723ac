package redisdriver_test

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/redisdriver"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

const resource = "redisdriver-test-lock"

// TestMain silences go-redis's logger: the tests kill servers on purpose, and every refused
// dial would otherwise be logged.
func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func startServers(t *testing.T, n int) ([]*redistest.Server, []string) {
	t.Helper()
	servers := make([]*redistest.Server, n)
	addrs := make([]string, n)
	for i := range servers {
		servers[i] = redistest.Start(t)
		addrs[i] = servers[i].Addr()
	}
	return servers, addrs
}

// newClient returns a client with a TTL long enough that no lease expires while a loaded
// machine stalls the test, and a per-node timeout long enough that a slow reply is not
// taken for a lost one: the tests below kill servers (a refused connection fails at once),
// they never rely on a timeout.
func newClient(t *testing.T, addrs []string, edit func(*redlock.Config)) *redisdriver.Client {
	t.Helper()
	return newClientWith(t, addrs, redisdriver.Options{}, edit)
}

func newClientWith(t *testing.T, addrs []string, opts redisdriver.Options, edit func(*redlock.Config)) *redisdriver.Client {
	t.Helper()
	cfg := redlock.DefaultConfig()
	cfg.Nodes = 0
	cfg.TTL = time.Minute
	cfg.Timeout = 10 * time.Second
	cfg.RetryDelay, cfg.RetryJitter = 5*time.Millisecond, 5*time.Millisecond
	if edit != nil {
		edit(&cfg)
	}
	opts.Config = cfg
	c, err := redisdriver.New(addrs, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// safetyBound is how long a test may wait for work bounded by count before it gives up:
// far beyond what any machine needs, so that reaching it means a hang, not a slow machine.
const safetyBound = 2 * time.Minute

func assertNoLockKey(t *testing.T, servers []*redistest.Server) {
	t.Helper()
	for i, s := range servers {
		if s.Alive() {
			n, err := s.Client().Exists(context.Background(), resource).Result()
			require.NoError(t, err)
			assert.Zero(t, n, "lock key left on server %d", i)
		}
	}
}

// closedAddr returns a loopback address nobody listens on: a dial there is refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestMutualExclusion lets 8 goroutines contend for one lock on 5 real servers until each
// has held it perAcquirer times; whoever holds it marks a shared flag, which nobody else
// may find set. The work is bounded by count, not by time, so a slow machine only takes
// longer.
func TestMutualExclusion(t *testing.T) {
	const acquirers, perAcquirer = 8, 15
	servers, addrs := startServers(t, 5)
	c := newClient(t, addrs, func(cfg *redlock.Config) { cfg.Tries = 50 })
	ctx, cancel := context.WithTimeout(context.Background(), safetyBound)
	defer cancel()

	var inCS atomic.Bool
	var overlaps, expired, acquired, retried, lost atomic.Int64
	var wg sync.WaitGroup
	for range acquirers {
		wg.Go(func() {
			for held := 0; held < perAcquirer; {
				lease, err := c.Lock(ctx, resource)
				if errors.Is(err, redisdriver.ErrNotAcquired) {
					lost.Add(1) // every try met a holder: try again, the lock is free eventually
					continue
				}
				if !assert.NoError(t, err, "acquirer gave up after %v holding %d of %d", safetyBound, held, perAcquirer) {
					return
				}
				if !inCS.CompareAndSwap(false, true) {
					overlaps.Add(1)
				}
				time.Sleep(time.Millisecond) // hold it, so that the others meet a holder
				if time.Until(lease.Deadline()) <= 0 {
					expired.Add(1)
				}
				held++
				acquired.Add(1)
				if lease.Attempts() > 1 {
					retried.Add(1)
				}
				inCS.Store(false)
				assert.NoError(t, c.Unlock(context.Background(), lease))
			}
		})
	}
	wg.Wait()
	t.Logf("acquired %d times (%d after a lost attempt), %d acquires lost", acquired.Load(), retried.Load(), lost.Load())
	assert.Zero(t, overlaps.Load(), "two holders at once")
	assert.Zero(t, expired.Load(), "critical section outlived validity")
	assert.Equal(t, int64(acquirers*perAcquirer), acquired.Load(), "every acquirer got the lock as often as it asked")
	assert.Positive(t, retried.Load()+lost.Load(), "the clients really contended")
	assertNoLockKey(t, servers)
}

// TestQuorumWithServersDown: 3 of 5 is a quorum; with 3 dead, every attempt fails, and the
// error says which servers failed and why.
func TestQuorumWithServersDown(t *testing.T) {
	servers, addrs := startServers(t, 5)
	c := newClient(t, addrs, func(cfg *redlock.Config) { cfg.Tries = 3 })
	ctx := context.Background()

	servers[1].Kill()
	servers[3].Kill()
	lease, err := c.Lock(ctx, resource)
	require.NoError(t, err, "3 of 5 is a quorum")
	require.NoError(t, c.Extend(ctx, lease))
	require.NoError(t, c.Unlock(ctx, lease), "3 of 5 released it")
	assertNoLockKey(t, servers)

	servers[4].Kill()
	_, err = c.Lock(ctx, resource)
	require.Error(t, err)
	assert.ErrorIs(t, err, redisdriver.ErrNotAcquired)
	assert.ErrorIs(t, err, redisdriver.ErrNoQuorum)
	var oe *redisdriver.OutcomeError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, 3, oe.Outcome.Attempt)
	assert.Equal(t, 2, oe.Outcome.Votes)
	// Dead nodes fail fast because their connections are refused, not because they time out.
	require.Len(t, oe.NodeErrors, 3)
	for i, node := range []int{1, 3, 4} {
		ne := oe.NodeErrors[i]
		assert.Equal(t, node, ne.Node)
		assert.Equal(t, addrs[node], ne.Addr)
		assert.False(t, ne.Timeout(), "%v", ne)
		assert.Contains(t, err.Error(), "redis "+addrs[node]+": ")
	}
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	assert.Contains(t, err.Error(), "connection refused")
	for _, node := range []int{0, 2} {
		assert.NotContains(t, err.Error(), addrs[node], "a live node is not blamed")
	}
	assertNoLockKey(t, servers)
}

// TestNodeErrorsNameAddressAndCause: a server that never ran (a closed port), one that
// accepts but never answers, and what Lock and OnNodeError report about them. No live
// server takes part: its reply would have to beat the short timeout, a race with the
// machine's speed (TestQuorumWithServersDown shows that live nodes are not blamed).
func TestNodeErrorsNameAddressAndCause(t *testing.T) {
	refused := closedAddr(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	require.NoError(t, err)
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() })
		}
	}()
	addrs := []string{refused, silent.Addr().String()}

	var mu sync.Mutex
	seen := map[string]*redisdriver.NodeError{}
	opts := redisdriver.Options{OnNodeError: func(ne *redisdriver.NodeError) {
		mu.Lock()
		defer mu.Unlock()
		seen[ne.Addr] = ne
	}}
	c := newClientWith(t, addrs, opts, func(cfg *redlock.Config) {
		cfg.Tries = 1
		cfg.Timeout = 200 * time.Millisecond // the silent node's cost; no answer ever comes
	})
	_, err = c.Lock(context.Background(), resource)
	require.ErrorIs(t, err, redisdriver.ErrNoQuorum)
	msg := err.Error()
	assert.Contains(t, msg, "redis "+refused+": dial tcp "+refused+": connect: connection refused")
	assert.Contains(t, msg, "redis "+silent.Addr().String()+": no answer within 200ms")
	var ne *redisdriver.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, 0, ne.Node, "the first failure in node order")
	assert.False(t, ne.Timeout())

	// The silent node's command may time out on its goroutine only after Lock returned.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 2
	}, safetyBound, time.Millisecond, "OnNodeError did not see both failing nodes")
	mu.Lock()
	assert.True(t, seen[silent.Addr().String()].Timeout())
	assert.False(t, seen[refused].Timeout())
	mu.Unlock()
}

// TestUnlockWithoutQuorumSaysWhichNodesKeepTheKey: a lease whose majority died cannot be
// released; Unlock says so instead of returning nil, and names the servers.
func TestUnlockWithoutQuorumSaysWhichNodesKeepTheKey(t *testing.T) {
	servers, addrs := startServers(t, 3)
	c := newClient(t, addrs, nil)
	ctx := context.Background()
	lease, err := c.Lock(ctx, resource)
	require.NoError(t, err)
	servers[0].Kill()
	servers[2].Kill()
	err = c.Unlock(ctx, lease)
	require.ErrorIs(t, err, redisdriver.ErrNotReleased)
	assert.Contains(t, err.Error(), "reached 1 of 3 nodes")
	assert.Contains(t, err.Error(), "redis "+addrs[0]+": ")
	assert.Contains(t, err.Error(), "redis "+addrs[2]+": ")
	assert.NotContains(t, err.Error(), "redis "+addrs[1]+": ")
	assertNoLockKey(t, servers)
}

func TestContendedLockAndExtend(t *testing.T) {
	servers, addrs := startServers(t, 3)
	c := newClient(t, addrs, func(cfg *redlock.Config) {
		cfg.Tries = 2
		cfg.MaxExtensions = 1
		cfg.Fencing = redlock.FenceMajority
	})
	cfg := c.Config()
	ctx := context.Background()

	// Validity runs from the attempt's start, which lies between the call and its return,
	// so the deadline is pinned between two readings whatever the machine's speed.
	before := time.Now()
	a, err := c.Lock(ctx, resource)
	after := time.Now()
	require.NoError(t, err)
	tok, fenced := a.Token()
	assert.True(t, fenced)
	assert.Equal(t, int64(1), tok)
	keep := cfg.TTL - cfg.Drift()
	assert.WithinRange(t, a.Deadline(), before.Add(keep), after.Add(keep), "start + ttl − drift")

	_, err = c.Lock(ctx, resource)
	assert.ErrorIs(t, err, redisdriver.ErrNoQuorum, "held by a")
	var oe *redisdriver.OutcomeError
	require.ErrorAs(t, err, &oe)
	assert.Empty(t, oe.NodeErrors, "every node answered: the lock is held, no server failed")

	// Shorten the keys' TTL by hand, as if time had passed, so the extension is visible
	// without waiting.
	for _, s := range servers {
		require.NoError(t, s.Client().PExpire(ctx, resource, cfg.TTL/2).Err())
	}
	before = time.Now()
	require.NoError(t, c.Extend(ctx, a))
	after = time.Now()
	assert.WithinRange(t, a.Deadline(), before.Add(keep), after.Add(keep), "extended from the extension's start")
	for i, s := range servers {
		pttl := s.Client().PTTL(ctx, resource).Val()
		assert.Greater(t, pttl, cfg.TTL/2, "extend reset the TTL on server %d", i)
	}
	err = c.Extend(ctx, a)
	assert.ErrorIs(t, err, redisdriver.ErrNotExtended)
	assert.ErrorIs(t, err, redisdriver.ErrExtensionLimit)

	require.NoError(t, c.Unlock(ctx, a))
	b, err := c.Lock(ctx, resource)
	require.NoError(t, err)
	tok, _ = b.Token()
	assert.Equal(t, int64(2), tok, "the fence counter grows")
	require.NoError(t, c.Unlock(ctx, b))
	assert.Error(t, c.Extend(ctx, b), "nothing to extend after unlock")
	assertNoLockKey(t, servers)
}

// TestCancelReleases: a Lock whose context ends while it waits for a held lock gives up
// and deletes whatever it had taken. The holder's TTL is a minute and the waiter's tries
// would last far longer than its context, so only the cancellation can end the wait.
func TestCancelReleases(t *testing.T) {
	servers, addrs := startServers(t, 3)
	c := newClient(t, addrs, func(cfg *redlock.Config) { cfg.Tries = 1000 })
	ctx := context.Background()
	holder, err := c.Lock(ctx, resource)
	require.NoError(t, err)

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = c.Lock(short, resource)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	for _, s := range servers {
		assert.Equal(t, holder.Value(), s.Client().Get(ctx, resource).Val(), "the holder's key is untouched")
	}
	require.NoError(t, c.Unlock(ctx, holder))
	assertNoLockKey(t, servers)
}

func TestExecConvertsReplies(t *testing.T) {
	s := redistest.Start(t)
	rdb := s.Client()
	ctx := context.Background()
	exec := func(c resp.Command) resp.Reply { return redisdriver.Exec(ctx, rdb, c) }

	assert.Equal(t, resp.OK, exec(resp.Set("k", "v1", resp.CondNX, time.Second)))
	assert.Equal(t, resp.Nil, exec(resp.Set("k", "v2", resp.CondNX, time.Second)))
	assert.Equal(t, resp.Reply{Kind: resp.ReplyBulk, Str: "v1"}, exec(resp.Command{Op: resp.OpGet, Key: "k"}))
	assert.Equal(t, resp.Nil, exec(resp.Command{Op: resp.OpGet, Key: "missing"}))
	assert.Equal(t, resp.IntReply(1), exec(resp.Command{Op: resp.OpIncr, Key: "n"}))

	// A fresh server has no scripts cached: EVALSHA falls back to EVAL transparently.
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	assert.Equal(t, resp.IntReply(0), exec(resp.EvalSHA(resp.ScriptRelease, "k", "other", 0)))
	assert.Equal(t, resp.IntReply(1), exec(resp.EvalSHA(resp.ScriptExtend, "k", "v1", 5*time.Second)))
	assert.Equal(t, resp.IntReply(1), exec(resp.EvalSHA(resp.ScriptRelease, "k", "v1", 0)))
	// extend-or-set on a missing key answers SET's status OK.
	assert.Equal(t, resp.OK, exec(resp.EvalSHA(resp.ScriptExtendOrSet, "k", "v3", 5*time.Second)))
	assert.Equal(t, resp.IntReply(1), exec(resp.EvalSHA(resp.ScriptExtendOrSet, "k", "v3", 5*time.Second)))
	assert.Equal(t, resp.IntReply(0), exec(resp.EvalSHA(resp.ScriptExtendOrSet, "k", "v4", 5*time.Second)))

	wrong := exec(resp.Command{Op: resp.OpIncr, Key: "k"})
	assert.Equal(t, resp.ReplyError, wrong.Kind)
	assert.Contains(t, wrong.Str, "not an integer")

	s.Kill()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	assert.Equal(t, resp.NoReply, redisdriver.Exec(short, rdb, resp.Command{Op: resp.OpGet, Key: "k"}))
}

func TestNewRefusesAddressesGoRedisWouldMisread(t *testing.T) {
	for _, tc := range []struct {
		addrs []string
		says  string
	}{
		{[]string{"127.0.0.1:7001", "", "127.0.0.1:7003"}, `address 1 is ""; want host:port, e.g. 127.0.0.1:6379 (go-redis would dial localhost:6379)`},
		{[]string{"  "}, `address 0 is "  "; want host:port`},
		{[]string{"127.0.0.1:7001", "localhost"}, `address 1 is "localhost"; want host:port`},
		{[]string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7001"}, `address 2 is "127.0.0.1:7001", the same as address 0; each node needs a server of its own`},
	} {
		_, err := redisdriver.New(tc.addrs, redisdriver.Options{})
		assert.ErrorContains(t, err, tc.says, "%q", tc.addrs)
	}
	// A unix-socket template takes paths, not host:port.
	c, err := redisdriver.New([]string{"/tmp/redis.sock"}, redisdriver.Options{Redis: &redis.Options{Network: "unix", MaxRetries: -1}})
	require.NoError(t, err)
	_ = c.Close()
}

func TestNewRejectsBadInput(t *testing.T) {
	_, err := redisdriver.New(nil, redisdriver.Options{})
	assert.Error(t, err)
	cfg := redlock.DefaultConfig()
	cfg.Nodes = 3
	_, err = redisdriver.New([]string{"127.0.0.1:1"}, redisdriver.Options{Config: cfg})
	assert.ErrorContains(t, err, "nodes = 3 but 1 addresses")
	cfg.Nodes, cfg.DriftFactor = 0, 0.7
	_, err = redisdriver.New([]string{"127.0.0.1:1"}, redisdriver.Options{Config: cfg})
	var pe *redlock.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "drift_factor", pe.Param)
}

func TestZeroOptionsTakeNodesFromAddresses(t *testing.T) {
	// Options{} means the default knobs with one node per address, whatever their number.
	c, err := redisdriver.New([]string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}, redisdriver.Options{})
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, 3, c.Config().Nodes)
	assert.Equal(t, redlock.DefaultConfig().TTL, c.Config().TTL)
}
