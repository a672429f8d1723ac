package plots

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/report"
)

func timeline(t *testing.T, scenario string, knobs ...knobs.KV) *report.Timeline {
	t.Helper()
	var tl report.Timeline
	_, err := experiments.Run(context.Background(), scenario, knobs, 1, experiments.Options{Timeline: &tl})
	require.NoError(t, err)
	return &tl
}

func shapesOf(L *tlLayout, k shapeKind, lane string) []shape {
	var out []shape
	for _, s := range L.Shapes {
		if s.Kind == k && (lane == "" || s.Lane >= 0 && L.Lanes[s.Lane].Name == lane) {
			out = append(out, s)
		}
	}
	return out
}

func TestTimelineLayoutGCPause(t *testing.T) {
	tl := timeline(t, "gc-pause")
	win := DefaultWindow(tl)
	assert.Equal(t, time.Duration(0), win.From, "two TTLs before the overlap reach back to the start")
	assert.Greater(t, win.To, 2014*time.Millisecond, "client2's release is in view")
	assert.Less(t, win.To, tl.Duration)

	L := layoutTimeline(tl, win, "")
	var names []string
	for _, l := range L.Lanes {
		names = append(names, l.Label)
	}
	assert.Equal(t, []string{"violations", "redis1 (A)", "redis2 (B)", "redis3 (C)", "redis4 (D)", "redis5 (E)", "client1", "client2"}, names)
	assert.Contains(t, L.Title, "gc-pause, seed 1 — lock: UNSAFE (1 usage overlap) · resource: UNSAFE (2 stale writes accepted)")
	assert.Contains(t, L.Subtitle, "client1 pauses (GC)")

	pause := shapesOf(L, shPause, "client1")
	require.Len(t, pause, 1)
	assert.Equal(t, [2]float64{0.1, 1.6}, [2]float64{pause[0].X0, pause[0].X1})
	assert.Equal(t, "pause 1.5s", pause[0].Label)

	v := shapesOf(L, shViolation, "")
	require.Len(t, v, 1)
	assert.Equal(t, "usage overlap: client1 & client2", v[0].Label)
	assert.InDelta(t, 1.21441, v[0].X0, 1e-6)
	assert.Equal(t, 1.6, v[0].X1)
	stale := shapesOf(L, shStaleMark, "oracle")
	require.Len(t, stale, 1, "the two stale writes, microseconds apart, are one mark")
	assert.Equal(t, "2 stale writes by client1", stale[0].Label)
	assert.Len(t, shapesOf(L, shWriteStale, "client1"), 2)

	for _, n := range []string{"redis1", "redis3", "redis5"} {
		keys := shapesOf(L, shKey, n)
		require.Len(t, keys, 2, n)
		assert.Equal(t, "client1", keys[0].Label)
		assert.Equal(t, 0, keys[0].Client)
		assert.Equal(t, "client2", keys[1].Label)
		assert.InDelta(t, 1.001, keys[0].X1, 1e-9, "client1's key expires 1s after the SET, to the node's millisecond")
	}
	won := shapesOf(L, shAttemptWon, "client2")
	require.Len(t, won, 1)
	assert.Equal(t, "5/5", won[0].Label)
	assert.Len(t, shapesOf(L, shAttemptLost, "client2"), 6)
}

// TestTimelineTitleTwoVerdicts: with fencing, the lock still fails (a usage overlap) but
// the resource is safe (the storage rejected the late writes); the title says both.
func TestTimelineTitleTwoVerdicts(t *testing.T) {
	tl := timeline(t, "gc-pause-fenced")
	L := layoutTimeline(tl, DefaultWindow(tl), "")
	assert.Contains(t, L.Title, "gc-pause-fenced, seed 1 — lock: UNSAFE (1 usage overlap) · resource: SAFE (fencing rejected 2 writes)")

	tl = timeline(t, "baseline", knobs.KV{Name: "duration", Value: "2s"})
	L = layoutTimeline(tl, DefaultWindow(tl), "")
	assert.Contains(t, L.Title, "baseline, seed 1 — lock: SAFE · resource: SAFE   [")

	assert.Equal(t, "lock: UNSAFE (2 validity overlaps, 1 usage overlap) · resource: UNSAFE (1 stale write accepted, fencing rejected 1 write)",
		verdicts(countViolations([]oracle.Violation{{Kind: oracle.KindValidityOverlap}, {Kind: oracle.KindValidityOverlap},
			{Kind: oracle.KindUsageOverlap}, {Kind: oracle.KindStaleWrite}, {Kind: oracle.KindFencedRejected}}), false))
}

