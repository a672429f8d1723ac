package zk

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

func req(p lock.Payload) string   { return string(Protocol{}.AppendRequest(nil, &p)) }
func reply(p lock.Payload) string { return string(Protocol{}.AppendReply(nil, &p)) }
func push(p lock.Payload) string  { return string(Protocol{}.AppendPush(nil, &p)) }

// TestRequestsReadAsZkCli: each request a lock recipe sends renders in zkCli's words.
func TestRequestsReadAsZkCli(t *testing.T) {
	for p, want := range map[*lock.Payload]string{
		ptr(Create("/lock/_c_9f-lock-", "", FlagEphemeral|FlagSequential)): "create -e -s /lock/_c_9f-lock- ",
		ptr(Create("/lock", "10.0.0.1", 0)):                                `create /lock "10.0.0.1"`,
		ptr(Read(OpGetChildren, "/lock", false)):                           "getChildren /lock",
		ptr(Read(OpExists, "/lock/x", true)):                               "exists /lock/x watch",
		ptr(Read(OpGetData, "/lock/x", true)):                              "get /lock/x watch",
		ptr(Delete("/lock/x", AnyVersion)):                                 "delete /lock/x",
		ptr(Delete("/lock/x", 3)):                                          "delete /lock/x -v 3",
		ptr(Ping()):                                                        "ping",
		ptr(Sync("/lock")):                                                 "sync /lock",
		ptr(Close()):                                                       "close",
		ptr(Connect(0x100000000000001, 60*time.Second, 0x300000004)):       "connect session=0x100000000000001 timeout=1m0s lastZxid=0x300000004",
		ptr(SetWatch(OpGetData, "/lock/x", 0x10)):                          "setWatches get /lock/x relativeZxid=0x10",
	} {
		assert.Equal(t, want, req(*p))
	}
}

func ptr(p lock.Payload) *lock.Payload { return &p }

// TestRepliesAndPushesReadAsZkCli: replies, errors by their codes' names, and watch and
// state events.
func TestRepliesAndPushesReadAsZkCli(t *testing.T) {
	created := lock.Payload{Word: uint64(OpCreate), Str: "/lock/x0000000003", Int: 0x100000005}
	assert.Equal(t, "Created /lock/x0000000003 czxid=0x100000005", reply(created))
	children := lock.Payload{Word: uint64(OpGetChildren), Str2: Children([]string{"a", "b"}), Int: 7}
	assert.Equal(t, "[a, b] cversion=7", reply(children))
	assert.Equal(t, []string{"a", "b"}, ChildrenOf(nil, children.Str2))
	assert.Equal(t, "[] cversion=0", reply(lock.Payload{Word: uint64(OpGetChildren)}))
	st := Msg{Op: OpExists, Int: 0x100000005, Version: 2, Flags: FlagEphemeral | FlagMine}
	assert.Equal(t, "czxid=0x100000005 version=2 ephemeral mine", reply(st.Payload()))
	for code, name := range map[Code]string{ConnectionLoss: "CONNECTIONLOSS", NoNode: "NONODE", NodeExists: "NODEEXISTS",
		SessionExpired: "SESSIONEXPIRED", NotEmpty: "NOTEMPTY", BadVersion: "BADVERSION"} {
		assert.Equal(t, name, reply(Err(OpCreate, code)))
	}
	assert.Equal(t, "WatchedEvent NodeDeleted /lock/x", push(Event(EventNodeDeleted, StateSyncConnected, "/lock/x")))
	assert.Equal(t, "WatchedEvent state:Disconnected", push(Event(EventNone, StateDisconnected, "")))
	assert.Equal(t, "EOF", push(lock.Payload{Word: uint64(OpEOF)}))
	assert.Equal(t, "PROPOSAL 0x200000001", req(lock.Payload{Word: uint64(OpProposal), Int: Zxid(2, 1)}))
}

// TestPackingRoundTrips: every field a payload packs comes back, and the ones a trace
// shows are in Word's low 28 bits.
func TestPackingRoundTrips(t *testing.T) {
	for _, m := range []Msg{
		{Op: OpCreate, Flags: FlagEphemeral | FlagSequential, Version: AnyVersion, Str: "/a", Str2: "d"},
		{Op: OpDelete, Version: 12, Str: "/a"},
		{Op: OpDelete, Version: AnyVersion, Str: "/a"},
		{Op: OpExists, Code: NoNode, Flags: FlagWatch, Version: AnyVersion, Str: "/a"},
		{Op: OpExists, Flags: FlagMine | FlagEphemeral, Version: MaxSmall, Int: 99},
		{Op: OpConnect, Code: SessionExpired, Timeout: 40 * time.Second, Int: 1 << 56},
		{Op: OpWatch, Event: EventNodeChildrenChanged, State: StateSyncConnected, Str: "/lock"},
		{Op: OpWatch, Event: EventNone, State: StateExpired},
	} {
		p := m.Payload()
		assert.Zero(t, p.Word>>28, "%+v", m)
		assert.Equal(t, m, Unpack(&p))
	}
	big := Msg{Op: OpConnect, Timeout: time.Hour}
	p := big.Payload()
	assert.Equal(t, MaxTimeout, Unpack(&p).Timeout, "a timeout past the field saturates")
	assert.Equal(t, int64(0x300000004), LastZxidOf(ptr(Connect(1, time.Second, 0x300000004))))
	assert.Equal(t, int64(12), SequenceOf("_c_x-lock-0000000012"))
	assert.Equal(t, int64(-1), SequenceOf("lock"))
	assert.Equal(t, uint32(3), Epoch(Zxid(3, 9)))
}
