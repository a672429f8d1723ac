package redis

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// recordLog keeps a copy of every record of a run.
type recordLog struct{ recs []sim.Record }

func (l *recordLog) Record(r *sim.Record) {
	c := *r
	c.Fields = slices.Clone(r.Fields)
	l.recs = append(l.recs, c)
}

// of returns the records of actor of kind, in order.
func (l *recordLog) of(actor, kind string) []*sim.Record {
	var out []*sim.Record
	for i := range l.recs {
		if l.recs[i].Actor == actor && l.recs[i].Kind == kind {
			out = append(out, &l.recs[i])
		}
	}
	return out
}

// TestServerRecordsDecode runs a group and the storage through what each of their records
// tells (commands run with a packed and an unpacked reply, drops of a command and of a
// message, a storage verdict, a crash and restart with a key kept, a failover) and decodes
// each record into what the run did.
func TestServerRecordsDecode(t *testing.T) {
	w := newWorld(t, 1, fast)
	log := &recordLog{}
	w.s.SetSink(log)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{MaxQueue: 1, Persistence: PersistAOFAlways}, {}},
		ReplicationDelay: ms})
	st, err := model.NewStorage(w.s, w.net, model.StorageConfig{Acknowledge: true})
	require.NoError(t, err)
	c := w.client("c")
	setLock := set("lock", "v", resp.CondNX, 10*time.Second)
	c.at(1*ms, g.Endpoint(), setLock)
	c.at(2*ms, g.Endpoint(), get("lock"))
	c.send(3*ms, g.Endpoint(), model.StorageWrite(0, "lock", "x", 5, true))
	c.at(4*ms, st.Endpoint(), get("lock"))
	c.send(5*ms, st.Endpoint(), model.StorageWrite(0, "lock", "data", 7, true))
	require.NoError(t, g.At(sim.Time(10*ms), Fault{Kind: FaultPause, Node: 0, For: 10 * ms}))
	for _, k := range []string{"a", "b", "c"} {
		c.at(11*ms, g.Endpoint(), get(k))
	}
	require.NoError(t, g.At(sim.Time(50*ms), Fault{Kind: FaultCrash, Node: 0, For: 50 * ms}))
	require.NoError(t, g.At(sim.Time(300*ms), Fault{Kind: FaultFailover}))
	w.run(time.Second)

	execs := log.of("r.0", RecExec)
	require.GreaterOrEqual(t, len(execs), 2)
	x, err := DecodeExec(execs[0])
	require.NoError(t, err)
	assert.Equal(t, Exec{Cmd: setLock, Reply: resp.OK, HasReply: true}, x, "a reply packed into the command's field")
	x, err = DecodeExec(execs[1])
	require.NoError(t, err)
	assert.Equal(t, Exec{Cmd: get("lock"), Reply: bulkOf("v"), HasReply: true}, x, "a reply in a field of its own")

	drops := log.of("r", RecDrop)
	require.Len(t, drops, 1)
	d, err := DecodeDrop(drops[0])
	require.NoError(t, err)
	assert.Equal(t, Drop{Reason: "not-a-command", Msg: model.StorageWrite(3, "lock", "x", 5, true)}, d)

	drops = log.of("storage", RecDrop)
	require.Len(t, drops, 1)
	d, err = DecodeDrop(drops[0])
	require.NoError(t, err)
	assert.Equal(t, Drop{Reason: "not-a-write", Msg: model.Request(4, pay(get("lock")))}, d)

	verdicts := log.of("storage", model.RecStorageWrite)
	require.Len(t, verdicts, 1)
	v, err := model.DecodeStorageWrite(verdicts[0])
	require.NoError(t, err)
	assert.Equal(t, model.StorageVerdict{Resource: "lock", Token: 7, Fenced: true, Accepted: true}, v)

	drops = log.of("r.0", RecDrop)
	require.Len(t, drops, 2, "a queue of one while paused: two of three dropped")
	for i, k := range []string{"b", "c"} {
		d, err = DecodeDrop(drops[i])
		require.NoError(t, err)
		assert.Equal(t, Drop{Reason: "queue-full", Cmd: get(k), HasCmd: true}, d)
	}

	require.Len(t, log.of("r.0", FaultCrash.String()), 1)
	restarts := log.of("r.0", RecRestart)
	require.Len(t, restarts, 1)
	rs, err := DecodeRestart(restarts[0])
	require.NoError(t, err)
	assert.Equal(t, Restart{Keys: 1}, rs, "the lock's SET was on disk")

	fos := log.of("r", RecFailover)
	require.Len(t, fos, 1)
	fo, err := DecodeFailover(fos[0])
	require.NoError(t, err)
	assert.Equal(t, Failover{From: "r.0", To: "r.1"}, fo)

	for _, r := range log.recs {
		if r.Actor == "net" && r.Kind == "deliver" {
			for i := range r.Fields {
				if r.Fields[i].Key == "msg" {
					_, err := model.DecodeMessageField(&r.Fields[i])
					assert.NoError(t, err, r.String())
				}
			}
		}
	}
}

// TestDecodersRefuseBrokenRecords: each decoder refuses a record with any one of its
// fields missing, or of another kind of record, with an error naming it: never a zero.
func TestDecodersRefuseBrokenRecords(t *testing.T) {
	s := newSimT(t)
	var rec sim.Record
	s.SetSink(keep{&rec})
	set := resp.Set("lock", "v", resp.CondNX, time.Second)
	decoders := map[string]func(*sim.Record) error{
		RecExec:     func(r *sim.Record) error { _, err := DecodeExec(r); return err },
		RecRestart:  func(r *sim.Record) error { _, err := DecodeRestart(r); return err },
		RecFailover: func(r *sim.Record) error { _, err := DecodeFailover(r); return err },
		RecDrop:     func(r *sim.Record) error { _, err := DecodeDrop(r); return err },
	}
	writers := map[string]func(){
		RecExec: func() {
			emitExecTexter(s.Texter(), traceNameOf("redis1", RecExec), &set, resp.IntReply(1<<40))
		},
		RecRestart: func() { s.Trace("redis1", RecRestart, sim.Int("keys", 1)) },
		RecFailover: func() {
			s.Trace("r", RecFailover, sim.Str("from", "r.0"), sim.Str("to", "r.1"), sim.Int("lost_writes", 0))
		},
		RecDrop: func() { s.Trace("redis1", RecDrop, sim.Str("reason", "down"), cmdField(&set)) },
	}
	for kind, write := range writers {
		write()
		require.NoError(t, decoders[kind](&rec), kind)
		whole := slices.Clone(rec.Fields)
		for i := range whole {
			rec.Fields = slices.Delete(slices.Clone(whole), i, i+1)
			assert.ErrorContains(t, decoders[kind](&rec), "field", "%s without %s", kind, whole[i].Key)
		}
		rec.Fields = whole
		for other, decode := range decoders {
			if other != kind {
				assert.Error(t, decode(&rec), "a %s record read as %s", kind, other)
			}
		}
	}
}
