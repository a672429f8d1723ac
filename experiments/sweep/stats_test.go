package sweep

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWilson checks the interval against values computed independently from the closed
// form with 50-digit decimal arithmetic (Python's decimal module, z = 1.959963984540054):
//
//	k/n      lo                       hi
//	0/10     0                        0.27753279986288920453
//	5/10     0.23659309051256400056   0.76340690948743599944
//	10/10    0.72246720013711079547   1
//	1/100    0.00176743206414064821   0.05448619617870531438
//	0/1      0                        0.79345068562276257264
//	3/7      0.15821985525146970761   0.74954163547234277822
//	999/1000 0.99435744140204206508   0.99982345362937392196
//
// 5/10 also matches the textbook value [0.2366, 0.7634] (Brown, Cai and DasGupta 2001).
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.27753279986288920453},
		{5, 10, 0.23659309051256400056, 0.76340690948743599944},
		{10, 10, 0.72246720013711079547, 1},
		{1, 100, 0.00176743206414064821, 0.05448619617870531438},
		{0, 1, 0, 0.79345068562276257264},
		{1, 1, 0.20654931437723742736, 1},
		{3, 7, 0.15821985525146970761, 0.74954163547234277822},
		{999, 1000, 0.99435744140204206508, 0.99982345362937392196},
	} {
		lo, hi := Wilson(tc.k, tc.n)
		assert.InDelta(t, tc.lo, lo, 1e-15, "lo of %d/%d", tc.k, tc.n)
		assert.InDelta(t, tc.hi, hi, 1e-15, "hi of %d/%d", tc.k, tc.n)
		assert.LessOrEqual(t, lo, float64(tc.k)/float64(tc.n))
		assert.GreaterOrEqual(t, hi, float64(tc.k)/float64(tc.n))
	}
	// The ends are exact, not merely close: plots put 0/n on a log axis.
	lo, _ := Wilson(0, 10)
	_, hi := Wilson(10, 10)
	assert.Equal(t, 0.0, lo)
	assert.Equal(t, 1.0, hi)
	lo, hi = Wilson(0, 0)
	assert.Equal(t, [2]float64{0, 1}, [2]float64{lo, hi}, "no runs, no information")
}

func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 10}
	assert.Equal(t, 3.0, Quantile(v, 0.5))
	assert.InDelta(t, 1.4, Quantile(v, 0.1), 1e-15) // position 0.4 between 1 and 2
	assert.InDelta(t, 7.6, Quantile(v, 0.9), 1e-15) // position 3.6 between 4 and 10
	assert.Equal(t, 2.5, Quantile([]float64{2, 3}, 0.5))
	assert.Equal(t, 7.0, Quantile([]float64{7}, 0.9))
	assert.Equal(t, 10.0, Quantile(v, 1))
}

func TestCodecRoundTrip(t *testing.T) {
	c := newCodec()
	rows := [][]string{
		{"0", "1", "a,b", `say "hi"`, "", " lead"},
		{"plain", "", "x"},
		{`\.`, "tail "},
	}
	var lines [][]byte
	for _, r := range rows {
		lines = append(lines, c.encode(r))
	}
	assert.Equal(t, "0,1,\"a,b\",\"say \"\"hi\"\"\",,\" lead\"\n", string(lines[0]))
	for i, l := range lines { // one codec, many lines: nothing leaks between them
		got, err := c.decode(l)
		assert.NoError(t, err)
		assert.Equal(t, rows[i], got)
	}
	_, err := c.decode([]byte("a,\"b\n"))
	assert.Error(t, err)
	got, err := c.decode([]byte("x,y\n"))
	assert.NoError(t, err)
	assert.Equal(t, []string{"x", "y"}, got, "a bad line leaves the codec usable")
}

func TestValueText(t *testing.T) {
	assert.True(t, Value{}.IsMissing())
	assert.False(t, IntValue(0).IsMissing())
	assert.Equal(t, "", Value{}.String())
	assert.Equal(t, "1", BoolValue(true).String())
	assert.Equal(t, "-3", IntValue(-3).String())
	assert.Equal(t, "0.1", FloatValue(0.1).String())
	assert.Equal(t, "1e+21", FloatValue(1e21).String())
	assert.Equal(t, "ab", StringValue("ab").String())
	var k Kind
	assert.NoError(t, k.UnmarshalText([]byte("millis")))
	assert.Equal(t, KindMillis, k)
	assert.Error(t, k.UnmarshalText([]byte("bogus")))
	_, err := Kind(9).MarshalText()
	assert.Error(t, err)
	assert.Equal(t, "Kind(9)", Kind(9).String())
}

