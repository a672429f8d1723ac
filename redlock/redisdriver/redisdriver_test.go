package redisdriver_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/redisdriver"
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

func newClient(t *testing.T, addrs []string, edit func(*redlock.Config)) *redisdriver.Client {
	t.Helper()
	cfg := redlock.DefaultConfig()
	cfg.Nodes = 0
	cfg.TTL = time.Second
	cfg.Timeout = 100 * time.Millisecond
	cfg.RetryDelay, cfg.RetryJitter = 5*time.Millisecond, 5*time.Millisecond
	if edit != nil {
		edit(&cfg)
	}
	c, err := redisdriver.New(addrs, redisdriver.Options{Config: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

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

// TestMutualExclusion lets 8 goroutines contend for one lock on 5 real servers for about
// three seconds; whoever holds it marks a shared flag, which nobody else may find set.
func TestMutualExclusion(t *testing.T) {
	servers, addrs := startServers(t, 5)
	c := newClient(t, addrs, func(cfg *redlock.Config) { cfg.Tries = 50 })

	var inCS atomic.Bool
	var overlaps, expired, acquired, retried, lost atomic.Int64
	stop := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ctx := context.Background()
			for time.Now().Before(stop) {
				lease, err := c.Lock(ctx, resource)
				if errors.Is(err, redisdriver.ErrNotAcquired) {
					lost.Add(1)
					continue
				}
				if !assert.NoError(t, err) {
					return
				}
				if !inCS.CompareAndSwap(false, true) {
					overlaps.Add(1)
				}
				time.Sleep(time.Millisecond)
				if time.Until(lease.Deadline()) <= 0 {
					expired.Add(1)
				}
				acquired.Add(1)
				if lease.Attempts() > 1 {
					retried.Add(1)
				}
				inCS.Store(false)
				assert.NoError(t, c.Unlock(ctx, lease))
			}
		})
	}
	wg.Wait()
	t.Logf("acquired %d times (%d after a lost attempt), %d acquires lost", acquired.Load(), retried.Load(), lost.Load())
	assert.Zero(t, overlaps.Load(), "two holders at once")
	assert.Zero(t, expired.Load(), "critical section outlived validity")
	assert.Greater(t, acquired.Load(), int64(50))
	assert.Positive(t, retried.Load(), "the clients really contended")
	assertNoLockKey(t, servers)
}

func TestQuorumWithServersDown(t *testing.T) {
	servers, addrs := startServers(t, 5)
	c := newClient(t, addrs, func(cfg *redlock.Config) { cfg.Tries = 3 })
	ctx := context.Background()

	servers[1].Kill()
	servers[3].Kill()
	lease, err := c.Lock(ctx, resource)
	require.NoError(t, err, "3 of 5 is a quorum")
	require.NoError(t, c.Extend(ctx, lease))
	require.NoError(t, c.Unlock(ctx, lease))
	assertNoLockKey(t, servers)

	servers[4].Kill()
	start := time.Now()
	_, err = c.Lock(ctx, resource)
	require.Error(t, err)
	assert.ErrorIs(t, err, redisdriver.ErrNotAcquired)
	assert.ErrorIs(t, err, redisdriver.ErrNoQuorum)
	var oe *redisdriver.OutcomeError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, 3, oe.Outcome.Attempt)
	assert.Equal(t, 2, oe.Outcome.OKs)
	assert.Less(t, time.Since(start), 2*time.Second, "dead nodes fail fast, not after long retries")
	assertNoLockKey(t, servers)
}

func TestContendedLockAndExtend(t *testing.T) {
	servers, addrs := startServers(t, 3)
	c := newClient(t, addrs, func(cfg *redlock.Config) {
		cfg.Tries = 2
		cfg.MaxExtensions = 1
		cfg.Fencing = redlock.FenceMajority
	})
	ctx := context.Background()

	a, err := c.Lock(ctx, resource)
	require.NoError(t, err)
	tok, fenced := a.Token()
	assert.True(t, fenced)
	assert.Equal(t, int64(1), tok)
	assert.Greater(t, time.Until(a.Deadline()), 800*time.Millisecond, "ttl 1s − drift 12ms − elapsed")

	_, err = c.Lock(ctx, resource)
	assert.ErrorIs(t, err, redisdriver.ErrNoQuorum, "held by a")

	time.Sleep(200 * time.Millisecond)
	before := a.Deadline()
	require.NoError(t, c.Extend(ctx, a))
	assert.True(t, a.Deadline().After(before))
	pttl := servers[0].Client().PTTL(ctx, resource).Val()
	assert.Greater(t, pttl, 900*time.Millisecond, "extend reset the TTL")
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
// and deletes whatever it had taken.
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
	exec := func(c redlock.Command) redlock.Reply { return redisdriver.Exec(ctx, rdb, c) }

	assert.Equal(t, redlock.OK, exec(redlock.Set("k", "v1", redlock.CondNX, time.Second)))
	assert.Equal(t, redlock.Nil, exec(redlock.Set("k", "v2", redlock.CondNX, time.Second)))
	assert.Equal(t, redlock.Reply{Kind: redlock.ReplyBulk, Str: "v1"}, exec(redlock.Command{Op: redlock.OpGet, Key: "k"}))
	assert.Equal(t, redlock.Nil, exec(redlock.Command{Op: redlock.OpGet, Key: "missing"}))
	assert.Equal(t, redlock.IntReply(1), exec(redlock.Command{Op: redlock.OpIncr, Key: "n"}))

	// A fresh server has no scripts cached: EVALSHA falls back to EVAL transparently.
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	assert.Equal(t, redlock.IntReply(0), exec(redlock.EvalSHA(redlock.ScriptRelease, "k", "other", 0)))
	assert.Equal(t, redlock.IntReply(1), exec(redlock.EvalSHA(redlock.ScriptExtend, "k", "v1", 5*time.Second)))
	assert.Equal(t, redlock.IntReply(1), exec(redlock.EvalSHA(redlock.ScriptRelease, "k", "v1", 0)))
	// extend-or-set on a missing key answers SET's status OK.
	assert.Equal(t, redlock.OK, exec(redlock.EvalSHA(redlock.ScriptExtendOrSet, "k", "v3", 5*time.Second)))
	assert.Equal(t, redlock.IntReply(1), exec(redlock.EvalSHA(redlock.ScriptExtendOrSet, "k", "v3", 5*time.Second)))
	assert.Equal(t, redlock.IntReply(0), exec(redlock.EvalSHA(redlock.ScriptExtendOrSet, "k", "v4", 5*time.Second)))

	wrong := exec(redlock.Command{Op: redlock.OpIncr, Key: "k"})
	assert.Equal(t, redlock.ReplyError, wrong.Kind)
	assert.Contains(t, wrong.Str, "not an integer")

	s.Kill()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	assert.Equal(t, redlock.NoReply, redisdriver.Exec(short, rdb, redlock.Command{Op: redlock.OpGet, Key: "k"}))
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