// TestTimelineTitleCountsTheWholeRun: a record keeps only the first MaxViolations
// violations; the title takes the run's counts when given them, and says "at least" when
// it has only the kept list, so a stale write after the 64th overlap is never called safe.
func TestTimelineTitleCountsTheWholeRun(t *testing.T) {
	var tl report.Timeline
	rec, err := experiments.Run(context.Background(), "baseline", []knobs.KV{{Name: "duration", Value: "5m"},
		{Name: "pause_rate", Value: "0.05"}, {Name: "pause_len", Value: "exp(0s,2s)"}, {Name: "ttl", Value: "1s"}}, 1,
		experiments.Options{Timeline: &tl})
	require.NoError(t, err)
	require.Len(t, tl.Violations, oracle.MaxViolations, "more violations than a record keeps")
	win := report.Span{From: 0, To: tl.Duration}
	title := timelineTitle(&tl, win, &rec.Safety)
	assert.Contains(t, title, fmt.Sprintf("lock: UNSAFE (%d usage overlaps)", rec.Safety.UsageOverlaps))
	assert.Contains(t, title, fmt.Sprintf("resource: UNSAFE (%d stale writes accepted)", rec.Safety.StaleWritesAccepted))
	assert.Contains(t, timelineTitle(&tl, win, nil), "lock: UNSAFE (at least ")
}

func TestTimelineLayoutWindowClips(t *testing.T) {
	tl := timeline(t, "gc-pause")
	L := layoutTimeline(tl, report.Span{From: 500 * time.Millisecond, To: time.Second}, "")
	assert.Equal(t, "redis1", L.Lanes[0].Name, "no violation in the window: no violations lane")
	pause := shapesOf(L, shPause, "client1")
	require.Len(t, pause, 1)
	assert.Equal(t, [2]float64{0.5, 1}, [2]float64{pause[0].X0, pause[0].X1})
	assert.Empty(t, shapesOf(L, shKey, "client2"))
	for _, s := range L.Shapes {
		assert.GreaterOrEqual(t, s.X0, 0.5)
		assert.LessOrEqual(t, s.X1, 1.0)
	}
}

func TestTimelineLayoutFaults(t *testing.T) {
	tl := timeline(t, "clock-jump")
	L := layoutTimeline(tl, DefaultWindow(tl), "")
	jump := shapesOf(L, shClockJump, "redis3")
	require.Len(t, jump, 1)
	assert.Equal(t, 0.15, jump[0].X0)
	assert.Equal(t, "clock +2s", jump[0].Label)
	cuts := shapesOf(L, shCut, "redis4")
	require.Len(t, cuts, 1)
	assert.Equal(t, "cut ↔ client1", cuts[0].Label)
	v := shapesOf(L, shViolation, "")
	require.Len(t, v, 1)
	assert.Equal(t, "validity + usage overlap: client1 & client2", v[0].Label)

	tl = timeline(t, "failover-race")
	L = layoutTimeline(tl, DefaultWindow(tl), "")
	assert.Equal(t, "redis1.0", L.Lanes[1].Label, "no letters for a group with replicas")
	assert.Len(t, shapesOf(L, shDown, "redis1.0"), 1)
	assert.Len(t, shapesOf(L, shFailover, "redis1.1"), 1)

	tl = timeline(t, "replies-in-flight")
	L = layoutTimeline(tl, DefaultWindow(tl), "")
	lost := shapesOf(L, shAttemptLost, "client1")
	require.NotEmpty(t, lost)
	assert.Equal(t, "5/5 OK, but too late: validity expired|5/5", lost[0].Label)
}

