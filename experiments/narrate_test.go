package experiments

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// narrate runs a scenario for seed 1 and returns its narrated trace and record.
func narrate(t *testing.T, scenario string, settings []knobs.KV, opts report.TraceOptions) (string, *Record) {
	t.Helper()
	var buf bytes.Buffer
	rec, err := Run(context.Background(), scenario, settings, 1, Options{Trace: &buf, Narrate: opts})
	require.NoError(t, err)
	return buf.String(), rec
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

// lineRE splits a narrated line into time, marker, actor and event (after the actor's clock).
var lineRE = regexp.MustCompile(`^ *([0-9.]+s) (  |!!|\*\*) (\S+) +(?:\[\w+ [0-9.]+s\] +)?(.*)$`)

func TestNarrateMillisecondsByDefault(t *testing.T) {
	out, _ := narrate(t, "gc-pause", nil, report.TraceOptions{})
	assert.Contains(t, out, "acquired resource=lock attempt=1 oks=5 validity=986.779ms")
	assert.NotContains(t, out, "986.779293ms")
	assert.Contains(t, out, "  0.100s !! client1   [mono 0.100s]")
	for _, l := range lines(out) {
		if m := lineRE.FindStringSubmatch(l); m != nil {
			assert.Regexp(t, `^[0-9]+\.[0-9]{3}s$`, m[1], l)
		}
	}

	precise, _ := narrate(t, "gc-pause", nil, report.TraceOptions{Precise: true})
	assert.Contains(t, precise, "validity=986.779293ms")
	assert.Contains(t, precise, "0.100000000s !! client1   [mono 0.100000000s]")
}

func TestNarrateByActor(t *testing.T) {
	out, _ := narrate(t, "gc-pause", nil, report.TraceOptions{Actors: []string{"client1"}})
	all, _ := narrate(t, "gc-pause", nil, report.TraceOptions{})
	require.NotEmpty(t, out)
	assert.Less(t, len(lines(out)), len(lines(all)))
	var nodeLines int
	for _, l := range lines(out) {
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			continue // a fault spelled out under a violation
		}
		switch actor := m[3]; {
		case actor == "client1":
		case strings.HasPrefix(actor, "redis"):
			nodeLines++
			assert.Contains(t, m[4], "8SGA40ql", "a node's line about client1 runs client1's command: %s", l)
		case actor == "storage":
			assert.Contains(t, m[4], "client1: write", l)
		case actor == "oracle":
			assert.Contains(t, m[4], "client1", l)
		default:
			t.Errorf("a line neither by nor about client1: %s", l)
		}
	}
	assert.Positive(t, nodeLines, "client1's commands as the nodes ran them")
	assert.Contains(t, out, "← redis3: OK")

	// A node shows its own lines and the replies clients got from it.
	out, _ = narrate(t, "gc-pause", nil, report.TraceOptions{Actors: []string{"redis3"}})
	for _, l := range lines(out) {
		m := lineRE.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		if m[3] != "redis3" {
			assert.Contains(t, m[4], "← redis3: ", l)
		}
	}
}

func TestNarrateOnlyKinds(t *testing.T) {
	out, _ := narrate(t, "clock-jump", nil, report.TraceOptions{Only: []string{"faults", "violations"}})
	require.NotEmpty(t, out)
	for _, l := range lines(out) {
		if m := lineRE.FindStringSubmatch(l); m != nil {
			assert.Contains(t, []string{"!!", "**"}, m[2], l)
		} else {
			assert.Regexp(t, `^ +\[[0-9]+\] `, l, "only a violation's faults may follow it")
		}
	}
	assert.Contains(t, out, "partition fault=1")
	assert.Contains(t, out, "VIOLATION validity_overlap")

	out, _ = narrate(t, "gc-pause", nil, report.TraceOptions{Only: []string{"writes"}})
	for _, l := range lines(out) {
		assert.Regexp(t, `(write resource=lock|: write lock)`, l)
	}

	out, _ = narrate(t, "gc-pause", nil, report.TraceOptions{Only: []string{"lock"}})
	assert.Contains(t, out, "acquired resource=lock")
	assert.Contains(t, out, "expire key=lock")
	assert.NotContains(t, out, "SET lock")

	out, _ = narrate(t, "gc-pause", nil, report.TraceOptions{Only: []string{"commands"}})
	assert.Contains(t, out, "SET lock")
	assert.Contains(t, out, "← redis1: OK")
	assert.NotContains(t, out, "acquired")
	assert.NotContains(t, out, "VIOLATION")
}

