package redlock_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

func newMachine(t testing.TB, cfg redlock.Config, seed uint64) *redlock.Machine {
	t.Helper()
	m, err := redlock.New(cfg, rand.New(rand.NewPCG(seed, 0)))
	require.NoError(t, err)
	return m
}

// answer feeds every send in the machine's current outputs the reply chosen by f, at now,
// and returns what the answers produced, concatenated (copied: the outbox is reused).
func answer(t testing.TB, m *redlock.Machine, now time.Duration, f func(node int, c resp.Command) resp.Reply) []lock.Output {
	t.Helper()
	sends := sendsOf(m.Outputs())
	var out []lock.Output
	for _, s := range sends {
		require.NoError(t, errOf(m.Reply(now, s.Node, s.Req, pl(f(s.Node, cmdOf(s))))))
		out = append(out, m.Outputs()...)
	}
	return out
}

func sendsOf(outs []lock.Output) []lock.Output {
	var sends []lock.Output
	for _, o := range outs {
		if o.Kind == lock.OutSend {
			sends = append(sends, o)
		}
	}
	return sends
}

func outcomes(outs []lock.Output) []lock.Event {
	var res []lock.Event
	for _, o := range outs {
		if o.Kind == lock.OutEvent {
			res = append(res, o.Event)
		}
	}
	return res
}

func lastTimer(t testing.TB, outs []lock.Output) lock.Output {
	t.Helper()
	for i := len(outs) - 1; i >= 0; i-- {
		if outs[i].Kind == lock.OutSetTimer {
			return outs[i]
		}
	}
	t.Fatal("no timer set")
	return lock.Output{}
}

func TestQuorumForOneToNineNodes(t *testing.T) {
	for n := 1; n <= 9; n++ {
		quorum := n/2 + 1
		for oks := 0; oks <= n; oks++ {
			cfg := redlock.DefaultConfig()
			cfg.Nodes, cfg.Tries = n, 1
			m := newMachine(t, cfg, 1)
			require.Equal(t, quorum, m.Quorum())
			require.NoError(t, errOf(m.Acquire(0, "lock")))
			require.Len(t, sendsOf(m.Outputs()), n)
			out := answer(t, m, time.Millisecond, func(node int, _ resp.Command) resp.Reply {
				if node < oks {
					return resp.OK
				}
				return resp.Nil
			})
			got := outcomes(out)
			require.NotEmpty(t, got, "N=%d oks=%d", n, oks)
			ended := got[0]
			assert.Equal(t, lock.AttemptEnded, ended.Kind)
			assert.Equal(t, oks, ended.Votes, "N=%d", n)
			if oks >= quorum {
				assert.Equal(t, lock.ReasonNone, ended.Reason, "N=%d oks=%d", n, oks)
				require.Len(t, got, 2)
				assert.Equal(t, lock.Acquired, got[1].Kind, "N=%d oks=%d", n, oks)
				assert.Equal(t, redlock.StateHeld, m.State())
			} else {
				assert.Equal(t, lock.ReasonNoQuorum, ended.Reason, "N=%d oks=%d", n, oks)
				assert.Equal(t, redlock.StateCleaningUp, m.State())
				assert.Len(t, sendsOf(out), n, "cleanup goes to all %d nodes", n)
			}
		}
	}
}

// backoffs runs `attempts` lost attempts and returns the retry delay drawn after each.
func backoffs(t *testing.T, delay, jitter time.Duration, attempts int) []time.Duration {
	cfg := redlock.DefaultConfig()
	cfg.RetryDelay, cfg.RetryJitter, cfg.Tries = delay, jitter, attempts+1
	m := newMachine(t, cfg, 7)
	require.NoError(t, errOf(m.Acquire(0, "lock")))
	now := time.Duration(0)
	nilReply := func(int, resp.Command) resp.Reply { return resp.Nil }
	zero := func(int, resp.Command) resp.Reply { return resp.IntReply(0) }
	var ds []time.Duration
	for range attempts {
		answer(t, m, now, nilReply)                      // the SET round is lost
		backoff := lastTimer(t, answer(t, m, now, zero)) // cleanup done: backoff timer
		require.Equal(t, redlock.StateBackingOff, m.State())
		ds = append(ds, backoff.After)
		now += backoff.After
		require.NoError(t, errOf(m.Timer(now, backoff.Timer)))
		require.Equal(t, redlock.StateAcquiring, m.State())
	}
	return ds
}

