package experiments

import (
	"fmt"
	"io"
	"strings"
)

// WriteSummary writes a short human summary of a record: what ran, the two safety verdicts
// (the lock's and the protected resource's), the liveness figures and the first violations.
func WriteSummary(w io.Writer, r *Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s, seed %d, %gs simulated, %d events, trace %s\n",
		r.Scenario, r.Seed, r.SimTimeS, r.Events, r.TraceHash)
	l := &r.Liveness
	fmt.Fprintf(&b, "lock:     %s\nresource: %s\n", r.Safety.LockVerdict(), r.Safety.ResourceVerdict())
	f := &l.FailuresByReason
	fmt.Fprintf(&b, "liveness: %d attempts, %d acquired (%.3g/s), %d acquires failed; failed attempts: %d no quorum, %d timeout, %d validity expired, %d fence failed, %d aborted\n",
		l.Attempts, l.Acquired, l.AcquisitionsPerS, l.Failed, f.NoQuorum, f.Timeout, f.ValidityExpired, f.FenceFailed, f.Aborted)
	if p := l.AcquireLatencyMs; p.P50 != nil {
		fmt.Fprintf(&b, "          time to acquire p50 %gms, p90 %gms, p99 %gms, max %gms\n", *p.P50, *p.P90, *p.P99, *p.Max)
	}
	fmt.Fprintf(&b, "          %d split-brain rounds, %gms unheld while waiting%s, %d/%d extensions succeeded\n",
		l.SplitBrainRounds, l.UnheldWhileWaitingMs, unheldNote(l.UnheldWhileWaitingMs, r.SimTimeS),
		l.Extensions.Succeeded, l.Extensions.Tried)
	for i, v := range r.Violations {
		if i == 5 {
			fmt.Fprintf(&b, "  ... %d more listed in --json\n", len(r.Violations)-i)
			break
		}
		fmt.Fprintf(&b, "  %s on %s: %s and %s, %gs to %gs", v.Kind, v.Resource, v.First, v.Second, v.StartS, v.EndS)
		if len(v.Faults) > 0 {
			fmt.Fprintf(&b, "; faults: %s", strings.Join(v.Faults, "; "))
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
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
