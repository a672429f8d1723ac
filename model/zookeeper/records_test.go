package zookeeper

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

type recordLog struct{ recs []sim.Record }

func (l *recordLog) Record(r *sim.Record) {
	c := *r
	c.Fields = slices.Clone(r.Fields)
	l.recs = append(l.recs, c)
}

func (l *recordLog) of(kind string) []*sim.Record {
	var out []*sim.Record
	for i := range l.recs {
		if l.recs[i].Kind == kind {
			out = append(out, &l.recs[i])
		}
	}
	return out
}

// TestServerRecordsDecode runs an ensemble through every record a server writes (an
// election, a session made and expired, a refused client, a kill, a restart, a stall and
// a thaw) and decodes each into what happened.
func TestServerRecordsDecode(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	log := &recordLog{}
	w.s.SetSink(log)
	w.settle()
	c := w.client("c")
	sid := c.session(0, 4*time.Second)
	c.send(0, zk.Connect(sid, 4*time.Second, zk.Zxid(7, 7))) // ahead of the server: refused
	w.runFor(10 * time.Second)                               // silent: expired
	old := w.leader()
	old.Kill()
	w.runFor(time.Second)
	kept := old.LogLen() // the log survives the kill
	require.Positive(t, kept)
	old.Restart()
	f := w.e.Server(0)
	f.Stall()
	f.Thaw()
	w.settle()

	last := func(kind string) *sim.Record { r := log.of(kind); return r[len(r)-1] }
	look, err := DecodeLooking(log.of(RecLooking)[0])
	require.NoError(t, err)
	assert.Equal(t, "leader connection closed", look.Reason, "the servers' first looking went before the sink")
	assert.Equal(t, Leading{Epoch: 1}, must(DecodeLeading(log.of(RecLeading)[0])))
	lead := must(DecodeLeading(last(RecLeading)))
	assert.Equal(t, uint32(2), lead.Epoch)
	assert.Positive(t, lead.Zxid, "it leads with the history so far")
	est := must(DecodeLeading(last(RecEstablished)))
	assert.Equal(t, Leading{Epoch: 2, Followers: 1}, est)
	fol := must(DecodeFollowing(last(RecFollowing)))
	assert.Equal(t, Following{Leader: w.leader().Name(), Epoch: 2}, fol)
	made := must(DecodeSession(log.of(RecSession)[0]))
	assert.Equal(t, Session{Session: sid, Timeout: 4 * time.Second}, made)
	exp := must(DecodeSession(log.of(RecExpire)[0]))
	assert.Equal(t, made, exp)
	stop := must(DecodeStop(log.of(RecStop)[0]))
	assert.Equal(t, Stop{How: "kill", Role: "leading"}, stop)
	re := must(DecodeRestart(log.of(RecRestart)[0]))
	assert.Equal(t, kept, re.Log)
	require.Len(t, log.of(RecRefuse), 1)
	require.Len(t, log.of(RecStall), 1)
	require.Len(t, log.of(RecThaw), 1)
	for _, k := range []string{RecStop, RecRestart, RecStall, RecThaw} {
		assert.True(t, IsServerFault(k), k)
	}
	_, err = DecodeStop(log.of(RecRestart)[0])
	assert.Error(t, err, "a record of another kind does not decode")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
