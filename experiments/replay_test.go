package experiments_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// TestReplayIsTheSameRun: stepping a run one event at a time for the viewer changes
// nothing about it (record, trace hash), and its steps are the narrated trace's lines, in
// order, word for word, but for the lines the replay adds for clock jumps (Step.Clock),
// which no event marks.
func TestReplayIsTheSameRun(t *testing.T) {
	for _, sc := range scenarios.Scenarios() {
		for seed := uint64(1); seed <= 2; seed++ {
			rp, rec, err := experiments.ReplayScenario(context.Background(), &sc, nil, seed)
			require.NoError(t, err, sc.Name)
			var trace bytes.Buffer
			plain, err := experiments.RunScenario(context.Background(), &sc, nil, seed, experiments.Options{Trace: &trace})
			require.NoError(t, err, sc.Name)
			rec.WallTimeS, plain.WallTimeS = 0, 0
			require.Equal(t, plain, rec, "%s seed %d: the replay's record", sc.Name, seed)
			if rp.Truncated {
				continue
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimRight(trace.String(), "\n"), "\n") {
				if strings.HasPrefix(l, "       ") && strings.Contains(l, "                ") && strings.HasPrefix(strings.TrimSpace(l), "[") {
					continue // a fault spelled out under a violation: the step's Notes
				}
				lines = append(lines, l)
			}
			var told []report.Step
			for _, st := range rp.Steps {
				if !st.Clock {
					told = append(told, st)
				}
			}
			for i, st := range rp.Steps {
				if i > 0 {
					require.GreaterOrEqual(t, st.AtNs, rp.Steps[i-1].AtNs, "%s step %d: steps in time order", sc.Name, i)
					require.GreaterOrEqual(t, st.State, rp.Steps[i-1].State, "%s step %d", sc.Name, i)
				}
			}
			rp.Steps = told
			require.Len(t, rp.Steps, len(lines), "%s seed %d: one step per narrated line", sc.Name, seed)
			for i, st := range rp.Steps {
				require.True(t, strings.HasSuffix(lines[i], " "+st.Text), "%s seed %d step %d: %q is not line %q", sc.Name, seed, i, st.Text, lines[i])
				require.Contains(t, lines[i], " "+st.Actor+" ", "%s step %d", sc.Name, i)
				require.Less(t, st.State, len(rp.States), "%s step %d", sc.Name, i)
			}
		}
	}
}

// TestReplayGCPause reads the gc-pause story's replay as a student would at its
// violation: what each actor holds and believes then.
func TestReplayGCPause(t *testing.T) {
	sc, err := scenarios.LookupScenario("gc-pause")
	require.NoError(t, err)
	rp, rec, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	require.Equal(t, int64(1), rec.Safety.UsageOverlaps)
	v := -1
	for i, st := range rp.Steps {
		if st.Violation == 0 {
			v = i
			break
		}
	}
	require.GreaterOrEqual(t, v, 0, "a step reports the first violation")
	st := rp.Steps[v]
	assert.Equal(t, "oracle", st.Actor)
	assert.Equal(t, "**", st.Marker)
	assert.Equal(t, "violations", st.Kind)
	assert.Equal(t, []string{"client1", "client2"}, st.Peers)
	assert.Equal(t, []string{"[1] client1 paused since 100ms"}, st.Notes)
	s := rp.States[st.State]
	require.Len(t, s.Nodes, 5)
	for i, n := range s.Nodes {
		assert.Equal(t, "up", n.Status, "node %d", i)
		require.Len(t, n.Keys, 1, "node %d", i)
		assert.Equal(t, 1, n.Keys[0].Client, "node %d holds client2's key", i)
		assert.InDelta(t, 1000, n.Keys[0].PTTLMs, 2, "node %d: client2's key was just set with PX 1000", i)
	}
	c1, c2 := s.Clients[0], s.Clients[1]
	assert.Equal(t, "holding", c1.Status)
	assert.True(t, c1.Paused)
	assert.Less(t, c1.ValidNs, int64(-200*time.Millisecond), "client1's deadline passed during its pause")
	assert.Equal(t, "holding", c2.Status)
	assert.False(t, c2.Paused)
	assert.Greater(t, c2.ValidNs, int64(900*time.Millisecond))
	assert.Equal(t, []int64{0}, s.Tokens, "no fencing in this story")

	// Messages: each reply is paired with the request it answers, and each command line
	// points at its request.
	for i, m := range rp.Messages {
		assert.LessOrEqual(t, m.SentNs, m.AtNs, "message %d", i)
		if m.Kind == "reply" && m.Pair >= 0 {
			q := rp.Messages[m.Pair]
			assert.Equal(t, "request", q.Kind)
			assert.Equal(t, [2]string{m.From, m.To}, [2]string{q.To, q.From}, "message %d", i)
			assert.Equal(t, i, q.Pair)
			assert.LessOrEqual(t, q.AtNs, m.SentNs, "message %d: a reply leaves after its request arrives", i)
		}
	}
	cmds := 0
	for i, st := range rp.Steps {
		if st.Kind == "commands" && strings.HasPrefix(st.Actor, "redis") && strings.HasPrefix(st.Text, "SET ") {
			require.GreaterOrEqual(t, st.Msg, 0, "step %d: a command line points at its message", i)
			m := rp.Messages[st.Msg]
			assert.Equal(t, st.Actor, m.To, "step %d", i)
			assert.Equal(t, st.Peers[0], m.From, "step %d", i)
			assert.True(t, strings.HasPrefix(st.Text, m.Text), "step %d: %q runs %q", i, st.Text, m.Text)
			cmds++
		}
	}
	assert.Greater(t, cmds, 10)
}

