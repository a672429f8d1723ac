package resp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEveryOpHasItsAttributes holds every Op from 1 to the last to a row of ops with its
// name and a stated route, so an Op appended to the enum without one fails here instead
// of being served by whichever part of the server its position once implied.
func TestEveryOpHasItsAttributes(t *testing.T) {
	names := map[string]bool{}
	var toGroup []Op
	for o := Op(1); o < opEnd; o++ {
		a := ops[o]
		assert.NotEmpty(t, a.name, "Op %d has no row in ops", o)
		assert.False(t, names[a.name], "%s named twice", a.name)
		names[a.name] = true
		assert.Equal(t, a.name, o.String())
		assert.Contains(t, []Route{RouteNode, RouteGroup}, a.route, "%s states no route", a.name)
		assert.Equal(t, a.route, o.Route(), "%s", a.name)
		if o.Route() == RouteGroup {
			toGroup = append(toGroup, o)
		}
	}
	assert.Equal(t, []Op{OpWait, OpInfo}, toGroup, "the group answers WAIT and INFO replication, and nothing else")
	for _, o := range []Op{0, opEnd, 255} {
		assert.Equal(t, RouteNode, o.Route(), "an unknown Op %d goes to the engine, which refuses it", o)
	}
	assert.Equal(t, "OP(14)", opEnd.String())
}
