package network

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// chatter is a process that answers every message by sending one to a random peer, and
// sometimes two, so the traffic depends on every draw the network makes.
type chatter struct {
	n     *Net[int]
	rng   *rand.Rand
	peers int
}

func (c *chatter) Receive(now sim.Time, from, to Endpoint, m *int) {
	msg := *m
	c.n.Send(to, c.peer(to), msg+1)
	if c.n.InFlight() < 100 && c.rng.IntN(8) == 0 {
		c.n.Send(to, c.peer(to), msg+1000)
	}
}

func (c *chatter) peer(self Endpoint) Endpoint {
	p := Endpoint(c.rng.IntN(c.peers - 1))
	if p >= self {
		p++
	}
	return p
}

// trafficHash runs a seeded workload with every fault the network has and returns the
// trace hash.
func trafficHash(t *testing.T, seed uint64) uint64 { return trafficHashWith(t, seed, nil) }

// trafficHashWith is trafficHash with setup run on the network before any traffic.
func trafficHashWith(t *testing.T, seed uint64, setup func(s *sim.Sim, n *Net[int])) uint64 {
	s, err := sim.New(sim.Config{Seed: seed})
	require.NoError(t, err)
	cfg := Config{
		Default: Link{Latency: Tail(dist.Uniform(ms, 5*ms), 0.02, dist.Lognormal(50*ms, 1)), Loss: 0.05, Dup: 0.02},
		Random: RandomFaults{
			IsolateRate: 2, IsolateFor: dist.Exponential(10*ms, 100*ms),
			ClogRate: 2, ClogFor: dist.Uniform(ms, 50*ms),
		},
	}
	n, err := New[int](s, cfg, s.Source("net"))
	require.NoError(t, err)
	n.SetMessage(intParts, formatInt)
	if setup != nil {
		setup(s, n)
	}
	c := &chatter{n: n, rng: s.Rand("workload"), peers: 6}
	for i := 0; i < 6; i++ {
		_, err := n.AddEndpoint("p"+string(rune('0'+i)), c)
		require.NoError(t, err)
	}
	require.NoError(t, n.SetLink(0, 1, Link{Latency: Latency{Fast: dist.Exponential(ms, 2*ms)}, FIFO: true}))
	require.NoError(t, n.At(sim.Time(300*ms), SplitFault(200*ms, []Endpoint{0, 1, 2})))
	// Partitions can starve the chatter, so every 10ms the test tops the traffic up.
	for at := time.Duration(0); at < 2*time.Second; at += 10 * ms {
		require.NoError(t, s.RunUntil(sim.Time(at)))
		for k := 0; n.InFlight() < 50 && k < 200; k++ { // bounded: partitions may cut every pair
			n.Send(Endpoint(k%6), Endpoint((k+1)%6), int(at/ms))
		}
	}
	require.Greater(t, n.Stats().Delivered, uint64(20000), "the workload must be busy to mean anything")
	require.NoError(t, n.CheckConservation(), "no message vanished under loss, duplication, clogs and partitions")
	return s.TraceHash()
}

func TestSameSeedSameTraceHash(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	want := trafficHash(t, 42)
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for i := 0; i < 3; i++ {
			assert.Equal(t, want, trafficHash(t, 42), "GOMAXPROCS=%d run %d", procs, i)
		}
	}
	seen := map[uint64]uint64{want: 42}
	for seed := uint64(1); seed <= 10; seed++ {
		h := trafficHash(t, seed)
		prev, dup := seen[h]
		assert.False(t, dup, "seeds %d and %d gave the same trace hash", seed, prev)
		seen[h] = seed
	}
}

// Without a sink, message records are folded without building their fields (sim.Hasher);
// with one, they are built and traced (sim.Texter), by the same code. Every kind of message
// record (deliver, drop, dup, hold) must hash the same both ways.
func TestFoldedAndTracedRecordsHashAlike(t *testing.T) {
	plain := trafficHash(t, 7)
	var lines int
	traced := trafficHashWith(t, 7, func(s *sim.Sim, _ *Net[int]) { s.SetSink(sinkFunc(func(*sim.Record) { lines++ })) })
	assert.Equal(t, plain, traced)
	assert.Positive(t, lines)
}

// With delivery notes, a delivery folds the endpoints, id and latency but not the message
// (the processes fold content themselves), still alike with and without a sink.
func TestDeliveryNotesFoldEverythingButTheMessage(t *testing.T) {
	notes := func(_ *sim.Sim, n *Net[int]) { n.SetDeliveryNotes(true) }
	var lines, noted int
	plain := trafficHashWith(t, 7, notes)
	traced := trafficHashWith(t, 7, func(s *sim.Sim, n *Net[int]) {
		notes(s, n)
		s.SetSink(sinkFunc(func(r *sim.Record) {
			lines++
			for _, f := range r.Fields {
				if f.Note {
					noted++
					assert.Equal(t, "deliver", r.Kind, "only deliveries carry notes")
				}
			}
		}))
	})
	assert.Equal(t, plain, traced)
	assert.Positive(t, noted)
	assert.NotEqual(t, trafficHash(t, 7), plain, "the message is no longer folded at delivery")

	// A message the receivers never look at: its content reaches the hash only through
	// drops and duplicates, so with no loss and no duplication it does not at all.
	quiet := func(add int) uint64 {
		s, err := sim.New(sim.Config{Seed: 1})
		require.NoError(t, err)
		n, err := New[int](s, Config{Default: Link{Latency: Latency{Fast: dist.Uniform(ms, 5*ms)}}}, s.Source("net"))
		require.NoError(t, err)
		n.SetMessage(intParts, formatInt)
		n.SetDeliveryNotes(true)
		sink := discard{}
		for i := 0; i < 2; i++ {
			_, err := n.AddEndpoint("p"+string(rune('0'+i)), sink)
			require.NoError(t, err)
		}
		for i := range 100 {
			n.Send(0, 1, i+add)
		}
		require.NoError(t, s.Run())
		return s.TraceHash()
	}
	assert.Equal(t, quiet(0), quiet(1000))
}

type discard struct{}

func (discard) Receive(sim.Time, Endpoint, Endpoint, *int) {}

type sinkFunc func(r *sim.Record)

func (f sinkFunc) Record(r *sim.Record) { f(r) }
