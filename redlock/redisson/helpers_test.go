package redisson

import (
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// cmdOf returns the command an OutSend output carries.
func cmdOf(o lock.Output) resp.Command { return resp.CommandOf(&o.Request) }

// pl packs a reply for the lock interface.
func pl(r resp.Reply) lock.Payload { return r.Payload() }
