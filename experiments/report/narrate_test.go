package report

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim"
)

// narrate runs a built-in scenario for seed 1 with a text narrator and returns its world,
// the narration's lines, and the acquisitions its clients made.
func narrate(t *testing.T, name string, opts TraceOptions) (*world.World, *clientEvents, []string) {
	t.Helper()
	w := scenarioWorld(t, name, 1)
	acq := watch(w, model.EvAcquired)
	var out bytes.Buffer
	n, err := NewNarrator(w, &out, 0, 0, opts)
	require.NoError(t, err)
	runWorld(t, w, n)
	n.Finish()
	require.NoError(t, n.Err())
	require.NoError(t, n.Undecoded(), "every record of the run decodes")
	return w, acq, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// grep returns the lines containing every one of words.
func grep(lines []string, words ...string) []string {
	var out []string
	for _, l := range lines {
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(l, w) }) {
			out = append(out, l)
		}
	}
	return out
}

// TestNarrationOfGCPause: the seed-1 narration of gc-pause tells each acquisition with the
// attempt, votes and validity the client computed, client1's pause with its end, the
// violations the oracle found with the fault behind them, and the storage's verdicts.
func TestNarrationOfGCPause(t *testing.T) {
	w, acq, lines := narrate(t, "gc-pause", TraceOptions{})
	require.Len(t, acq.evs, 2, "client1, then client2 after client1's keys expired")
	for i, e := range acq.evs {
		want := e.Client.Name() + "   [mono " + secs(e.Client.Clock().Mono(acq.at[i])) + "]    acquired resource=lock attempt=" +
			strconv.Itoa(acq.lck[i].attempt) + " oks=" + strconv.Itoa(acq.lck[i].votes) +
			" validity=" + acq.lck[i].validity.Round(time.Microsecond).String()
		assert.Len(t, grep(lines, secs(acq.at[i].Duration())+"    "+want), 1, want)
	}
	assert.Len(t, grep(lines, "acquired resource=lock attempt=1 oks=5 validity=986.779ms"), 1, "client1's, as the golden trace has it")

	assert.Equal(t, []string{"  0.100s !! client1   [mono 0.100s]    pause for=1.5s, until 1.600s"}, grep(lines, "!! client1", "pause"))
	vs := w.Oracle.Violations()
	require.Len(t, vs, 3, "a usage overlap, then two stale writes")
	var want []string
	for _, v := range vs {
		want = append(want, "VIOLATION "+v.Kind+" on "+v.Resource+": "+v.First+" and "+v.Second)
	}
	var got []string
	for _, l := range grep(lines, " ** oracle ") {
		got = append(got, l[strings.Index(l, "VIOLATION"):strings.Index(l, ";")])
	}
	assert.Equal(t, want, got, "each violation the oracle found, in order")
	assert.Equal(t, []string{
		"  1.214s ** oracle                     VIOLATION usage_overlap on lock: client1 and client2; fault [1]",
		"                                       [1] client1 paused since 100ms",
		"  1.601s ** oracle                     VIOLATION stale_write on lock: client1 and client2; fault [2]",
		"                                       [2] client1 paused 100ms to 1.6s",
		"  1.601s ** oracle                     VIOLATION stale_write on lock: client1 and client2; fault [2]",
	}, slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
		return !strings.Contains(l, " ** ") && !strings.HasPrefix(strings.TrimSpace(l), "[")
	}), "each fault spelled out once, under the first violation it is behind")
	assert.Len(t, grep(lines, "storage", `client1: write lock "client1" unfenced → accepted`), 3,
		"the write before the pause and the two stale ones after")
	assert.Len(t, grep(lines, "attempt-ended resource=lock", "reason=no-quorum"), 6, "client2's attempts while client1's keys live")
	assert.Empty(t, grep(lines, "reason=none"), "a field that says nothing is left out")
}

// TestNarrationKeepsTheLinesAskedFor: filters by actor and by kind keep exactly the lines
// about that actor, and of those kinds.
func TestNarrationKeepsTheLinesAskedFor(t *testing.T) {
	_, _, all := narrate(t, "gc-pause", TraceOptions{})
	_, _, faults := narrate(t, "gc-pause", TraceOptions{Only: []string{"faults"}})
	assert.Equal(t, grep(all, " !! "), faults)
	_, _, c1 := narrate(t, "gc-pause", TraceOptions{Actors: []string{"client1"}, Only: []string{"lock", "violations"}})
	for _, l := range c1 {
		assert.True(t, strings.Contains(l, "client1") || strings.HasPrefix(strings.TrimSpace(l), "["), l)
	}
	assert.Len(t, grep(c1, "VIOLATION"), 3, "every violation names client1")
	assert.Empty(t, grep(c1, "SET lock"), "commands are not lock lines")
}