func TestDefaultWindowWithoutViolation(t *testing.T) {
	tl := timeline(t, "baseline", knobs.KV{Name: "duration", Value: "10s"})
	w := DefaultWindow(tl)
	assert.Equal(t, time.Duration(0), w.From)
	assert.Less(t, w.To, 2*time.Second, "a dozen lock cycles, not ten seconds of them")
	var works int
	for _, c := range tl.Clients {
		for _, s := range c.Work {
			if s.To <= w.To {
				works++
			}
		}
	}
	assert.GreaterOrEqual(t, works, 12)
}

func TestResolveWindow(t *testing.T) {
	tl := &report.Timeline{Duration: 3 * time.Second}
	w, err := ResolveWindow(tl, &report.Span{From: time.Second})
	require.NoError(t, err)
	assert.Equal(t, report.Span{From: time.Second, To: 3 * time.Second}, w, "To 0 is the end")
	w, err = ResolveWindow(tl, &report.Span{From: time.Second, To: time.Hour})
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, w.To, "clipped to the run")
	_, err = ResolveWindow(tl, &report.Span{From: 5 * time.Second, To: 6 * time.Second})
	assert.ErrorContains(t, err, "before the end of the run (3s)")
	_, err = ResolveWindow(tl, &report.Span{From: 2 * time.Second, To: time.Second})
	assert.ErrorContains(t, err, "FROM < TO")
}

func TestTimelineRenders(t *testing.T) {
	tl := timeline(t, "gc-pause-fenced")
	var png, svg bytes.Buffer
	require.NoError(t, WriteTimeline(&png, PNG, tl, TimelineOptions{}))
	assertPNG(t, png.Bytes(), DefaultWidth, DefaultHeight)
	require.NoError(t, WriteTimeline(&svg, SVG, tl, TimelineOptions{}))
	assertSVG(t, svg.Bytes())

	dir := t.TempDir()
	path := filepath.Join(dir, "small.png")
	require.NoError(t, Timeline(tl, path, TimelineOptions{Width: 800, Height: 450,
		Window: &report.Span{From: time.Second, To: 2 * time.Second}}))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assertPNG(t, data, 800, 450)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())

	assert.ErrorContains(t, Timeline(tl, filepath.Join(dir, "t.jpg"), TimelineOptions{}), `unknown extension ".jpg"`)
	assert.ErrorContains(t, Timeline(tl, filepath.Join(dir, "t.png"), TimelineOptions{Width: -1, Height: 5}), "figure size")
	err = Timeline(tl, filepath.Join(dir, "no", "such", "t.png"), TimelineOptions{})
	assert.EqualError(t, err, "figure "+filepath.Join(dir, "no", "such", "t.png")+": no such file or directory",
		"the path asked for and the cause, never the temporary file's name")
}

func TestRoundDur(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 60 * time.Second: "60s", 2115788172: "2.12s",
		1500 * time.Millisecond: "1.5s", 12345 * time.Microsecond: "12.3ms", 800 * time.Microsecond: "800µs"} {
		assert.Equal(t, want, roundDur(d))
	}
}

