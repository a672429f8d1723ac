package knobs

import (
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/model/redis"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock"
)

// TestProfilesSetEveryProfileKnob holds each profile to setting every knob in
// ProfileKnobs, in that order, to a valid value: a profile chosen after another leaves
// nothing of the other behind.
func TestProfilesSetEveryProfileKnob(t *testing.T) {
	for _, p := range Profiles() {
		names := make([]string, len(p.Sets))
		for i, kv := range p.Sets {
			names[i] = kv.Name
		}
		assert.Equal(t, ProfileKnobs, names, p.Name)
		c := DefaultConfig()
		require.NoError(t, c.Set("client", p.Name), p.Name)
		for _, kv := range p.Sets {
			canon, err := Canonical(kv.Name, kv.Value)
			require.NoError(t, err)
			assert.Equal(t, canon, c.Get(kv.Name), "%s: %s", p.Name, kv.Name)
		}
		assert.NoError(t, c.Validate(), p.Name)
	}
}

// TestSpecProfileIsTheDefault: the spec profile is the configuration a run gets when no
// client is named, so naming it changes nothing.
func TestSpecProfileIsTheDefault(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Set("client", "redsync"))
	require.NoError(t, c.Set("client", "spec"))
	assert.Equal(t, DefaultConfig(), c)
}

func TestRedsyncProfile(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Apply([]KV{{"ttl", "2s"}, {"client", "redsync"}, {"tries", "3"}}))
	assert.Equal(t, "redsync", c.Client)
	assert.Equal(t, 2*time.Second, c.Lock.TTL, "a knob given with the profile overrides it, wherever it stands")
	assert.Equal(t, 3, c.Lock.Tries)
	assert.Equal(t, redlock.DialectRedsync, c.Lock.Dialect)
	assert.Equal(t, time.Hour, c.Lock.NodeTimeout(), "redsync waits for go-redis's answer, however long")
	assert.Equal(t, 100*time.Millisecond, c.Lock.AcquireContext(), "each attempt's context: 0.05 × the ttl given")
	assert.Equal(t, redis.ConnGoRedis, c.Connection)
	assert.Equal(t, time.Duration(0), c.Lock.DriftPad)
	assert.Equal(t, 1_000_000, c.Lock.MaxExtensions)
}

func TestUnknownClient(t *testing.T) {
	c := DefaultConfig()
	err := c.Set("client", "redsynk")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "client = redsynk")
	assert.Contains(t, err.Error(), "redsync")
	assert.Equal(t, DefaultConfig(), c, "a refused profile changes nothing")
}

func TestClientFirst(t *testing.T) {
	got := ClientFirst([]KV{{"ttl", "1s"}, {"client", "redsync"}, {"tries", "2"}})
	assert.Equal(t, []KV{{"client", "redsync"}, {"ttl", "1s"}, {"tries", "2"}}, got)
}
