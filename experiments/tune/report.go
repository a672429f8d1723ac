package tune

import (
	"fmt"
	"io"
	"strings"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/internal/shell"
)

// RunCommand returns the `redlock-sim run` command that replays one confirmation run of
// the recommended ttl (the first round's first seed), every knob spelled out: the
// environment, the load and the settings, as the confirmation ran them.
func (p *Plan) RunCommand() string {
	parts := []string{"redlock-sim run --scenario baseline"}
	for _, kv := range p.Conf.Env {
		if kv.Name == "scenario" {
			continue
		}
		parts = append(parts, "--set "+shell.Quote(kv.Name+"="+kv.Value))
	}
	parts = append(parts, "--set duration="+p.In.Duration.String(), "--set "+shell.Quote("think="+knobs.FormatDist(p.Rec.Contention.Think)))
	for _, f := range p.Effective.SetFlags() {
		parts = append(parts, "--set "+shell.Quote(strings.TrimPrefix(f, "--set ")))
	}
	if p.Rec.Fencing && p.Rec.Session == nil {
		parts = append(parts, "--set fencing=one")
	}
	return strings.Join(parts, " ")
}

// WriteRecommendation writes the fits, the settings and their arithmetic, as tune
// prints them before confirming.
func (p *Plan) WriteRecommendation(w io.Writer) {
	fmt.Fprintln(w, "Inputs fitted:")
	for _, f := range p.Fits {
		fmt.Fprintln(w, "  "+f)
	}
	fmt.Fprintf(w, "\nRecommended settings, as %s runs them:\n", p.Lib.Name)
	for _, s := range p.Effective.Knobs() {
		if !p.Effective.Extend && (s.Name == "extend_every" || s.Name == "max_extensions") {
			continue
		}
		fmt.Fprintf(w, "  %-15s %s%s\n", s.Name, s.Value, p.fixedMark(s.Name))
	}
	switch {
	case p.Effective.Session != nil:
		fmt.Fprintln(w, "  extension       none: the session's heartbeats keep the lock node")
	case !p.Effective.Extend:
		fmt.Fprintln(w, "  extension       not needed: the work fits in the validity")
	}
	if p.Rec.Fencing {
		fmt.Fprintf(w, "  fencing         needed: no %s protects the resource here (see the conflicts)\n", p.Axis())
	}
	fmt.Fprintln(w, "  as knobs: "+strings.Join(p.Effective.SetFlags(), " "))
	fmt.Fprintln(w, "  one confirmation run: "+p.RunCommand())
	if p.In.Client != "spec" {
		fmt.Fprintf(w, "\nIn %s's own terms:\n", p.Lib.Name)
		for _, o := range p.Lib.Options(p.Rec) {
			fmt.Fprintf(w, "  %s = %s%s\n", o.Name, o.Value, note(o.Note))
		}
		for _, l := range p.libraryLines() {
			fmt.Fprintln(w, "  "+l)
		}
		fmt.Fprintf(w, "\nTo paste (%s):\n", p.Lib.Language)
		for _, l := range strings.Split(strings.TrimRight(p.Lib.Snippet(p.Rec), "\n"), "\n") {
			fmt.Fprintln(w, "    "+l)
		}
	}
	fmt.Fprintln(w, "\nThe arithmetic (durations rounded up to two significant figures, so never below what the arithmetic asks):")
	for _, st := range p.Rec.Steps {
		fmt.Fprintln(w, "  "+st.Name+":")
		for _, l := range st.Lines {
			fmt.Fprintln(w, "    "+l)
		}
	}
	for _, c := range p.Rec.Conflicts {
		fmt.Fprintln(w, "\nCONFLICT: "+c.String())
	}
}

// WriteConfirmation writes the confirmation's table and verdicts, as tune prints them.
func (r *Report) WriteConfirmation(w io.Writer) {
	fmt.Fprintln(w, "\nConfirmation by simulation (every violation kind per 10,000 acquisitions, with its 95% upper bound; every round pooled):")
	fmt.Fprintln(w, TableOf(r.Outcomes, r.RecommendedTTL(), r.Axis()))
	for _, v := range r.Verdicts {
		fmt.Fprintln(w, v)
	}
	fmt.Fprintln(w, r.Verdict)
}

