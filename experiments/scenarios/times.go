package scenarios

import (
	"fmt"
	"math"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
)

// span is the true time a schedule's times must fall in: a run's duration once every
// knob is applied (the file's, --set's, a sweep point's), or, while a file is read and no
// run is known yet, the longest run the duration knob allows.
type span struct {
	end time.Duration
	run bool // end is the duration of the run at hand
}

// anyRun is the span of every run: a time past it is impossible whatever the knobs say.
var anyRun = span{end: knobs.MaxDuration}

// tooLate says why a time past the span's end cannot be: lead relates the value to the
// run ("after the end of", "longer than"), so says what would (not) happen.
func (s span) tooLate(lead, so string) string {
	if s.run {
		return fmt.Sprintf("%s the run, which lasts %v, so %s", lead, s.end, so)
	}
	return fmt.Sprintf("%s any run (the duration knob allows at most %v), so %s", lead, s.end, so)
}

// defaults is the parameters' values when nobody sets them. ParseFile has checked every
// default, so none fails here.
func (sc *Scenario) defaults() Values {
	v := Values{durs: map[string]time.Duration{}, counts: map[string]int{}}
	for _, p := range sc.Params {
		if p.Kind == ParamCount {
			v.counts[p.Name], _ = knobs.Whole(p.Name, p.Default, "")
		} else {
			v.durs[p.Name], _ = knobs.Duration(p.Name, p.Default, "")
		}
	}
	return v
}

// refuse is the error for a duration field's value x: the field and, for a parameter,
// its name, then the value this run gives it.
func (v Values) refuse(field string, x Value, problem, allowed string) error {
	value := x.text
	switch {
	case x.Param != "":
		field, value = field+" $"+x.Param, v.dur(x).String()
	case value == "":
		value = x.Dur.String()
	}
	return &knobs.ValueError{Knob: field, Value: value, Problem: problem, Allowed: allowed}
}

// checkTimes refuses the times no run in span s can honour: a client's start or a step's
// time after the end, a step's delay after its event longer than the run, and durations
// past what the simulator's actors take (a pause of a client beyond network.MaxDuration, a
// clock step beyond clock.MaxSpan). Every sim.Time a schedule makes is then at most the
// run's end plus such a duration, far inside int64 nanoseconds, so none can wrap. The
// error names the line of the client or the step. ParseFile calls it with anyRun and the
// parameters' defaults; Configure with the run's duration and its parameter values, since
// the duration can be set after the file is written (--set duration=..., a sweep point).
func (sc *Scenario) checkTimes(s span, v Values) error {
	for _, cs := range sc.Start {
		if v.dur(cs.At) > s.end {
			return sc.lineErr(cs.line, v.refuse("start of "+cs.Client, cs.At,
				s.tooLate("after the end of", "the client would never start"), "a true time from 0s to the run's duration"))
		}
	}
	for _, st := range sc.Steps {
		if x, err := st.checkTimes(s, v); err != nil {
			line := x.line
			if line == 0 {
				line = st.Line
			}
			return sc.lineErr(line, err)
		}
	}
	return nil
}

// checkTimes is Scenario.checkTimes for one step; it returns the value it refuses, for
// its line.
func (st Step) checkTimes(s span, v Values) (Value, error) {
	if st.At.Set && v.dur(st.At) > s.end {
		return st.At, v.refuse("at", st.At, s.tooLate("after the end of", "the step would never act"),
			"a true time from 0s to the run's duration")
	}
	if st.After.Set && v.dur(st.After) > s.end {
		return st.After, v.refuse("after", st.After, s.tooLate("longer than", "the step would never act"),
			"a delay from 0s to the run's duration")
	}
	for _, b := range st.Action.bounds() {
		x := b.x
		if !x.Set || x.Never {
			continue
		}
		if d := v.dur(x); d < b.lo || d > b.hi || b.wholeMs && d%time.Millisecond != 0 {
			return x, v.refuse(st.Action.Kind+": "+b.field, x, "out of range", b.allowed)
		}
	}
	return Value{}, nil
}

// bound is the range one duration field of an action takes, the limits of the actor that
// carries it out: what a literal breaks at its line when the file is read, and a
// parameter's value when the run binds it.
type bound struct {
	field   string
	x       Value
	lo, hi  time.Duration
	wholeMs bool
	allowed string
}

// bounds lists the duration fields of a and the range each takes.
func (a Action) bounds() []bound {
	const forever = time.Duration(math.MaxInt64)
	upTo := func(hi time.Duration, more string) string {
		return fmt.Sprintf("a duration above 0s, at most %v%s", hi, more)
	}
	toEnd := " (leave it out for: to the end of the run)"
	if d, ok := a.NodeFault(); ok { // a node stays down, or paused, for at most MaxDowntime
		switch d.Effect {
		case redis.EffectStop:
			return []bound{{"restart_after", a.Restart, 0, redis.MaxDowntime, false,
				fmt.Sprintf("a duration from 0s to %v, or never", redis.MaxDowntime)}}
		case redis.EffectStall:
			return []bound{{"for", a.For, 1, redis.MaxDowntime, false, upTo(redis.MaxDowntime, "")}}
		}
		return nil
	}
	switch a.Kind {
	case "pause_client":
		return []bound{{"for", a.For, 1, network.MaxDuration, false, upTo(network.MaxDuration, "")}}
	case "isolate", "block", "clog", "partition":
		return []bound{{"for", a.For, 1, network.MaxDuration, false, upTo(network.MaxDuration, toEnd)}}
	case "slow_link":
		// The link's latency comes back at at + for, a time that saturates rather than
		// wraps; a $parameter latency is a constant, and a latency has the network's bound.
		return []bound{{"for", a.For, 1, forever, false, "a duration above 0s"},
			{"latency", a.By, 0, network.MaxDuration, false, fmt.Sprintf("a duration from 0s to %v", network.MaxDuration)}}
	case "crash_client":
		return []bound{{"restart_after", a.Restart, 0, forever, false, "a duration from 0s, or never"}}
	case "clock_step", "clock_slew":
		return []bound{{"by", a.By, -clock.MaxSpan, clock.MaxSpan, false,
			fmt.Sprintf("a duration from -%v to %v", clock.MaxSpan, clock.MaxSpan)}}
	case "outside_lock":
		return []bound{{"ttl", a.TTL, time.Millisecond, forever, true, "whole milliseconds from 1ms (SET PX cannot say less)"}}
	}
	return nil
}
