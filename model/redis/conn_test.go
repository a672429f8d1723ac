package redis

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlock-sim/redlock-sim/model"
)

// TestEveryConnectionHasItsOwnConn: each connection semantics the `connection` knob offers
// builds a connection of its own type, so a value added without its case in
// Connection.Conn (which would run as queued, and be accepted by the knob) fails here.
func TestEveryConnectionHasItsOwnConn(t *testing.T) {
	seen := map[string]Connection{}
	for _, k := range Connections() {
		typ := fmt.Sprintf("%T", k.Conn(&model.Link{}, 3))
		if other, dup := seen[typ]; dup {
			assert.Failf(t, "two semantics, one connection", "%s and %s both build %s", other, k, typ)
		}
		seen[typ] = k
		parsed, err := ParseConnection(k.String())
		assert.NoError(t, err)
		assert.Equal(t, k, parsed, "%s round-trips through its name", k)
	}
	assert.Len(t, seen, len(Connections()))
}
