package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
	assert.Equal(t, 3.0, quantile(v, 0.5))
	assert.InDelta(t, 1.4, quantile(v, 0.1), 1e-15) // position 0.4 between 1 and 2
	assert.InDelta(t, 7.6, quantile(v, 0.9), 1e-15) // position 3.6 between 4 and 10
	assert.Equal(t, 2.5, quantile([]float64{2, 3}, 0.5))
	assert.Equal(t, 7.0, quantile([]float64{7}, 0.9))
	assert.Equal(t, 10.0, quantile(v, 1))
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
