package tune

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/sim/dist"
	"gonum.org/v1/gonum/stat/distuv"
)

// MaxPoints bounds the percentiles one distribution may be given: a fit through more than
// a handful of points adds nothing, and a limit keeps a pasted log line from becoming input.
const MaxPoints = 16

// Significant digits of a fitted distribution's parameters. The fit is rounded so that its
// knob spelling is short enough to read and retype (lognormal(1ms,0.69183), not
// lognormal(999.999µs,0.6918309709189365)); at these digits the rounding moves a p99.9 by
// less than 0.1 %, which Fit.Percentiles shows since it reads the rounded distribution.
const (
	durationDigits = 4
	sigmaDigits    = 5
)

// Point is one percentile of a duration distribution as a user states it: a share P of
// the draws (a percentile in (0, 100): 99.9 for p99.9) is at or below V.
type Point struct {
	P float64
	V time.Duration
}

// String writes p as the user would type it, p99.9=40ms.
func (p Point) String() string { return "p" + formatP(p.P) + "=" + p.V.String() }

// InputError is bad input in the user's words: the field as the user typed it (a flag
// such as --latency), the offending value, and what is wrong and allowed, so that the
// command line can print it as it is and exit 2.
type InputError struct {
	Field   string
	Value   string
	Problem string
}

func (e *InputError) Error() string { return fmt.Sprintf("%s: %q: %s", e.Field, e.Value, e.Problem) }

// percentileName matches the number of a percentile as typed after "p": 50, 99.9, .5.
var percentileName = regexp.MustCompile(`^([0-9]+\.?[0-9]*|\.[0-9]+)$`)

// ParsePercentiles parses percentiles as people write them, p50=1ms,p99=5ms or
// p50=1ms, p99=5ms, p99.9=40ms, into points sorted by percentile. Field names the input
// in errors (the flag, --latency). Each percentile must lie strictly between 0 and 100,
// appear once, and carry a positive Go duration with its unit; a higher percentile must
// have a longer duration, since a distribution's percentiles never decrease and equal ones
// say nothing a single point would not.
func ParsePercentiles(field, s string) ([]Point, error) {
	if strings.TrimSpace(s) == "" {
		return nil, &InputError{field, s, "empty: give one or more percentiles, e.g. p50=1ms,p99=5ms"}
	}
	items := strings.Split(s, ",")
	if len(items) > MaxPoints {
		return nil, &InputError{field, s, fmt.Sprintf("%d percentiles given, at most %d are allowed", len(items), MaxPoints)}
	}
	pts := make([]Point, 0, len(items))
	raw := make([]string, 0, len(items))
	for _, item := range items {
		item = strings.TrimSpace(item)
		p, err := parsePoint(item)
		if err != nil {
			return nil, &InputError{field, item, err.Error()}
		}
		pts = append(pts, p)
		raw = append(raw, item)
	}
	return checkPoints(field, pts, raw)
}

// parsePoint parses one pNN=DURATION.
func parsePoint(item string) (Point, error) {
	name, value, ok := strings.Cut(item, "=")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	lower := strings.ToLower(name)
	switch {
	case item == "":
		return Point{}, fmt.Errorf("an empty entry (a stray comma?): want pNN=DURATION, e.g. p99=5ms")
	case !ok:
		return Point{}, fmt.Errorf("want pNN=DURATION, e.g. p99=5ms")
	case lower == "max":
		return Point{}, fmt.Errorf("max is not a percentile: give it once, after the percentiles, as a cap on every draw (p99=100ms,p99.9=500ms,max=%s)", value)
	case lower == "min":
		return Point{}, fmt.Errorf("min is not a percentile: give a low percentile instead, e.g. p1=%s", value)
	case lower == "median":
		lower = "p50"
	}
	num, hasP := strings.CutPrefix(lower, "p")
	if !hasP || !percentileName.MatchString(num) {
		return Point{}, fmt.Errorf("%q is not a percentile: write p followed by a number, e.g. p99 or p99.9", name)
	}
	p, err := strconv.ParseFloat(num, 64)
	if err != nil || !(p > 0 && p/100 < 1) {
		return Point{}, fmt.Errorf("percentile %s is outside (0, 100): a percentile is above 0 and below 100, e.g. p99.9", num)
	}
	v, err := parsePositiveDuration(value)
	if err != nil {
		return Point{}, err
	}
	return Point{P: p, V: v}, nil
}

