package network

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// reach sends one message on every ordered pair and returns which arrived, as
// "from>to" strings in send order.
func (w *world) reach(t *testing.T) []string {
	t.Helper()
	k := len(w.box)
	for i := range w.box {
		w.box[i].got = nil
	}
	for from := 0; from < k; from++ {
		for to := 0; to < k; to++ {
			if from != to {
				w.n.Send(Endpoint(from), Endpoint(to), from*k+to)
			}
		}
	}
	require.NoError(t, w.s.RunUntil(w.s.Now()+sim.Time(time.Second)))
	var out []string
	for from := 0; from < k; from++ {
		for to := 0; to < k; to++ {
			for _, g := range w.box[to].got {
				if g.msg == from*k+to {
					out = append(out, w.n.Name(Endpoint(from))+">"+w.n.Name(Endpoint(to)))
				}
			}
		}
	}
	return out
}

func TestIsolateAndHeal(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 3)
	id, err := w.n.Isolate(1)
	require.NoError(t, err)
	assert.Equal(t, []string{"a>c", "c>a"}, w.reach(t))
	assert.EqualValues(t, 4, w.n.Stats().Partitioned)
	assert.False(t, w.n.Connected(0, 1))
	assert.False(t, w.n.Connected(1, 2))
	assert.True(t, w.n.Connected(0, 2))
	assert.True(t, w.n.Connected(1, 1), "an isolated endpoint still reaches itself")

	assert.True(t, w.n.Heal(id))
	assert.False(t, w.n.Heal(id), "a healed partition heals once")
	assert.Len(t, w.reach(t), 6)
}

func TestSplitCutsBetweenGroupsAndUnlistedEndpointsFormOneMore(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 5)
	c := &collect{}
	w.s.SetSink(c)
	_, err := w.n.Split([]Endpoint{0, 1}, []Endpoint{2})
	require.NoError(t, err)
	assert.Equal(t, "          0s net      partition fault=1 kind=split groups=[a b] [c] [rest]", c.lines[0])
	assert.Equal(t, []string{"a>b", "b>a", "d>e", "e>d"}, w.reach(t))
	w.n.HealAll()
	assert.Equal(t, "          1s net      heal_all healed=1", c.lines[len(c.lines)-1])
	assert.Len(t, w.reach(t), 20)
}

func TestBlockIsOneWay(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 2)
	_, err := w.n.Block(0, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"b>a"}, w.reach(t))
	assert.False(t, w.n.Connected(0, 1))
	assert.True(t, w.n.Connected(1, 0))
}

func TestHealOneOfSeveralPartitions(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 3)
	ab, err := w.n.Block(0, 1)
	require.NoError(t, err)
	_, err = w.n.Block(0, 2)
	require.NoError(t, err)
	iso, err := w.n.Isolate(1)
	require.NoError(t, err)
	w.n.Heal(iso)
	assert.False(t, w.n.Connected(0, 1), "a→b is still blocked by its own partition")
	w.n.Heal(ab)
	assert.True(t, w.n.Connected(0, 1))
	assert.False(t, w.n.Connected(0, 2))
	w.n.HealAll()
	assert.Len(t, w.reach(t), 6)
}

func TestAMessageInFlightIsLostIfItsLinkIsCutWhenItArrives(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(10 * ms))}, 3)
	c := &collect{}
	w.s.SetSink(c)
	w.n.Send(0, 1, 1) // cut while in flight, still cut at arrival: lost
	w.n.Send(0, 2, 2) // cut while in flight, healed before arrival: delivered
	w.until(t, 5*ms)
	_, err := w.n.Isolate(1)
	require.NoError(t, err)
	c2, err := w.n.Isolate(2)
	require.NoError(t, err)
	w.until(t, 8*ms)
	w.n.Heal(c2)
	require.NoError(t, w.s.Run())
	assert.Empty(t, w.box[1].got)
	assert.Equal(t, []got{{sim.Time(10 * ms), 0, 2, 2}}, w.box[2].got)
	assert.Equal(t, []string{"partition", "partition", "heal", "drop", "deliver"}, c.kinds())
	assert.Equal(t, "partition", field(c.recs[3], "reason"))
	assert.Equal(t, "b", field(c.recs[3], "to"))
}

