package search

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
)

// TestAFindingPastTheRecordsListIsStillShown: a record lists only its first
// oracle.MaxViolations violations; a stale write counted after 64 overlaps is still a
// stale write to Shows (the replay check of a shrunk finding) and to its story (found by
// a curator search: "stale_write.yaml replays without a stale_write").
func TestAFindingPastTheRecordsListIsStillShown(t *testing.T) {
	rec := &experiments.Record{}
	rec.Safety.StaleWritesAccepted = 2
	rec.Safety.UsageOverlaps = oracle.MaxViolations
	rec.Violations = make([]oracle.Violation, oracle.MaxViolations)
	for i := range rec.Violations {
		rec.Violations[i].Kind = "usage_overlap"
	}
	assert.True(t, Shows("stale_write", rec))
	assert.True(t, Shows("usage_overlap", rec))
	assert.False(t, Shows("validity_overlap", rec))
	assert.False(t, Shows("no_such_kind", rec))
	assert.Equal(t, "Then 2 stale writes (after the first 64 violations, which the record lists: the trace shows them all).",
		outcome("stale_write", rec))
}

// TestAZooKeeperWorldDrawsItsOwnServers: a search of curator's (or the hybrid's) worlds
// names their servers as the world does (zk1…, and the hybrid's redis1… too), never draws
// a Redis-only fault on a ZooKeeper server (a key written outside the lock, a failover),
// and every world it draws runs (the first curator search failed on "redis1").
func TestAZooKeeperWorldDrawsItsOwnServers(t *testing.T) {
	for _, client := range []string{"curator", "hybrid"} {
		s := spec(t, "all")
		s.Client = client
		for seed := uint64(1); seed <= 40; seed++ {
			c := s.Draw(seed)
			for _, name := range c.Servers[c.Masters:] {
				assert.Regexp(t, `^zk\d+$`, name)
			}
			for _, name := range c.Servers[:c.Masters] {
				assert.Regexp(t, `^redis\d+$`, name)
			}
			for _, f := range c.Faults {
				if f.Kind == "outside_lock" || f.Kind == "failover" {
					assert.Regexp(t, `^redis\d+$`, f.Action.Node, "%s: %s", client, f.Text)
				}
			}
			_, err := experiments.RunScenario(context.Background(), c.Scenario("search-run"), nil, seed, experiments.Options{})
			require.NoError(t, err, "%s seed %d:\n%s", client, seed, c.YAML("x", "", "", ""))
		}
	}
}