// TestReplayStatesAgreeWithTimeline: every key a state shows is inside a key span the
// timeline draws for that node and client, so the diagram and the state panel never
// disagree.
func TestReplayStatesAgreeWithTimeline(t *testing.T) {
	for _, name := range []string{"restart-no-persistence", "clock-jump", "split-brain-jitter", "failover-race", "holder-crash"} {
		sc, err := scenarios.LookupScenario(name)
		require.NoError(t, err)
		rp, _, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
		require.NoError(t, err)
		tl := rp.Timeline
		seen := 0
		for i, st := range rp.Steps {
			s := rp.States[st.State]
			require.Len(t, s.Nodes, len(tl.Nodes))
			for n, ns := range s.Nodes {
				for _, k := range ns.Keys {
					in := false
					for _, ks := range tl.Nodes[n].Keys {
						if ks.Client == k.Client && ks.Value == k.Value && ks.From.Nanoseconds() <= st.AtNs && st.AtNs <= ks.To.Nanoseconds() {
							in = true
						}
					}
					require.True(t, in, "%s step %d: %s holds %q, but no key span of the timeline covers %v", name, i, tl.Nodes[n].Name, k.Value, time.Duration(st.AtNs))
					seen++
				}
				if ns.Status == "down" {
					down := false
					for _, d := range tl.Nodes[n].Down {
						down = down || (d.From.Nanoseconds() <= st.AtNs && st.AtNs <= d.To.Nanoseconds())
					}
					require.True(t, down, "%s step %d: %s down outside its down spans", name, i, tl.Nodes[n].Name)
				}
			}
		}
		assert.Greater(t, seen, 0, name)
	}
}

// TestReplayTruncates: a run longer than a class steps through keeps MaxReplaySteps
// steps and says so; its record still covers the whole run.
func TestReplayTruncates(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-minute contended run")
	}
	sc, err := scenarios.LookupScenario("baseline")
	require.NoError(t, err)
	rp, rec, err := experiments.ReplayScenario(context.Background(), sc, []knobs.KV{{Name: "duration", Value: "3m"}}, 1)
	require.NoError(t, err)
	assert.True(t, rp.Truncated)
	assert.Equal(t, report.MaxReplaySteps, len(rp.Steps))
	assert.Equal(t, 180.0, rec.SimTimeS)
	plain, err := experiments.RunScenario(context.Background(), sc, []knobs.KV{{Name: "duration", Value: "3m"}}, 1, experiments.Options{})
	require.NoError(t, err)
	assert.Equal(t, plain.TraceHash, rec.TraceHash)
}

// TestReplayClockJumpIsAStep: clock-jump's wall-clock step on redis3 at 150 ms is no event
// of the run, yet the replay has a line for it at that instant, whose state shows redis3's
// clock 2 s ahead and client1's key gone from it (expired on the jumped clock), so a
// viewer's cursor can stop just after the jump.
func TestReplayClockJumpIsAStep(t *testing.T) {
	sc, err := scenarios.LookupScenario("clock-jump")
	require.NoError(t, err)
	rp, _, err := experiments.ReplayScenario(context.Background(), sc, nil, 1)
	require.NoError(t, err)
	var jumps []report.Step
	for _, st := range rp.Steps {
		if st.Clock {
			jumps = append(jumps, st)
		}
	}
	require.Len(t, jumps, 1)
	j := jumps[0]
	assert.Equal(t, int64(150*time.Millisecond), j.AtNs)
	assert.Equal(t, "redis3", j.Actor)
	assert.Equal(t, "!!", j.Marker)
	assert.Equal(t, "faults", j.Kind)
	assert.Equal(t, "[wall 2.150s]", j.Local)
	assert.Contains(t, j.Text, "clock-step by=+2s")
	s := rp.States[j.State]
	assert.Equal(t, int64(2150*time.Millisecond), s.Nodes[2].WallNs-rp.States[0].Nodes[2].WallNs+rp.Steps[0].AtNs, "redis3's wall clock reads 2.150 s")
	assert.Empty(t, s.Nodes[2].Keys, "client1's key expired on redis3's jumped clock")
	require.Len(t, s.Nodes[0].Keys, 1, "redis1 still holds client1's key")
	assert.Equal(t, 0, s.Nodes[0].Keys[0].Client)
}