// ratioRunner is the fakeRunner declaring derived ratios, as the world's runner does.
type ratioRunner struct{ fakeRunner }

func (*ratioRunner) Ratios() []Ratio {
	return []Ratio{
		{Name: "overlaps_per_10_attempts", Num: "attempts", Den: "attempts", Scale: 10},
		{Name: "attempts_per_attempt", Num: "attempts", Den: "attempts", Proportion: true},
	}
}

// TestRatiosAreRatiosOfSums checks the derived columns a runner declares: Scale × Σnum /
// Σden over the point's runs, a Wilson interval for a proportion, recorded in the manifest
// so that a merge writes the same summary; and no statistic carries float noise.
func TestRatiosAreRatiosOfSums(t *testing.T) {
	dir := t.TempDir()
	s := mustSpec(t, engineSpec)
	runSweep(t, &ratioRunner{}, s, Options{Dir: dir, Workers: 2})
	sum := readCSV(t, filepath.Join(dir, SummaryFile))
	head := sum[0]
	assert.Equal(t, []string{"overlaps_per_10_attempts", "attempts_per_attempt", "attempts_per_attempt_lo", "attempts_per_attempt_hi"}, head[len(head)-4:])
	for _, row := range sum[1:] {
		r := row[len(row)-4:]
		assert.Equal(t, "10", r[0])
		assert.Equal(t, "1", r[1])
		assert.Equal(t, "1", r[3])
		assert.Less(t, atof(t, r[2]), 1.0)
		for i, f := range row {
			if f != "" && i > len(s.Axes) { // statistics, not the point or its knob values
				_, err := strconv.ParseFloat(f, 64)
				require.NoError(t, err)
				assert.LessOrEqual(t, len(strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(f, "-"), ".", ""), "0")), SummaryDigits,
					"%s = %s: at most %d significant digits", head[i], f, SummaryDigits)
			}
		}
	}
	m, err := ReadManifest(dir)
	require.NoError(t, err)
	assert.Len(t, m.Ratios, 2)

	var shards []string
	for i := 1; i <= 2; i++ {
		d := t.TempDir()
		runSweep(t, &ratioRunner{}, s, Options{Dir: d, Workers: 2, Shard: Shard{i, 2}})
		shards = append(shards, d)
	}
	merged := filepath.Join(t.TempDir(), "m")
	require.NoError(t, Merge(merged, shards, MergeOptions{}))
	requireSameResults(t, dir, merged)
}

func TestRatioStatsEdgeCases(t *testing.T) {
	r := Ratio{Name: "x", Num: "a", Den: "b", Scale: 10000, Proportion: true}
	assert.Equal(t, []string{"", "", ""}, ratioStats(r, 0, 0, nil), "no acquisitions: no rate")
	assert.Equal(t, []string{"0", "0", "0.277533"}, ratioStats(Ratio{Name: "x", Proportion: true}, 0, 10, nil), "0/10 with its Wilson interval")
	assert.Equal(t, []string{"1.5", "", ""}, ratioStats(Ratio{Name: "x", Proportion: true}, 3, 2, nil), "more than the trials: no interval")
	got := ratioStats(Ratio{Name: "x", Scale: 10000}, 1, 3, nil)
	assert.Equal(t, []string{"3333.33"}, got)
}

func TestLayoutRefusesABadRatio(t *testing.T) {
	s := mustSpec(t, engineSpec)
	cols := (&fakeRunner{}).Columns()
	for _, r := range []Ratio{
		{Name: "r", Num: "nope", Den: "attempts"},
		{Name: "r", Num: "attempts", Den: "validity_overlap"},
		{Name: "r", Num: "attempts", Den: "attempts+nope"},
		{Name: "r", Num: "attempts", Den: "attempts+"},
		{Name: "R", Num: "attempts", Den: "attempts"},
		{Name: "attempts_mean", Num: "attempts", Den: "attempts"},
	} {
		_, err := newLayout(s, cols, []Ratio{r})
		assert.Error(t, err, "%+v", r)
	}
}
