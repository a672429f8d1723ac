package plots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadSweepAcceptsRoundedSummary: summary.csv rounds its statistics to 6 significant
// digits (2/7 is written 0.285714), so the check against runs.csv allows that rounding,
// and still refuses a fraction that is wrong.
func TestReadSweepAcceptsRoundedSummary(t *testing.T) {
	src := filepath.Join("testdata", "sweep-two")
	b, err := os.ReadFile(filepath.Join(src, "summary.csv"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	head := strings.Split(strings.TrimSpace(lines[0]), ",")
	col := -1
	for i, h := range head {
		if h == "any_usage_overlap_frac" {
			col = i
		}
	}
	require.GreaterOrEqual(t, col, 0)
	fields := strings.Split(lines[1], ",")
	require.Equal(t, "1", fields[col], "the fixture's first point has every run with a usage overlap")
	for value, ok := range map[string]bool{"0.9999996": true, "0.99": false} {
		dir := t.TempDir()
		require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
		f := append([]string(nil), fields...)
		f[col] = value
		edited := append([]string{lines[0], strings.Join(f, ",")}, lines[2:]...)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.csv"), []byte(strings.Join(edited, "")), 0o644))
		_, err := ReadSweep(dir)
		if ok {
			assert.NoError(t, err, value)
		} else {
			assert.ErrorContains(t, err, "disagrees with runs.csv", value)
		}
	}
}
