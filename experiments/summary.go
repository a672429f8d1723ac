package experiments

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/redlock-sim/redlock-sim/experiments/oracle"
	"github.com/redlock-sim/redlock-sim/experiments/report"
)

// WriteSummary writes a short human summary of a record: what ran, the two safety verdicts
// (the lock's and the protected resource's), the liveness figures and the first violations,
// with the faults in effect for them.
func WriteSummary(w io.Writer, r *Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s, seed %d, %gs simulated, %d events, trace %s\n",
		r.Scenario, r.Seed, r.SimTimeS, r.Events, r.TraceHash)
	l := &r.Liveness
	fmt.Fprintf(&b, "lock:     %s\nresource: %s\n", r.Safety.LockVerdict(), r.Safety.ResourceVerdict())
	f := &l.FailuresByReason
	fmt.Fprintf(&b, "liveness: %d attempts, %d acquired (%.3g/s), %d acquires failed; failed attempts: %d no quorum, %d timeout, %d validity expired, %d fence failed, %d aborted",
		l.Attempts, l.Acquired, l.AcquisitionsPerS, l.Failed, f.NoQuorum, f.Timeout, f.ValidityExpired, f.FenceFailed, f.Aborted)
	if f.ServerError > 0 {
		fmt.Fprintf(&b, ", %d given up on a server error", f.ServerError)
	}
	b.WriteByte('\n')
	if p := l.AcquireLatencyMs; p.P50 != nil {
		fmt.Fprintf(&b, "          time to acquire p50 %gms, p90 %gms, p99 %gms, max %gms\n", *p.P50, *p.P90, *p.P99, *p.Max)
	}
	fmt.Fprintf(&b, "          %d split-brain rounds, %gms unheld while waiting%s, %d/%d extensions succeeded\n",
		l.SplitBrainRounds, l.UnheldWhileWaitingMs, unheldNote(l.UnheldWhileWaitingMs, r.SimTimeS),
		l.Extensions.Succeeded, l.Extensions.Tried)
	if l.HolderCrashes > 0 {
		fmt.Fprintf(&b, "          %d holders crashed with the lock", l.HolderCrashes)
		if p := l.ReacquireAfterCrashMs; p.P50 != nil {
			fmt.Fprintf(&b, "; the lock was taken again after p50 %gms, max %gms", *p.P50, *p.Max)
		}
		b.WriteString("\n")
	}
	writeViolations(&b, r.Violations)
	_, err := io.WriteString(w, b.String())
	return err
}

// maxListed is how many distinct violations a summary lists; --json has them all.
const maxListed = 5

// writeViolations lists the first violations once each (identical ones, such as two stale
// writes sent together, on one line with their count) and then the faults in effect for
// them, each once, numbered: the violations refer to them by number, so a fault in effect
// for every violation (a partition that lasts the whole run) is not repeated on every line.
func writeViolations(b *strings.Builder, vs []oracle.Violation) {
	if len(vs) == 0 {
		return
	}
	b.WriteString("violations:\n")
	var faults []string
	faultNo := map[string]int{}
	listed, shown := 0, 0
	for i := 0; i < len(vs); {
		j := i + 1
		for j < len(vs) && sameViolation(&vs[i], &vs[j]) {
			j++
		}
		if listed == maxListed {
			fmt.Fprintf(b, "  ... %d more listed in --json\n", len(vs)-shown)
			break
		}
		v := &vs[i]
		fmt.Fprintf(b, "  %s on %s: %s and %s", v.Kind, v.Resource, v.First, v.Second)
		if v.StartS == v.EndS {
			fmt.Fprintf(b, " at %.3fs", v.StartS)
		} else {
			fmt.Fprintf(b, ", %.3fs to %.3fs", v.StartS, v.EndS)
		}
		if j-i > 1 {
			fmt.Fprintf(b, ", %d times", j-i)
		}
		var nums []int
		for _, f := range v.Faults {
			no, ok := faultNo[f]
			if !ok {
				faults = append(faults, f)
				no = len(faults)
				faultNo[f] = no
			}
			nums = append(nums, no)
		}
		b.WriteString(report.FaultRefs(nums))
		b.WriteByte('\n')
		listed++
		shown += j - i
		i = j
	}
	if len(faults) == 0 {
		return
	}
	b.WriteString("faults in effect:\n")
	for i, f := range faults {
		fmt.Fprintf(b, "  [%d] %s\n", i+1, f)
	}
}

// sameViolation reports whether two violations read alike: same kind, clients, times and
// faults.
func sameViolation(a, b *oracle.Violation) bool {
	return a.Kind == b.Kind && a.Resource == b.Resource && a.First == b.First && a.Second == b.Second &&
		a.StartS == b.StartS && a.EndS == b.EndS && slices.Equal(a.Faults, b.Faults)
}

// unheldNote puts the unheld-while-waiting time in proportion and names its two sources:
// clients poll, so a released lock sits free until a waiter's next try (most of it in a
// healthy run, where it read as alarming without a word of why), and a crashed or cut-off
// holder's keys block everyone until they expire.
func unheldNote(ms, runS float64) string {
	if ms <= 0 || runS <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2g%% of the run: waiters sleeping between tries, or blocked by a lost holder's keys)", 100*ms/1000/runS)
}
