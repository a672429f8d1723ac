package model

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// TestClientRecordsDecode writes each shape of client record (a lock event, a write, a
// pause, a plain event, a merged pause) and decodes it into what was written.
func TestClientRecordsDecode(t *testing.T) {
	nm := newClientNames("client1", []string{"lock"})
	write := func(ev *ClientEvent) *sim.Record {
		s := newSimT(t)
		var rec sim.Record
		s.SetSink(keep{&rec})
		emitEventTexter(s.Texter(), nm, 1500*time.Millisecond, nm.res[0], ev)
		return &rec
	}
	for _, tc := range []struct {
		ev   ClientEvent
		want ClientRecord
	}{
		{ClientEvent{Kind: EvAcquired, Lock: &lock.Event{Attempt: 2, Votes: 3, Validity: 9900 * time.Millisecond, Token: 7}},
			ClientRecord{Kind: EvAcquired, Resource: "lock", HasLock: true, Attempt: 2, OKs: 3, Validity: 9900 * time.Millisecond, Token: 7}},
		{ClientEvent{Kind: EvAttemptEnded, Lock: &lock.Event{Attempt: 1, Votes: 1, Reason: lock.ReasonNoQuorum}},
			ClientRecord{Kind: EvAttemptEnded, Resource: "lock", HasLock: true, Attempt: 1, OKs: 1, Reason: lock.ReasonNoQuorum}},
		{ClientEvent{Kind: EvWrite, WriteID: 4, Token: 7, Fenced: true},
			ClientRecord{Kind: EvWrite, Resource: "lock", WriteID: 4, Token: 7, Fenced: true}},
		{ClientEvent{Kind: EvPause, For: 2 * time.Second}, ClientRecord{Kind: EvPause, For: 2 * time.Second}},
		{ClientEvent{Kind: EvReleaseStart}, ClientRecord{Kind: EvReleaseStart, Resource: "lock"}},
	} {
		tc.want.Mono = 1500 * time.Millisecond
		got, err := DecodeClientEvent(write(&tc.ev))
		require.NoError(t, err, tc.ev.Kind.String())
		assert.Equal(t, tc.want, got)
	}

	s := newSimT(t)
	var rec sim.Record
	s.SetSink(keep{&rec})
	s.Aside("client1", RecPauseMerged, sim.Dur("mono", time.Second), sim.Dur("for", 2*time.Second), sim.Dur("until", 3*time.Second))
	p, err := DecodePauseMerged(&rec)
	require.NoError(t, err)
	assert.Equal(t, PauseMerged{Mono: time.Second, For: 2 * time.Second, Until: 3 * time.Second}, p)
}

// TestDecodersRefuseBrokenRecords: the storage's and a client's decoders refuse a record
// with any one of its fields missing, or of the other kind, with an error naming it: never
// a zero. (The Redis servers' decoders have the same test in package redis.)
func TestDecodersRefuseBrokenRecords(t *testing.T) {
	s := newSimT(t)
	var rec sim.Record
	s.SetSink(keep{&rec})
	nm := newClientNames("client1", []string{"lock"})
	decoders := map[string]func(*sim.Record) error{
		RecStorageWrite: func(r *sim.Record) error { _, err := DecodeStorageWrite(r); return err },
		"acquired":      func(r *sim.Record) error { _, err := DecodeClientEvent(r); return err },
	}
	writers := map[string]func(){
		RecStorageWrite: func() {
			emitWriteTexter(s.Texter(), &TraceName{sim.NewName("storage"), sim.NewName(RecStorageWrite)}, "lock", 3, true, false)
		},
		"acquired": func() {
			emitEventTexter(s.Texter(), nm, time.Second, nm.res[0], &ClientEvent{Kind: EvAcquired, Lock: &lock.Event{Attempt: 1}})
		},
	}
	for _, kind := range []string{RecStorageWrite, "acquired"} {
		writers[kind]()
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

// keep is a sink that copies the last record.
type keep struct{ r *sim.Record }

func (k keep) Record(r *sim.Record) {
	*k.r = *r
	k.r.Fields = append([]sim.Field(nil), r.Fields...)
}

func newSimT(t *testing.T) *sim.Sim {
	s, err := sim.New(sim.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
