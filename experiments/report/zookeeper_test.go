package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/sim"
)

// zkWorld assembles a built-in ZooKeeper story for seed 1 as `run --scenario` does: its
// client profile first, then its other knobs, then settings.
func zkWorld(t *testing.T, name string, settings ...knobs.KV) *world.World {
	t.Helper()
	sc, err := scenarios.LookupScenario(name)
	require.NoError(t, err)
	params, rest, err := sc.Bind(settings)
	require.NoError(t, err)
	cfg := knobs.DefaultConfig()
	var client, others []knobs.KV
	for _, kv := range append(append([]knobs.KV{}, sc.Knobs...), rest...) {
		if kv.Name == "client" {
			client = append(client, kv)
		} else {
			others = append(others, kv)
		}
	}
	require.NoError(t, cfg.Apply(client))
	require.NoError(t, cfg.Apply(others))
	w, err := world.Plan(cfg, 1)
	require.NoError(t, err)
	require.NoError(t, sc.Configure(w, params))
	require.NoError(t, w.Build())
	require.NoError(t, sc.Setup(w, params))
	return w
}

func zkTimeline(t *testing.T, name string, settings ...knobs.KV) *Timeline {
	t.Helper()
	w := zkWorld(t, name, settings...)
	tc := AttachTimeline(w)
	runWorld(t, w, tc)
	require.NoError(t, tc.Undecoded(), "every record the timeline reads decodes")
	return tc.Finish(name, 1)
}

// TestTimelineOfZKGCPause: zk-gc-pause-fenced's timeline says what governs a Curator lock
// (the session the ensemble negotiated, the tick, the application's choices), not
// Redlock's ttl; its czxid tokens read as zxids; client2's attempt is told by its lock
// node and the one it waited on; the leader's lane shows its role and the instant it
// expired client1's session. Unfenced (zk-gc-pause), its tokens are no zxids.
func TestTimelineOfZKGCPause(t *testing.T) {
	tl := zkTimeline(t, "zk-gc-pause-fenced")
	assert.Equal(t, "curator", tl.Lock.Algorithm)
	assert.Equal(t, "zookeeper", tl.Lock.Service)
	assert.Equal(t, 3*time.Second, tl.Lock.Lease, "the session timeout, not the ttl")
	assert.Equal(t, []string{"session 3s", "zk_tick_time 1s", "on_suspended carry-on", "fence_token czxid", "recipe curator"}, tl.Lock.Settings)
	assert.Equal(t, TokenZxid, tl.Lock.Tokens)
	assert.Equal(t, "0x100000004", tl.Lock.Token(4294967300))
	unfenced := zkTimeline(t, "zk-gc-pause")
	assert.Equal(t, []string{"session 3s", "zk_tick_time 1s", "on_suspended carry-on", "fence_token none", "recipe curator"}, unfenced.Lock.Settings)
	assert.Empty(t, unfenced.Lock.Tokens)
	seq := zkTimeline(t, "zk-gc-pause", knobs.KV{Name: "fence_token", Value: "sequence"})
	assert.Empty(t, seq.Lock.Tokens, "a sequence number reads as a whole number")

	require.Len(t, tl.Clients, 2)
	c1, c2 := tl.Clients[0], tl.Clients[1]
	require.Len(t, c1.Attempts, 1)
	assert.Equal(t, "node 0", c1.Attempts[0].Text)
	require.Len(t, c1.Validity, 1)
	require.NotEmpty(t, tl.Violations)
	for _, v := range tl.Violations {
		if v.Kind == "validity_overlap" {
			assert.InDelta(t, v.EndS, c1.Validity[0].To.Seconds(), 1e-6, "client1 believes in its lock until Curator says LOST, where the oracle's validity overlap ends")
		}
	}
	require.Len(t, c1.Work, 1)
	assert.Greater(t, c1.Work[0].To, c1.Validity[0].To, "carry-on: it works on past LOST, to the end of its hold")
	require.Len(t, c2.Attempts, 1)
	assert.Equal(t, "node 1, waited on 0 (client1)", c2.Attempts[0].Text)
	assert.True(t, c2.Attempts[0].Won)

	require.Len(t, tl.Nodes, 3)
	leader := tl.Nodes[2]
	require.NotEmpty(t, leader.Roles)
	assert.Equal(t, RoleSpan{Span: Span{From: 200 * time.Millisecond, To: tl.Duration}, Role: RoleLeader, Epoch: 1}, leader.Roles[len(leader.Roles)-1])
	assert.Equal(t, RoleFollower, tl.Nodes[0].Roles[len(tl.Nodes[0].Roles)-1].Role)
	var expired []Mark
	for _, m := range leader.Marks {
		if m.Kind == MarkExpire {
			expired = append(expired, m)
		}
	}
	require.Len(t, expired, 1)
	assert.Equal(t, Mark{At: 5 * time.Second, Kind: MarkExpire, Text: "client1's session expired"}, expired[0],
		"3s after client1's last word at 1.020s, on the tick bucket's boundary")
}

