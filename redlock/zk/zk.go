// Package zk is ZooKeeper's client protocol as values packed into lock.Payload: what a lock
// recipe (Curator's InterProcessMutex) sends through its session, what a ZooKeeper server
// (the simulated ensemble in model/zookeeper) answers and pushes, and the quorum messages
// the ensemble's servers send one another, each rendered the way zkCli and the servers'
// logs print them. It sits beside redlock/resp, below every algorithm and the model, so
// that the ensemble serves any recipe and no recipe's package is welded into the network's
// messages.
//
// # Packing
//
// A payload's Word holds, from bit 0 (only bits 0–27 reach a trace record, so everything a
// trace must show lives there):
//
//	bits  0–4   the Op
//	bits  5–9   a reply's Code (0: OK), or a push's EventType
//	bits 10–13  Flags: a request's create mode and watch, a reply's stat flags, a push's
//	            KeeperState
//	bits 14–27  Small: a version (delete's expected one, a stat's), 14 bits, saturating
//	            at MaxSmall; AnyVersion is -1
//
// except that OpConnect's request and reply hold the session timeout in milliseconds in
// bits 10–27 (saturating at MaxTimeout). An error reply is its op and its Code alone.
// Int, Str and Str2 hold per op:
//
//	request                          Int               Str             Str2
//	connect                          session id (0: new) lastZxidSeen "0x…" -
//	ping, close                      -                 -               -
//	create                           -                 path            data
//	delete                           -                 path            -
//	exists, getData, getChildren     -                 path            -
//	sync                             -                 path            -
//	setWatches (Code: the watch's op) relative zxid     path            -
//
//	reply                            Int               Str             Str2
//	connect                          session id        -               -
//	create                           czxid             created path    -
//	delete                           the txn's zxid    -               -
//	exists, getData                  czxid             -               data (getData)
//	getChildren                      parent's cversion -               children joined by "/"
//	sync                             server's last zxid path           -
//
//	push                             Int               Str
//	watch event                      -                 path
//	state event (EventNone)          the session id    ""
//	eof                              -                 -
//
// A stat reply carries the stat fields a lock recipe reads: czxid (Int), version (Small),
// cversion (getChildren's Int), whether the node is ephemeral (FlagEphemeral) and whether
// its ephemeralOwner is the asking session (FlagMine); mzxid equals czxid because the
// ensemble has no setData. A children list is joined with "/", the one character a node
// name cannot hold. Nothing else is allocated on a request's path (a connect formats
// its last zxid, once per connection).
//
// A request a follower forwards to the leader keeps its shape with the client's session
// id in Int. The quorum messages (OpProposal … OpRevalidate) travel between servers in
// the same shape, Int a zxid (NEWLEADER's is its epoch's zxid 0) or a session id, and a
// follower's PING reply lists the sessions it touched in Str2, eight bytes each; see
// model/zookeeper.
package zk

