package redis

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// TestEveryGroupRoutedOpIsAnswered sends each Op that resp routes to the group to a node:
// the group answers each (here an error for WAIT without arguments), and none fails the
// run, as a routed Op the group has no case for would.
func TestEveryGroupRoutedOpIsAnswered(t *testing.T) {
	routed := 0
	for op := resp.Op(1); op.String() != "OP("+strconv.Itoa(int(op))+")"; op++ {
		if op.Route() != resp.RouteGroup {
			continue
		}
		routed++
		w := newWorld(t, 1, fast)
		g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}, {}}})
		c := w.client("c")
		id := c.at(ms, g.Endpoint(), resp.Command{Op: op})
		w.run(time.Second)
		assert.True(t, c.answered(id), "%v", op)
		assert.NoError(t, w.s.Err(), "%v", op)
	}
	assert.Equal(t, 2, routed, "WAIT and INFO")
}