func TestRetryDelayBounds(t *testing.T) {
	const n = 5000
	t.Run("jitter", func(t *testing.T) {
		ds := backoffs(t, 50*time.Millisecond, 30*time.Millisecond, n)
		lo, hi, sum := ds[0], ds[0], time.Duration(0)
		for _, d := range ds {
			lo, hi, sum = min(lo, d), max(hi, d), sum+d
		}
		assert.GreaterOrEqual(t, lo, 20*time.Millisecond)
		assert.LessOrEqual(t, hi, 80*time.Millisecond)
		// The draws spread over the whole interval: uniform, not clustered.
		assert.Less(t, lo, 21*time.Millisecond)
		assert.Greater(t, hi, 79*time.Millisecond)
		mean := sum / n
		assert.InDelta(t, float64(50*time.Millisecond), float64(mean), float64(time.Millisecond))
	})
	t.Run("clamped at zero", func(t *testing.T) {
		ds := backoffs(t, 10*time.Millisecond, 30*time.Millisecond, n)
		zeros := 0
		for _, d := range ds {
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.LessOrEqual(t, d, 40*time.Millisecond)
			if d == 0 {
				zeros++
			}
		}
		// P(delay + jitter < 0) = 20/60: about a third of the draws are clamped.
		assert.InDelta(t, 1.0/3, float64(zeros)/n, 0.03)
	})
	t.Run("no jitter", func(t *testing.T) {
		for _, d := range backoffs(t, 25*time.Millisecond, 0, 100) {
			require.Equal(t, 25*time.Millisecond, d)
		}
	})
}

func TestBadConfig(t *testing.T) {
	type edit func(*redlock.Config)
	cases := []struct {
		param string
		edit  edit
	}{
		{"ttl", func(c *redlock.Config) { c.TTL = 0 }},
		{"ttl", func(c *redlock.Config) { c.TTL = -time.Second }},
		{"ttl", func(c *redlock.Config) { c.TTL = 25 * time.Hour }},
		{"drift_factor", func(c *redlock.Config) { c.DriftFactor = 0.5 }},
		{"drift_factor", func(c *redlock.Config) { c.DriftFactor = -0.01 }},
		{"drift_factor", func(c *redlock.Config) { c.DriftFactor = math.NaN() }},
		{"drift_factor", func(c *redlock.Config) { c.DriftFactor = math.Inf(1) }},
		{"drift_pad", func(c *redlock.Config) { c.DriftPad = -1 }},
		{"nodes", func(c *redlock.Config) { c.Nodes = 0 }},
		{"nodes", func(c *redlock.Config) { c.Nodes = -3 }},
		{"nodes", func(c *redlock.Config) { c.Nodes = 100 }},
		{"tries", func(c *redlock.Config) { c.Tries = 0 }},
		{"tries", func(c *redlock.Config) { c.Tries = 2_000_000 }},
		{"retry_delay", func(c *redlock.Config) { c.RetryDelay = -time.Millisecond }},
		{"retry_jitter", func(c *redlock.Config) { c.RetryJitter = -time.Millisecond }},
		{"timeout", func(c *redlock.Config) { c.Timeout = -time.Millisecond }},
		{"timeout_factor", func(c *redlock.Config) { c.TimeoutFactor = 0 }},
		{"timeout_factor", func(c *redlock.Config) { c.TimeoutFactor = math.NaN() }},
		{"max_extensions", func(c *redlock.Config) { c.MaxExtensions = -1 }},
		{"variant", func(c *redlock.Config) { c.Variant = 200 }},
		{"mode", func(c *redlock.Config) { c.Mode = 9 }},
		{"fencing", func(c *redlock.Config) { c.Fencing = 9 }},
	}
	for _, tc := range cases {
		cfg := redlock.DefaultConfig()
		tc.edit(&cfg)
		m, err := redlock.New(cfg, rand.New(rand.NewPCG(1, 2)))
		assert.Nil(t, m)
		var pe *redlock.ParamError
		if assert.True(t, errors.As(err, &pe), "%s: %v", tc.param, err) {
			assert.Equal(t, tc.param, pe.Param)
			assert.Contains(t, err.Error(), tc.param+" = ")
			assert.Contains(t, err.Error(), "out of range, allowed ")
		}
	}

	// A timeout given outright makes timeout_factor irrelevant.
	cfg := redlock.DefaultConfig()
	cfg.Timeout, cfg.TimeoutFactor = 20*time.Millisecond, 0
	_, err := redlock.New(cfg, rand.New(rand.NewPCG(1, 2)))
	assert.NoError(t, err)

	_, err = redlock.New(redlock.DefaultConfig(), nil)
	assert.Error(t, err)
}