func TestNarrateFilterErrorsNameTheChoices(t *testing.T) {
	var buf bytes.Buffer
	_, err := Run(context.Background(), "gc-pause", nil, 1, Options{Trace: &buf, Narrate: report.TraceOptions{Actors: []string{"clent1"}}})
	var ue *knobs.UnknownError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Contains(t, err.Error(), `unknown actor "clent1"; did you mean client1`)
	assert.Contains(t, err.Error(), "client1, client2, redis1")
	assert.Zero(t, buf.Len(), "refused before the run")

	_, err = Run(context.Background(), "gc-pause", nil, 1, Options{Trace: &buf, Narrate: report.TraceOptions{Only: []string{"fault"}}})
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Contains(t, err.Error(), "did you mean faults?")
	assert.Contains(t, err.Error(), "faults, violations, lock, commands, writes")
}

func TestNarrateHidesCleanup(t *testing.T) {
	all, _ := narrate(t, "gc-pause", nil, report.TraceOptions{})
	out, _ := narrate(t, "gc-pause", nil, report.TraceOptions{HideCleanup: true})
	assert.Less(t, len(lines(out)), len(lines(all))*3/4, "client2's cleanup is most of the gc-pause trace")

	// client2 (lock value WhpB7...) fails six attempts while client1 is paused and sends a
	// release round after each: cleanup. Its own release at the end of its hold is not.
	release2 := "EVALSHA <release> 1 lock WhpB7Sl5MlfuVxlPH4/ecQ=="
	before, after, ok := strings.Cut(out, "acquired resource=lock attempt=7")
	require.True(t, ok)
	assert.NotContains(t, before, release2)
	assert.Contains(t, after, release2+" → (integer) 1")
	assert.Contains(t, all[:strings.Index(all, "attempt=7")], release2)
	// The failed attempts themselves are the lock's story and stay.
	assert.Contains(t, before, "attempt-ended resource=lock attempt=6 oks=0 reason=no-quorum")
	assert.Contains(t, before, "← redis1: (nil)")
	// client1's release after its pause is a real release (of a lock it no longer has).
	assert.Contains(t, out, "EVALSHA <release> 1 lock 8SGA40ql/94r9iBOfTW8rw== → (integer) 0")
	assert.Contains(t, out, "released resource=lock attempt=1")
	// Replies to the release round's commands are cleanup too: after attempt 6 ended,
	// nothing of client2 is shown until its next attempt's replies.
	i := strings.Index(out, "attempt=6 oks=0 reason=no-quorum")
	j := strings.Index(out[i:], "expire key=lock")
	assert.NotContains(t, out[i:i+j], "(integer)")
}

func TestNarrateHidesLateReplies(t *testing.T) {
	// With a 20ms reply timeout and one message in ten taking 60-90ms, attempts end
	// before all their replies are in: the replies that come after are cleanup.
	settings := []knobs.KV{{Name: "duration", Value: "2s"}, {Name: "timeout", Value: "20ms"},
		{Name: "latency", Value: "tail(uniform(200µs,800µs),0.1,uniform(60ms,90ms))"}}
	all, _ := narrate(t, "baseline", settings, report.TraceOptions{})
	out, _ := narrate(t, "baseline", settings, report.TraceOptions{HideCleanup: true})
	kept := map[string]bool{}
	for _, l := range lines(out) {
		kept[l] = true
	}
	ended := map[string]int{} // attempts ended so far, per client
	late := 0
	for _, l := range lines(all) {
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		client, text := m[3], m[4]
		if strings.HasPrefix(text, "attempt-ended") {
			ended[client]++
			assert.True(t, kept[l], "the lock's story stays: %s", l)
		}
		if strings.HasPrefix(text, "← ") && (strings.HasSuffix(text, ": OK") || strings.HasSuffix(text, ": (nil)")) && !kept[l] {
			late++
			assert.Positive(t, ended[client], "a reply hidden before any attempt of %s ended: %s", client, l)
		}
	}
	assert.Positive(t, late, "replies to SETs of attempts that had ended")
	assert.Less(t, late, len(lines(all))/10, "only the late ones")
}

func TestNarrateListsEachFaultOnce(t *testing.T) {
	out, rec := narrate(t, "clock-jump", nil, report.TraceOptions{})
	require.GreaterOrEqual(t, len(rec.Violations), 2)
	assert.Equal(t, 1, strings.Count(out, "net cut client1↔redis4 from 0s to never"), out)
	assert.Equal(t, 1, strings.Count(out, "redis3 wall clock jumped"), out)
	assert.Contains(t, out, "VIOLATION usage_overlap on lock: client1 and client2; faults [1]-[5]\n")
	assert.Contains(t, out, "VIOLATION validity_overlap on lock: client1 and client2; faults [1]-[5]\n")
	assert.Contains(t, out, "[5] redis3 wall clock jumped 2s at 150ms\n")

	var sum bytes.Buffer
	require.NoError(t, WriteSummary(&sum, rec))
	assert.Equal(t, 1, strings.Count(sum.String(), "net cut client1↔redis4 from 0s to never"), sum.String())
	assert.Contains(t, sum.String(), "  validity_overlap on lock: client1 and client2, 0.300s to 1.100s; faults [1]-[5]\n")
	assert.Contains(t, sum.String(), "faults in effect:\n  [1] net cut client1↔redis4 from 0s to never\n")
}