// TestTimelineOfZKLeaderCrash: the killed leader's role ends at its kill, the two others
// hold an election and zk2 leads epoch 2; client1's create got no answer, and its retry
// found its node again by the protected create's prefix.
func TestTimelineOfZKLeaderCrash(t *testing.T) {
	tl := zkTimeline(t, "zk-leader-crash")
	require.Len(t, tl.Nodes, 3)
	zk3 := tl.Nodes[2]
	require.NotEmpty(t, zk3.Down)
	last := zk3.Roles[len(zk3.Roles)-1]
	assert.Equal(t, RoleLeader, last.Role)
	assert.Equal(t, zk3.Down[0].From, last.To, "a killed leader leads no more")
	var roles []string
	for _, r := range tl.Nodes[1].Roles {
		roles = append(roles, r.Role)
	}
	assert.Equal(t, []string{RoleFollower, RoleLooking, RoleLeader}, roles)
	assert.Equal(t, uint32(2), tl.Nodes[1].Roles[2].Epoch)
	require.Len(t, tl.Clients[0].Attempts, 1)
	assert.Equal(t, "node 0 (found again)", tl.Clients[0].Attempts[0].Text)
}

// TestTimelineOfRedisHasNoZooKeeper: a Redis story's timeline keeps its TTL as its lease,
// names no settings (its title names the TTL, as before), and its attempts no text.
func TestTimelineOfRedisHasNoZooKeeper(t *testing.T) {
	tl, _ := timeline(t, "gc-pause")
	assert.Equal(t, LockSettings{Algorithm: "redlock", Lease: tl.TTL}, tl.Lock)
	for _, c := range tl.Clients {
		for _, a := range c.Attempts {
			assert.Empty(t, a.Text)
		}
	}
	for _, n := range tl.Nodes {
		assert.Empty(t, n.Roles)
	}
}

// TestNarrationOfZKTokens: a ZooKeeper run's trace prints fencing tokens, session ids and
// zxids in hexadecimal, as ZooKeeper does, and no validity for a lock that has none.
func TestNarrationOfZKTokens(t *testing.T) {
	w := zkWorld(t, "zk-gc-pause-fenced")
	var out bytes.Buffer
	n, err := NewNarrator(w, &out, 0, 0, TraceOptions{})
	require.NoError(t, err)
	runWorld(t, w, n)
	n.Finish()
	require.NoError(t, n.Undecoded())
	text := out.String()
	assert.Contains(t, text, "acquired resource=lock attempt=1 oks=1 token=0x100000004\n")
	assert.Contains(t, text, `client1: write lock "client1" token=0x100000004 → REJECTED`)
	assert.Contains(t, text, "expire session=0x100000000000001 timeout=3s")
	assert.Contains(t, text, "leading epoch=1 zxid=0x0")
	assert.NotContains(t, text, "4294967300")
	assert.NotContains(t, text, "validity=")
	assert.False(t, strings.Contains(text, "session=72057594037927937"))
}

// TestReplayOfZKServers: the replay's states carry each ZooKeeper server's role, and a
// server's clock step is a line the cursor can stop on, as a Redis node's is.
func TestReplayOfZKServers(t *testing.T) {
	w := zkWorld(t, "zk-clock-jump")
	rc, tc, err := AttachReplay(w)
	require.NoError(t, err)
	w.Sim.SetSink(sinks{rc, tc})
	end := sim.Time(w.Config.Duration)
	for {
		at, ok := w.Sim.NextAt()
		if !ok || at > end {
			break
		}
		rc.Until(at)
		if !w.Sim.Step() {
			break
		}
		require.NoError(t, w.Sim.Err())
		rc.AfterEvent()
	}
	require.NoError(t, w.Sim.RunUntil(end))
	w.Oracle.Finish(end)
	rp := rc.Finish(tc, "zk-clock-jump", 1)
	require.NoError(t, rc.Undecoded(tc))
	last := rp.States[len(rp.States)-1]
	var roles []string
	for _, n := range last.Nodes {
		roles = append(roles, n.Role)
	}
	assert.ElementsMatch(t, []string{RoleLeader, RoleFollower, RoleFollower}, roles)
	var jumps []string
	for _, s := range rp.Steps {
		if s.Clock && strings.HasPrefix(s.Actor, "zk") {
			jumps = append(jumps, s.Actor+" "+s.Text)
		}
	}
	assert.NotEmpty(t, jumps, "the servers' clock steps are lines of the replay")
}

