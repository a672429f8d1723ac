package experiments

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/network"
)

// DistSyntax is what a distribution knob accepts, for error messages and `params`.
const DistSyntax = "a duration (10ms), const(d), uniform(lo,hi), exp(base,mean), " +
	"lognormal(median,sigma[,base])"

// latencySyntax adds the tail form that only latency accepts.
const latencySyntax = DistSyntax + ", or tail(FAST,p,SLOW)"

// ParseDist parses a distribution written as a plain duration ("10ms", a constant),
// const(d), uniform(lo,hi), exp(base,mean) (base plus an exponential draw of that mean)
// or lognormal(median,sigma[,base]). Durations are Go durations. Spaces are ignored.
func ParseDist(s string) (network.Dist, error) {
	name, args, err := splitCall(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	if err != nil {
		return network.Dist{}, err
	}
	if args == nil { // a bare duration
		d, err := time.ParseDuration(name)
		if err != nil {
			return network.Dist{}, fmt.Errorf("%q is not a duration or a distribution", name)
		}
		return network.Constant(d), nil
	}
	want := func(n ...int) error {
		for _, k := range n {
			if len(args) == k {
				return nil
			}
		}
		return fmt.Errorf("%s takes %v arguments, got %d", name, n, len(args))
	}
	durs := func(idx ...int) ([]time.Duration, error) {
		out := make([]time.Duration, len(idx))
		for i, k := range idx {
			d, err := time.ParseDuration(args[k])
			if err != nil {
				return nil, fmt.Errorf("%s: argument %d %q is not a duration", name, k+1, args[k])
			}
			out[i] = d
		}
		return out, nil
	}
	switch strings.ToLower(name) {
	case "const", "constant":
		if err := want(1); err != nil {
			return network.Dist{}, err
		}
		d, err := durs(0)
		if err != nil {
			return network.Dist{}, err
		}
		return network.Constant(d[0]), nil
	case "uniform":
		if err := want(2); err != nil {
			return network.Dist{}, err
		}
		d, err := durs(0, 1)
		if err != nil {
			return network.Dist{}, err
		}
		return network.Uniform(d[0], d[1]), nil
	case "exp", "exponential":
		if err := want(2); err != nil {
			return network.Dist{}, err
		}
		d, err := durs(0, 1)
		if err != nil {
			return network.Dist{}, err
		}
		return network.Exponential(d[0], d[1]), nil
	case "lognormal":
		if err := want(2, 3); err != nil {
			return network.Dist{}, err
		}
		d, err := durs(0)
		if err != nil {
			return network.Dist{}, err
		}
		sigma, err := strconv.ParseFloat(args[1], 64)
		if err != nil {
			return network.Dist{}, fmt.Errorf("lognormal: sigma %q is not a number", args[1])
		}
		out := network.Lognormal(d[0], sigma)
		if len(args) == 3 {
			b, err := durs(2)
			if err != nil {
				return network.Dist{}, err
			}
			out.Base = b[0]
		}
		return out, nil
	}
	return network.Dist{}, fmt.Errorf("unknown distribution %q", name)
}

// FormatDist writes d in the syntax ParseDist reads, canonically: the text of a knob value
// in records and CSV files, so two spellings of one distribution compare equal.
func FormatDist(d network.Dist) string {
	switch d.Kind {
	case network.DistConstant:
		return "const(" + d.Base.String() + ")"
	case network.DistUniform:
		return "uniform(" + d.Base.String() + "," + d.Max.String() + ")"
	case network.DistExponential:
		return "exp(" + d.Base.String() + "," + d.Mean.String() + ")"
	case network.DistLognormal:
		s := "lognormal(" + d.Median.String() + "," + strconv.FormatFloat(d.Sigma, 'g', -1, 64)
		if d.Base != 0 {
			s += "," + d.Base.String()
		}
		return s + ")"
	}
	return d.String()
}

// ParseLatency parses a latency: any distribution ParseDist reads, or
// tail(FAST,p,SLOW), which draws from SLOW with probability p and from FAST otherwise.
func ParseLatency(s string) (network.Latency, error) {
	name, args, err := splitCall(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	if err != nil {
		return network.Latency{}, err
	}
	if !strings.EqualFold(name, "tail") {
		d, err := ParseDist(s)
		return network.Latency{Fast: d}, err
	}
	if len(args) != 3 {
		return network.Latency{}, fmt.Errorf("tail takes 3 arguments (FAST,p,SLOW), got %d", len(args))
	}
	fast, err := ParseDist(args[0])
	if err != nil {
		return network.Latency{}, fmt.Errorf("tail: fast: %w", err)
	}
	p, err := strconv.ParseFloat(args[1], 64)
	if err != nil {
		return network.Latency{}, fmt.Errorf("tail: p %q is not a number", args[1])
	}
	slow, err := ParseDist(args[2])
	if err != nil {
		return network.Latency{}, fmt.Errorf("tail: slow: %w", err)
	}
	return network.Tail(fast, p, slow), nil
}

// FormatLatency writes l in the syntax ParseLatency reads, canonically.
func FormatLatency(l network.Latency) string {
	if l.SlowP == 0 {
		return FormatDist(l.Fast)
	}
	return "tail(" + FormatDist(l.Fast) + "," + strconv.FormatFloat(l.SlowP, 'g', -1, 64) + "," +
		FormatDist(l.Slow) + ")"
}

// splitCall splits "name(a,b(c,d),e)" into name and its top-level arguments; a string
// without parentheses comes back as the name with nil arguments.
func splitCall(s string) (string, []string, error) {
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.ContainsAny(s, "),") {
			return "", nil, fmt.Errorf("unbalanced parentheses in %q", s)
		}
		return s, nil, nil
	}
	if !strings.HasSuffix(s, ")") {
		return "", nil, fmt.Errorf("missing closing parenthesis in %q", s)
	}
	name, body := s[:open], s[open+1:len(s)-1]
	args := []string{}
	depth, start := 0, 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return "", nil, fmt.Errorf("unbalanced parentheses in %q", s)
			}
		case ',':
			if depth == 0 {
				args = append(args, body[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return "", nil, fmt.Errorf("unbalanced parentheses in %q", s)
	}
	args = append(args, body[start:])
	for _, a := range args {
		if a == "" {
			return "", nil, fmt.Errorf("empty argument in %q", s)
		}
	}
	return name, args, nil
}