func TestNamesRoundTrip(t *testing.T) {
	for _, v := range redlock.Variants() {
		got, err := redlock.ParseVariant(v.String())
		require.NoError(t, err)
		assert.Equal(t, v, got)
		text, err := v.MarshalText()
		require.NoError(t, err)
		var back redlock.Variant
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, v, back)
	}
	assert.Len(t, redlock.Variants(), 10)
	for _, md := range redlock.Modes() {
		got, err := redlock.ParseMode(md.String())
		require.NoError(t, err)
		assert.Equal(t, md, got)
	}
	for _, f := range redlock.Fencings() {
		got, err := redlock.ParseFencing(f.String())
		require.NoError(t, err)
		assert.Equal(t, f, got)
	}
	for _, k := range redlock.Knobs() {
		cfg := redlock.DefaultConfig()
		assert.NotContains(t, cfg.Set(k, "?").Error(), "unknown knob", k)
	}
}

// script drives one acquire → extend → release cycle with a fixed pattern of replies and
// returns every output rendered, so two runs can be compared.
func script(t *testing.T, seed uint64) string {
	cfg := redlock.DefaultConfig()
	cfg.Fencing = redlock.FenceMajority
	m := newMachine(t, cfg, seed)
	var b strings.Builder
	log := func(outs []lock.Output) {
		for _, o := range outs {
			b.WriteString(o.String() + "\n")
		}
	}
	require.NoError(t, errOf(m.Acquire(0, "lock")))
	log(m.Outputs())
	attempt := 1
	reply := func(node int, c resp.Command) resp.Reply {
		switch {
		case node == 4:
			return resp.NoReply
		case c.Op == resp.OpSet && attempt == 1 && node < 2:
			return resp.Nil // the first attempt gets 2 OKs of 5
		case c.Op == resp.OpSet:
			return resp.OK
		case c.Op == resp.OpIncr:
			return resp.IntReply(int64(10 + node))
		default:
			return resp.IntReply(1)
		}
	}
	log(answer(t, m, time.Millisecond, reply)) // lost attempt
	cleanup := answer(t, m, 2*time.Millisecond, reply)
	log(cleanup)
	backoff := lastTimer(t, cleanup)
	attempt = 2
	now := 2*time.Millisecond + backoff.After
	require.NoError(t, errOf(m.Timer(now, backoff.Timer)))
	log(m.Outputs())
	log(answer(t, m, now+time.Millisecond, reply))   // SET round won: INCR round
	log(answer(t, m, now+2*time.Millisecond, reply)) // tokens 10..13: 13
	require.Equal(t, redlock.StateHeld, m.State())
	got := outcomes(m.Outputs())
	require.Len(t, got, 2)
	assert.Equal(t, lock.Acquired, got[1].Kind)
	assert.Equal(t, int64(13), got[1].Token)
	assert.Equal(t, 2, got[1].Attempt)
	return b.String()
}

func TestDeterminism(t *testing.T) {
	a, b := script(t, 3), script(t, 3)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, script(t, 4), "another seed gives other values and jitter")
}

func TestValueIsUniquePerAcquireAndBase64(t *testing.T) {
	m := newMachine(t, redlock.DefaultConfig(), 1)
	seen := map[string]bool{}
	for i := range 1000 {
		now := time.Duration(i) * time.Second
		require.NoError(t, errOf(m.Acquire(now, "lock")))
		v := m.Value()
		assert.Len(t, v, 24) // 16 bytes in padded base64
		assert.False(t, seen[v])
		seen[v] = true
		require.NoError(t, errOf(m.Release(now)))
		answer(t, m, now, func(int, resp.Command) resp.Reply { return resp.IntReply(1) })
		require.Equal(t, redlock.StateIdle, m.State())
	}
}

