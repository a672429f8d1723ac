package zookeeper

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redlock-sim/redlock-sim/redlock/zk"
)

// Tree is one server's copy of the data: ZooKeeper's DataTree (the znodes, their stats,
// the ephemeral nodes of each session) and the sessions its transactions created. Every
// server applies the committed transactions in zxid order to its own Tree, so all of them
// agree on what they have applied (and a follower's copy may lag: a read there is stale).
type Tree struct {
	nodes      map[string]*Znode
	ephemerals map[int64][]string // session → its ephemeral nodes, in creation order
	sessions   map[int64]int64    // session → negotiated timeout in ms
	lastZxid   int64              // the last transaction applied (lastProcessedZxid)
}

// Znode is a node and the stat fields a lock recipe reads.
type Znode struct {
	Data           string
	Czxid, Mzxid   int64 // mzxid equals czxid: the ensemble has no setData
	Pzxid          int64 // the last transaction that created or deleted a child
	Version        int32
	Cversion       int32 // children created or deleted so far
	EphemeralOwner int64
	children       []string // kept sorted
}

func newTree() *Tree {
	t := &Tree{nodes: map[string]*Znode{}, ephemerals: map[int64][]string{}, sessions: map[int64]int64{}}
	t.nodes["/"] = &Znode{}
	return t
}

// clone returns a deep copy: what a SNAP sync hands a follower.
func (t *Tree) clone() *Tree {
	c := &Tree{nodes: make(map[string]*Znode, len(t.nodes)), ephemerals: make(map[int64][]string, len(t.ephemerals)),
		sessions: make(map[int64]int64, len(t.sessions)), lastZxid: t.lastZxid}
	for p, n := range t.nodes {
		cp := *n
		cp.children = slices.Clone(n.children)
		c.nodes[p] = &cp
	}
	for s, e := range t.ephemerals {
		c.ephemerals[s] = slices.Clone(e)
	}
	for s, v := range t.sessions {
		c.sessions[s] = v
	}
	return c
}

// Get returns the node at path.
func (t *Tree) Get(path string) (Znode, bool) {
	n, ok := t.nodes[path]
	if !ok {
		return Znode{}, false
	}
	return *n, true
}

// Children returns path's children, sorted.
func (t *Tree) Children(path string) []string {
	if n, ok := t.nodes[path]; ok {
		return slices.Clone(n.children)
	}
	return nil
}

// LastZxid returns the zxid of the last transaction applied.
func (t *Tree) LastZxid() int64 { return t.lastZxid }

// Len returns the number of znodes, the root included.
func (t *Tree) Len() int { return len(t.nodes) }

