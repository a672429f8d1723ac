package network

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// TestRecordsDecode runs the network through each record its decoders read (a duplicate,
// a loss, deliveries, a hold and the unclog that releases it into a partition, the three partitions) and
// decodes each into what happened.
func TestRecordsDecode(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(2 * ms))}, 3)
	w.n.SetMessage(intParts, formatInt)
	require.NoError(t, w.n.SetLink(0, 1, Link{Latency: Latency{Fast: dist.Constant(2 * ms)}, Dup: 1}))
	require.NoError(t, w.n.SetLink(0, 2, Link{Loss: 1}))
	c := &collect{}
	w.s.SetSink(c)
	w.n.Send(0, 1, 7)
	w.n.Send(0, 2, 8)
	w.until(t, 10*ms)
	_, err := w.n.Clog(1, 0, 5*ms)
	require.NoError(t, err)
	w.n.Send(1, 0, 9)
	_, err = w.n.Apply(IsolateFault(2, 0))
	require.NoError(t, err)
	_, err = w.n.Apply(BlockFault(0, 1, 3*ms))
	require.NoError(t, err)
	_, err = w.n.Apply(SplitFault(0, []Endpoint{0}))
	require.NoError(t, err)
	require.NoError(t, w.s.Run())

	var msgs []MsgRecord
	var vals []int64
	var links []LinkRecord
	var parts []PartitionRecord
	for i := range c.recs {
		r := &c.recs[i]
		switch r.Kind {
		case RecDeliver, RecDrop, RecDup, RecHold:
			x, err := DecodeMsgRecord(r)
			require.NoError(t, err, r.String())
			require.NotNil(t, x.Msg)
			vals = append(vals, x.Msg.Int) // the message, as intParts packed it
			x.Msg = nil
			msgs = append(msgs, x)
		case RecClog, RecUnclog:
			x, err := DecodeLink(r)
			require.NoError(t, err, r.String())
			links = append(links, x)
		case RecPartition:
			x, err := DecodePartition(r)
			require.NoError(t, err, r.String())
			parts = append(parts, x)
		}
	}
	assert.Equal(t, []MsgRecord{
		{Kind: RecDup, From: "a", To: "b", ID: 1},
		{Kind: RecDrop, From: "a", To: "c", ID: 2, Reason: "loss"},
		{Kind: RecDeliver, From: "a", To: "b", ID: 1, Latency: 2 * ms},
		{Kind: RecDeliver, From: "a", To: "b", ID: 1, Latency: 2 * ms},
		{Kind: RecHold, From: "b", To: "a", ID: 3},
		{Kind: RecDrop, From: "b", To: "a", ID: 3, Reason: "partition"}, // released into the split
	}, msgs)
	assert.Equal(t, []int64{7, 8, 7, 7, 9, 9}, vals)
	assert.Equal(t, []LinkRecord{
		{Kind: RecClog, Fault: 1, From: "b", To: "a", For: 5 * ms},
		{Kind: RecUnclog, From: "b", To: "a", Held: 1},
	}, links)
	assert.Equal(t, []PartitionRecord{
		{Fault: 2, Kind: FaultIsolate, Node: "c"},
		{Fault: 3, Kind: FaultBlock, From: "a", To: "b", For: 3 * ms},
		{Fault: 4, Kind: FaultSplit, Groups: "[a] [rest]"},
	}, parts)
}

// TestDecodersRefuseOtherRecords: a decoder handed a record of another kind, or one
// missing a field, says so instead of reading zeros.
func TestDecodersRefuseOtherRecords(t *testing.T) {
	heal := &sim.Record{Actor: Actor, Kind: RecHeal, Fields: []sim.Field{sim.Int("fault", 1)}}
	_, err := DecodeMsgRecord(heal)
	assert.Error(t, err)
	_, err = DecodeLink(heal)
	assert.Error(t, err)
	_, err = DecodePartition(heal)
	assert.Error(t, err)
	deliver := &sim.Record{Actor: Actor, Kind: RecDeliver, Fields: []sim.Field{sim.Str("from", "a"), sim.Str("to", "b"), sim.Int("id", 1)}}
	_, err = DecodeMsgRecord(deliver)
	assert.ErrorContains(t, err, `no field "latency"`)
	partition := &sim.Record{Actor: Actor, Kind: RecPartition, Fields: []sim.Field{sim.Int("fault", 1), sim.Str("kind", "clog")}}
	_, err = DecodePartition(partition)
	assert.ErrorContains(t, err, `"clog" is no partition`)
}