func TestClogHoldsThenDeliversInABurstInSendOrder(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Uniform(ms, 5*ms))}, 2)
	c := &collect{}
	w.s.SetSink(c)
	_, err := w.n.Clog(0, 1, 30*ms)
	require.NoError(t, err)
	assert.True(t, w.n.Clogged(0, 1))
	assert.False(t, w.n.Clogged(1, 0))
	assert.True(t, w.n.Connected(0, 1), "a clog is not a cut")
	for i := 0; i < 20; i++ {
		w.until(t, time.Duration(i)*ms)
		w.n.Send(0, 1, i)
		w.n.Send(1, 0, i)
	}
	w.until(t, 29*ms)
	assert.Empty(t, w.box[1].got, "held while clogged")
	assert.Len(t, w.box[0].got, 20, "the other direction flows")
	w.until(t, 30*ms)
	require.Len(t, w.box[1].got, 20)
	for i, g := range w.box[1].got {
		assert.Equal(t, got{sim.Time(30 * ms), 0, 1, i}, g, "one burst at the clog's end, in send order")
	}
	assert.False(t, w.n.Clogged(0, 1))
	assert.EqualValues(t, 20, w.n.Stats().Held)
	w.n.Send(0, 1, 99)
	w.until(t, 40*ms)
	assert.Len(t, w.box[1].got, 21, "after the clog, messages flow again")

	var unclog sim.Record
	for _, r := range c.recs {
		if r.Kind == "unclog" {
			unclog = r
		}
	}
	assert.Equal(t, "20", field(unclog, "held"))
}

func TestOverlappingClogsExtendAndAPartitionDropsTheBurst(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 2)
	_, err := w.n.Clog(0, 1, 10*ms)
	require.NoError(t, err)
	w.until(t, 5*ms)
	_, err = w.n.Clog(0, 1, 10*ms)
	require.NoError(t, err)
	w.n.Send(0, 1, 1)
	w.until(t, 14*ms)
	assert.Empty(t, w.box[1].got, "the second clog extends the first")
	w.until(t, 15*ms)
	assert.Len(t, w.box[1].got, 1)

	_, err = w.n.Clog(0, 1, 10*ms)
	require.NoError(t, err)
	w.n.Send(0, 1, 2)
	_, err = w.n.Block(0, 1)
	require.NoError(t, err)
	require.NoError(t, w.s.Run())
	assert.Len(t, w.box[1].got, 1, "a held message whose link is cut at the clog's end is dropped")
	assertBalanced(t, w.n)
}

func TestScheduledFaultsTakeEffectAtTheirTime(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 3)
	require.NoError(t, w.n.At(sim.Time(5*ms), IsolateFault(1, 10*ms)))
	require.NoError(t, w.n.At(sim.Time(20*ms), BlockFault(0, 2, 0)))
	require.NoError(t, w.n.At(sim.Time(30*ms), HealAllFault()))
	require.NoError(t, w.n.At(sim.Time(40*ms), ClogFault(2, 0, 5*ms)))
	groups := [][]Endpoint{{0}, {1, 2}}
	require.NoError(t, w.n.At(sim.Time(50*ms), SplitFault(5*ms, groups...)))
	groups[0][0] = 2 // the schedule keeps its own copy

	check := func(at time.Duration, ab, ac, ca bool, caClogged bool) {
		t.Helper()
		w.until(t, at)
		assert.Equal(t, ab, w.n.Connected(0, 1), "a→b at %v", at)
		assert.Equal(t, ac, w.n.Connected(0, 2), "a→c at %v", at)
		assert.Equal(t, ca, w.n.Connected(2, 0), "c→a at %v", at)
		assert.Equal(t, caClogged, w.n.Clogged(2, 0), "c→a clogged at %v", at)
	}
	check(4*ms, true, true, true, false)
	check(5*ms, false, true, true, false)
	check(15*ms, true, true, true, false)
	check(20*ms, true, false, true, false)
	check(30*ms, true, true, true, false)
	check(40*ms, true, true, true, true)
	check(45*ms, true, true, true, false)
	check(50*ms, false, false, false, false)
	check(55*ms, true, true, true, false)

	spans := w.n.Faults()
	require.Len(t, spans, 4)
	assert.Equal(t, FaultSpan{ID: 1, Fault: IsolateFault(1, 10*ms), Start: sim.Time(5 * ms), End: sim.Time(15 * ms)}, spans[0])
	assert.Equal(t, FaultSpan{ID: 2, Fault: BlockFault(0, 2, 0), Start: sim.Time(20 * ms), End: sim.Time(30 * ms)}, spans[1])
	assert.Equal(t, FaultSpan{ID: 3, Fault: ClogFault(2, 0, 5*ms), Start: sim.Time(40 * ms), End: sim.Time(45 * ms)}, spans[2])
	assert.Equal(t, [][]Endpoint{{0}, {1, 2}}, spans[3].Fault.Groups)
	assert.Equal(t, sim.Time(55*ms), spans[3].End)
}

func TestFaultsReportOngoingPartitionsAsNever(t *testing.T) {
	w := newWorld(t, 1, Config{}, 2)
	w.until(t, 3*ms)
	_, err := w.n.Isolate(0)
	require.NoError(t, err)
	assert.Equal(t, []FaultSpan{{ID: 1, Fault: IsolateFault(0, 0), Start: sim.Time(3 * ms), End: sim.Never}}, w.n.Faults())
}