func TestNarrateSpellsOutFaultsUnderTheFirstViolationShown(t *testing.T) {
	// In the window after the first violations, the later one's faults are new to the
	// reader: spelled out there, numbered from one.
	var buf bytes.Buffer
	_, err := Run(context.Background(), "clock-jump", nil, 1, Options{Trace: &buf, From: 301 * time.Millisecond})
	require.NoError(t, err)
	out := buf.String()
	assert.Contains(t, out, "VIOLATION stale_write on lock: client1 and client2; faults [1]-[5]\n")
	assert.Equal(t, 1, strings.Count(out, "redis3 wall clock jumped"), out)

	buf.Reset()
	_, err = Run(context.Background(), "clock-jump", nil, 1, Options{Trace: &buf, To: 250 * time.Millisecond})
	require.NoError(t, err)
	assert.NotContains(t, buf.String(), "[1]", "no violation shown, no fault spelled out")
}

func TestNarrateByGroup(t *testing.T) {
	out, _ := narrate(t, "failover-race", nil, report.TraceOptions{Actors: []string{"redis1"}})
	assert.Contains(t, out, "redis1.0  [wall")
	assert.Contains(t, out, "redis1.1  [wall")
	assert.Contains(t, out, "!! redis1                     failover")
}

func TestSummaryListsEachViolationOnce(t *testing.T) {
	_, rec := narrate(t, "gc-pause", nil, report.TraceOptions{})
	require.Len(t, rec.Violations, 3)
	var sum bytes.Buffer
	require.NoError(t, WriteSummary(&sum, rec))
	assert.Equal(t, 1, strings.Count(sum.String(), "stale_write on lock"), sum.String())
	assert.Contains(t, sum.String(), "  stale_write on lock: client1 and client2 at 1.601s, 2 times; fault [2]\n")
	assert.Contains(t, sum.String(), "  usage_overlap on lock: client1 and client2, 1.214s to 1.600s; fault [1]\n")
}

func TestSummaryCapsTheListByDistinctViolations(t *testing.T) {
	r := &Record{}
	for i := range 8 {
		v := oracle.Violation{Kind: oracle.KindStaleWrite, Resource: "lock", First: "a", Second: "b", StartS: float64(i), EndS: float64(i)}
		r.Violations = append(r.Violations, v, v) // each twice
	}
	var sum bytes.Buffer
	require.NoError(t, WriteSummary(&sum, r))
	assert.Equal(t, maxListed, strings.Count(sum.String(), ", 2 times"))
	assert.Contains(t, sum.String(), "... 6 more listed in --json")
}

func TestNarrateMergedPause(t *testing.T) {
	settings := []knobs.KV{{Name: "pause_rate", Value: "5"}, {Name: "pause_len", Value: "exp(0s,300ms)"}, {Name: "duration", Value: "3s"}}
	out, traced := narrate(t, "baseline", settings, report.TraceOptions{Only: []string{"faults"}})
	plain, err := Run(context.Background(), "baseline", settings, 1, Options{})
	require.NoError(t, err)
	assert.Equal(t, plain.TraceHash, traced.TraceHash, "narrating a merge must not change the trace hash")

	// Each client's resume comes when the last pause or extension narrated said it would.
	until := regexp.MustCompile(`(?:, until|pause extended to|which ends at) ([0-9.]+s)$`)
	ends := map[string]string{}
	extended, resumed := 0, 0
	for _, l := range lines(out) {
		m := lineRE.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		client, text := m[3], m[4]
		switch u := until.FindStringSubmatch(text); {
		case strings.Contains(text, "resume"):
			assert.Equal(t, ends[client], m[1], "%s resumes when its pauses said: %s", client, l)
			resumed++
		case strings.Contains(text, "which ends at"):
			require.NotNil(t, u, l)
			assert.Equal(t, ends[client], u[1], l)
		case u != nil:
			if strings.Contains(text, "pause extended") {
				extended++
			}
			ends[client] = u[1]
		}
	}
	assert.Positive(t, extended, "a pause extended by one that began during it")
	assert.Positive(t, resumed)
	assert.Regexp(t, `while already paused: inside the pause in progress, which ends at [0-9.]+s`, out)
}

func TestNarrateFiltersIgnoreATrailingComma(t *testing.T) {
	out, _ := narrate(t, "gc-pause", nil, report.TraceOptions{Actors: []string{"client1", ""}, Only: []string{"faults", " "}})
	assert.Contains(t, out, "pause for=1.5s, until 1.600s")
}
