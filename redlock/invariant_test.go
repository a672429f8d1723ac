//go:build invariants

package redlock

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoundCountersAreAsserted: a round that counted a success without a reply stops the
// machine at its next step.
func TestRoundCountersAreAsserted(t *testing.T) {
	m, err := New(DefaultConfig(), rand.New(rand.NewPCG(1, 0)))
	require.NoError(t, err)
	_, err = m.Acquire(0, "lock")
	require.NoError(t, err)
	m.round.oks = m.round.replies + 1
	assert.PanicsWithValue(t,
		"invariant broken: redlock: round counters out of step: {targets:5 sent:5 done:0 oks:1 replies:0 need:3 refused:0 errs:0 failFast:false takenRule:false againstRule:false}",
		func() { m.advance(0) })

	// A refusal is an answer that was not a success: never more of them than answers left.
	m.round.oks = 0
	m.round.refused = 1
	assert.Panics(t, func() { m.advance(0) })
}

// TestErrorRepliesAreCountedWithAnswers: an error reply is an answer too, so errors,
// refusals and successes together never outnumber the answers.
func TestErrorRepliesAreCountedWithAnswers(t *testing.T) {
	m, err := New(DefaultConfig(), rand.New(rand.NewPCG(1, 0)))
	require.NoError(t, err)
	_, err = m.Acquire(0, "lock")
	require.NoError(t, err)
	m.round.errs = m.round.replies + 1
	assert.Panics(t, func() { m.advance(0) })
}
