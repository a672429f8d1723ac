package sweep

import "math"

// Z95 is the two-sided 95% quantile of the standard normal distribution, Φ⁻¹(0.975).
const Z95 = 1.959963984540054

// Wilson returns the 95% Wilson score interval for k successes in n trials:
//
//	centre ± half, centre = (p + z²/2n) / (1 + z²/n),
//	half = z/(1 + z²/n) · sqrt(p(1-p)/n + z²/4n²),  p = k/n, z = Z95.
//
// Wilson rather than the textbook p ± z·sqrt(p(1-p)/n) because sweeps are full of 0/n and
// n/n (no violation in any replicate), where the textbook interval collapses to a point
// and claims certainty; Wilson's 0/10 is [0, 0.278]. The ends are exactly 0 for k = 0 and
// exactly 1 for k = n, and n = 0 gives [0, 1] (no information). Every product that feeds a
// sum is converted explicitly so that no architecture fuses it into a multiply-add: the
// digits in summary.csv are the same on every machine.
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 || k < 0 || k > n {
		return 0, 1
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := float64(Z95 * Z95)
	denom := 1 + float64(z2/nf)
	centre := (p + float64(z2/float64(2*nf))) / denom
	variance := float64(float64(p*(1-p))/nf) + float64(z2/float64(float64(4*nf)*nf))
	half := float64(float64(Z95/denom) * math.Sqrt(variance))
	lo, hi = centre-half, centre+half
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return max(lo, 0), min(hi, 1)
}

// Quantile returns the q-quantile of sorted (ascending, not empty) by linear interpolation
// between order statistics (Hyndman and Fan's type 7, the default of R and NumPy): the
// value at position (n-1)q. It is the one quantile of summary.csv and of the figures
// drawn from runs.csv, so the two agree to the bit: its products are converted to float64
// explicitly, which stops Go from fusing them into a multiply-add on arm64 (and amd64
// with GOAMD64=v3), where the fused result can differ in the last bit.
func Quantile(sorted []float64, q float64) float64 {
	h := float64(float64(len(sorted)-1) * q)
	i := int(h)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := h - float64(i)
	return sorted[i] + float64(frac*(sorted[i+1]-sorted[i]))
}
