package experiments

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runTimeline(t *testing.T, scenario string, settings ...knobs.KV) (*Record, *report.Timeline) {
	t.Helper()
	var tl report.Timeline
	rec, err := Run(context.Background(), scenario, settings, 1, Options{Timeline: &tl})
	require.NoError(t, err)
	return rec, &tl
}

// TestTimelineDoesNotChangeTheRun: the timeline only reads, so a run with it (alone or
// with the narrated trace) has the same trace hash, events and metrics as one without.
func TestTimelineDoesNotChangeTheRun(t *testing.T) {
	for _, sc := range []string{"gc-pause", "failover-race", "clock-jump", "restart-no-persistence",
		"split-brain-no-jitter", "delayed-packet", "extension"} {
		t.Run(sc, func(t *testing.T) {
			plain, err := Run(context.Background(), sc, nil, 1, Options{})
			require.NoError(t, err)
			withTL, tl := runTimeline(t, sc)
			var trace bytes.Buffer
			var tl2 report.Timeline
			both, err := Run(context.Background(), sc, nil, 1, Options{Trace: &trace, Timeline: &tl2})
			require.NoError(t, err)
			for _, r := range []*Record{withTL, both} {
				assert.Equal(t, plain.TraceHash, r.TraceHash)
				assert.Equal(t, plain.Events, r.Events)
				assert.Equal(t, plain.Metrics(), r.Metrics())
			}
			assert.Equal(t, tl, &tl2, "the timeline does not depend on the trace being narrated")
			assert.NotEmpty(t, trace.String())
		})
	}
}

func TestTimelineGCPause(t *testing.T) {
	rec, tl := runTimeline(t, "gc-pause")
	assert.Equal(t, "gc-pause", tl.Scenario)
	assert.Equal(t, 3*time.Second, tl.Duration)
	assert.Equal(t, time.Second, tl.TTL)
	require.Len(t, tl.Clients, 2)
	require.Len(t, tl.Nodes, 5)
	c1, c2 := tl.Clients[0], tl.Clients[1]

	// client1's GC pause: scheduled at 100ms for 1.5s.
	assert.Equal(t, []report.Span{{From: 100 * time.Millisecond, To: 1600 * time.Millisecond}}, c1.Pauses)
	assert.Empty(t, c2.Pauses)
	// client1 worked from its acquisition through the pause; its validity ended ~1s later.
	require.Len(t, c1.Work, 1)
	assert.Equal(t, 1600*time.Millisecond, c1.Work[0].To)
	require.Len(t, c1.Validity, 1)
	assert.Equal(t, c1.Work[0].From, c1.Validity[0].From)
	assert.Less(t, c1.Validity[0].To, time.Second)
	// client2 won its 7th attempt, after six lost to client1's keys.
	require.Len(t, c2.Attempts, 7)
	for _, a := range c2.Attempts[:6] {
		assert.False(t, a.Won)
		assert.Equal(t, "no-quorum", a.Reason)
		assert.Zero(t, a.OKs)
	}
	assert.True(t, c2.Attempts[6].Won)
	assert.Equal(t, 5, c2.Attempts[6].OKs)
	require.Len(t, c2.Validity, 1)
	assert.Equal(t, c2.Attempts[6].To, c2.Validity[0].From)

	// Each node held client1's key until it expired, then client2's until its release.
	for _, n := range tl.Nodes {
		require.Len(t, n.Keys, 2, n.Name)
		k1, k2 := n.Keys[0], n.Keys[1]
		assert.Equal(t, 0, k1.Client)
		assert.Equal(t, report.KeyExpired, k1.Ended)
		assert.InDelta(t, float64(time.Second), float64(k1.To), float64(2*time.Millisecond), n.Name)
		assert.Equal(t, 1, k2.Client)
		assert.Equal(t, report.KeyDeleted, k2.Ended)
		assert.Greater(t, k2.From, k1.To)
		assert.Less(t, k2.From, c2.Validity[0].From)
	}

	// The two writes client1 makes as it wakes are stale and accepted.
	require.Len(t, c1.Writes, 3)
	assert.False(t, c1.Writes[0].Stale)
	for _, w := range c1.Writes[1:] {
		assert.Equal(t, 1600*time.Millisecond, w.Sent)
		assert.True(t, w.Arrived && w.Accepted && w.Stale && !w.Fenced)
		assert.Greater(t, w.At, w.Sent)
	}
	for _, w := range c2.Writes {
		assert.True(t, w.Accepted)
		assert.False(t, w.Stale)
	}

	// The usage overlap names both clients, as the record does.
	require.NotEmpty(t, tl.Violations)
	assert.Equal(t, rec.Violations, tl.Violations)
	v := tl.Violations[0]
	assert.Equal(t, oracle.KindUsageOverlap, v.Kind)
	assert.Equal(t, "client1", v.First)
	assert.Equal(t, "client2", v.Second)
	assert.InDelta(t, c2.Validity[0].From.Seconds(), v.StartS, 1e-6)
	assert.InDelta(t, 1.6, v.EndS, 1e-9)
	assert.Empty(t, tl.NetFaults)
	assert.False(t, tl.Truncated)
}