// parsePositiveDuration parses a Go duration in (0, dist.MaxDuration], saying in plain
// words what is missing when it fails.
func parsePositiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case s == "":
		return 0, fmt.Errorf("the duration is missing, e.g. p99=5ms")
	case err != nil && percentileName.MatchString(s):
		return 0, fmt.Errorf("a duration needs a unit, e.g. %sms", s)
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration: want a number and a unit (ns, us, ms, s, m, h), e.g. 5ms", s)
	case d <= 0:
		return 0, fmt.Errorf("the duration must be above 0, got %v", d)
	case d > dist.MaxDuration:
		return 0, fmt.Errorf("the duration %v is above the longest allowed, %v", d, dist.MaxDuration)
	}
	return d, nil
}

// checkPoints sorts pts by percentile and checks them as a whole; raw holds each point as
// the user typed it, for the error message.
func checkPoints(field string, pts []Point, raw []string) ([]Point, error) {
	if len(pts) == 0 {
		return nil, &InputError{field, "", "empty: give one or more percentiles, e.g. p50=1ms,p99=5ms"}
	}
	if len(pts) > MaxPoints {
		return nil, &InputError{field, joinPoints(pts), fmt.Sprintf("%d percentiles given, at most %d are allowed", len(pts), MaxPoints)}
	}
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(pts[a].P, pts[b].P) })
	out := make([]Point, len(pts))
	for k, i := range order {
		out[k] = pts[i]
		if k == 0 {
			continue
		}
		j := order[k-1]
		if pts[i].P == pts[j].P {
			return nil, &InputError{field, raw[i], fmt.Sprintf("p%s is given twice (also as %s): give each percentile once", formatP(pts[i].P), raw[j])}
		}
		if pts[i].V <= pts[j].V {
			return nil, &InputError{field, raw[i], fmt.Sprintf("not above %s: a higher percentile needs a longer duration (for a fixed duration give one point)", raw[j])}
		}
	}
	return out, nil
}

// Fit is a distribution fitted to a user's percentiles, with what the user asked so that
// the two can be shown side by side.
type Fit struct {
	// Dist is the fitted distribution, its parameters rounded exactly as Knob spells them,
	// so that every figure derived from the Fit is about what a simulation would draw.
	Dist dist.Dist
	// Asked is the user's points, by increasing percentile.
	Asked []Point
	// Exact says the curve was solved to pass through the points: always for one or two
	// points, and for three or more when a base in [0, lowest value) passes through the
	// lowest, middle and highest ones. Otherwise the fit is the least-squares one in log
	// space.
	Exact bool
	// Residual is the root mean square over Asked of ln(fitted/asked): 0.01 means the
	// fitted percentiles are about 1 % off the asked ones. Rounding alone leaves ~1e-4.
	Residual float64
}

// FitPercentiles fits a distribution to points: one point gives a constant; two give the
// lognormal through both (base 0), the usual shape of a datacenter round trip; three or
// more give a lognormal with a base (a floor under every draw, the propagation delay)
// solved to pass through the lowest, middle and highest points, or, when no base in
// [0, lowest value) does, the least-squares fit of ln(value − base) against the normal
// quantile of the percentile. Field names the input in errors.
func FitPercentiles(field string, pts []Point) (Fit, error) {
	raw := make([]string, len(pts))
	for i, p := range pts {
		raw[i] = p.String()
		if !(p.P > 0 && p.P/100 < 1) || p.V <= 0 || p.V > dist.MaxDuration {
			return Fit{}, &InputError{field, raw[i], fmt.Sprintf("a percentile must be in (0, 100) and its duration in (0s, %v]", dist.MaxDuration)}
		}
	}
	sorted, err := checkPoints(field, pts, raw)
	if err != nil {
		return Fit{}, err
	}
	f := Fit{Asked: sorted, Exact: true}
	switch len(sorted) {
	case 1:
		f.Dist = dist.Constant(sorted[0].V)
		return f, nil
	case 2:
		mu, sigma := line(sorted[0], sorted[1], 0)
		f.Dist = lognormal(mu, sigma, 0)
	default:
		f.Dist, f.Exact = fitShifted(sorted)
	}
	if err := checkFitted(f.Dist); err != nil {
		return Fit{}, &InputError{field, joinPoints(sorted), err.Error()}
	}
	f.Residual = residual(f.Dist, sorted)
	return f, nil
}

