package knobs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Under algorithm hybrid the ZooKeeper knobs and zk_servers can change a run, and the
// Redlock knobs still can; zk_servers cannot without it, curator's ensemble being nodes.
func TestHybridKnobsAreLiveOnlyUnderHybrid(t *testing.T) {
	c := DefaultConfig()
	assert.Contains(t, c.Inert("zk_servers"), "algorithm redlock is not hybrid")
	require.NoError(t, c.Set("client", "curator"))
	assert.Contains(t, c.Inert("zk_servers"), "curator's ensemble is nodes")
	c = DefaultConfig()
	require.NoError(t, c.Set("algorithm", "hybrid"))
	for _, k := range append(zkKnobs(), hybridKnobs()...) {
		assert.Empty(t, c.Inert(k.Name), k.Name)
	}
	for _, name := range []string{"nodes", "ttl", "tries", "retry_delay", "retry_jitter", "drift_factor", "connection"} {
		assert.Empty(t, c.Inert(name), name)
	}
	require.NoError(t, c.Set("tries", "1"))
	assert.NotEmpty(t, c.Inert("retry_delay"), "one try: neither side retries")
	require.NoError(t, c.Set("variant", "single-instance"))
	assert.Contains(t, c.Inert("nodes"), "talks to one node", "the Redis part has one master")
}

// The hybrid's clients address the nodes Redis masters and then zk_servers ZooKeeper
// servers; the knob's range is the ensemble's.
func TestHybridServers(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Apply([]KV{{"algorithm", "hybrid"}, {"nodes", "3"}, {"zk_servers", "5"}}))
	a, err := LookupAlgorithm(c.Algorithm)
	require.NoError(t, err)
	assert.Equal(t, 8, a.Servers(&c))
	assert.Equal(t, 3, a.RedisMasters(&c))
	_, err = a.New(&c)
	require.NoError(t, err)
	assert.ErrorContains(t, c.Set("zk_servers", "0"), "zk_servers")
	r, err := LookupAlgorithm("redlock")
	require.NoError(t, err)
	assert.Equal(t, r.Servers(&c), r.RedisMasters(&c))
	cur, err := LookupAlgorithm("curator")
	require.NoError(t, err)
	assert.Zero(t, cur.RedisMasters(&c))
}