// lines runs a built-in scenario for seed 1 with a line narrator and returns its lines.
func lines(t *testing.T, name string) []Line {
	t.Helper()
	w := scenarioWorld(t, name, 1)
	var out []Line
	n, err := NewLineNarrator(w, func(l *Line) { out = append(out, *l) }, TraceOptions{})
	require.NoError(t, err)
	runWorld(t, w, n)
	n.Finish()
	require.NoError(t, n.Undecoded())
	return out
}

// TestNarrationTellsCleanupByTheCommand: a release a client sends after an attempt that
// failed is cleanup (it knows what the command is, not how it prints); its release after
// holding the lock is not. Each command a node runs names the client that sent it.
func TestNarrationTellsCleanupByTheCommand(t *testing.T) {
	ls := lines(t, "gc-pause")
	var cleanup, kept, runs int
	for _, l := range ls {
		if l.Kind != "commands" || !strings.HasPrefix(l.Actor, "redis") {
			continue
		}
		runs++
		assert.NotZero(t, l.Msg, "a command run is a message delivered: %s", l.Text)
		if !strings.Contains(l.Text, "<release>") {
			assert.False(t, l.Cleanup, l.Text)
			continue
		}
		switch l.Peers[0] {
		case "client2":
			if l.At < sim.Time(time.Second) {
				assert.True(t, l.Cleanup, "client2's release after a lost attempt: %s", l.Text)
				cleanup++
			}
		case "client1":
			assert.False(t, l.Cleanup, "client1's release of the lock it held")
			kept++
		default:
			t.Errorf("a release from %q", l.Peers[0])
		}
	}
	assert.Equal(t, 6*5+5, cleanup, "the releases of six lost attempts on five nodes, and the first's EVAL resent after NOSCRIPT")
	assert.Positive(t, kept)
	assert.Greater(t, runs, cleanup+kept)
}

// TestNarrationShowsRecordsItCannotDecode: a record missing a field its decoder needs is
// a ?? line naming what is wrong, whatever the filters, never a line of zeros; the first
// such error is kept.
func TestNarrationShowsRecordsItCannotDecode(t *testing.T) {
	w := scenarioWorld(t, "gc-pause", 1)
	var out bytes.Buffer
	n, err := NewNarrator(w, &out, 0, 0, TraceOptions{Only: []string{"writes"}, Actors: []string{"storage"}})
	require.NoError(t, err)
	at := sim.Time(time.Millisecond)
	for _, r := range []sim.Record{
		{At: at, Actor: "redis1", Kind: redis.RecExec},
		{At: at, Actor: "client1", Kind: model.EvAcquired.String(), Fields: []sim.Field{sim.Str("resource", "lock")}},
		{At: at, Actor: network.Actor, Kind: network.RecDeliver, Fields: []sim.Field{sim.Str("from", "client1"),
			sim.Str("to", "redis1"), sim.Int("id", 1), sim.Dur("latency", time.Millisecond)}},
		{At: at, Actor: oracle.Actor, Kind: oracle.RecViolation, Fields: []sim.Field{sim.Str("kind", oracle.KindUsageOverlap)}},
		{At: at, Actor: "storage", Kind: model.RecStorageWrite, Fields: []sim.Field{sim.Str("resource", "lock")}},
	} {
		n.Record(&r)
	}
	n.Finish()
	require.NoError(t, n.Err())
	assert.Equal(t, `  0.001s ?? redis1                     UNDECODED exec (trace record "exec" of redis1 at 1ms: no field "cmd")
  0.001s ?? client1                    UNDECODED acquired resource=lock (trace record "acquired" of client1 at 1ms: no field "mono")
  0.001s ?? net                        UNDECODED deliver from=client1 to=redis1 id=1 latency=1ms (trace record "deliver" of net at 1ms: no field "msg" (a world's network writes its messages))
  0.001s ?? oracle                     UNDECODED violation kind=usage_overlap (trace record "violation" of oracle at 1ms: no field "resource")
  0.001s ?? storage                    UNDECODED write resource=lock (trace record "write" of storage at 1ms: no field "token")
`, out.String())
	assert.EqualError(t, n.Undecoded(), `trace record "exec" of redis1 at 1ms: no field "cmd"`)
}

// secs renders a time as the narration's columns do by default.
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s" }
