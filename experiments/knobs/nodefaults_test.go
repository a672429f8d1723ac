package knobs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// TestEveryRandomNodeFaultIsKnobsInertAndBounded walks RandomNodeFaults: each is a fault
// that lasts, its two knobs exist and are what RateOf and LenOf read, its length knob is
// inert while its rate is 0 and names that rate, and a rate that makes more faults than a
// run holds is refused with what the row says it counts.
func TestEveryRandomNodeFaultIsKnobsInertAndBounded(t *testing.T) {
	streams := map[string]bool{}
	for _, r := range RandomNodeFaults() {
		d, ok := r.Kind.Desc()
		require.True(t, ok, "%s: kind %d", r.Rate, r.Kind)
		assert.True(t, d.Lasts(), "%s: a %s does not last, so it has no length", r.Rate, d.Name)
		assert.False(t, streams[r.Stream], "%s: stream %s is another's", r.Rate, r.Stream)
		streams[r.Stream] = true
		for _, name := range []string{r.Rate, r.Len} {
			_, err := LookupParam(name)
			assert.NoError(t, err, "%s is no knob", name)
		}
		assert.NotEmpty(t, r.Counted, r.Rate)
		assert.NotEmpty(t, r.Own, r.Rate)

		c := DefaultConfig()
		require.Zero(t, r.RateOf(&c), "%s is off by default", r.Rate)
		assert.Contains(t, c.Inert(r.Len), r.Rate+" is 0", r.Len)
		assert.Contains(t, c.Inert(r.Len), r.LenIs, r.Len)
		require.NoError(t, c.Apply([]KV{{Name: r.Rate, Value: "0.5"}, {Name: r.Len, Value: "const(2s)"}}))
		assert.Equal(t, 0.5, r.RateOf(&c))
		assert.Equal(t, dist.Constant(2e9), r.LenOf(&c))
		assert.Empty(t, c.Inert(r.Len), "%s tunes the run once %s is set", r.Len, r.Rate)

		require.NoError(t, c.Apply([]KV{{Name: "duration", Value: "10000h"}, {Name: r.Rate, Value: "10"}}))
		var le *LimitError
		require.ErrorAs(t, c.Validate(), &le, r.Rate)
		assert.Equal(t, r.Rate, le.Knobs[0].Name)
		assert.Equal(t, r.Counted, le.What)
	}
}

// TestNodesInertOnOneMaster: nodes cannot change a run whose clients lock on one master
// (a single-instance variant, or an algorithm with its own number of masters), and says
// which knob decides; with Redlock's own variant it is N and tunes the run.
func TestNodesInertOnOneMaster(t *testing.T) {
	c := DefaultConfig()
	assert.Empty(t, c.Inert("nodes"))
	require.NoError(t, c.Apply([]KV{{Name: "variant", Value: "single-instance-failover"}}))
	assert.Contains(t, c.Inert("nodes"), "variant single-instance-failover talks to one node")
	c = DefaultConfig()
	require.NoError(t, c.Apply([]KV{{Name: "algorithm", Value: "redisson"}}))
	assert.Contains(t, c.Inert("nodes"), "algorithm redisson locks on 1")
	c = DefaultConfig()
	require.NoError(t, c.Apply([]KV{{Name: "algorithm", Value: "redisson-redlock"}}))
	assert.Empty(t, c.Inert("nodes"), "RedissonRedLock takes an RLock on each of the nodes masters")
}

// TestContextFactorInertWithoutGoRedis: the context a library hands its driver changes a
// run only when the driver reads contexts (connection=go-redis, the redsync profile's).
func TestContextFactorInertWithoutGoRedis(t *testing.T) {
	c := DefaultConfig()
	assert.Contains(t, c.Inert("context_factor"), "connection = queued has no retries that read one")
	require.NoError(t, c.Apply([]KV{{Name: "client", Value: "redsync"}}))
	assert.Empty(t, c.Inert("context_factor"))
}