// TestLongWindowIsBounded: an hour of a busy run held hundreds of thousands of shapes and
// took minutes to draw; past a few shapes per pixel column the diagram keeps what a pixel
// grid can show, so the shapes drawn are bounded by the figure's width, not the window's
// length, and the subtitle says so. A teaching window is drawn exactly (the other timeline
// tests).
func TestLongWindowIsBounded(t *testing.T) {
	busy := func(d string) *report.Timeline {
		return timeline(t, "baseline", knobs.KV{Name: "duration", Value: d}, knobs.KV{Name: "ttl", Value: "1s"},
			knobs.KV{Name: "pause_rate", Value: "0.05"}, knobs.KV{Name: "pause_len", Value: "exp(0s,2s)"})
	}
	const perColumn = 12 // lanes × kinds that can share a column, generously
	for _, d := range []string{"5m", "20m"} {
		tl := busy(d)
		whole := report.Span{From: 0, To: tl.Duration}
		exact := layoutTimelineAt(tl, whole, "", 0)
		for _, columns := range []int{400, 1600} {
			L := layoutTimelineAt(tl, whole, "", columns)
			assert.Greater(t, len(exact.Shapes), perColumn*columns/2, "%s: a window worth simplifying", d)
			assert.LessOrEqual(t, len(L.Shapes), perColumn*columns, "%s at %d px: %d shapes of %d", d, columns, len(L.Shapes), len(exact.Shapes))
			assert.InDelta(t, tl.Duration.Seconds()/float64(columns), L.Column, 1e-9)
			assert.Contains(t, L.Subtitle, "At this scale one pixel is")
			for _, s := range L.Shapes {
				assert.NotEqual(t, shWriteDelay, s.Kind)
				assert.NotEqual(t, shWriteOK, s.Kind)
			}
			keys := shapesOf(L, shKey, "redis1")
			owners := map[int]bool{}
			for _, k := range keys {
				owners[k.Client] = true
			}
			assert.Len(t, owners, 3, "a node lane shows each client's share, not one client's bar")
		}
	}
	var png bytes.Buffer
	require.NoError(t, WriteTimeline(&png, PNG, busy("20m"), TimelineOptions{Width: 400, Height: 300,
		Window: &report.Span{From: 0, To: 20 * time.Minute}}))
	assertPNG(t, png.Bytes(), 400, 300)
}

// TestTimelineDrawsAnotherServicesServer draws the lane of a lock service's server that is
// not Redis's, as the timeline collects it (experiments/lease_test.go): no keys, only its
// process faults and clock jumps, each drawn on its own lane as a Redis node's are, and
// the figure renders.
func TestTimelineDrawsAnotherServicesServer(t *testing.T) {
	ms := time.Millisecond
	tl := &report.Timeline{Scenario: "lease-faults", Seed: 1, Duration: 3 * time.Second, TTL: 500 * ms, Quorum: 1,
		Nodes: []report.NodeLane{{Name: "lease1", Group: "lease1",
			Down:   []report.Span{{From: 166 * ms, To: 216 * ms}},
			Paused: []report.Span{{From: 2 * time.Second, To: 2300 * ms}},
			Marks: []report.Mark{{At: 166 * ms, Kind: report.MarkCrash, Text: "crash"},
				{At: 216 * ms, Kind: report.MarkRestart, Text: "restart"},
				{At: time.Second, Kind: report.MarkClockJump, Text: "clock +1s"}}}},
		Clients: []report.ClientLane{{Name: "client1", Validity: []report.Span{{From: 156 * ms, To: 650 * ms}}}}}
	L := layoutTimeline(tl, report.Span{From: 0, To: tl.Duration}, "")
	assert.Len(t, shapesOf(L, shDown, "lease1"), 1)
	assert.Len(t, shapesOf(L, shNodePaused, "lease1"), 1)
	assert.Len(t, shapesOf(L, shCrash, "lease1"), 1)
	assert.Len(t, shapesOf(L, shRestart, "lease1"), 1)
	assert.Len(t, shapesOf(L, shClockJump, "lease1"), 1)
	var png bytes.Buffer
	require.NoError(t, WriteTimeline(&png, PNG, tl, TimelineOptions{}))
	assertPNG(t, png.Bytes(), DefaultWidth, DefaultHeight)
}

