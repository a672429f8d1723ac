package knobs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/internal/suggest"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// DistSyntax is what a distribution knob accepts, for error messages and `params`.
const DistSyntax = "a duration (10ms), const(d), uniform(lo,hi), exp(base,mean[,max=d]), " +
	"lognormal(median,sigma[,base][,max=d])"

// latencySyntax adds the tail form that only latency accepts.
const latencySyntax = DistSyntax + ", or tail(FAST,p,SLOW)"

// ParseDist parses a distribution written as a plain duration ("10ms", a constant),
// const(d), uniform(lo,hi), exp(base,mean) (base plus an exponential draw of that mean)
// or lognormal(median,sigma[,base]). Durations are Go durations. Spaces are ignored. It
// checks ranges too, so that every complaint is in the words the user wrote ("lo 5ms > hi
// 1ms"), never in the network's field names.
func ParseDist(s string) (dist.Dist, error) {
	name, args, err := splitCall(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	if err != nil {
		return dist.Dist{}, err
	}
	if args == nil { // a bare duration
		d, err := parseDur(name)
		if err != nil {
			return dist.Dist{}, err
		}
		if err := distRange("the duration", d); err != nil {
			return dist.Dist{}, err
		}
		return dist.Constant(d), nil
	}
	kind, ok := distForms[strings.ToLower(name)]
	if !ok {
		return dist.Dist{}, unknownDist(name, false)
	}
	// A trailing max=d caps the draws of the two forms without an end.
	var capAt time.Duration
	if n := len(args); n > 0 && strings.HasPrefix(strings.ToLower(args[n-1]), "max=") {
		if kind.name != "exp" && kind.name != "lognormal" {
			return dist.Dist{}, &problem{what: fmt.Sprintf("%s takes no max=: it is bounded already (max= caps exp and lognormal)", kind.name)}
		}
		v := args[n-1][len("max="):]
		if capAt, err = parseDur(v); err != nil {
			return dist.Dist{}, &problem{what: fmt.Sprintf("%s's max %s: %v", kind.name, quoteValue(v), err)}
		}
		if err := distRange(kind.name+"'s max", capAt); err != nil {
			return dist.Dist{}, err
		}
		if capAt == 0 {
			return dist.Dist{}, &problem{what: kind.name + "'s max 0s: a cap must be above 0 (leave max= out for none)"}
		}
		args = args[:n-1]
	}
	if len(args) < len(kind.args)-kind.optional || len(args) > len(kind.args) {
		return dist.Dist{}, &problem{what: fmt.Sprintf("%s takes %s, got %d argument%s",
			kind.name, kind.form(), len(args), pluralS(len(args)))}
	}
	durs := make([]time.Duration, len(args))
	var sigma float64
	for i, a := range args {
		what := kind.name + "'s " + kind.args[i]
		if kind.args[i] == "sigma" {
			if sigma, err = parseNumber(a); err != nil {
				return dist.Dist{}, &problem{what: fmt.Sprintf("%s %s: %v", what, quoteValue(a), err)}
			}
			if !(sigma >= 0 && sigma <= dist.MaxSigma) {
				return dist.Dist{}, &problem{what: fmt.Sprintf("out of range: %s %s, allowed [0, %g]", what, a, dist.MaxSigma)}
			}
			continue
		}
		if durs[i], err = parseDur(a); err != nil {
			return dist.Dist{}, &problem{what: fmt.Sprintf("%s %s: %v", what, quoteValue(a), err)}
		}
		if err := distRange(what, durs[i]); err != nil {
			return dist.Dist{}, err
		}
	}
	switch kind.name {
	case "const":
		return dist.Constant(durs[0]), nil
	case "uniform":
		if durs[0] > durs[1] {
			return dist.Dist{}, &problem{what: fmt.Sprintf("uniform's lo %v > hi %v", durs[0], durs[1]),
				hint: "uniform(" + args[1] + "," + args[0] + ")"}
		}
		return dist.Uniform(durs[0], durs[1]), nil
	}
	var out dist.Dist
	if kind.name == "exp" {
		out = dist.Exponential(durs[0], durs[1])
	} else {
		out = dist.Lognormal(durs[0], sigma)
		if len(args) == 3 {
			out.Base = durs[2]
		}
	}
	if capAt > 0 && capAt < out.Base {
		return dist.Dist{}, &problem{what: fmt.Sprintf("%s's max %v is below its base %v: every draw is at least the base", kind.name, capAt, out.Base)}
	}
	out.Cap = capAt
	return out, nil
}

// distForm is one distribution's call syntax.
type distForm struct {
	name     string
	args     []string // argument names, as the help writes them
	optional int      // how many trailing arguments may be left out
}

func (f distForm) form() string {
	req := f.args[:len(f.args)-f.optional]
	s := f.name + "(" + strings.Join(req, ",")
	if f.optional > 0 {
		s += "[," + strings.Join(f.args[len(req):], ",") + "]"
	}
	n := fmt.Sprint(len(req))
	if f.optional > 0 {
		n += " or " + fmt.Sprint(len(f.args))
	}
	return n + " arguments, " + s + ")"
}

// distForms are the distributions by every name ParseDist accepts.
var distForms = map[string]distForm{
	"const":       {name: "const", args: []string{"d"}},
	"constant":    {name: "const", args: []string{"d"}},
	"uniform":     {name: "uniform", args: []string{"lo", "hi"}},
	"exp":         {name: "exp", args: []string{"base", "mean"}},
	"exponential": {name: "exp", args: []string{"base", "mean"}},
	"lognormal":   {name: "lognormal", args: []string{"median", "sigma", "base"}, optional: 1},
}

// unknownDist is the problem for a call of an unknown distribution, with the closest name.
func unknownDist(name string, latency bool) *problem {
	names := []string{"const", "uniform", "exp", "lognormal"}
	if latency {
		names = append(names, "tail")
	}
	p := &problem{what: fmt.Sprintf("unknown distribution %q: want %s", name, strings.Join(names, ", "))}
	if c := suggest.Closest(name, append(names, "constant", "exponential"), 1); len(c) == 1 {
		p.what += "; did you mean " + c[0] + "?"
	}
	return p
}

// distRange checks one duration of a distribution against what the network can draw.
func distRange(what string, d time.Duration) error {
	switch {
	case d < 0:
		return &problem{what: fmt.Sprintf("out of range: %s %v is negative", what, d)}
	case d > network.MaxDuration:
		return &problem{what: fmt.Sprintf("out of range: %s %v is above %v", what, d, network.MaxDuration)}
	}
	return nil
}

// pluralS is the "s" a count of n takes in English.
func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// FormatDist writes d in the syntax ParseDist reads, canonically: the text of a knob value
// in records and CSV files, so two spellings of one distribution compare equal.
func FormatDist(d dist.Dist) string {
	switch d.Kind {
	case dist.KindConstant:
		return "const(" + d.Base.String() + ")"
	case dist.KindUniform:
		return "uniform(" + d.Base.String() + "," + d.Max.String() + ")"
	case dist.KindExponential:
		return "exp(" + d.Base.String() + "," + d.Mean.String() + capArg(d) + ")"
	case dist.KindLognormal:
		s := "lognormal(" + d.Median.String() + "," + strconv.FormatFloat(d.Sigma, 'g', -1, 64)
		if d.Base != 0 {
			s += "," + d.Base.String()
		}
		return s + capArg(d) + ")"
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
		if _, ok := distForms[strings.ToLower(name)]; args != nil && !ok {
			return network.Latency{}, unknownDist(name, true)
		}
		d, err := ParseDist(s)
		return network.Latency{Fast: d}, err
	}
	if len(args) != 3 {
		return network.Latency{}, &problem{what: fmt.Sprintf("tail takes 3 arguments, tail(FAST,p,SLOW), got %d", len(args))}
	}
	fast, err := ParseDist(args[0])
	if err != nil {
		return network.Latency{}, &problem{what: fmt.Sprintf("tail's FAST %s: %v", args[0], err)}
	}
	p, err := parseNumber(args[1])
	if err != nil {
		return network.Latency{}, &problem{what: fmt.Sprintf("tail's p %s: %v", quoteValue(args[1]), err)}
	}
	if !(p >= 0 && p <= 1) {
		return network.Latency{}, &problem{what: fmt.Sprintf("out of range: tail's p %s, allowed [0, 1]", args[1])}
	}
	slow, err := ParseDist(args[2])
	if err != nil {
		return network.Latency{}, &problem{what: fmt.Sprintf("tail's SLOW %s: %v", args[2], err)}
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
// without parentheses comes back as the name with nil arguments. Its complaints name the
// slip a person makes: a trailing comma, a list where one value goes, a missing ")".
func splitCall(s string) (string, []string, error) {
	if s == "" {
		return "", nil, &problem{what: "empty value: want " + DistSyntax}
	}
	if strings.HasSuffix(s, ",") {
		return "", nil, &problem{what: "a trailing comma", hint: strings.TrimRight(s, ",")}
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		switch {
		case strings.Contains(s, ","):
			return "", nil, &problem{what: "a comma outside parentheses: one value goes here (a sweep spec lists several)"}
		case strings.Contains(s, ")"):
			return "", nil, &problem{what: "a \")\" without its \"(\""}
		}
		return s, nil, nil
	}
	if open == 0 {
		return "", nil, &problem{what: "a distribution name is missing before \"(\", e.g. uniform(1ms,2ms)"}
	}
	name, body := s[:open], s[open+1:]
	args := []string{}
	depth, start := 0, 0
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 { // the call's own ")": nothing may follow it
				if rest := body[i+1:]; rest != "" {
					return "", nil, &problem{what: fmt.Sprintf("unexpected %q after the closing \")\"", rest)}
				}
				args = append(args, body[start:i])
				for k, a := range args {
					if a == "" {
						return "", nil, &problem{what: fmt.Sprintf("%s: argument %d is empty", name, k+1)}
					}
				}
				return name, args, nil
			}
		case ',':
			if depth == 0 {
				args = append(args, body[start:i])
				start = i + 1
			}
		}
	}
	return "", nil, &problem{what: "a \"(\" without its \")\"", hint: s + strings.Repeat(")", depth+1)}
}

// capArg is a capped distribution's trailing ",max=d", as ParseDist reads it.
func capArg(d dist.Dist) string {
	if d.Cap == 0 {
		return ""
	}
	return ",max=" + d.Cap.String()
}