// checkFitted rejects a lognormal that the simulator cannot draw from, in the user's terms.
func checkFitted(d dist.Dist) error {
	switch {
	case !(d.Sigma <= dist.MaxSigma):
		return fmt.Errorf("too wide a spread for one lognormal (sigma %.3g, at most %g): check the units", d.Sigma, dist.MaxSigma)
	case d.Median < 1:
		return fmt.Errorf("these percentiles put the median below 1ns: check the units")
	case d.Median > dist.MaxDuration || d.Base+d.Median > dist.MaxDuration:
		return fmt.Errorf("these percentiles put the median above %v: check the units", dist.MaxDuration)
	}
	return nil
}

// z returns the standard normal quantile of percentile p.
func z(p float64) float64 { return distuv.UnitNormal.Quantile(p / 100) }

// line returns the lognormal (mu = ln median, sigma) through a and b above base.
func line(a, b Point, base float64) (mu, sigma float64) {
	la, lb := math.Log(float64(a.V)-base), math.Log(float64(b.V)-base)
	za, zb := z(a.P), z(b.P)
	sigma = (lb - la) / (zb - za)
	return la - sigma*za, sigma
}

// lognormal returns the rounded lognormal with median e^mu nanoseconds above base.
func lognormal(mu, sigma, base float64) dist.Dist {
	d := dist.Lognormal(roundDuration(math.Exp(mu)), roundSig(sigma, sigmaDigits))
	d.Base = roundDuration(base)
	return d
}

// fitShifted fits a lognormal with a base to three or more sorted points.
func fitShifted(pts []Point) (dist.Dist, bool) {
	lo, mid, hi := pts[0], pts[len(pts)/2], pts[len(pts)-1]
	if base, ok := solveBase(lo, mid, hi); ok {
		mu, sigma := line(mid, hi, base)
		return lognormal(mu, sigma, base), true
	}
	base := leastSquaresBase(pts)
	mu, sigma, _ := regress(pts, base)
	return lognormal(mu, sigma, base), false
}

// solveBase finds the base b in [0, lo.V) at which the lognormal through (lo, mid) and
// the one through (mid, hi) have the same sigma, so one curve passes through all three.
// gap(b) is the upper pair's sigma minus the lower pair's: as b nears lo.V the lower
// pair's sigma grows without bound, so gap ends negative, and a root exists exactly when
// gap(0) ≥ 0, that is when the tail is at least as heavy as a lognormal from 0 says.
func solveBase(lo, mid, hi Point) (float64, bool) {
	gap := func(b float64) float64 {
		_, upper := line(mid, hi, b)
		_, lower := line(lo, mid, b)
		return upper - lower
	}
	g0 := gap(0)
	if g0 == 0 {
		return 0, true
	}
	if !(g0 > 0) {
		return 0, false
	}
	a, b := 0.0, float64(lo.V)
	// Bisection: 200 halvings take the bracket far below a nanosecond, and a bounded
	// loop cannot hang on a pathological input.
	for range 200 {
		m := a + (b-a)/2
		if m <= a || m >= b {
			break
		}
		if gap(m) > 0 {
			a = m
		} else {
			b = m
		}
	}
	return a, true
}

