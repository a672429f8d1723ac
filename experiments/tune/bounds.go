package tune

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Per10k is the scale of violation rates: per 10,000 acquisitions, the unit of
// summary.csv, so that tune's figures and a sweep's can be compared directly.
const Per10k = 10_000

// SecondsPerYear is a Julian year of 365.25 days, the year of "per year" figures; the
// quarter day keeps leap years from being left out of a rate quoted for the long run.
const SecondsPerYear = 365.25 * 24 * 60 * 60

// ClopperPearson returns the exact two-sided interval at confidence conf (0.95 for 95 %)
// for a proportion seen k times in n trials. It inverts the binomial test itself rather
// than leaning on a normal approximation, so it never claims more than the counts show:
// its ends are the Beta quantiles lo = B(α/2; k, n−k+1) and hi = B(1−α/2; k+1, n−k) with
// α = 1 − conf, lo = 0 when k = 0 and hi = 1 when k = n. n = 0 gives [0, 1] (no
// information); k or n out of range, or conf outside (0, 1), give NaN.
//
// Each end is the one-sided bound at confidence 1 − α/2, so the two-sided 95 % interval's
// hi is UpperBound(k, n, 0.975), slightly above the one-sided 95 % UpperBound.
func ClopperPearson(k, n int, conf float64) (lo, hi float64) {
	if !valid(k, n, conf) {
		return math.NaN(), math.NaN()
	}
	tail := (1 - conf) / 2
	switch {
	case k == 0:
		lo = 0
	case k == n: // the mirror of UpperBound's closed form for k = 0
		lo = math.Exp(math.Log(tail) / float64(n))
	default:
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(tail)
	}
	return lo, UpperBound(k, n, 1-tail)
}

// UpperBound returns the one-sided Clopper–Pearson upper bound at confidence conf on a
// proportion seen k times in n trials: the largest p for which seeing at most k is still
// as likely as 1 − conf. It is the bound to quote for "at most this often", and when
// k = 0 it has the closed form 1 − (1 − conf)^(1/n), used directly because it stays
// accurate for the millions of trials an adaptive run reaches. For conf = 0.95 that is
// 1 − 0.05^(1/n) ≈ −ln(0.05)/n = 2.996/n, which RuleOfThree rounds up to 3/n. n = 0
// gives 1; arguments out of range give NaN.
func UpperBound(k, n int, conf float64) float64 {
	switch {
	case !valid(k, n, conf):
		return math.NaN()
	case k == n: // n = 0 included: nothing seen, nothing ruled out
		return 1
	case k == 0:
		return -math.Expm1(math.Log1p(-conf) / float64(n))
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(conf)
}

func valid(k, n int, conf float64) bool {
	return k >= 0 && k <= n && conf > 0 && conf < 1
}

// RuleOfThree returns 3/n, the simple 95 % upper bound on a proportion never seen in n
// trials: it is the one-sided Clopper–Pearson bound 1 − 0.05^(1/n) (see UpperBound)
// rounded up, always a little above it, and easy to check by hand. n < 3 gives 1.
func RuleOfThree(n int) float64 {
	if n < 3 {
		return 1
	}
	return 3 / float64(n)
}

// Rate is how often something (a violation kind) happened per acquisition, with a
// one-sided upper bound that stays honest when it was never seen.
type Rate struct {
	Count        int
	Acquisitions int
	Conf         float64 // the confidence of Upper, e.g. 0.95
	Estimate     float64 // Count / Acquisitions; NaN with no acquisitions
	Upper        float64 // UpperBound(Count, Acquisitions, Conf): 1 with no acquisitions
}

// RateOf returns count events over acquisitions with the one-sided upper bound at conf.
// Out-of-range arguments (a negative count, more events than acquisitions, conf outside
// (0, 1)) give NaN figures rather than a plausible-looking number.
func RateOf(count, acquisitions int, conf float64) Rate {
	r := Rate{Count: count, Acquisitions: acquisitions, Conf: conf, Upper: UpperBound(count, acquisitions, conf)}
	r.Estimate = math.NaN()
	if acquisitions > 0 && !math.IsNaN(r.Upper) {
		r.Estimate = float64(count) / float64(acquisitions)
	}
	return r
}

// Per10k returns the rate and its upper bound per 10,000 acquisitions.
func (r Rate) Per10k() (estimate, upper float64) {
	return r.Estimate * Per10k, r.Upper * Per10k
}

// PerYear returns the expected events per year, and the upper bound, for a lock taken
// acqPerSecond times a second around the clock: the per-acquisition rate times the
// acquisitions of a year. A negative or NaN acqPerSecond gives NaN.
func (r Rate) PerYear(acqPerSecond float64) (estimate, upper float64) {
	if !(acqPerSecond >= 0) {
		return math.NaN(), math.NaN()
	}
	perYear := acqPerSecond * SecondsPerYear
	return r.Estimate * perYear, r.Upper * perYear
}

// String writes r as the report prints it: "0 in 30000 acquisitions: 0 per 10,000,
// at most 0.9986 per 10,000 (95 % upper bound)".
func (r Rate) String() string {
	if r.Acquisitions == 0 || math.IsNaN(r.Estimate) {
		return fmt.Sprintf("%d in %d acquisitions: the rate is unknown", r.Count, r.Acquisitions)
	}
	est, up := r.Per10k()
	return fmt.Sprintf("%d in %d acquisitions: %.4g per 10,000, at most %.4g per 10,000 (%g %% upper bound)",
		r.Count, r.Acquisitions, est, up, r.Conf*100)
}
