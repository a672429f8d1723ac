package experiments

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
)

// TestZKHerdWakesOneWaiterPerRelease runs the zk-herd scenario, five clients queued on
// one lock, with each recipe and counts the watch events the clients hear and the
// children listings they ask for. With Curator's recipe each of the four releases that
// has a waiter behind it wakes exactly that waiter, which lists the children once more:
// four events and nine listings (five first ones, four after a wake). With the naive
// recipe every waiter watches the lock's children, so every create and every delete
// wakes all of them: at least the 4 + 3 + 2 + 1 wakes of the releases, each followed by
// a listing. Both are safe and every client gets the lock once.
func TestZKHerdWakesOneWaiterPerRelease(t *testing.T) {
	count := func(recipe string) (events, listings int) {
		var trace bytes.Buffer
		rec, err := Run(context.Background(), "zk-herd", []knobs.KV{{Name: "recipe", Value: recipe}}, 1, Options{Trace: &trace})
		require.NoError(t, err)
		safeAndDone(t, rec, 5)
		for _, l := range strings.Split(trace.String(), "\n") {
			f := strings.Fields(l)
			if len(f) < 2 || !strings.HasPrefix(f[1], "client") {
				continue
			}
			if strings.Contains(l, ": WatchedEvent ") {
				events++
			}
		}
		listings = strings.Count(trace.String(), ": getChildren /lock")
		return events, listings
	}
	events, listings := count("curator")
	assert.Equal(t, 4, events, "one waiter woken per release that has one")
	assert.Equal(t, 9, listings, "a listing per client, and one per wake")
	events, listings = count("naive")
	assert.GreaterOrEqual(t, events, 10, "every waiter woken at every release")
	assert.GreaterOrEqual(t, listings, 5+10, "each wake lists the children again")
}
