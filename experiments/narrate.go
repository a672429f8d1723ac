package experiments

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// narrator is the trace sink of `redlock-sim run --trace` and of the golden files: it turns
// the kernel's trace records into a transcript a person can follow, one line per event:
//
//	0.001234s    redis3    [wall 0.001234s]  SET lock Zm9v... NX PX 10000 → OK
//	0.001780s    client1   [mono 0.001780s]  ← redis3: OK
//	1.500000s !! redis3    [wall 2.500000s]  crash keys=1 dropped=0 lost_writes=1
//	2.000102s ** oracle                      VIOLATION validity_overlap on lock: client1 and client2
//
// The columns are the true time, a marker (!! a fault, ** a violation), the actor, the
// actor's own clock where it has one (a client's monotonic reading, a node's wall reading:
// what each of them believes), and the event with commands in redis-cli syntax. Deliveries
// of commands to nodes and of writes to the storage are folded into the lines of the
// node's exec and the storage's verdict, which say the same thing.
type narrator struct {
	w        *World
	out      io.Writer
	from, to sim.Time
	kinds    map[string]actorKind
	clocks   map[string]*clock.Clock
	pending  string // the last write delivered to the storage, shown with its verdict
	buf      []byte
	err      error
}

type actorKind uint8

const (
	actorOther actorKind = iota
	actorClient
	actorGroup
	actorNode
	actorStorage
)

func newNarrator(w *World, out io.Writer, from, to sim.Time) *narrator {
	n := &narrator{w: w, out: out, from: from, to: to,
		kinds: map[string]actorKind{}, clocks: map[string]*clock.Clock{}}
	if to == 0 {
		n.to = sim.Never
	}
	for _, c := range w.Clients {
		n.kinds[c.Name()] = actorClient
		n.clocks[c.Name()] = c.Clock()
	}
	for _, g := range w.Groups {
		for i := range g.Len() {
			nd := g.Node(i)
			n.kinds[nd.Name()] = actorNode
			n.clocks[nd.Name()] = nd.Clock()
		}
		n.kinds[g.Name()] = actorGroup // a group of one node shares its node's name
	}
	n.kinds[w.Net.Name(w.Storage.Endpoint())] = actorStorage
	return n
}

// Record narrates one trace record.
func (n *narrator) Record(r *sim.Record) {
	if n.err != nil {
		return
	}
	actor, marker, text, skip := n.describe(r)
	if skip || r.At < n.from || r.At >= n.to {
		return
	}
	b := n.buf[:0]
	b = appendLeft(b, strconv.FormatFloat(r.At.Duration().Seconds(), 'f', 6, 64)+"s", 11)
	b = append(b, ' ')
	b = append(b, marker...)
	b = append(b, ' ')
	b = appendRight(b, actor, 9)
	b = append(b, ' ')
	b = appendRight(b, n.local(r, actor), 18)
	b = append(b, ' ')
	b = append(b, text...)
	b = append(b, '\n')
	n.buf = b
	_, n.err = n.out.Write(b)
}

// local returns the actor's own reading of its clock: the monotonic reading a client
// traces, or a node's wall clock (on which its keys expire).
func (n *narrator) local(r *sim.Record, actor string) string {
	switch n.kinds[actor] {
	case actorClient:
		if f := field(r, "mono"); f != nil {
			return "[mono " + secs(time.Duration(f.Int)) + "]"
		}
		if ck := n.clocks[actor]; ck != nil {
			return "[mono " + secs(ck.Mono(r.At)) + "]"
		}
	case actorNode, actorGroup:
		if ck := n.clocks[actor]; ck != nil {
			return "[wall " + secs(ck.Wall(r.At)) + "]"
		}
	}
	return ""
}