// TestLockSettingsSayTheClamp: a session asked for below the ensemble's minimum (2 ticks)
// is named as granted, with what was asked; a knob set away from its default is named,
// and the lease the figure reckons in is the granted session.
func TestLockSettingsSayTheClamp(t *testing.T) {
	w := zkWorld(t, "zk-gc-pause", knobs.KV{Name: "session_timeout", Value: "1s"}, knobs.KV{Name: "acquire_timeout", Value: "30s"})
	ls := lockSettings(w)
	assert.Equal(t, []string{"session 2s (asked 1s, the ensemble's bounds)", "zk_tick_time 1s", "acquire_timeout 30s",
		"on_suspended carry-on", "fence_token none", "recipe curator"}, ls.Settings)
	assert.Equal(t, 2*time.Second, ls.Lease)
}

// TestTimelineOfHybrid: the hybrid lock's timeline names the TTL its Redis keys live by
// beside the session, reads its tokens as whole numbers (its Redis tokens are counters),
// tells its Redis attempts by their OKs and its escalated one by its lock node, and marks
// only the ensemble's lanes as ZooKeeper's.
func TestTimelineOfHybrid(t *testing.T) {
	tl := zkTimeline(t, "hybrid-split")
	require.NotEmpty(t, tl.Lock.Settings)
	assert.Equal(t, "TTL "+tl.TTL.String(), tl.Lock.Settings[0])
	assert.Equal(t, "session 3s", tl.Lock.Settings[1])
	assert.Empty(t, tl.Lock.Tokens)
	var texts []string
	for _, a := range tl.Clients[0].Attempts {
		texts = append(texts, a.Text)
	}
	require.NotEmpty(t, texts)
	assert.Empty(t, texts[0], "a Redis attempt is told by its OKs")
	assert.Regexp(t, `^node \d+`, texts[len(texts)-1], "the escalated attempt took a lock node")
	var services []string
	for _, n := range tl.Nodes {
		services = append(services, n.Name+":"+n.Service)
	}
	assert.Equal(t, []string{"redis1:", "redis2:", "redis3:", "zk1:zookeeper", "zk2:zookeeper", "zk3:zookeeper"}, services)
}

// TestNarrationOfHybrid: the hybrid lock's trace keeps the validity of a lock taken
// through Redis, and prints its ZooKeeper servers' session ids in hexadecimal.
func TestNarrationOfHybrid(t *testing.T) {
	w := zkWorld(t, "hybrid-split")
	var out bytes.Buffer
	n, err := NewNarrator(w, &out, 0, 0, TraceOptions{})
	require.NoError(t, err)
	runWorld(t, w, n)
	n.Finish()
	require.NoError(t, n.Undecoded())
	assert.Regexp(t, `client2 .* acquired resource=lock attempt=1 oks=2 validity=9\.\d+s\n`, out.String())
	assert.Contains(t, out.String(), "session session=0x100000000000001 timeout=3s")
}

// TestTimelineOfZKClockJump: the leader's wall-clock step and the drift change that makes
// it expire sessions early are both marked on its lane (the drift as the slew the
// clock_drift action is); a Redis node's lane keeps marking steps alone.
func TestTimelineOfZKClockJump(t *testing.T) {
	tl := zkTimeline(t, "zk-clock-jump")
	var marks []string
	for _, m := range tl.Nodes[2].Marks {
		if m.Kind == MarkClockJump || m.Kind == MarkClockSlew {
			marks = append(marks, m.Kind+" "+m.Text+" at "+m.At.String())
		}
	}
	assert.Equal(t, []string{"clock-jump clock +1h0m0s at 500ms", "clock-slew clock slews +4.75s at 500000 ppm at 500ms"}, marks)
}
