package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWidestInterval finds the widest hi − lo over every name_lo/name_hi pair and point,
// skips empty intervals, and ignores columns that only look like one side of a pair.
func TestWidestInterval(t *testing.T) {
	dir := t.TempDir()
	csv := "point,ttl,runs,a_lo,a_hi,b_lo,b_hi,c_lo\n" +
		"0,1s,10,0,0.2,0.1,0.15,0\n" +
		"1,2s,10,0.3,0.35,,,0.9\n" +
		"2,3s,10,0.1,0.4,0.2,0.3,0\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, SummaryFile), []byte(csv), 0o644))
	w, err := WidestInterval(dir)
	require.NoError(t, err)
	assert.Equal(t, "a", w.Column)
	assert.Equal(t, "2", w.Point)
	assert.InDelta(t, 0.3, w.Width, 1e-12)
	_, err = WidestInterval(t.TempDir())
	assert.Error(t, err)
}