// regress returns the least-squares line ln(v − base) = mu + sigma·z(p) through pts and
// its sum of squared residuals.
func regress(pts []Point, base float64) (mu, sigma, ssr float64) {
	n := float64(len(pts))
	var sz, sy, szz, szy float64
	for _, p := range pts {
		zp, y := z(p.P), math.Log(float64(p.V)-base)
		sz, sy, szz, szy = sz+zp, sy+y, szz+zp*zp, szy+zp*y
	}
	sigma = (n*szy - sz*sy) / (n*szz - sz*sz)
	mu = (sy - sigma*sz) / n
	for _, p := range pts {
		r := math.Log(float64(p.V)-base) - mu - sigma*z(p.P)
		ssr += r * r
	}
	return mu, sigma, ssr
}

// leastSquaresBase returns the base in [0, lowest value) that minimises regress's
// residual: the best of a coarse grid, refined by golden-section search between the grid
// neighbours. Both loops are bounded, and the grid keeps a second local minimum from
// capturing the search.
func leastSquaresBase(pts []Point) float64 {
	const cells = 64
	top := float64(pts[0].V)
	best, bestSSR := 0.0, math.Inf(1)
	for j := range cells {
		b := top * float64(j) / cells
		if _, _, ssr := regress(pts, b); ssr < bestSSR {
			best, bestSSR = b, ssr
		}
	}
	a, c := max(best-top/cells, 0), min(best+top/cells, top*(cells-1)/cells)
	phi := (math.Sqrt(5) - 1) / 2
	for range 100 {
		x1, x2 := c-phi*(c-a), a+phi*(c-a)
		_, _, s1 := regress(pts, x1)
		_, _, s2 := regress(pts, x2)
		if s1 <= s2 {
			c = x2
		} else {
			a = x1
		}
	}
	if _, _, ssr := regress(pts, (a+c)/2); ssr < bestSSR {
		return (a + c) / 2
	}
	return best
}

// residual is the root mean square of ln(fitted/asked) over pts.
func residual(d dist.Dist, pts []Point) float64 {
	var sum float64
	for _, p := range pts {
		r := math.Log(float64(Percentile(d, p.P)) / float64(p.V))
		sum += r * r
	}
	return math.Sqrt(sum / float64(len(pts)))
}

// CutCap takes a max=DURATION entry out of percentiles as typed
// (p99=100ms,p99.9=500ms,max=3s) and returns the rest and the cap (0: none given). A cap
// is the worst case an operator knows: every draw of the fitted distribution is clamped
// to it, and the report says so.
func CutCap(field, s string) (string, time.Duration, error) {
	items := strings.Split(s, ",")
	var keep []string
	var capAt time.Duration
	for _, item := range items {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || strings.ToLower(strings.TrimSpace(name)) != "max" {
			keep = append(keep, item)
			continue
		}
		if capAt != 0 {
			return "", 0, &InputError{field, s, "max= is given twice"}
		}
		d, err := parsePositiveDuration(strings.TrimSpace(value))
		if err != nil {
			return "", 0, &InputError{field, strings.TrimSpace(item), err.Error()}
		}
		capAt = d
	}
	return strings.Join(keep, ","), capAt, nil
}

// Percentile returns the p-th percentile (p in (0, 100)) of d, computed from its formula:
// Base + Median·e^(σ·z) for a lognormal, Base − Mean·ln(1 − p/100) for an exponential,
// linear for a uniform. A p outside (0, 100) is clamped to the distribution's ends.
func Percentile(d dist.Dist, p float64) time.Duration {
	q := p / 100
	if !(q > 0) { // NaN too
		q = 0
	}
	q = min(q, 1)
	var ns float64
	switch d.Kind {
	case dist.KindConstant:
		return d.Base
	case dist.KindUniform:
		ns = float64(d.Base) + q*float64(d.Max-d.Base)
	case dist.KindExponential:
		ns = float64(d.Base) - float64(d.Mean)*math.Log1p(-q)
	case dist.KindLognormal:
		ns = float64(d.Base) + float64(d.Median)*math.Exp(d.Sigma*distuv.UnitNormal.Quantile(q))
	}
	if d.Cap > 0 && (d.Kind == dist.KindExponential || d.Kind == dist.KindLognormal) {
		ns = min(ns, float64(d.Cap))
	}
	return toDuration(ns)
}

