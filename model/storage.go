package model

import (
	"fmt"
	"strconv"

	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// Limits of the fenced storage.
const (
	DefaultMaxResources = 1 << 10 // resources tracked when StorageConfig leaves it zero
	MaxResourcesLimit   = 1 << 20
	DefaultMaxRecorded  = 1 << 16 // writes kept for the oracle when StorageConfig leaves it zero
	MaxRecordedLimit    = 1 << 24
)

// StorageConfig configures a Storage.
type StorageConfig struct {
	Name string // endpoint name; "" means "storage"
	// MaxResources bounds the resources whose highest token is tracked; a fenced write to
	// one more resource is rejected. 0 means DefaultMaxResources.
	MaxResources int
	// MaxRecorded bounds the writes kept in Writes; later writes are still counted and
	// judged, only not recorded (Truncated says so). 0 means DefaultMaxRecorded.
	MaxRecorded int
	// Acknowledge sends each writer its verdict as a MsgWritten: taken, or refused with the
	// reason (the stale token). A client waits for it only with ReleaseAfterAck (otherwise
	// a write is fire and forget, as in Kleppmann's story), so worlds turn it on only then:
	// an unread verdict would cost two of the thirty-odd kernel events of a lock cycle.
	Acknowledge bool
}

// Storage is the resource the lock protects, as in Kleppmann's "How to do distributed
// locking": a storage service that takes writes from lock holders. A write carrying a
// fencing token is accepted only if the token is not below the highest token it has seen
// for that resource; a write without a token is always accepted — the unsafe baseline that
// lets a paused client's stale write through. Every write is counted and (up to a limit)
// recorded with its true time, so the oracle can count stale writes with and without
// fencing. The storage answers instantly and never fails: it is the thing being
// protected, not a source of faults.
type Storage struct {
	s       *sim.Sim
	net     *network.Net[Message]
	ep      network.Endpoint
	name    string
	nm      TraceName // name and "write" with their trace digests
	max     int
	highest map[string]int64
	writes  []StoredWrite
	obs     StorageObserver
	ack     bool
	maxRec  int
	trunc   bool
	stats   StorageStats
	judged  StoredWrite // the write being judged, handed to the observer by pointer
}

// StorageObserver is told of every write the storage judges, as it happens, so the oracle
// can decide in true time whether an accepted write was stale. The *StoredWrite is reused
// for the next write: copy what you keep.
type StorageObserver interface {
	StorageWrite(now sim.Time, w *StoredWrite)
}

// StoredWrite is one write the storage judged.
type StoredWrite struct {
	At       sim.Time
	From     network.Endpoint
	ReqID    uint64 // the writer's request id (0 for writes made with Write)
	Resource string
	Data     string
	Token    int64
	Fenced   bool
	Accepted bool
}

// StorageStats counts the storage's verdicts.
type StorageStats struct {
	Accepted uint64 // fenced writes accepted
	Rejected uint64 // fenced writes rejected: the token was below the highest seen
	Unfenced uint64 // writes without a token, all accepted
}

// NewStorage builds the storage and attaches it to net.
func NewStorage(s *sim.Sim, net *network.Net[Message], cfg StorageConfig) (*Storage, error) {
	switch {
	case cfg.MaxResources < 0 || cfg.MaxResources > MaxResourcesLimit:
		return nil, sim.BadParam("max_resources", cfg.MaxResources, fmt.Sprintf("[0, %d] (0 = %d)", MaxResourcesLimit, DefaultMaxResources))
	case cfg.MaxRecorded < 0 || cfg.MaxRecorded > MaxRecordedLimit:
		return nil, sim.BadParam("max_recorded", cfg.MaxRecorded, fmt.Sprintf("[0, %d] (0 = %d)", MaxRecordedLimit, DefaultMaxRecorded))
	}
	if cfg.Name == "" {
		cfg.Name = "storage"
	}
	if cfg.MaxResources == 0 {
		cfg.MaxResources = DefaultMaxResources
	}
	if cfg.MaxRecorded == 0 {
		cfg.MaxRecorded = DefaultMaxRecorded
	}
	st := &Storage{s: s, net: net, name: cfg.Name, nm: NewTraceName(cfg.Name, RecStorageWrite), max: cfg.MaxResources, maxRec: cfg.MaxRecorded, ack: cfg.Acknowledge,
		highest: make(map[string]int64)}
	ep, err := net.AddEndpoint(cfg.Name, &endpoint{st: st})
	if err != nil {
		return nil, fmt.Errorf("storage %s: %w", cfg.Name, err)
	}
	st.ep = ep
	return st, nil
}

// Endpoint returns the storage's network endpoint.
func (st *Storage) Endpoint() network.Endpoint { return st.ep }

// Stats returns the verdict counters.
func (st *Storage) Stats() StorageStats { return st.stats }

// Writes returns the recorded writes in arrival order. The slice is the storage's own:
// read it, do not modify it.
func (st *Storage) Writes() []StoredWrite { return st.writes }

// Truncated reports whether writes arrived after MaxRecorded were recorded.
func (st *Storage) Truncated() bool { return st.trunc }

// SetObserver attaches o (nil detaches); it sees every write, recorded or not.
func (st *Storage) SetObserver(o StorageObserver) { st.obs = o }

// Highest returns the highest token accepted for resource, if any.
func (st *Storage) Highest(resource string) (int64, bool) {
	t, ok := st.highest[resource]
	return t, ok
}

// Receive is the storage's network endpoint: it judges a MsgWrite and, if it
// acknowledges writes, replies OK or an error naming the stale token.
func (st *Storage) Receive(now sim.Time, from, _ network.Endpoint, m *Message) {
	if m.Kind != MsgWrite {
		st.s.Trace(st.name, "drop", sim.Str("reason", "not-a-write"), Describe(m, nil))
		return
	}
	accepted, why := st.write(now, StoredWrite{From: from, ReqID: m.ReqID, Resource: m.Body.Str,
		Data: m.Body.Str2, Token: m.Token, Fenced: m.Fenced})
	if st.ack {
		st.net.Send(st.ep, from, Message{Kind: MsgWritten, ReqID: m.ReqID, Body: lock.Payload{Word: b2u(accepted), Str: why}})
	}
}

// Write judges one write arriving at true time now, as Receive does, for callers that
// reach the storage without the network. It reports whether the write was accepted, and
// if not, why.
func (st *Storage) Write(now sim.Time, from network.Endpoint, resource, data string, token int64, fenced bool) (bool, string) {
	return st.write(now, StoredWrite{From: from, Resource: resource, Data: data, Token: token, Fenced: fenced})
}

func (st *Storage) write(now sim.Time, w StoredWrite) (bool, string) {
	resource, token, fenced := w.Resource, w.Token, w.Fenced
	accepted, reply := true, ""
	switch {
	case !fenced:
		st.stats.Unfenced++
	default:
		hi, seen := st.highest[resource]
		switch {
		case seen && token < hi:
			accepted = false
			reply = "ERR stale fencing token " + strconv.FormatInt(token, 10) +
				" (highest seen " + strconv.FormatInt(hi, 10) + ")"
		case !seen && len(st.highest) >= st.max:
			accepted = false
			reply = "ERR too many resources"
		default:
			st.highest[resource] = token
		}
		if accepted {
			st.stats.Accepted++
		} else {
			st.stats.Rejected++
		}
	}
	w.At, w.Accepted = now, accepted
	if len(st.writes) < st.maxRec {
		st.writes = append(st.writes, w)
	} else {
		st.trunc = true
	}
	if st.obs != nil {
		// Through a field, not &w: a pointer to a parameter handed to an interface method
		// escapes, which cost two allocations per lock cycle.
		st.judged = w
		st.obs.StorageWrite(now, &st.judged)
	}
	if !st.s.Tracing() { // the same record, only folded into the trace hash
		emitWriteHasher(st.s.Hasher(), &st.nm, resource, token, fenced, accepted)
	} else {
		emitWriteTexter(st.s.Texter(), &st.nm, resource, token, fenced, accepted)
	}
	return accepted, reply
}

// emitWrite writes the storage's verdict on a write, once, for either emitter (see
// sim.Emitter).
//
//lint:ignore U1000 the template internal/cmd/emitgen copies into emit_gen.go once per emitter; never called itself
func emitWrite[E sim.Emitter[E]](e E, nm *TraceName, resource string, token int64, fenced, accepted bool) {
	e.Begin(nm.Actor, nm.Kind).Str("resource", resource).Int("token", token).Bool("fenced", fenced).Bool("accepted", accepted).End()
}