// cycle is one acquire (all five OK) + extend + release, driven by hand without building
// anything, as the simulator would drive it.
func cycle(m *redlock.Machine, now time.Duration, sends []lock.Output) {
	step := func(r resp.Reply) {
		sends = append(sends[:0], m.Outputs()...)
		for _, s := range sends {
			if s.Kind == lock.OutSend {
				_, _ = m.Reply(now, s.Node, s.Req, pl(r))
			}
		}
	}
	_, _ = m.Acquire(now, "lock")
	step(resp.OK)
	_, _ = m.Extend(now)
	step(resp.IntReply(1))
	_, _ = m.Release(now)
	step(resp.IntReply(1))
}

func TestSteadyStateAllocatesOnlyTheValue(t *testing.T) {
	m := newMachine(t, redlock.DefaultConfig(), 1)
	sends := make([]lock.Output, 0, 16)
	now := time.Duration(0)
	cycle(m, now, sends) // warm the outbox up
	allocs := testing.AllocsPerRun(100, func() {
		now += time.Second
		cycle(m, now, sends)
		if m.State() != redlock.StateIdle {
			t.Fatal("cycle did not end idle")
		}
	})
	assert.LessOrEqual(t, allocs, 1.0, "one allocation per acquire (the value) at most")
}

func BenchmarkAcquireRelease(b *testing.B) {
	m := newMachine(b, redlock.DefaultConfig(), 1)
	sends := make([]lock.Output, 0, 16)
	now := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		now += time.Second
		_, _ = m.Acquire(now, "lock")
		sends = append(sends[:0], m.Outputs()...)
		for _, s := range sends[:5] {
			_, _ = m.Reply(now, s.Node, s.Req, pl(resp.OK))
		}
		_, _ = m.Release(now)
		sends = append(sends[:0], m.Outputs()...)
		for _, s := range sends[:5] {
			_, _ = m.Reply(now, s.Node, s.Req, pl(resp.IntReply(1)))
		}
	}
	if m.State() != redlock.StateIdle {
		b.Fatal("cycle did not end idle")
	}
}

// TestOutputsCarryOnlyTheirKindsFields checks that a reused outbox slot never shows an
// earlier output's fields: a send written where an outcome was must not keep the outcome.
// The outbox is reused from input to input, and send skips clearing the slot's Outcome
// unless the slot held one.
func TestOutputsCarryOnlyTheirKindsFields(t *testing.T) {
	m := newMachine(t, redlock.DefaultConfig(), 1)
	check := func(step string, j int) {
		t.Helper()
		for i, o := range m.Outputs() {
			var want lock.Output
			switch o.Kind {
			case lock.OutSend:
				want = lock.Output{Kind: o.Kind, Node: o.Node, Req: o.Req, Request: o.Request}
			case lock.OutSetTimer:
				want = lock.Output{Kind: o.Kind, Timer: o.Timer, After: o.After}
			case lock.OutCancelTimer:
				want = lock.Output{Kind: o.Kind, Timer: o.Timer}
			case lock.OutEvent:
				want = lock.Output{Kind: o.Kind, Event: o.Event}
			}
			require.Equal(t, want, o, "%s %d: output %d", step, j, i)
		}
	}
	sawOutcomeThenSend := false
	for i := range 20 {
		now := time.Duration(i) * time.Second
		require.NoError(t, errOf(m.Acquire(now, "lock")))
		check("acquire", i)
		sends := sendsOf(m.Outputs())
		for j, s := range sends {
			require.NoError(t, errOf(m.Reply(now, s.Node, s.Req, pl(resp.OK))))
			check("acquire reply", j)
		}
		// The last reply ended the round with an outcome in a low slot; release's sends
		// are written over it.
		hadOutcome := len(outcomes(m.Outputs())) > 0
		require.NoError(t, errOf(m.Release(now)))
		check("release", i)
		sawOutcomeThenSend = sawOutcomeThenSend || hadOutcome && len(sendsOf(m.Outputs())) > 0
		answer(t, m, now, func(int, resp.Command) resp.Reply { return resp.IntReply(1) })
		check("release replies", i)
	}
	require.True(t, sawOutcomeThenSend, "the test must write sends over an outcome's slot")
}

