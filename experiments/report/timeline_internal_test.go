package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTimelineCollectorStopsAtItsLimit: a timeline keeps at most MaxTimelineItems items
// and says it was cut short.
func TestTimelineCollectorStopsAtItsLimit(t *testing.T) {
	var c TimelineCollector
	c.items = MaxTimelineItems
	assert.False(t, c.room())
	assert.True(t, c.tl.Truncated)
}
