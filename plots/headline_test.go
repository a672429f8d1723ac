package plots

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHeadline names the worst and the best point by the share of runs with two holders
// working at once, then by stale writes, and says so when nothing failed.
func TestHeadline(t *testing.T) {
	sw := &Sweep{Axes: []Axis{{Knob: "ttl", Values: []string{"1s", "10s"}}}, runs: 20,
		Points: []*SweepPoint{
			{Values: []string{"1s"}, Cell: Cell{Runs: 10, UsageRuns: 4, Stale: 3, Acquired: 1000}},
			{Values: []string{"10s"}, Cell: Cell{Runs: 10, Acquired: 1000}},
		}}
	assert.Equal(t, "20 runs over 2 points: worst at ttl=1s (two holders working at once in 40 % of runs, 30 stale writes accepted per 10,000 acquisitions); best at ttl=10s (0 %, 0)", Headline(sw))
	sw.Points[0].Cell = Cell{Runs: 10, Acquired: 1000}
	assert.Equal(t, "20 runs over 2 points: no two holders worked at once and no stale write was accepted anywhere", Headline(sw))
	assert.Equal(t, "no runs", Headline(&Sweep{}))
}
