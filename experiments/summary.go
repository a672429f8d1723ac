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
	fmt.Fprintf(&b, "          %d split-brain rounds, %gms unheld while waiting, %d/%d extensions succeeded\n",
		l.SplitBrainRounds, l.UnheldWhileWaitingMs, l.Extensions.Succeeded, l.Extensions.Tried)
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
