package redisson

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// cmdOf returns the command an OutSend output carries.
func cmdOf(o lock.Output) resp.Command { return resp.CommandOf(&o.Request) }

// pl packs a reply for the lock interface.
func pl(r resp.Reply) lock.Payload { return r.Payload() }

// lastSent returns the driver's latest send; there must be one.
func lastSent(d *locktest.Driver) lock.Output { return d.Sent[len(d.Sent)-1] }

// must fails the test if an input was refused.
func must(t *testing.T) func([]lock.Output, error) {
	return func(_ []lock.Output, err error) {
		t.Helper()
		require.NoError(t, err)
	}
}