import (
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// Op is a payload's operation: a client request (or its reply, which names the op it
// answers), a push, or a message between the ensemble's servers.
type Op uint8

// The client operations (their numbers are the package's own, not ZooKeeper's OpCode).
const (
	OpConnect     Op = iota + 1 // ConnectRequest: a new session, or a reconnect with its id
	OpPing                      // a client's heartbeat on an idle connection
	OpCreate                    // create (Flags: the mode)
	OpDelete                    // delete (Small: the expected version, AnyVersion for -1)
	OpExists                    // exists (FlagWatch: leave a watch, even on a missing node)
	OpGetData                   // getData (FlagWatch: a data watch; none on a missing node)
	OpGetChildren               // getChildren (FlagWatch: a child watch)
	OpSync                      // sync: catch the server up with the leader
	OpClose                     // closeSession
	OpSetWatches                // re-register a watch after a reconnect (Flags: its kind)

	// OpWatch is a push: a WatchedEvent (Code: its EventType, Flags: its KeeperState).
	OpWatch
	// OpEOF is a push: the server closed the connection (its process ended or it stopped
	// serving), what a client's socket reports as end of file.
	OpEOF

	// The quorum messages between servers.
	OpProposal   // leader → follower: log txn Int (its content travels by reference)
	OpAck        // follower → leader: txn Int is in my log (after fsync); or NEWLEADER Int acked
	OpCommit     // leader → follower: txn Int and all before it are committed
	OpLeaderPing // leader → follower every half tick; the reply (Str2) lists touched sessions
	OpNewLeader  // leader → follower: follow me in epoch Int>>32 and take my history
	OpUpToDate   // leader → follower: serve clients
	OpFollowInfo // looking server → a leader it found: let me follow you
	OpSyncDone   // leader → follower: a forwarded sync's point is zxid Int
	OpRevalidate // follower → leader: is session Int alive? the reply's Code says
	opCount
)

var opNames = [...]string{OpConnect: "connect", OpPing: "ping", OpCreate: "create", OpDelete: "delete",
	OpExists: "exists", OpGetData: "get", OpGetChildren: "getChildren", OpSync: "sync", OpClose: "close",
	OpSetWatches: "setWatches", OpWatch: "WatchedEvent", OpEOF: "EOF",
	OpProposal: "PROPOSAL", OpAck: "ACK", OpCommit: "COMMIT", OpLeaderPing: "PING", OpNewLeader: "NEWLEADER",
	OpUpToDate: "UPTODATE", OpFollowInfo: "FOLLOWERINFO", OpSyncDone: "SYNC", OpRevalidate: "REVALIDATE"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// IsWrite reports whether o is a client request that changes the tree (and so goes
// through the leader as a transaction).
func (o Op) IsWrite() bool { return o == OpCreate || o == OpDelete || o == OpClose }

// Code is a reply's result: ZooKeeper's KeeperException codes by name.
type Code uint8

// The codes a lock recipe meets.
const (
	OK Code = iota
	ConnectionLoss
	NoNode
	NodeExists
	NotEmpty
	BadVersion
	SessionExpired
	NoChildrenForEphemerals
	BadArguments
	SessionMoved
)

var codeNames = [...]string{OK: "OK", ConnectionLoss: "CONNECTIONLOSS", NoNode: "NONODE", NodeExists: "NODEEXISTS",
	NotEmpty: "NOTEMPTY", BadVersion: "BADVERSION", SessionExpired: "SESSIONEXPIRED",
	NoChildrenForEphemerals: "NOCHILDRENFOREPHEMERALS", BadArguments: "BADARGUMENTS", SessionMoved: "SESSIONMOVED"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "code(" + strconv.Itoa(int(c)) + ")"
}

// Flags are a request's create mode and watch, or a reply's stat flags (the same bits,
// read by the op).
type Flags uint8

// The flags.
const (
	FlagEphemeral  Flags = 1 << iota // create: an ephemeral node; a stat: the node is one
	FlagSequential                   // create: append the parent's cversion as %010d
	FlagWatch                        // exists, getData, getChildren: leave a one-shot watch
	FlagMine                         // a stat: the node's ephemeralOwner is the asking session
)

// EventType is a WatchedEvent's type.
type EventType uint8

// The event types, as ZooKeeper's Watcher.Event.EventType names them.
const (
	EventNone EventType = iota
	EventNodeCreated
	EventNodeDeleted
	EventNodeDataChanged
	EventNodeChildrenChanged
)

var eventNames = [...]string{"None", "NodeCreated", "NodeDeleted", "NodeDataChanged", "NodeChildrenChanged"}

func (e EventType) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return "event(" + strconv.Itoa(int(e)) + ")"
}

// KeeperState is a WatchedEvent's connection state.
type KeeperState uint8

// The states a session's client reports.
const (
	StateSyncConnected KeeperState = iota
	StateDisconnected
	StateExpired
	StateClosed
)

var stateNames = [...]string{"SyncConnected", "Disconnected", "Expired", "Closed"}

func (s KeeperState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// Field positions in Word.
const (
	codeShift  = 5
	flagShift  = 10
	smallShift = 14
	// MaxSmall is the largest version Small holds; larger ones saturate.
	MaxSmall = 1<<14 - 2
	// AnyVersion is delete's version -1 ("whatever the version").
	AnyVersion = -1
	smallAny   = 1<<14 - 1
	// MaxTimeout is the largest session timeout a connect carries; longer ones saturate.
	MaxTimeout = (1<<18 - 1) * time.Millisecond
)

// Msg is a payload unpacked: every field any op uses.
type Msg struct {
	Op      Op
	Code    Code      // a reply's
	Event   EventType // a watch push's
	State   KeeperState
	Flags   Flags
	Version int32 // Small: -1 for AnyVersion
	Timeout time.Duration
	Int     int64
	Str     string
	Str2    string
}

// Payload packs m.
func (m *Msg) Payload() lock.Payload {
	w := uint64(m.Op)
	switch m.Op {
	case OpWatch:
		w |= uint64(m.Event)<<codeShift | uint64(m.State)<<flagShift
	default:
		w |= uint64(m.Code) << codeShift
	}
	if m.Op == OpConnect {
		ms := min(m.Timeout, MaxTimeout) / time.Millisecond
		w |= uint64(max(ms, 0)) << flagShift
	} else if m.Op != OpWatch {
		v := uint64(smallAny)
		if m.Version >= 0 {
			v = uint64(min(m.Version, MaxSmall))
		}
		w |= uint64(m.Flags&0xf)<<flagShift | v<<smallShift
	}
	return lock.Payload{Word: w, Int: m.Int, Str: m.Str, Str2: m.Str2}
}

// Unpack returns what p carries.
func Unpack(p *lock.Payload) Msg {
	w := p.Word
	m := Msg{Op: OpOf(p), Int: p.Int, Str: p.Str, Str2: p.Str2}
	switch m.Op {
	case OpWatch:
		m.Event, m.State = EventType(w>>codeShift&0x1f), KeeperState(w>>flagShift&0xf)
		return m
	case OpConnect:
		m.Code, m.Timeout = Code(w>>codeShift&0x1f), time.Duration(w>>flagShift&(1<<18-1))*time.Millisecond
		return m
	}
	m.Code, m.Flags = Code(w>>codeShift&0x1f), Flags(w>>flagShift&0xf)
	m.Version = int32(w >> smallShift & smallAny)
	if m.Version == smallAny {
		m.Version = AnyVersion
	}
	return m
}

// OpOf returns p's op without unpacking the rest.
func OpOf(p *lock.Payload) Op { return Op(p.Word & 0x1f) }

// CodeOf returns a reply's code without unpacking the rest.
func CodeOf(p *lock.Payload) Code { return Code(p.Word >> codeShift & 0x1f) }

// FlagsOf returns a request's or a stat reply's flags without unpacking the rest.
func FlagsOf(p *lock.Payload) Flags { return Flags(p.Word >> flagShift & 0xf) }

// Requests, as a recipe builds them.

// Connect asks for a new session (session 0) or to resume one, with timeout asked for
// and the last zxid the client has seen (so a server behind it refuses it).
func Connect(session int64, timeout time.Duration, lastZxid int64) lock.Payload {
	m := Msg{Op: OpConnect, Int: session, Timeout: timeout}
	if lastZxid != 0 {
		m.Str = "0x" + strconv.FormatInt(lastZxid, 16)
	}
	return m.Payload()
}

// LastZxidOf returns the lastZxidSeen of a connect request.
func LastZxidOf(p *lock.Payload) int64 {
	if len(p.Str) < 2 {
		return 0
	}
	v, _ := strconv.ParseInt(p.Str[2:], 16, 64)
	return v
}

// Ping is a client's heartbeat.
func Ping() lock.Payload { return lock.Payload{Word: uint64(OpPing)} }

// Create creates path with data in mode (FlagEphemeral, FlagSequential).
func Create(path, data string, mode Flags) lock.Payload {
	m := Msg{Op: OpCreate, Str: path, Str2: data, Flags: mode & (FlagEphemeral | FlagSequential)}
	return m.Payload()
}

// Delete deletes path if its version is version (AnyVersion: whatever it is).
func Delete(path string, version int32) lock.Payload {
	m := Msg{Op: OpDelete, Str: path, Version: version}
	return m.Payload()
}

// Read is exists, getData or getChildren of path, with a watch when watch is set.
func Read(op Op, path string, watch bool) lock.Payload {
	m := Msg{Op: op, Str: path}
	if watch {
		m.Flags = FlagWatch
	}
	return m.Payload()
}

// Sync catches the connected server up with the leader before the session's next read.
func Sync(path string) lock.Payload { return lock.Payload{Word: uint64(OpSync), Str: path} }

// Close closes the session: its ephemeral nodes go in one transaction.
func Close() lock.Payload { return lock.Payload{Word: uint64(OpClose)} }

// SetWatch re-registers, after a reconnect, a watch of kind (OpExists, OpGetData or
// OpGetChildren) on path, for changes after zxid relZxid.
func SetWatch(kind Op, path string, relZxid int64) lock.Payload {
	m := Msg{Op: OpSetWatches, Str: path, Int: relZxid, Code: Code(kind)}
	return m.Payload()
}

// Replies and pushes, as a server builds them.

// Err is a reply to op failing with code.
func Err(op Op, code Code) lock.Payload {
	return lock.Payload{Word: uint64(op) | uint64(code)<<codeShift}
}

// Event is a watch push of typ on path (state SyncConnected), or, with typ EventNone and
// path "", a change of the connection's state.
func Event(typ EventType, state KeeperState, path string) lock.Payload {
	m := Msg{Op: OpWatch, Event: typ, State: state, Str: path}
	return m.Payload()
}

// Children joins child names as a getChildren reply carries them.
func Children(names []string) string { return strings.Join(names, "/") }

// ChildrenOf appends the child names a getChildren reply's Str2 joins to dst.
func ChildrenOf(dst []string, joined string) []string {
	for joined != "" {
		i := strings.IndexByte(joined, '/')
		if i < 0 {
			return append(dst, joined)
		}
		dst = append(dst, joined[:i])
		joined = joined[i+1:]
	}
	return dst
}

// Zxid returns the zxid of counter in epoch.
func Zxid(epoch uint32, counter uint32) int64 { return int64(epoch)<<32 | int64(counter) }

// Epoch returns zxid's epoch.
func Epoch(zxid int64) uint32 { return uint32(zxid >> 32) }

// SequenceOf returns the sequence number a sequential node's name ends with (its last ten
// digits), or -1 when it has none.
func SequenceOf(name string) int64 {
	if len(name) < 10 {
		return -1
	}
	v, err := strconv.ParseInt(name[len(name)-10:], 10, 64)
	if err != nil {
		return -1
	}
	return v
}
