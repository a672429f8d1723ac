package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
)

// The folded records (no sink attached) must hash exactly as the traced ones.
func TestFoldsHashAsTheirFields(t *testing.T) {
	set := resp.Set("lock", "7f3a9c", resp.CondNX, 10*time.Second)
	msgs := []model.Message{
		model.Request(3, set.Payload()),
		model.Request(4, pay(resp.EvalSHA(resp.ScriptRelease, "lock", "7f3a9c", 0))),
		{Kind: model.MsgReply, ReqID: 5, Body: resp.OK.Payload()},
		{Kind: model.MsgReply, ReqID: 6, Body: resp.IntReply(1).Payload()},
		{Kind: model.MsgReply, ReqID: 7, Body: errReply("NOSCRIPT No matching script. Please use EVAL.").Payload()},
		model.StorageWrite(8, "lock", "client1", 34, true),
		model.StorageWrite(9, "lock", "client2", 0, false),
	}
	for _, m := range msgs {
		traced, folded := newSimT(t), newSimT(t)
		traced.Trace("net", "deliver", model.Describe(&m, resp.Protocol{}))
		i, i2, s1, s2 := model.MessageParts(&m)
		folded.Hasher().Begin(sim.NewName("net"), sim.NewName("deliver")).Custom("msg", i, i2, s1, s2, FormatMessage).End()
		assert.Equal(t, traced.TraceHash(), folded.TraceHash(), m.Format(resp.Protocol{}))
	}
	for _, r := range []resp.Reply{resp.OK, resp.Nil, resp.IntReply(1), resp.IntReply(1 << 40),
		errReply("ERR syntax error"), bulk("v")} {
		traced, folded := newSimT(t), newSimT(t)
		var rec sim.Record
		traced.SetSink(keep{&rec})
		emitExecTexter(traced.Texter(), traceNameOf("redis1", RecExec), &set, r)
		emitExecHasher(folded.Hasher(), traceNameOf("redis1", RecExec), &set, r)
		assert.Equal(t, traced.TraceHash(), folded.TraceHash(), r.String())
		x, err := DecodeExec(&rec)
		assert.NoError(t, err)
		assert.True(t, x.HasReply)
		assert.Equal(t, [2]string{set.String(), r.String()}, [2]string{x.Cmd.String(), x.Reply.String()},
			"DecodeExec gives back the command and the reply")
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
