package tune

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClopperPearsonEnds checks the closed forms at the ends: with k = 0 the upper end
// solves (1 − p)^n = α/2, so hi = 1 − 0.025^(1/100) = 1 − e^(ln 0.025 / 100)
// = 1 − e^(−0.0368888) = 0.0362167; k = n mirrors it, lo = 0.025^(1/100) = 0.9637833.
func TestClopperPearsonEnds(t *testing.T) {
	lo, hi := ClopperPearson(0, 100, 0.95)
	assert.Zero(t, lo)
	assert.InDelta(t, 0.03621669264517646, hi, 1e-12)
	lo, hi = ClopperPearson(100, 100, 0.95)
	assert.InDelta(t, 0.9637833073548235, lo, 1e-12)
	assert.Equal(t, 1.0, hi)
	lo, hi = ClopperPearson(0, 0, 0.95)
	assert.Equal(t, [2]float64{0, 1}, [2]float64{lo, hi}, "no trials, no information")
	// k = 0 through the Beta quantile agrees with the closed form.
	assert.InDelta(t, 1-math.Pow(0.05, 1.0/1000), UpperBound(0, 1000, 0.95), 1e-12)
}

// TestClopperPearsonMid checks 5 in 20 against the defining identities, computed here by
// summing the binomial directly (no Beta function): at lo, P(X ≥ 5) = 0.025; at hi,
// P(X ≤ 5) = 0.025. Solving them by bisection gives [0.0865715, 0.4910459] (R's
// binom.test(5, 20) prints the same).
func TestClopperPearsonMid(t *testing.T) {
	lo, hi := ClopperPearson(5, 20, 0.95)
	assert.InDelta(t, 0.08657146910143453, lo, 1e-9)
	assert.InDelta(t, 0.49104587170795744, hi, 1e-9)
	assert.InDelta(t, 0.025, binomTail(lo, 5, 20, true), 1e-9)
	assert.InDelta(t, 0.025, binomTail(hi, 5, 20, false), 1e-9)
}

// binomTail returns P(X ≥ k) (upper) or P(X ≤ k) for X ~ Binomial(n, p).
func binomTail(p float64, k, n int, upper bool) float64 {
	var sum float64
	for j := 0; j <= n; j++ {
		if upper == (j >= k) || j == k {
			lc, _ := math.Lgamma(float64(n + 1))
			la, _ := math.Lgamma(float64(j + 1))
			lb, _ := math.Lgamma(float64(n - j + 1))
			sum += math.Exp(lc - la - lb + float64(j)*math.Log(p) + float64(n-j)*math.Log1p(-p))
		}
	}
	return sum
}

func TestClopperPearsonSymmetric(t *testing.T) {
	for _, c := range [][2]int{{0, 10}, {3, 10}, {5, 10}, {1, 1000}, {17, 40}} {
		k, n := c[0], c[1]
		lo, hi := ClopperPearson(k, n, 0.95)
		mlo, mhi := ClopperPearson(n-k, n, 0.95)
		assert.InDelta(t, 1-mhi, lo, 1e-10, "%d/%d", k, n)
		assert.InDelta(t, 1-mlo, hi, 1e-10, "%d/%d", k, n)
		assert.LessOrEqual(t, lo, float64(k)/float64(n), "%d/%d", k, n)
		assert.GreaterOrEqual(t, hi, float64(k)/float64(n), "%d/%d", k, n)
	}
}

// TestClopperPearsonMonotonic: more events move both ends up; more trials for the same
// events move both down; a higher confidence widens the interval.
func TestClopperPearsonMonotonic(t *testing.T) {
	const n = 50
	prevLo, prevHi := -1.0, -1.0
	for k := 0; k <= n; k++ {
		lo, hi := ClopperPearson(k, n, 0.95)
		assert.Greater(t, lo+hi, prevLo+prevHi, "k=%d", k)
		assert.GreaterOrEqual(t, lo, prevLo, "k=%d", k)
		assert.GreaterOrEqual(t, hi, prevHi, "k=%d", k)
		prevLo, prevHi = lo, hi
	}
	prevLo, prevHi = 2, 2
	for _, n := range []int{5, 10, 100, 1000, 10_000, 1_000_000} {
		lo, hi := ClopperPearson(3, n, 0.95)
		assert.Less(t, lo, prevLo, "n=%d", n)
		assert.Less(t, hi, prevHi, "n=%d", n)
		prevLo, prevHi = lo, hi
	}
	lo90, hi90 := ClopperPearson(3, 100, 0.90)
	lo99, hi99 := ClopperPearson(3, 100, 0.99)
	assert.Less(t, lo99, lo90)
	assert.Greater(t, hi99, hi90)
}

