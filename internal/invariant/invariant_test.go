package invariant

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckPanicsOnlyWhenBroken(t *testing.T) {
	assert.NotPanics(t, func() { Check(true, "fine") })
	assert.PanicsWithValue(t, "invariant broken: time went backward: 2 < 3", func() {
		Check(false, "time went backward: %d < %d", 2, 3)
	})
}
