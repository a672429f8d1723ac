package zkproc_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/zkproc"
)

// requireZooKeeper skips without the Debian packages, unless
// REDLOCK_SIM_REQUIRE_ZOOKEEPER=1 makes their absence a failure.
func requireZooKeeper(t *testing.T) {
	t.Helper()
	if _, err := zkproc.Java(); err != nil {
		if os.Getenv("REDLOCK_SIM_REQUIRE_ZOOKEEPER") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func TestJavaWithoutJDKSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := zkproc.Java()
	require.Error(t, err)
	assert.True(t, errors.Is(err, zkproc.ErrNotInstalled))
	assert.Contains(t, err.Error(), "apt-get install -y zookeeper libcurator-recipes-java default-jdk-headless")
	_, err = zkproc.Start(t.TempDir(), zkproc.Config{Servers: 3, Tick: 200 * time.Millisecond, InitLimit: 10, SyncLimit: 5})
	assert.True(t, errors.Is(err, zkproc.ErrNotInstalled))
}

func TestStartRejectsABadConfig(t *testing.T) {
	requireZooKeeper(t)
	_, err := zkproc.Start(t.TempDir(), zkproc.Config{Servers: 3, InitLimit: 10, SyncLimit: 5})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tick")
}

// TestEnsembleElectsAgainAfterTheLeaderDies starts three servers, kills the leader, sees
// one of the two others lead, restarts the dead one (it rejoins as a follower, from its
// folder), and pauses and resumes a follower (it answers nothing while paused).
func TestEnsembleElectsAgainAfterTheLeaderDies(t *testing.T) {
	requireZooKeeper(t)
	dir := t.TempDir()
	e, err := zkproc.Start(dir, zkproc.Config{Servers: 3, Tick: 200 * time.Millisecond, InitLimit: 10, SyncLimit: 5})
	require.NoError(t, err)
	t.Cleanup(e.Close)
	servers := e.Servers()
	require.Len(t, servers, 3)
	for _, s := range servers {
		assert.True(t, strings.HasPrefix(s.Dir(), dir), "%s under %s", s.Dir(), dir)
		assert.Equal(t, "127.0.0.1", strings.Split(s.Addr(), ":")[0])
		assert.Contains(t, e.ConnectString(), s.Addr())
		cfg, err := os.ReadFile(s.Dir() + "/zoo.cfg")
		require.NoError(t, err)
		assert.Contains(t, string(cfg), "tickTime=200\n")
	}
	leader := e.Leader()
	require.GreaterOrEqual(t, leader, 0)
	modes := e.Modes()
	assert.Equal(t, 1, count(modes, "leader"), "modes %q", modes)
	assert.Equal(t, 2, count(modes, "follower"), "modes %q", modes)

	servers[leader].Kill()
	next, err := e.WaitLeader(time.Minute)
	require.NoError(t, err, "a new leader among the two left")
	assert.NotEqual(t, leader, next)
	_, err = servers[leader].Mode()
	assert.Error(t, err, "a killed server does not answer")

	require.NoError(t, servers[leader].Restart())
	require.Eventually(t, func() bool { m, _ := servers[leader].Mode(); return m == "follower" }, time.Minute, 50*time.Millisecond,
		"the restarted server rejoins under the new leader")
	assert.Equal(t, next, e.Leader(), "a rejoining server does not take the lead")

	follower := 3 - leader - next
	require.NoError(t, servers[follower].Pause())
	_, err = servers[follower].Mode()
	assert.Error(t, err, "a paused server answers nothing")
	require.NoError(t, servers[follower].Resume())
	require.Eventually(t, func() bool { m, _ := servers[follower].Mode(); return m == "follower" }, time.Minute, 50*time.Millisecond)
}

func count(modes []string, mode string) int {
	n := 0
	for _, m := range modes {
		if m == mode {
			n++
		}
	}
	return n
}
