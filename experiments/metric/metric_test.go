package metric

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTableNamesEachMetricOnce: names are unique and carry their unit where the kind says
// milliseconds; a verdict is a count (seen when above zero); a flag repeats a count the
// JSON has.
func TestTableNamesEachMetricOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All() {
		assert.False(t, seen[d.Name], "%s twice", d.Name)
		seen[d.Name] = true
		assert.NotEmpty(t, d.JSON, d.Name)
		if d.Kind == Ms {
			assert.True(t, strings.HasSuffix(d.Name, "_ms"), "%s: milliseconds say so", d.Name)
		}
		if d.Check == Verdict {
			assert.Equal(t, Count, d.Kind, d.Name)
		}
		if d.Kind == Bool || d.Kind == Text {
			assert.Equal(t, Reported, d.Check, "%s is no figure to bound", d.Name)
		}
		got, err := Lookup(d.Name)
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
	assert.Len(t, Names(Reported, Verdict, Bound), len(All()))
	assert.Equal(t, []string{ValidityOverlaps, UsageOverlaps, StaleWritesAccepted, FencedWritesRejected}, Names(Verdict))
}

// TestUnknownNamesTheValueAndTheChoices: an unknown name is an error with the closest
// names and every known one; a name from before the table gets its new name.
func TestUnknownNamesTheValueAndTheChoices(t *testing.T) {
	_, err := Lookup("atempts")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown metric "atempts"; did you mean attempts?`)
	assert.Contains(t, err.Error(), "(the metrics are trace_hash, any_validity_overlap, ")
	_, err = Lookup("validity_expired_attempts")
	assert.ErrorContains(t, err, `unknown metric "validity_expired_attempts"; it is called failures_validity_expired now`)
	assert.EqualError(t, Unknown("figure", "zzz", []string{"a", "b"}), `unknown figure "zzz" (the figures are a, b)`)
	assert.Equal(t, "ms", Ms.String())
	assert.Equal(t, "metric(9)", Kind(9).String())
}
