package model

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// TestEveryProcessFaultHasADescriptor holds every FaultKind below faultEnd to a filled
// descriptor: a kind added to the enum without its row in faultKinds fails here.
func TestEveryProcessFaultHasADescriptor(t *testing.T) {
	names, records, actions := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for k := FaultKind(1); k < faultEnd; k++ {
		d, ok := k.Desc()
		require.True(t, ok, "kind %d", k)
		require.NotEmpty(t, d.Name, "kind %d has no descriptor in faultKinds", k)
		assert.Equal(t, k, d.Kind)
		assert.NotEmpty(t, d.Record, d.Name)
		assert.True(t, d.Effect.Valid(), "%s: effect %d", d.Name, d.Effect)
		assert.NotEqual(t, EffectPromote, d.Effect, "%s: a promotion acts on a service, not a process", d.Name)
		assert.Equal(t, d.Name, k.String())
		assert.False(t, names[d.Name] || records[d.Record] || d.Action != "" && actions[d.Action], "%s: a name, record or action twice", d.Name)
		names[d.Name], records[d.Record], actions[d.Action] = true, true, true
		byRecord, ok := FaultByRecord(d.Record)
		assert.True(t, ok && byRecord == d, "%s: FaultByRecord(%q)", d.Name, d.Record)
		assert.Equal(t, d.Effect == EffectStop || d.Effect == EffectStall, d.Lasts(), d.Name)
	}
	assert.Len(t, FaultKinds(), int(faultEnd)-1)
	_, ok := FaultKind(0).Desc()
	assert.False(t, ok)
	assert.Equal(t, "fault(0)", FaultKind(0).String())
	_, ok = FaultByRecord("exec")
	assert.False(t, ok)
}

// fakeServer is a ServerProcess that notes what it was told.
type fakeServer struct {
	s          *sim.Sim
	up, paused bool
	log        []string
}

func (f *fakeServer) Name() string        { return "srv" }
func (f *fakeServer) Clock() *clock.Clock { return nil }
func (f *fakeServer) Up() bool            { return f.up }
func (f *fakeServer) Paused() bool        { return f.paused }
func (f *fakeServer) note(what string)    { f.log = append(f.log, f.s.Now().Duration().String()+" "+what) }
func (f *fakeServer) Stop(_ sim.Time, how FaultKind) {
	f.up, f.paused = false, false
	f.note(how.String())
}
func (f *fakeServer) Start(sim.Time) {
	if !f.up {
		f.up = true
		f.note("start")
	}
}
func (f *fakeServer) Stall(sim.Time) { f.paused = true; f.note("stall") }
func (f *fakeServer) Thaw(sim.Time) {
	if f.paused {
		f.paused = false
		f.note("thaw")
	}
}

// TestServerFaultsApplyByEffect schedules faults on a server through ServerFaults: a stop
// starts again For later, a Forever one waits for a restart, a stall thaws For later, a
// stop cancels a pending thaw, a stop of a stopped server or a stall of a stalled one is
// absorbed, and a bad schedule is refused naming what is wrong.
func TestServerFaultsApplyByEffect(t *testing.T) {
	s, err := sim.New(sim.Config{Seed: 1})
	require.NoError(t, err)
	srv := &fakeServer{s: s, up: true}
	sf := NewServerFaults(s, []ServerProcess{srv, nil})
	ms := func(n int) sim.Time { return sim.Time(time.Duration(n) * time.Millisecond) }
	require.NoError(t, sf.At(ms(10), 0, Fault{Kind: FaultCrash, For: 20 * time.Millisecond}))
	require.NoError(t, sf.At(ms(15), 0, Fault{Kind: FaultKill, For: time.Second})) // absorbed: down already
	require.NoError(t, sf.At(ms(50), 0, Fault{Kind: FaultPause, For: 30 * time.Millisecond}))
	require.NoError(t, sf.At(ms(60), 0, Fault{Kind: FaultPause, For: time.Second})) // absorbed: stalled already
	require.NoError(t, sf.At(ms(70), 0, Fault{Kind: FaultShutdown, Forever: true})) // cancels the thaw at 80ms
	require.NoError(t, sf.At(ms(200), 0, Fault{Kind: FaultRestart}))
	require.NoError(t, s.Run())
	assert.Equal(t, []string{"10ms crash", "30ms start", "50ms stall", "70ms shutdown", "200ms start"}, srv.log)
	assert.True(t, srv.Up())

	assert.ErrorContains(t, sf.At(0, 0, Fault{Kind: faultEnd}), "{crash, kill, shutdown, restart, pause, resume}")
	assert.ErrorContains(t, sf.At(0, 1, Fault{Kind: FaultCrash}), "a server with a process")
	assert.ErrorContains(t, sf.At(0, 2, Fault{Kind: FaultCrash}), "fault_server")
	assert.ErrorContains(t, sf.At(0, 0, Fault{Kind: FaultCrash, For: MaxDowntime + 1}), "fault_for")
}