// TestInputsReturnTheirOutputs: an input returns what it produced (what Outputs shows
// until the next input), and a refused input returns nothing.
func TestInputsReturnTheirOutputs(t *testing.T) {
	m, err := redlock.New(redlock.DefaultConfig(), rand.New(rand.NewPCG(1, 0)))
	require.NoError(t, err)
	outs, err := m.Acquire(0, "lock")
	require.NoError(t, err)
	assert.Len(t, sendsOf(outs), 5)
	assert.Equal(t, m.Outputs(), outs)
	outs, err = m.Acquire(time.Millisecond, "lock")
	assert.ErrorIs(t, err, lock.ErrBusy)
	assert.Empty(t, outs)
	outs, err = m.Acquire(0, "lock")
	assert.ErrorIs(t, err, lock.ErrTimeBackward)
	assert.Empty(t, outs)
}

// TestLockValueByDialect: the value is 16 random bytes, in base64 as redsync and the page's
// clients send it, in hex as node-redlock does.
func TestLockValueByDialect(t *testing.T) {
	for _, c := range []struct {
		d    redlock.Dialect
		want string
	}{{redlock.DialectSpec, `^[A-Za-z0-9+/]{22}==$`}, {redlock.DialectRedsync, `^[A-Za-z0-9+/]{22}==$`}, {redlock.DialectNodeRedlock, `^[0-9a-f]{32}$`},
		{redlock.DialectRedlockPy, `^[A-Za-z0-9]{22}$`},
		{redlock.DialectRedlockNet, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`}} {
		cfg := redlock.DefaultConfig()
		cfg.Dialect = c.d
		m, err := redlock.New(cfg, rand.New(rand.NewPCG(1, 2)))
		require.NoError(t, err)
		_, err = m.Acquire(0, "lock")
		require.NoError(t, err)
		assert.Regexp(t, c.want, m.Value(), c.d.String())
	}
}

// TestContextFactorRidesOnAcquireRequests: with a context factor (redsync's timeoutFactor),
// every request of an acquire attempt and of the cleanup after a lost one carries the
// context's deadline, ttl × factor, to the driver; an extension's and a release's carry
// none, as redsync's Extend and Unlock pass context.Background().
func TestContextFactorRidesOnAcquireRequests(t *testing.T) {
	cfg := redlock.DefaultConfig()
	cfg.Dialect, cfg.TTL, cfg.ContextFactor, cfg.Tries = redlock.DialectRedsync, 8*time.Second, 0.05, 2
	m := newMachine(t, cfg, 1)
	ctxs := func(outs []lock.Output) []time.Duration {
		var d []time.Duration
		for _, o := range sendsOf(outs) {
			d = append(d, o.After)
		}
		return d
	}
	const want = 400 * time.Millisecond
	outs, err := m.Acquire(0, "lock")
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{want, want, want, want, want}, ctxs(outs), "the attempt's SETs")
	// Refused everywhere: the cleanup's deletes carry a new context of the same length.
	cleanup := answer(t, m, time.Millisecond, func(int, resp.Command) resp.Reply { return resp.Nil })
	assert.Equal(t, []time.Duration{want, want, want, want, want}, ctxs(cleanup), "the cleanup's deletes")
	assert.Contains(t, lock.Output{Kind: lock.OutSend, After: want}.String(), "ctx=400ms", "a trace shows the deadline")

	m = newMachine(t, cfg, 2)
	_, err = m.Acquire(0, "lock")
	require.NoError(t, err)
	answer(t, m, time.Millisecond, func(int, resp.Command) resp.Reply { return resp.OK })
	outs, err = m.Extend(2 * time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{0, 0, 0, 0, 0}, ctxs(outs), "Extend passes no deadline")
	answer(t, m, 3*time.Millisecond, func(int, resp.Command) resp.Reply { return resp.IntReply(1) })
	outs, err = m.Release(4 * time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{0, 0, 0, 0, 0}, ctxs(outs), "Unlock passes no deadline")

	cfg.ContextFactor = -0.1
	_, err = redlock.New(cfg, nil)
	assert.ErrorContains(t, err, "context_factor")
}