func (n *narrator) describe(r *sim.Record) (actor, marker, text string, skip bool) {
	actor, marker = r.Actor, "  "
	switch {
	case r.Actor == "net":
		return n.describeNet(r)
	case r.Actor == "oracle":
		return actor, "**", "VIOLATION " + str(r, "kind") + " on " + str(r, "resource") + ": " +
			str(r, "first") + " and " + str(r, "second"), false
	}
	switch n.kinds[r.Actor] {
	case actorNode, actorGroup:
		switch r.Kind {
		case "exec":
			f := field(r, "cmd")
			text = strings.Replace(string(f.AppendValue(nil)), " reply=", " → ", 1)
			if rf := field(r, "reply"); rf != nil {
				text += " → " + string(rf.AppendValue(nil))
			}
			return actor, marker, text, false
		case "crash", "kill", "shutdown", "restart", "pause", "resume", "failover":
			marker = "!!"
		}
	case actorStorage:
		if r.Kind == "write" {
			verdict := "accepted"
			if field(r, "accepted").Int == 0 {
				verdict = "REJECTED"
			}
			text = n.pending + " → " + verdict
			n.pending = ""
			return actor, marker, text, false
		}
	case actorClient:
		switch r.Kind {
		case "pause", "resume", "crash":
			marker = "!!"
		}
	}
	return actor, marker, r.Kind + fields(r, "mono"), false
}

func (n *narrator) describeNet(r *sim.Record) (actor, marker, text string, skip bool) {
	from, to := str(r, "from"), str(r, "to")
	msg := ""
	if f := field(r, "msg"); f != nil {
		msg = stripReq(string(f.AppendValue(nil)))
	}
	switch r.Kind {
	case "deliver":
		switch n.kinds[to] {
		case actorGroup:
			return "", "", "", true
		case actorStorage:
			n.pending = from + ": " + msg
			return "", "", "", true
		}
		if n.kinds[from] == actorStorage { // acknowledgements nobody waits for
			return "", "", "", true
		}
		return to, "  ", "← " + from + ": " + msg, false
	case "drop":
		return "net", "!!", "drop " + from + "→" + to + " (" + str(r, "reason") + "): " + msg, false
	case "hold":
		return "net", "!!", "hold " + from + "→" + to + " (clogged): " + msg, false
	case "dup":
		return "net", "!!", "duplicate " + from + "→" + to + ": " + msg, false
	}
	return "net", "!!", r.Kind + fields(r), false
}

// stripReq drops the "req=N " prefix of a described message: request ids only matter to
// the machine, and the reply's line already names its node.
func stripReq(s string) string {
	if strings.HasPrefix(s, "req=") {
		if i := strings.IndexByte(s, ' '); i > 0 {
			return s[i+1:]
		}
	}
	return s
}

// fields renders the record's fields as " k=v", leaving out those named in skip and those
// that say nothing (reason=none, token=0).
func fields(r *sim.Record, skip ...string) string {
	var b []byte
	for i := range r.Fields {
		f := &r.Fields[i]
		if contains(skip, f.Key) || (f.Key == "reason" && f.Str == "none") ||
			(f.Key == "token" && f.Kind == sim.FieldInt && f.Int == 0) ||
			(f.Key == "validity" && r.Kind == "attempt-ended") {
			continue
		}
		b = append(b, ' ')
		b = append(b, f.Key...)
		b = append(b, '=')
		b = f.AppendValue(b)
	}
	return string(b)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func field(r *sim.Record, key string) *sim.Field {
	for i := range r.Fields {
		if r.Fields[i].Key == key {
			return &r.Fields[i]
		}
	}
	return nil
}

func str(r *sim.Record, key string) string {
	if f := field(r, key); f != nil {
		return string(f.AppendValue(nil))
	}
	return ""
}

func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) + "s"
}

func appendLeft(b []byte, s string, width int) []byte {
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

func appendRight(b []byte, s string, width int) []byte {
	b = append(b, s...)
	for i := len([]rune(s)); i < width; i++ {
		b = append(b, ' ')
	}
	return b
}
