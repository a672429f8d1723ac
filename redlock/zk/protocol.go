package zk

import (
	"strconv"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// Protocol is ZooKeeper's protocol as traces show it (a lock.Protocol): requests in zkCli
// syntax ("create -e -s /lock/_c_9f…-lock- ", "getChildren /lock", "exists /lock/x watch",
// "delete /lock/x"), replies as zkCli prints them ("Created /lock/x0000000003",
// "[a, b]", "NONODE"), pushes as "WatchedEvent NodeDeleted /lock/x", and the servers'
// quorum messages by their packet names ("PROPOSAL 0x100000003").
type Protocol struct{}

// Name returns "zookeeper".
func (Protocol) Name() string { return "zookeeper" }

// AppendRequest appends the request p carries, in zkCli syntax.
func (Protocol) AppendRequest(dst []byte, p *lock.Payload) []byte {
	m := Unpack(p)
	switch m.Op {
	case OpConnect:
		dst = append(dst, "connect session="...)
		dst = appendHex(dst, m.Int)
		dst = append(dst, " timeout="...)
		dst = append(dst, m.Timeout.String()...)
		if m.Str != "" {
			dst = append(append(dst, " lastZxid="...), m.Str...)
		}
		return dst
	case OpCreate:
		dst = append(dst, "create "...)
		if m.Flags&FlagEphemeral != 0 {
			dst = append(dst, "-e "...)
		}
		if m.Flags&FlagSequential != 0 {
			dst = append(dst, "-s "...)
		}
		dst = append(dst, m.Str...)
		dst = append(dst, ' ')
		if m.Str2 != "" {
			dst = strconv.AppendQuote(dst, m.Str2)
		}
		return dst
	case OpDelete:
		dst = append(append(dst, "delete "...), m.Str...)
		if m.Version != AnyVersion {
			dst = append(dst, " -v "...)
			dst = strconv.AppendInt(dst, int64(m.Version), 10)
		}
		return dst
	case OpExists, OpGetData, OpGetChildren, OpSync:
		dst = append(append(append(dst, m.Op.String()...), ' '), m.Str...)
		if m.Flags&FlagWatch != 0 {
			dst = append(dst, " watch"...)
		}
		return dst
	case OpSetWatches:
		dst = append(append(dst, "setWatches "...), Op(m.Code).String()...)
		dst = append(append(dst, ' '), m.Str...)
		dst = append(dst, " relativeZxid="...)
		return appendHex(dst, m.Int)
	case OpPing, OpClose, OpUpToDate, OpFollowInfo:
		return append(dst, m.Op.String()...)
	case OpLeaderPing:
		dst = append(dst, "PING"...)
		if n := len(m.Str2) / 8; n > 0 {
			dst = append(dst, " touched="...)
			dst = strconv.AppendInt(dst, int64(n), 10)
		}
		return dst
	case OpRevalidate:
		return appendHex(append(dst, "REVALIDATE session="...), m.Int)
	case OpProposal, OpAck, OpCommit, OpNewLeader, OpSyncDone:
		return appendHex(append(append(dst, m.Op.String()...), ' '), m.Int)
	}
	return append(dst, m.Op.String()...)
}

// AppendReply appends the reply p carries, as zkCli prints it; an error is its code's
// name (CONNECTIONLOSS, NONODE, NODEEXISTS, SESSIONEXPIRED, …).
func (pr Protocol) AppendReply(dst []byte, p *lock.Payload) []byte {
	m := Unpack(p)
	if m.Code != OK && m.Op != OpSetWatches {
		return append(dst, m.Code.String()...)
	}
	switch m.Op {
	case OpConnect:
		dst = appendHex(append(dst, "session="...), m.Int)
		return append(append(dst, " timeout="...), m.Timeout.String()...)
	case OpCreate:
		dst = append(append(dst, "Created "...), m.Str...)
		return appendHex(append(dst, " czxid="...), m.Int)
	case OpExists, OpGetData:
		if m.Op == OpGetData {
			dst = append(strconv.AppendQuote(dst, m.Str2), ' ')
		}
		dst = appendHex(append(dst, "czxid="...), m.Int)
		dst = strconv.AppendInt(append(dst, " version="...), int64(m.Version), 10)
		if m.Flags&FlagEphemeral != 0 {
			dst = append(dst, " ephemeral"...)
		}
		if m.Flags&FlagMine != 0 {
			dst = append(dst, " mine"...)
		}
		return dst
	case OpGetChildren:
		dst = append(dst, '[')
		s := m.Str2
		for s != "" {
			i := 0
			for i < len(s) && s[i] != '/' {
				i++
			}
			dst = append(dst, s[:i]...)
			if i == len(s) {
				break
			}
			dst = append(dst, ", "...)
			s = s[i+1:]
		}
		dst = append(dst, ']')
		return strconv.AppendInt(append(dst, " cversion="...), m.Int, 10)
	case OpSync:
		return appendHex(append(append(append(dst, "Sync is OK "...), m.Str...), " zxid="...), m.Int)
	case OpDelete:
		return appendHex(append(dst, "OK zxid="...), m.Int)
	case OpFollowInfo, OpLeaderPing, OpAck, OpNewLeader:
		return pr.AppendRequest(dst, p) // a learner's answers read as the packets they are
	case OpRevalidate:
		return append(dst, "REVALIDATE OK"...)
	}
	return append(dst, "OK"...)
}

// AppendPush appends the push p carries: "WatchedEvent NodeDeleted /lock/x",
// "WatchedEvent state:Disconnected", "EOF".
func (Protocol) AppendPush(dst []byte, p *lock.Payload) []byte {
	m := Unpack(p)
	if m.Op != OpWatch {
		return append(dst, m.Op.String()...)
	}
	dst = append(dst, "WatchedEvent "...)
	if m.Event == EventNone {
		return append(append(dst, "state:"...), m.State.String()...)
	}
	return append(append(append(dst, m.Event.String()...), ' '), m.Str...)
}

func appendHex(dst []byte, v int64) []byte {
	return strconv.AppendUint(append(dst, "0x"...), uint64(v), 16)
}
