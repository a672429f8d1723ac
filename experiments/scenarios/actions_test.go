package scenarios

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model/redis"
)

// TestEveryActionIsDocumented holds docs/scenarios.md's table of actions to the parser's:
// a row for each action, with the fields it takes, so an action a new fault kind brings
// cannot go undocumented.
func TestEveryActionIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/scenarios.md")
	require.NoError(t, err)
	for _, a := range actions {
		fields := make([]string, len(a.fields))
		for i, f := range a.fields {
			fields[i] = "`" + f + "`"
		}
		row := "| `" + a.name + "` | " + strings.Join(fields, ", ") + " |"
		assert.True(t, strings.Contains(string(doc), row), "docs/scenarios.md has no row %s", row)
	}
}

// TestNodeFaultActionsFollowTheirDescriptors parses each process fault's action from its
// descriptor alone: it names the kind, takes the arguments its effect gives it and no
// others, and refuses what the node cannot take.
func TestNodeFaultActionsFollowTheirDescriptors(t *testing.T) {
	parse := func(action, args string) (*Scenario, error) {
		return ParseFile("f.yaml", []byte(fmt.Sprintf("name: x\nstory: y\nschedule:\n  - at: 1s\n    %s: {node: redis1%s}\n", action, args)))
	}
	var faultActions []string
	for _, d := range redis.FaultKinds() {
		if d.Action == "" {
			continue
		}
		faultActions = append(faultActions, d.Action)
		var good string
		var bad []string
		switch d.Effect {
		case redis.EffectStop:
			good, bad = ", restart_after: 2s", []string{", for: 1s", ", restart_after: 25h"}
			sc, err := parse(d.Action, "")
			require.NoError(t, err, "%s: restart_after is optional", d.Action)
			assert.False(t, sc.Steps[0].Action.Restart.Set, "%s: unset, it stays down", d.Action)
		case redis.EffectStall:
			good, bad = ", for: 2s", []string{"", ", restart_after: 1s", ", for: 0s", ", for: 25h"}
		case redis.EffectStart, redis.EffectThaw, redis.EffectPromote:
			bad = []string{", for: 1s", ", restart_after: 1s"}
		default:
			t.Fatalf("%s: effect %d has no case here: say which arguments its action takes", d.Name, d.Effect)
		}
		sc, err := parse(d.Action, good)
		require.NoError(t, err, d.Action)
		got, ok := sc.Steps[0].Action.NodeFault()
		assert.True(t, ok, d.Action)
		assert.Equal(t, d, got, d.Action)
		for _, args := range bad {
			_, err := parse(d.Action, args)
			assert.Error(t, err, "%s%s", d.Action, args)
		}
	}
	assert.Equal(t, faultActions, actionNames()[2:2+len(faultActions)], "the node faults, in kind order after the client actions")
	assert.Equal(t, []string{"crash_node", "kill_node", "shutdown_node", "pause_node", "failover"}, faultActions[:5],
		"the first kinds' actions, which scenario files spell")
	_, ok := Action{Kind: "isolate"}.NodeFault()
	assert.False(t, ok, "a network fault is no process fault")
}
