package plots

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// TestSpreadIsSummaryQuantile: the figures' percentiles across runs are summary.csv's to
// the bit on every machine. Between 2.2 and 1234.567 the 10th percentile of three values
// is 2.2 + 0.2·1232.367, which a fused multiply-add (arm64, or amd64 with GOAMD64=v3)
// rounds once to 248.67340000000002 where summary.csv's arithmetic rounds twice to
// 248.6734; a copy of the quantile without the explicit float64 conversions passes on a
// plain amd64 build and fails there.
func TestSpreadIsSummaryQuantile(t *testing.T) {
	vals := []float64{1334.567, 2.2, 1234.567} // unsorted, as a point's runs arrive
	e := spread(vals)
	assert.Equal(t, 248.6734, e.Lo, "the 10th percentile, each product rounded on its own")
	assert.Equal(t, 1234.567, e.Y)
	sorted := []float64{2.2, 1234.567, 1334.567}
	assert.Equal(t, Estimate{sweep.Quantile(sorted, 0.5), sweep.Quantile(sorted, 0.1), sweep.Quantile(sorted, 0.9)}, e)
}
