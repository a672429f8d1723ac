package network

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// assertParam checks that err is a *sim.ParamError naming param, and that its message
// says the allowed range.
func assertParam(t *testing.T, err error, param string) {
	t.Helper()
	var pe *sim.ParamError
	require.ErrorAs(t, err, &pe, "want a ParamError for %s", param)
	assert.Equal(t, param, pe.Param)
	assert.NotEmpty(t, pe.Allowed)
	assert.Contains(t, err.Error(), param+" = ")
	assert.Contains(t, err.Error(), "allowed")
}

func withLatency(d dist.Dist) Config { return Config{Default: linkOf(d)} }

func TestBadConfigIsAParamError(t *testing.T) {
	neg := -time.Nanosecond
	for _, tc := range []struct {
		param string
		cfg   Config
	}{
		{"latency.fast.base", withLatency(dist.Constant(neg))},
		{"latency.fast.base", withLatency(dist.Uniform(neg, ms))},
		{"latency.fast.max", withLatency(dist.Uniform(2*ms, ms))},
		{"latency.fast.max", withLatency(dist.Uniform(0, MaxDuration+1))},
		{"latency.fast.base", withLatency(dist.Exponential(neg, ms))},
		{"latency.fast.mean", withLatency(dist.Exponential(ms, neg))},
		{"latency.fast.median", withLatency(dist.Lognormal(neg, 0.5))},
		{"latency.fast.sigma", withLatency(dist.Lognormal(ms, -0.1))},
		{"latency.fast.sigma", withLatency(dist.Lognormal(ms, math.NaN()))},
		{"latency.fast.sigma", withLatency(dist.LognormalP99(10*ms, ms))},
		{"latency.fast.kind", withLatency(dist.Dist{Kind: 9})},
		{"latency.slow_p", Config{Default: Link{Latency: Tail(dist.Constant(ms), 1.5, dist.Constant(ms))}}},
		{"latency.slow_p", Config{Default: Link{Latency: Tail(dist.Constant(ms), -0.1, dist.Constant(ms))}}},
		{"latency.slow.base", Config{Default: Link{Latency: Tail(dist.Constant(ms), 0.1, dist.Constant(neg))}}},
		{"loss", Config{Default: Link{Loss: -0.1}}},
		{"loss", Config{Default: Link{Loss: 1.1}}},
		{"loss", Config{Default: Link{Loss: math.NaN()}}},
		{"dup", Config{Default: Link{Dup: 2}}},
		{"max_in_flight", Config{MaxInFlight: -1}},
		{"max_faults", Config{MaxFaults: MaxLimit + 1}},
		{"random.isolate_rate", Config{Random: RandomFaults{IsolateRate: -1}}},
		{"random.clog_rate", Config{Random: RandomFaults{ClogRate: MaxRate * 2}}},
		{"random.isolate_for.mean", Config{Random: RandomFaults{IsolateFor: dist.Exponential(0, neg)}}},
		{"random.clog_for.base", Config{Random: RandomFaults{ClogFor: dist.Constant(neg)}}},
		{"random.until", Config{Random: RandomFaults{Until: -1}}},
	} {
		s, err := sim.New(sim.Config{})
		require.NoError(t, err)
		n, err := New[int](s, tc.cfg, s.Source("net"))
		assert.Nil(t, n)
		assertParam(t, err, tc.param)
	}
}

func TestBadValueAndRangeAreInTheMessage(t *testing.T) {
	s, err := sim.New(sim.Config{})
	require.NoError(t, err)
	_, err = New[int](s, Config{Default: Link{Loss: 1.5}}, s.Source("net"))
	assert.EqualError(t, err, "loss = 1.5: out of range, allowed [0, 1]")
	_, err = New[int](s, withLatency(dist.Uniform(2*ms, ms)), s.Source("net"))
	assert.EqualError(t, err, "latency.fast.max = 1ms: out of range, allowed [2ms, 24h0m0s] (at least base)")
	_, err = New[int](s, Config{}, nil)
	var pe *sim.ParamError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "src", pe.Param)
}

func TestBadLinksAndFaultsAreParamErrors(t *testing.T) {
	w := newWorld(t, 1, Config{}, 3)
	w.until(t, 10*ms)
	_, err := w.n.Apply(Fault{Kind: FaultClog, From: 0, To: 1, For: ms})
	require.NoError(t, err, "the valid baseline")

	for _, tc := range []struct {
		param string
		err   error
	}{
		{"from", w.n.SetLink(-1, 0, Link{})},
		{"to", w.n.SetLink(0, 3, Link{})},
		{"link.loss", w.n.SetLink(0, 1, Link{Loss: 2})},
		{"link.latency.fast.base", w.n.SetLink(0, 1, linkOf(dist.Constant(-ms)))},
		{"node", second(w.n.Isolate(3))},
		{"groups[1][0]", second(w.n.Split([]Endpoint{0}, []Endpoint{5}))},
		{"groups[1][1]", second(w.n.Split([]Endpoint{0}, []Endpoint{1, 0}))},
		{"to", second(w.n.Block(0, 9))},
		{"from", second(w.n.Clog(-2, 1, ms))},
		{"for", second(w.n.Clog(0, 1, 0))},
		{"for", second(w.n.Clog(0, 1, MaxDuration+1))},
		{"for", second(w.n.Apply(IsolateFault(0, -ms)))},
		{"kind", second(w.n.Apply(Fault{}))},
		{"at", w.n.At(sim.Time(9*ms), BlockFault(0, 1, 0))},
		{"to", w.n.At(sim.Time(20*ms), BlockFault(0, 4, 0))},
		{"endpoint", second(w.n.AddEndpoint("", &inbox{}))},
		{"endpoint", second(w.n.AddEndpoint("b", &inbox{}))},
		{"receiver", second(w.n.AddEndpoint("z", nil))},
	} {
		assertParam(t, tc.err, tc.param)
	}
	assert.True(t, w.n.Connected(0, 1), "rejected faults changed nothing")
	assert.Equal(t, 3, w.n.Endpoints())
}

func TestEndpointLimit(t *testing.T) {
	w := newWorld(t, 1, Config{}, 0)
	for i := 0; i < MaxEndpoints; i++ {
		_, err := w.n.AddEndpoint("e"+time.Duration(i).String(), &inbox{})
		require.NoError(t, err)
	}
	_, err := w.n.AddEndpoint("one-too-many", &inbox{})
	assertParam(t, err, "endpoints")
}

func second[T any](_ T, err error) error { return err }