// Row is one percentile of a fit: what the user asked there, if anything, and what the
// fitted distribution gives.
type Row struct {
	P     float64
	Asked time.Duration // 0 when the user gave no value at P (asked values are positive)
	Fit   time.Duration
}

// String writes r the way the tune report prints it: "asked p99=5ms, fit p99=5.000ms",
// or "fit p90=2.425ms" where the user gave nothing.
func (r Row) String() string {
	fit := "fit p" + formatP(r.P) + "=" + FormatDuration(r.Fit)
	if r.Asked == 0 {
		return fit
	}
	return "asked " + Point{r.P, r.Asked}.String() + ", " + fit
}

// reportPercentiles are the percentiles every fit is shown at besides the user's own:
// the median, and the tail from p90 to p99.9 that the arithmetic designs for.
var reportPercentiles = [...]float64{50, 90, 99, 99.9}

// Percentiles returns the fitted distribution's percentiles at the user's points and at
// p50, p90, p99 and p99.9, by increasing percentile, so that a caller can print how
// closely the fit follows what was asked.
func (f Fit) Percentiles() []Row {
	ps := make([]float64, 0, len(f.Asked)+len(reportPercentiles))
	for _, a := range f.Asked {
		ps = append(ps, a.P)
	}
	ps = append(ps, reportPercentiles[:]...)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	rows := make([]Row, len(ps))
	for i, p := range ps {
		rows[i] = Row{P: p, Fit: Percentile(f.Dist, p)}
		for _, a := range f.Asked {
			if a.P == p {
				rows[i].Asked = a.V
			}
		}
	}
	return rows
}

// Knob returns the fit in the syntax of a distribution knob (what --set latency=...
// accepts): knobs.ParseDist and knobs.ParseLatency read it back to exactly f.Dist.
func (f Fit) Knob() string { return knobs.FormatDist(f.Dist) }

// String names the fit and what it was fitted to: "lognormal(1ms,0.69183) from
// p50=1ms,p99=5ms", with "least squares, residual 0.031" when no curve passes through
// the points.
func (f Fit) String() string {
	s := f.Knob() + " from " + joinPoints(f.Asked)
	if !f.Exact {
		s += fmt.Sprintf(" (least squares in log space, residual %.3g)", f.Residual)
	}
	return s
}

func joinPoints(pts []Point) string {
	parts := make([]string, len(pts))
	for i, p := range pts {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// formatP writes a percentile without trailing zeros: 99.9, 50.
func formatP(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

// FormatDuration writes d with three decimals in the largest unit below it (5.000ms,
// 1.250s, 812.500µs), so that a fitted value reads as computed rather than as typed.
func FormatDuration(d time.Duration) string {
	unit, name := time.Duration(1), "ns"
	switch a := d.Abs(); {
	case a >= time.Second:
		unit, name = time.Second, "s"
	case a >= time.Millisecond:
		unit, name = time.Millisecond, "ms"
	case a >= time.Microsecond:
		unit, name = time.Microsecond, "µs"
	default:
		return d.String()
	}
	return strconv.FormatFloat(float64(d)/float64(unit), 'f', 3, 64) + name
}

// roundDuration rounds ns nanoseconds to durationDigits significant digits, and to the
// nanosecond, within [0, dist.MaxDuration].
func roundDuration(ns float64) time.Duration { return toDuration(roundSig(ns, durationDigits)) }

// toDuration rounds ns nanoseconds to the nanosecond within [0, dist.MaxDuration]; NaN
// and huge tails saturate at the top instead of wrapping.
func toDuration(ns float64) time.Duration {
	if !(ns < float64(dist.MaxDuration)) {
		return dist.MaxDuration
	}
	return time.Duration(math.Round(max(ns, 0)))
}

// roundSig rounds x to digits significant digits. It multiplies or divides by an exact
// power of ten so that the result is the double nearest the decimal it stands for, and
// strconv's shortest formatting prints that decimal.
func roundSig(x float64, digits int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := digits - int(math.Ceil(math.Log10(math.Abs(x))))
	if e >= 0 {
		p := math.Pow10(e)
		return math.Round(x*p) / p
	}
	p := math.Pow10(-e)
	return math.Round(x/p) * p
}
