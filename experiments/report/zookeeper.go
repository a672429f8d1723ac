package report

import (
	"strings"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/zookeeper"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

// This file reads a ZooKeeper run for the timeline: what each attempt of a ZooKeeper lock
// did in ZooKeeper's terms (its lock node's sequence, the predecessor it waited on), whose
// session the leader expired, and each server's role. A Redlock attempt is told by its OKs
// out of N; a ZooKeeper lock takes no votes, so "1/3" would say nothing true of it. It
// reads the messages the network delivers and the servers' records, and changes nothing.

// The roles of a ZooKeeper server (RoleSpan.Role).
const (
	RoleLeader   = "leader"
	RoleFollower = "follower"
	RoleLooking  = "looking" // in an election
)

// RoleSpan is a ZooKeeper server's role over a true-time interval: leader or follower of
// an epoch, or looking for a leader (an election).
type RoleSpan struct {
	Span
	Role  string `json:"role"`
	Epoch uint32 `json:"epoch,omitempty"` // the leader's epoch; 0 while looking
}

// MarkExpire is a Mark on a ZooKeeper leader's lane: it expired a client's session (and
// deleted its ephemeral nodes, a lock node among them).
const MarkExpire = "session-expired"

// zkReader follows a ZooKeeper run's lock nodes and sessions, per client.
type zkReader struct {
	clients  map[string]int   // client name → index
	owner    map[string]int   // lock node path → the client that created it
	sessions map[int64]int    // session id → client
	node     []string         // per client: the lock node of its attempt in progress
	waited   [][]string       // per client: the nodes it watched in that attempt, in order
	children []bool           // per client: it watched the lock's children (the naive recipe)
	prefix   []string         // per client: the path its protected create asked for
	found    []bool           // per client: its node was found again after a connection loss
	role     []int            // per node lane: index of its open role span, -1 when none
	bad      func(err error)  // keeps the first record that did not decode
	redisToo bool             // the lock takes Redis keys too (the hybrid lock)
	names    func(int) string // client index → name
}

func newZKReader(clients []string, lanes int, bad func(error)) *zkReader {
	z := &zkReader{clients: map[string]int{}, owner: map[string]int{}, sessions: map[int64]int{},
		node: make([]string, len(clients)), waited: make([][]string, len(clients)),
		children: make([]bool, len(clients)), prefix: make([]string, len(clients)),
		found: make([]bool, len(clients)), role: make([]int, lanes), bad: bad,
		names: func(j int) string { return clients[j] }}
	for j, c := range clients {
		z.clients[c] = j
	}
	for i := range z.role {
		z.role[i] = -1
	}
	return z
}

// netRecord reads a message delivered to or from a client: its create's reply names its
// lock node, a watch it leaves names what it waits on, a connect's reply its session.
func (z *zkReader) netRecord(r *sim.Record) {
	if r.Kind != network.RecDeliver {
		return
	}
	x, msg, err := decodeMsg(r)
	if err != nil {
		z.bad(err)
		return
	}
	if j, ok := z.clients[x.From]; ok && msg.Kind == model.MsgCommand {
		m := zk.Unpack(&msg.Body)
		if m.Op == zk.OpCreate && m.Flags&zk.FlagSequential != 0 {
			z.prefix[j] = m.Str
			return
		}
		if m.Flags&zk.FlagWatch == 0 {
			return
		}
		switch m.Op {
		case zk.OpGetData, zk.OpExists:
			if n := len(z.waited[j]); n == 0 || z.waited[j][n-1] != m.Str {
				z.waited[j] = append(z.waited[j], m.Str)
			}
		case zk.OpGetChildren:
			z.children[j] = true
		}
		return
	}
	j, ok := z.clients[x.To]
	if !ok || msg.Kind != model.MsgReply {
		return
	}
	m := zk.Unpack(&msg.Body)
	if m.Code != zk.OK {
		return
	}
	switch m.Op {
	case zk.OpCreate:
		if strings.Contains(m.Str, "-lock-") {
			z.node[j] = m.Str
			z.owner[m.Str] = j
		}
	case zk.OpConnect:
		z.sessions[m.Int] = j
	case zk.OpGetChildren:
		z.findAgain(j, m.Str2)
	}
}

// findAgain looks for client j's lock node among children (joined by "/") when its create
// got no answer: Curator's protected create finds the node it made by its prefix.
func (z *zkReader) findAgain(j int, children string) {
	if z.node[j] != "" || z.prefix[j] == "" {
		return
	}
	dir, base, ok := cutLast(z.prefix[j], "/")
	if !ok {
		return
	}
	for _, ch := range strings.Split(children, "/") {
		if ch != "" && strings.HasPrefix(ch, base) {
			z.node[j], z.found[j] = dir+"/"+ch, true
			z.owner[z.node[j]] = j
			return
		}
	}
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// attemptStarted forgets client j's previous attempt.
func (z *zkReader) attemptStarted(j int) {
	z.node[j], z.waited[j], z.children[j], z.prefix[j], z.found[j] = "", nil, false, "", false
}

// attempt says what client j's attempt did: "node 1, waited on 0 (client1)". An attempt
// of the hybrid lock that took no lock node went to Redis, and is told by its OKs ("").
func (z *zkReader) attempt(j int) string {
	if z.node[j] == "" {
		if z.redisToo {
			return ""
		}
		return "no lock node"
	}
	s := "node " + sequence(z.node[j])
	if z.found[j] {
		s += " (found again)"
	}
	if z.children[j] {
		s += ", watched all nodes"
	}
	for i, p := range z.waited[j] {
		if i == 0 {
			s += ", waited on "
		} else {
			s += " then "
		}
		s += sequence(p)
		if o, ok := z.owner[p]; ok {
			s += " (" + z.names(o) + ")"
		}
	}
	return s
}

// sequence returns the sequence number of a lock node's path without its leading zeros:
// "/lock/_c_…-lock-0000000003" → "3".
func sequence(path string) string {
	i := strings.LastIndex(path, "-lock-")
	if i < 0 {
		return path
	}
	s := strings.TrimLeft(path[i+len("-lock-"):], "0")
	if s == "" {
		return "0"
	}
	return s
}

// serverRecord reads a ZooKeeper server's record on node lane l: its role, and the
// sessions it expires as leader.
func (z *zkReader) serverRecord(c *TimelineCollector, r *sim.Record, l int) {
	nl := &c.tl.Nodes[l]
	switch r.Kind {
	case zookeeper.RecLooking:
		z.setRole(c, l, r.At, RoleLooking, 0)
	case zookeeper.RecLeading:
		x, err := zookeeper.DecodeLeading(r)
		if err != nil {
			z.bad(err)
			return
		}
		z.setRole(c, l, r.At, RoleLeader, x.Epoch)
	case zookeeper.RecFollowing:
		x, err := zookeeper.DecodeFollowing(r)
		if err != nil {
			z.bad(err)
			return
		}
		z.setRole(c, l, r.At, RoleFollower, x.Epoch)
	case zookeeper.RecStop:
		z.endRole(c, l, r.At)
	case zookeeper.RecExpire:
		x, err := zookeeper.DecodeSession(r)
		if err != nil {
			z.bad(err)
			return
		}
		who := "session " + Zxid(x.Session)
		if j, ok := z.sessions[x.Session]; ok {
			who = z.names(j) + "'s session"
		}
		c.mark(&nl.Marks, r.At, MarkExpire, who+" expired")
	}
}

func (z *zkReader) setRole(c *TimelineCollector, l int, at sim.Time, role string, epoch uint32) {
	nl := &c.tl.Nodes[l]
	if i := z.role[l]; i >= 0 && nl.Roles[i].Role == role && nl.Roles[i].Epoch == epoch {
		return
	}
	z.endRole(c, l, at)
	if c.room() {
		z.role[l] = len(nl.Roles)
		nl.Roles = append(nl.Roles, RoleSpan{Span: Span{From: at.Duration(), To: -1}, Role: role, Epoch: epoch})
	}
}

func (z *zkReader) endRole(c *TimelineCollector, l int, at sim.Time) {
	if i := z.role[l]; i >= 0 {
		c.tl.Nodes[l].Roles[i].To = at.Duration()
		z.role[l] = -1
	}
}

// roleAt returns node lane l's role now ("" when it has none: down, or not yet started).
func (z *zkReader) roleAt(c *TimelineCollector, l int) string {
	if z == nil || l >= len(z.role) || z.role[l] < 0 {
		return ""
	}
	rs := c.tl.Nodes[l].Roles[z.role[l]]
	return rs.Role
}
