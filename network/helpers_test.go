package network

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

const ms = time.Millisecond

// got is one delivery as a receiver saw it.
type got struct {
	at       sim.Time
	from, to Endpoint
	msg      int
}

// inbox is a Receiver that records what it is given.
type inbox struct{ got []got }

func (b *inbox) Receive(now sim.Time, from, to Endpoint, msg *int) {
	b.got = append(b.got, got{now, from, to, *msg})
}

func (b *inbox) msgs() []int {
	out := make([]int, 0, len(b.got))
	for _, g := range b.got {
		out = append(out, g.msg)
	}
	return out
}

// world is a sim, a network of ints and k endpoints named a, b, c, ... with inboxes.
type world struct {
	s   *sim.Sim
	n   *Net[int]
	box []*inbox
}

func newWorld(t testing.TB, seed uint64, cfg Config, k int) *world {
	t.Helper()
	s, err := sim.New(sim.Config{Seed: seed})
	require.NoError(t, err)
	n, err := New[int](s, cfg, s.Source("net"))
	require.NoError(t, err)
	w := &world{s: s, n: n}
	for i := 0; i < k; i++ {
		b := &inbox{}
		e, err := n.AddEndpoint(string(rune('a'+i)), b)
		require.NoError(t, err)
		require.Equal(t, Endpoint(i), e)
		w.box = append(w.box, b)
	}
	return w
}

// link returns a Link with the given latency and nothing else.
func linkOf(d dist.Dist) Link { return Link{Latency: Latency{Fast: d}} }

// until runs the world to true time t.
func (w *world) until(t testing.TB, at time.Duration) {
	t.Helper()
	require.NoError(t, w.s.RunUntil(sim.Time(at)))
}

// sendEvery sends count messages from → to, msg i at time start + i*gap, and runs the
// world to the end.
func (w *world) sendEvery(t testing.TB, from, to Endpoint, count int, start, gap time.Duration) {
	t.Helper()
	for i := 0; i < count; i++ {
		w.until(t, start+time.Duration(i)*gap)
		w.n.Send(from, to, i)
	}
	require.NoError(t, w.s.Run())
}

// collect is a sink that keeps every record as text and the kinds in order.
type collect struct {
	lines []string
	recs  []sim.Record
}

func (c *collect) Record(r *sim.Record) {
	c.lines = append(c.lines, r.String())
	cp := *r
	cp.Fields = append([]sim.Field(nil), r.Fields...)
	c.recs = append(c.recs, cp)
}

func (c *collect) kinds() []string {
	var out []string
	for _, r := range c.recs {
		out = append(out, r.Kind)
	}
	return out
}

// field returns the text value of r's field key, or "" if absent.
func field(r sim.Record, key string) string {
	for i := range r.Fields {
		if r.Fields[i].Key == key {
			return string(r.Fields[i].AppendValue(nil))
		}
	}
	return ""
}

// intParts packs an int message for its trace field; formatInt renders it, only for a sink.
func intParts(m *int) (int64, int64, string, string) { return int64(*m), 0, "", "" }

func formatInt(f *sim.Field, dst []byte) []byte {
	return strconv.AppendInt(append(dst, 'm'), f.Int, 10)
}