// TestTimelineLayoutZKGCPause: a Curator run's figure (zk-gc-pause-fenced) names what governs its lock (the
// session, not Redlock's TTL) and opens two sessions before the overlap; its attempts say
// what they did (client2's node 1 waited on client1's node 0), its tokens are zxids, the
// servers' lanes show who leads, and the leader's lane the instant client1's session
// expired; the legend speaks of locks, not keys and OKs.
func TestTimelineLayoutZKGCPause(t *testing.T) {
	tl := timeline(t, "zk-gc-pause-fenced")
	win := DefaultWindow(tl)
	assert.Equal(t, time.Duration(0), win.From)
	assert.Equal(t, secondsToDuration(tl.Violations[0].EndS)+3*time.Second, win.To,
		"one session (3s) after the first overlap's end, not one ttl (10s)")
	L := layoutTimeline(tl, win, "")
	assert.Contains(t, L.Title, "; session 3s, zk_tick_time 1s, on_suspended carry-on, fence_token czxid, recipe curator]")
	assert.NotContains(t, L.Title, "TTL")

	won := shapesOf(L, shAttemptWon, "client2")
	require.Len(t, won, 1)
	assert.Equal(t, "node 1, waited on 0 (client1)|node 1", won[0].Label)
	var tokens []string
	for _, s := range shapesOf(L, shWriteRejected, "client1") {
		tokens = append(tokens, s.Label)
	}
	assert.Equal(t, []string{"token 0x100000004", "token 0x100000004"}, tokens)

	leader := shapesOf(L, shLeader, "zk3")
	require.Len(t, leader, 1)
	assert.Equal(t, "leader, epoch 1", leader[0].Label)
	assert.Len(t, shapesOf(L, shFollower, "zk1"), 1)
	expire := shapesOf(L, shExpire, "zk3")
	require.Len(t, expire, 1)
	assert.Equal(t, 5.0, expire[0].X0)
	assert.Equal(t, "client1's session expired", expire[0].Label)

	var svg bytes.Buffer
	require.NoError(t, WriteTimeline(&svg, SVG, tl, TimelineOptions{}))
	legend := svg.String()
	assert.Contains(t, legend, ">client1: its lock<")
	assert.Contains(t, legend, ">acquire attempt: won / lost (its lock node, the nodes it waited on)<")
	assert.Contains(t, legend, ">session expired by the leader<")
	assert.NotContains(t, legend, "its key on a node")
}

// TestTimelineLayoutZKElection: zk-leader-crash's figure shows the election between the
// leader's kill and zk2's leadership of epoch 2.
func TestTimelineLayoutZKElection(t *testing.T) {
	tl := timeline(t, "zk-leader-crash")
	L := layoutTimeline(tl, DefaultWindow(tl), "")
	for _, n := range []string{"zk1", "zk2"} {
		el := shapesOf(L, shElection, n)
		require.Len(t, el, 1, n)
		assert.InDelta(t, 1.018, el[0].X0, 0.002, n)
	}
	leaders := shapesOf(L, shLeader, "zk2")
	require.Len(t, leaders, 1)
	assert.Equal(t, "leader, epoch 2", leaders[0].Label)
	assert.Contains(t, shapesOf(L, shAttemptWon, "client1")[0].Label, "node 0 (found again)")
}

// TestTimelineLayoutHybrid: the hybrid lock's figure letters its Redis masters A–C, as the
// Redlock page does, and not the ZooKeeper servers beside them; its title names the TTL
// and the session; its Redis attempts count OKs out of the three masters.
func TestTimelineLayoutHybrid(t *testing.T) {
	tl := timeline(t, "hybrid-split")
	L := layoutTimeline(tl, DefaultWindow(tl), "")
	var names []string
	for _, l := range L.Lanes {
		if l.Kind == laneNode {
			names = append(names, l.Label)
		}
	}
	assert.Equal(t, []string{"redis1 (A)", "redis2 (B)", "redis3 (C)", "zk1", "zk2", "zk3"}, names)
	assert.Contains(t, L.Title, "; TTL 10s, session 3s,")
	lost := shapesOf(L, shAttemptLost, "client1")
	require.NotEmpty(t, lost)
	assert.Equal(t, "1/3", lost[0].Label)
}