func TestBoundsBadInput(t *testing.T) {
	for _, c := range []struct {
		k, n int
		conf float64
	}{{-1, 10, 0.95}, {11, 10, 0.95}, {1, 10, 0}, {1, 10, 1}, {1, 10, math.NaN()}, {0, -1, 0.95}} {
		lo, hi := ClopperPearson(c.k, c.n, c.conf)
		assert.True(t, math.IsNaN(lo) && math.IsNaN(hi), "%+v", c)
		assert.True(t, math.IsNaN(UpperBound(c.k, c.n, c.conf)), "%+v", c)
	}
}

// TestRuleOfThree: 3/n sits just above the exact one-sided bound 1 − 0.05^(1/n), which
// is below −ln(0.05)/n = 2.9957/n; they agree within 2 % from n = 100 on (0.02951 against
// 0.03) and within 0.2 % from n = 10,000, where 3/2.9957 is the whole difference.
func TestRuleOfThree(t *testing.T) {
	assert.Equal(t, 0.03, RuleOfThree(100))
	assert.Equal(t, 1.0, RuleOfThree(0))
	assert.Equal(t, 1.0, RuleOfThree(2))
	for _, n := range []int{3, 10, 100, 1000, 30_000, 10_000_000} {
		exact := UpperBound(0, n, 0.95)
		assert.Greater(t, RuleOfThree(n), exact, "n=%d", n)
		assert.Less(t, exact, 2.9957323/float64(n), "n=%d", n)
		if n >= 100 {
			assert.InEpsilon(t, RuleOfThree(n), exact, 0.02, "n=%d", n)
		}
		if n >= 10_000 {
			assert.InEpsilon(t, RuleOfThree(n), exact, 0.002, "n=%d", n)
		}
	}
}

// TestRateOf: no violation in 30,000 acquisitions has the one-sided 95 % bound
// 1 − 0.05^(1/30000) = 9.98528e-5, i.e. 0.998528 per 10,000; at 10 acquisitions a
// second that is 9.98528e-5 × 10 × 31,557,600 = 31,511 a year.
func TestRateOf(t *testing.T) {
	r := RateOf(0, 30_000, 0.95)
	est, up := r.Per10k()
	assert.Zero(t, est)
	assert.InDelta(t, 0.9985275683344064, up, 1e-9)
	est, up = r.PerYear(10)
	assert.Zero(t, est)
	assert.InDelta(t, 0.9985275683344064/10_000*10*31_557_600, up, 1e-3)
	assert.Equal(t, "0 in 30000 acquisitions: 0 per 10,000, at most 0.9985 per 10,000 (95 % upper bound)", r.String())

	// 5 in 20: 2,500 per 10,000, one-sided bound = the two-sided 90 % interval's hi.
	r = RateOf(5, 20, 0.95)
	_, hi90 := ClopperPearson(5, 20, 0.90)
	est, up = r.Per10k()
	assert.InDelta(t, 2500, est, 1e-9)
	assert.InDelta(t, hi90*10_000, up, 1e-9)

	r = RateOf(0, 0, 0.95)
	assert.True(t, math.IsNaN(r.Estimate))
	assert.Equal(t, 1.0, r.Upper)
	assert.Equal(t, "0 in 0 acquisitions: the rate is unknown", r.String())
	est, up = RateOf(1, 10, 0.95).PerYear(-1)
	assert.True(t, math.IsNaN(est) && math.IsNaN(up))
	assert.True(t, math.IsNaN(RateOf(11, 10, 0.95).Estimate))
}

func ExampleRateOf() {
	r := RateOf(0, 30_000, 0.95)
	fmt.Println(r)
	_, perYear := r.PerYear(1)
	fmt.Printf("at 1 acquisition a second: at most %.0f a year\n", perYear)
	// Output:
	// 0 in 30000 acquisitions: 0 per 10,000, at most 0.9985 per 10,000 (95 % upper bound)
	// at 1 acquisition a second: at most 3151 a year
}