// Sessions returns the live sessions' ids, sorted.
func (t *Tree) Sessions() []int64 {
	out := make([]int64, 0, len(t.sessions))
	for s := range t.sessions {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Ephemerals returns session's ephemeral nodes, in creation order.
func (t *Tree) Ephemerals(session int64) []string { return slices.Clone(t.ephemerals[session]) }

func parentOf(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

func nameOf(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

// change is one effect of a transaction a server's watches may fire on.
type change struct {
	typ  zk.EventType
	path string
}

// apply applies txn x (zxid z) and returns its result code, the path it created, and
// appends to changes what watches fire on. Every server computes the same result from the
// same tree: the sequential name from the parent's cversion (%010d) and the checks are
// decided in zxid order, which is what ZooKeeper's leader decides ahead of the commit
// from its outstanding changes.
func (t *Tree) apply(x *txn, changes []change) (zk.Code, string, []change) {
	t.lastZxid = x.zxid
	switch x.op {
	case zk.OpConnect:
		t.sessions[x.session] = x.timeoutMs
		return zk.OK, "", changes
	case zk.OpClose:
		return t.killSession(x, changes)
	case zk.OpCreate:
		return t.create(x, changes)
	case zk.OpDelete:
		return t.delete(x.path, x.version, x.zxid, changes)
	}
	return zk.BadArguments, "", changes
}

func (t *Tree) create(x *txn, changes []change) (zk.Code, string, []change) {
	if _, ok := t.sessions[x.session]; !ok && x.flags&zk.FlagEphemeral != 0 {
		return zk.SessionExpired, "", changes
	}
	if x.path == "" || x.path[0] != '/' || x.path == "/" && x.flags&zk.FlagSequential == 0 {
		return zk.BadArguments, "", changes
	}
	ppath := parentOf(x.path)
	if x.flags&zk.FlagSequential == 0 && strings.HasSuffix(x.path, "/") {
		return zk.BadArguments, "", changes
	}
	parent, ok := t.nodes[ppath]
	if !ok {
		return zk.NoNode, "", changes
	}
	if parent.EphemeralOwner != 0 {
		return zk.NoChildrenForEphemerals, "", changes
	}
	path := x.path
	if x.flags&zk.FlagSequential != 0 {
		path += seqSuffix(parent.Cversion)
	}
	if _, ok := t.nodes[path]; ok {
		return zk.NodeExists, "", changes
	}
	n := &Znode{Data: x.data, Czxid: x.zxid, Mzxid: x.zxid, Pzxid: x.zxid}
	if x.flags&zk.FlagEphemeral != 0 {
		n.EphemeralOwner = x.session
		t.ephemerals[x.session] = append(t.ephemerals[x.session], path)
	}
	t.nodes[path] = n
	name := nameOf(path)
	i := sort.SearchStrings(parent.children, name)
	parent.children = slices.Insert(parent.children, i, name)
	parent.Cversion++
	parent.Pzxid = x.zxid
	return zk.OK, path, append(changes, change{zk.EventNodeCreated, path}, change{zk.EventNodeChildrenChanged, ppath})
}

// seqSuffix is the %010d of a sequential node's name (DataTree/PrepRequestProcessor).
func seqSuffix(cversion int32) string {
	s := strconv.FormatInt(int64(cversion), 10)
	if len(s) < 10 {
		s = strings.Repeat("0", 10-len(s)) + s
	}
	return s
}

func (t *Tree) delete(path string, version int32, zxid int64, changes []change) (zk.Code, string, []change) {
	n, ok := t.nodes[path]
	if !ok || path == "/" {
		return zk.NoNode, "", changes
	}
	if version != zk.AnyVersion && version != n.Version {
		return zk.BadVersion, "", changes
	}
	if len(n.children) > 0 {
		return zk.NotEmpty, "", changes
	}
	delete(t.nodes, path)
	if o := n.EphemeralOwner; o != 0 {
		e := t.ephemerals[o]
		if i := slices.Index(e, path); i >= 0 {
			e = slices.Delete(e, i, i+1)
		}
		if len(e) == 0 {
			delete(t.ephemerals, o)
		} else {
			t.ephemerals[o] = e
		}
	}
	ppath := parentOf(path)
	if parent, ok := t.nodes[ppath]; ok {
		name := nameOf(path)
		if i, found := slices.BinarySearch(parent.children, name); found {
			parent.children = slices.Delete(parent.children, i, i+1)
		}
		parent.Cversion++
		parent.Pzxid = zxid
	}
	return zk.OK, "", append(changes, change{zk.EventNodeDeleted, path}, change{zk.EventNodeChildrenChanged, ppath})
}

// killSession deletes all of a session's ephemeral nodes in the one closeSession
// transaction, and forgets the session (DataTree.killSession).
func (t *Tree) killSession(x *txn, changes []change) (zk.Code, string, []change) {
	for _, p := range slices.Clone(t.ephemerals[x.session]) {
		_, _, changes = t.delete(p, zk.AnyVersion, x.zxid, changes)
	}
	delete(t.ephemerals, x.session)
	delete(t.sessions, x.session)
	return zk.OK, "", changes
}
