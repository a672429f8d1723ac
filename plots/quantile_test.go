package plots

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// TestFixturePercentilesEqualSummary: for every point of every fixture, the median and
// the 10th and 90th percentiles across runs that the figures draw, written as summary.csv
// writes a statistic, are summary.csv's digits exactly, and so are the overlap fractions.
func TestFixturePercentilesEqualSummary(t *testing.T) {
	for _, name := range fixtures {
		sw := readFixture(t, name)
		rows := summaryRows(t, filepath.Join("testdata", name))
		require.Len(t, rows, len(sw.Points), name)
		for i, pt := range sw.Points {
			row := rows[i]
			require.Equal(t, row["point"], strconv.Itoa(pt.Point), "%s: summary.csv is in point order", name)
			for _, c := range []struct {
				col string
				e   Estimate
				n   int
			}{{"acquire_latency_p50_ms", pt.Cell.P50(), len(pt.Cell.P50Ms)}, {"acquire_latency_p99_ms", pt.Cell.P99(), len(pt.Cell.P99Ms)}} {
				assert.Equal(t, row[c.col+"_n"], strconv.Itoa(c.n), "%s point %d %s", name, pt.Point, c.col)
				if c.n == 0 {
					continue
				}
				assert.Equal(t, row[c.col+"_median"], sweep.FormatStat(c.e.Y), "%s point %d %s", name, pt.Point, c.col)
				assert.Equal(t, row[c.col+"_p10"], sweep.FormatStat(c.e.Lo), "%s point %d %s", name, pt.Point, c.col)
				assert.Equal(t, row[c.col+"_p90"], sweep.FormatStat(c.e.Hi), "%s point %d %s", name, pt.Point, c.col)
			}
			for col, e := range map[string]Estimate{"any_validity_overlap": pt.Cell.ValidityFrac(), "any_usage_overlap": pt.Cell.UsageFrac()} {
				assert.Equal(t, row[col+"_frac"], sweep.FormatStat(e.Y), "%s point %d %s", name, pt.Point, col)
				assert.Equal(t, row[col+"_lo"], sweep.FormatStat(e.Lo), "%s point %d %s", name, pt.Point, col)
				assert.Equal(t, row[col+"_hi"], sweep.FormatStat(e.Hi), "%s point %d %s", name, pt.Point, col)
			}
		}
	}
}

// TestPer10kIsSummaryRatio: a rate per 10,000 acquisitions is computed in summary.csv's
// order (10,000 × count / acquisitions), so the figure's value is the file's to the bit:
// one usage overlap in three acquisitions is 3333.3333333333335, where count /
// acquisitions × 10,000 gives 3333.333333333333.
func TestPer10kIsSummaryRatio(t *testing.T) {
	c := Cell{Usage: 1, Stale: 2, Acquired: 3}
	assert.Equal(t, 3333.3333333333335, c.UsagePer10k())
	assert.Equal(t, 6666.666666666667, c.StalePer10k())
}