func TestFaultLimit(t *testing.T) {
	w := newWorld(t, 1, Config{MaxFaults: 1}, 2)
	_, err := w.n.Block(0, 1)
	require.NoError(t, err)
	_, err = w.n.Block(1, 0)
	require.ErrorIs(t, err, ErrFull)
	assert.True(t, w.n.Connected(1, 0))
}

// randomWorld runs a world with random faults and some traffic to 2s.
func randomWorld(t *testing.T, seed uint64, traffic int) ([]FaultSpan, uint64) {
	cfg := Config{
		Default: Link{Latency: Latency{Fast: dist.Uniform(ms, 5*ms)}, Loss: 0.1},
		Random: RandomFaults{
			IsolateRate: 5, IsolateFor: dist.Exponential(10*ms, 50*ms),
			ClogRate: 5, ClogFor: dist.Uniform(ms, 100*ms),
			Until: sim.Time(1500 * ms),
		},
	}
	w := newWorld(t, seed, cfg, 4)
	for i := 0; i < traffic; i++ {
		w.n.Send(Endpoint(i%4), Endpoint((i+1)%4), i)
	}
	require.NoError(t, w.s.Run(), "random faults stop at Until, so Run returns")
	assert.LessOrEqual(t, w.s.Now(), sim.Time(1500*ms+time.Second))
	return w.n.Faults(), w.s.TraceHash()
}

func TestRandomFaultsAreReproducibleFromTheSeedAndIndependentOfTraffic(t *testing.T) {
	a, ha := randomWorld(t, 1, 100)
	b, hb := randomWorld(t, 1, 100)
	assert.Equal(t, a, b)
	assert.Equal(t, ha, hb)
	assert.Greater(t, len(a), 5, "about 15 faults expected")
	kinds := map[FaultKind]int{}
	for _, f := range a {
		kinds[f.Fault.Kind]++
		assert.Less(t, f.Start, sim.Time(1500*ms))
		assert.Greater(t, f.End, f.Start)
	}
	assert.Positive(t, kinds[FaultIsolate])
	assert.Positive(t, kinds[FaultClog])

	c, _ := randomWorld(t, 1, 1000)
	assert.Equal(t, a, c, "more traffic, same fault schedule")
	d, _ := randomWorld(t, 2, 100)
	assert.NotEqual(t, a, d, "another seed, another schedule")
}

func TestEndpointsAddedDuringAPartitionAreCutAccordingly(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 3)
	_, err := w.n.Split([]Endpoint{0}, []Endpoint{1})
	require.NoError(t, err)
	_, err = w.n.Isolate(2)
	require.NoError(t, err)
	b := &inbox{}
	d, err := w.n.AddEndpoint("d", b)
	require.NoError(t, err)
	w.box = append(w.box, b)
	assert.False(t, w.n.Connected(d, 0), "d is in the split's rest group")
	assert.False(t, w.n.Connected(1, d))
	assert.False(t, w.n.Connected(d, 2), "c is isolated from newcomers too")
	assert.True(t, w.n.Connected(d, d))
	assert.Empty(t, w.reach(t))
}

// TestDropNextEatsExactlyKMessages: DropNext(0, 1, 3) drops the next three messages on
// 0 → 1 only, then the link is itself again (its in-line uniform path included), and the
// counters still balance.
func TestDropNextEatsExactlyKMessages(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Uniform(ms, 2*ms))}, 2)
	require.NoError(t, w.n.DropNext(0, 1, 3))
	for i := 0; i < 5; i++ {
		w.n.Send(0, 1, i)
		w.n.Send(1, 0, i)
	}
	w.until(t, 10*ms)
	var gotTo1 []int
	for _, g := range w.box[1].got {
		gotTo1 = append(gotTo1, g.msg)
	}
	assert.ElementsMatch(t, []int{3, 4}, gotTo1, "the first three were dropped")
	assert.Len(t, w.box[0].got, 5, "the other direction is untouched")
	assert.EqualValues(t, 3, w.n.Stats().Dropped)
	require.NoError(t, w.n.CheckConservation())
	require.NoError(t, w.n.DropNext(0, 1, 1))
	require.NoError(t, w.n.DropNext(0, 1, 1), "drops add up")
	for i := 10; i < 13; i++ {
		w.n.Send(0, 1, i)
	}
	w.until(t, 20*ms)
	require.Len(t, w.box[1].got, 3)
	assert.Equal(t, 12, w.box[1].got[2].msg, "10 and 11 dropped")
	assert.Error(t, w.n.DropNext(0, 1, 0))
	assert.Error(t, w.n.DropNext(0, 7, 1))
}
