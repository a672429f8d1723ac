package redis

import (
	"sort"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pay packs a command for a Message.
func pay(c resp.Command) lock.Payload { return c.Payload() }

// traceNameOf returns a writer's trace name, for calling an emitter directly.
func traceNameOf(actor, kind string) *model.TraceName {
	n := model.NewTraceName(actor, kind)
	return &n
}