func TestTimelineFencedWritesRejected(t *testing.T) {
	_, tl := runTimeline(t, "gc-pause-fenced")
	c1 := tl.Clients[0]
	require.Len(t, c1.Writes, 3)
	assert.True(t, c1.Writes[0].Accepted)
	for _, w := range c1.Writes[1:] {
		assert.True(t, w.Arrived && w.Fenced)
		assert.False(t, w.Accepted || w.Stale)
		assert.Less(t, w.Token, tl.Clients[1].Writes[0].Token)
	}
}

func TestTimelineFailoverRace(t *testing.T) {
	_, tl := runTimeline(t, "failover-race")
	require.Len(t, tl.Nodes, 2)
	master, replica := tl.Nodes[0], tl.Nodes[1]
	assert.Equal(t, "redis1.0", master.Name)
	assert.Equal(t, "redis1", master.Group)
	assert.Equal(t, "redis1.1", replica.Name)
	// The master took client1's key and lost it in the crash, before replicating it.
	require.Len(t, master.Keys, 1)
	assert.Equal(t, 0, master.Keys[0].Client)
	assert.Equal(t, report.KeyLost, master.Keys[0].Ended)
	require.Len(t, master.Down, 1)
	assert.Equal(t, master.Keys[0].To, master.Down[0].From)
	assert.Equal(t, tl.Duration, master.Down[0].To)
	require.Len(t, master.Marks, 1)
	assert.Equal(t, report.MarkCrash, master.Marks[0].Kind)
	// The replica, promoted 500ms later, gave the lock to client2.
	require.Len(t, replica.Marks, 1)
	assert.Equal(t, report.MarkFailover, replica.Marks[0].Kind)
	assert.Equal(t, master.Down[0].From+500*time.Millisecond, replica.Marks[0].At)
	require.Len(t, replica.Keys, 1)
	assert.Equal(t, 1, replica.Keys[0].Client)
	assert.Greater(t, replica.Keys[0].From, replica.Marks[0].At)
}

func TestTimelineClockJumpAndPartition(t *testing.T) {
	_, tl := runTimeline(t, "clock-jump")
	c := tl.Nodes[2]
	require.Len(t, c.Marks, 1)
	assert.Equal(t, report.Mark{At: 150 * time.Millisecond, Kind: report.MarkClockJump, Text: "clock +2s"}, c.Marks[0])
	require.Len(t, c.Keys, 2)
	assert.Equal(t, report.Span{From: 411 * time.Microsecond, To: 150 * time.Millisecond}, report.Span{From: c.Keys[0].From.Round(time.Microsecond), To: c.Keys[0].To})
	assert.Equal(t, report.KeyExpired, c.Keys[0].Ended)
	assert.Equal(t, 1, c.Keys[1].Client)
	var cuts []string
	for _, f := range tl.NetFaults {
		assert.Equal(t, "cut", f.Kind)
		assert.Equal(t, report.Span{From: 0, To: tl.Duration}, f.Span)
		cuts = append(cuts, f.A+"|"+f.B)
	}
	assert.Equal(t, []string{"client1|redis4", "client1|redis5", "client2|redis1", "client2|redis2"}, cuts)
}

func TestTimelineRestart(t *testing.T) {
	_, tl := runTimeline(t, "restart-no-persistence")
	c := tl.Nodes[2]
	require.Len(t, c.Down, 1)
	assert.Equal(t, report.Span{From: 110 * time.Millisecond, To: 120 * time.Millisecond}, report.Span{From: c.Down[0].From.Round(time.Millisecond), To: c.Down[0].To.Round(time.Millisecond)})
	require.Len(t, c.Marks, 2)
	assert.Equal(t, report.Mark{At: c.Down[0].From, Kind: report.MarkCrash, Text: "crash"}, c.Marks[0])
	assert.Equal(t, report.Mark{At: c.Down[0].To, Kind: report.MarkRestart, Text: "restart, 0 keys"}, c.Marks[1])
	require.Len(t, c.Keys, 2)
	assert.Equal(t, report.KeyLost, c.Keys[0].Ended)
	assert.Equal(t, 0, c.Keys[0].Client)
	assert.Equal(t, 1, c.Keys[1].Client)
}

func TestTimelineLimit(t *testing.T) {
	_, tl := runTimeline(t, "baseline", knobs.KV{Name: "duration", Value: "2s"})
	assert.False(t, tl.Truncated)
}
