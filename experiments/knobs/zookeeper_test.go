package knobs

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/curator"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The curator profile runs Curator's defaults: a 60s session the default ensemble clamps
// to 40s, a 15s connection timeout, ExponentialBackoffRetry(1000, 3).
func TestCuratorProfileIsCuratorsDefaults(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Set("client", "curator"))
	assert.Equal(t, "curator", c.Algorithm)
	assert.Equal(t, curator.Config{SessionTimeout: 40 * time.Second, ConnectionTimeout: 15 * time.Second,
		BaseSleep: time.Second, MaxRetries: 3}, c.CuratorConfig())
	require.NoError(t, c.Set("zk_tick_time", "200ms"))
	require.NoError(t, c.Set("session_timeout", "100ms"))
	assert.Equal(t, 400*time.Millisecond, c.CuratorConfig().SessionTimeout, "raised to 2 ticks")
	require.NoError(t, c.Set("zk_max_session_timeout", "300ms"))
	require.NoError(t, c.Set("zk_min_session_timeout", "200ms"))
	require.NoError(t, c.Set("session_timeout", "1s"))
	assert.Equal(t, 300*time.Millisecond, c.CuratorConfig().SessionTimeout, "cut to the maximum")
	require.NoError(t, c.Set("on_suspended", "stop"))
	require.NoError(t, c.Set("recipe", "naive"))
	assert.Equal(t, curator.Stop, c.CuratorConfig().OnSuspended)
	assert.Equal(t, curator.Naive, c.CuratorConfig().Recipe)
}

// The ZooKeeper knobs cannot change a run without ZooKeeper, and can with it.
func TestZooKeeperKnobsAreInertWithoutCurator(t *testing.T) {
	c := DefaultConfig()
	for _, k := range zkKnobs() {
		assert.Contains(t, c.Inert(k.Name), "algorithm redlock runs no ZooKeeper", k.Name)
	}
	require.NoError(t, c.Set("client", "curator"))
	for _, k := range zkKnobs() {
		assert.Empty(t, c.Inert(k.Name), k.Name)
	}
	assert.Empty(t, c.Inert("nodes"), "nodes is the ensemble's size")
}

// Session bounds that contradict the tick or each other, and an ensemble larger than the
// model's, are refused naming the knob the user set.
func TestCuratorRefusesImpossibleEnsembles(t *testing.T) {
	for _, c := range []struct {
		set  []KV
		knob string
	}{
		{[]KV{{"zk_tick_time", "2s"}, {"zk_min_session_timeout", "1s"}}, "zk_min_session_timeout"},
		{[]KV{{"zk_min_session_timeout", "10s"}, {"zk_max_session_timeout", "5s"}}, "zk_max_session_timeout"},
		{[]KV{{"zk_tick_time", "10s"}, {"zk_max_session_timeout", "15s"}}, "zk_max_session_timeout"},
		{[]KV{{"nodes", "33"}}, "nodes"},
	} {
		cfg := DefaultConfig()
		require.NoError(t, cfg.Apply(append([]KV{{"client", "curator"}}, c.set...)))
		a, err := LookupAlgorithm(cfg.Algorithm)
		require.NoError(t, err)
		_, err = a.New(&cfg)
		var pe *sim.ParamError
		require.True(t, errors.As(err, &pe), "%v: %v", c.set, err)
		assert.Equal(t, c.knob, pe.Param, "%v", c.set)
	}
	for _, bad := range []KV{{"on_suspended", "panic"}, {"recipe", "herd"}, {"zk_tick_time", "0s"}, {"zk_sync_limit", "0"}} {
		cfg := DefaultConfig()
		assert.ErrorContains(t, cfg.Set(bad.Name, bad.Value), bad.Name, bad.Value)
	}
}