// Markdown is report.md: the recommendation, the arithmetic, the confirmation and the
// verdicts, self-contained. command is the command line as typed, inputs every input
// with the value used.
func (r *Report) Markdown(command, inputs string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Tuning report\n\nMade by `%s`.\n\nEvery input, as used (run `redlock-sim tune` with these to repeat it): `%s`\n\n## Inputs, fitted\n\n",
		strings.TrimSpace(command), inputs)
	for _, f := range r.Fits {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	fmt.Fprintf(&b, "\n## Recommended settings\n\nAs %s runs them.\n\n| knob | value |\n| --- | --- |\n", r.Lib.Name)
	for _, s := range r.Effective.Knobs() {
		if !r.Effective.Extend && (s.Name == "extend_every" || s.Name == "max_extensions") {
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %s%s |\n", s.Name, s.Value, r.fixedMark(s.Name))
	}
	if r.Rec.Fencing {
		fmt.Fprintf(&b, "| fencing | needed: no %s protects the resource here |\n", r.Axis())
	}
	fmt.Fprintf(&b, "\nAs knobs: `%s`\n\nOne confirmation run, every knob spelled out: `%s`\n", strings.Join(r.Effective.SetFlags(), " "), r.RunCommand())
	if r.In.Client != "spec" {
		fmt.Fprintf(&b, "\n## In %s's own terms\n\n| option | value |\n| --- | --- |\n", r.Lib.Name)
		for _, o := range r.Lib.Options(r.Rec) {
			fmt.Fprintf(&b, "| `%s` | %s%s |\n", o.Name, o.Value, note(o.Note))
		}
		b.WriteString("\n")
		for _, l := range r.libraryLines() {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		fmt.Fprintf(&b, "\n```%s\n%s\n```\n", r.Lib.Language, strings.TrimRight(r.Lib.Snippet(r.Rec), "\n"))
	}
	b.WriteString("\n## The arithmetic\n\nDurations are rounded up to two significant figures, so never below what the arithmetic asks.\n\n")
	for _, st := range r.Rec.Steps {
		fmt.Fprintf(&b, "**%s**\n\n", st.Name)
		for _, l := range st.Lines {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		b.WriteString("\n")
	}
	if len(r.Rec.Conflicts) > 0 {
		b.WriteString("## Conflicts\n\n")
		for _, c := range r.Rec.Conflicts {
			fmt.Fprintf(&b, "- %s\n", c.String())
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## Confirmation by simulation\n\n%d runs per %s in %d round(s) from seed %d, pooled; the sweeps "+
		"are in %s (`redlock-sim plot --in DIR` draws one). Rounds after the first add the runs the bounds still "+
		"needed to meet the target (--max-seeds caps them). Each violation kind per 10,000 acquisitions, with its 95%% "+
		"Clopper–Pearson upper bound, which stays honest when nothing was seen. The rows above and below the "+
		"recommendation are the alternatives: what half and double the %s would cost. Holders release only "+
		"after their last write is acknowledged (release_after_ack), so stale writes are the lock's, not the "+
		"workload's own release race.\n\n",
		r.Outcomes[0].Runs, r.Axis(), len(r.Rounds), r.Spec.Seed, strings.Join(r.Rounds, ", "), r.Axis())
	b.WriteString(TableOf(r.Outcomes, r.RecommendedTTL(), r.Axis()))
	b.WriteString("\n## Targets\n\n")
	for _, v := range r.Verdicts {
		fmt.Fprintf(&b, "- %s\n", v)
	}
	fmt.Fprintf(&b, "\n**%s**\n", r.Verdict)
	return b.String()
}

// fixedMark says, beside a knob, that the library fixes it or leaves it to the
// application.
func (p *Plan) fixedMark(knob string) string {
	switch p.Lib.Rule(knob).Access {
	case Fixed:
		return " (fixed by the library)"
	case Tied:
		return " (tied to retry_delay by the library)"
	case AppCode:
		return " (your code's job)"
	case Driver:
		return " (set on the Redis client)"
	case FactorOfTTL:
		return " (as a factor of the ttl)"
	}
	return ""
}

// libraryLines says what the library fixes and leaves to the application, knob by knob,
// each with why and where it was read.
func (p *Plan) libraryLines() []string {
	var out []string
	for _, k := range p.Lib.Rules {
		switch k.Access {
		case Fixed, Tied:
			v, _ := k.FixedValue(p.Effective)
			if k.Access == Tied {
				v = "tied to " + k.Tie
			}
			out = append(out, fmt.Sprintf("%s: fixed (%s): %s (%s)", k.Knob, v, k.Why, k.Source))
		case AppCode:
			out = append(out, fmt.Sprintf("%s: your code's job (%s): %s (%s)", k.Knob, k.Option, k.Why, k.Source))
		}
	}
	return out
}

func note(n string) string {
	if n == "" {
		return ""
	}
	return "  (" + n + ")"
}
