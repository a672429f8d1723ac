package redis

// keyspace holds a node's keys. Entries live in a slab reused through a free list and are
// found by scanning the slab while it is small (a Redlock node holds a key or two, and a
// scan of a few entries is several times cheaper than hashing the key), through a map once
// it has grown, so a steady stream of SET/DEL allocates nothing; keys with an expiry
// are also in a binary min-heap on (expiry, key), the deterministic stand-in for Redis's
// sampled active expiry. The heap is indexed (each entry knows its position), so changing
// an expiry is an O(log n) update and the heap never holds more than one item per key:
// memory stays bounded by the number of keys, however often locks are extended.
type keyspace struct {
	index map[string]int32 // nil until the slab outgrows smallSlab
	n     int              // keys held
	ents  []kentry
	free  []int32
	heap  []int32 // indices into ents, ordered by (exp, key)
}

type kentry struct {
	key  string
	val  string
	hash *hashVal // a hash key's fields; nil for a string key
	exp  int64    // absolute expiry in ms on the node's wall clock; meaningful when hpos >= 0
	hpos int32    // position in heap; -1 when the key has no expiry, -2 when the slot is free
}

// hashVal is a hash's fields in the order they were first set. Lock hashes hold one or
// two fields (Redisson: a holder and its reentrancy count), so a slice searched in order
// beats a map.
type hashVal struct{ fields []hashField }

type hashField struct{ f, v string }

// find returns the index of field f, or -1.
func (h *hashVal) find(f string) int {
	for i := range h.fields {
		if h.fields[i].f == f {
			return i
		}
	}
	return -1
}

// snapshot returns a copy of the fields, for an effect (nil for a string key).
func (h *hashVal) snapshot() []hashField {
	if h == nil {
		return nil
	}
	return append([]hashField(nil), h.fields...)
}

// hashOf returns a hash holding a copy of fields, or nil for none (a string key).
func hashOf(fields []hashField) *hashVal {
	if len(fields) == 0 {
		return nil
	}
	return &hashVal{fields: append([]hashField(nil), fields...)}
}

// smallSlab is the slab size up to which find scans instead of using the index.
const smallSlab = 8

func newKeyspace() keyspace { return keyspace{} }

func (ks *keyspace) len() int { return ks.n }

func (ks *keyspace) find(key string) (int32, bool) {
	if ks.index != nil {
		i, ok := ks.index[key]
		return i, ok
	}
	for i := range ks.ents {
		if e := &ks.ents[i]; e.hpos != -2 && e.key == key {
			return int32(i), true
		}
	}
	return 0, false
}

// insert adds a key that is not present, without expiry, and returns its slot.
func (ks *keyspace) insert(key, val string) int32 {
	var i int32
	if n := len(ks.free); n > 0 {
		i = ks.free[n-1]
		ks.free = ks.free[:n-1]
	} else {
		ks.ents = append(ks.ents, kentry{})
		i = int32(len(ks.ents) - 1)
	}
	ks.ents[i] = kentry{key: key, val: val, hpos: -1}
	ks.n++
	switch {
	case ks.index != nil:
		ks.index[key] = i
	case len(ks.ents) > smallSlab: // grown past scanning: index every key from now on
		ks.index = make(map[string]int32, 2*len(ks.ents))
		for j := range ks.ents {
			if ks.ents[j].hpos != -2 {
				ks.index[ks.ents[j].key] = int32(j)
			}
		}
	}
	return i
}

// remove deletes the key in slot i.
func (ks *keyspace) remove(i int32) {
	e := &ks.ents[i]
	if e.hpos >= 0 {
		ks.heapRemove(int(e.hpos))
	}
	if ks.index != nil {
		delete(ks.index, e.key)
	}
	ks.n--
	*e = kentry{hpos: -2}
	ks.free = append(ks.free, i)
}

// clear removes every key, keeping the allocated capacity.
func (ks *keyspace) clear() {
	clear(ks.index)
	ks.n = 0
	ks.ents = ks.ents[:0]
	ks.free = ks.free[:0]
	ks.heap = ks.heap[:0]
}

func (ks *keyspace) hasExp(i int32) bool { return ks.ents[i].hpos >= 0 }

// setExp gives slot i the absolute expiry exp, adding or moving it in the heap.
func (ks *keyspace) setExp(i int32, exp int64) {
	e := &ks.ents[i]
	e.exp = exp
	if e.hpos < 0 {
		ks.heap = append(ks.heap, i)
		e.hpos = int32(len(ks.heap) - 1)
		ks.up(int(e.hpos))
		return
	}
	p := int(e.hpos)
	ks.down(p)
	ks.up(int(ks.ents[i].hpos))
}

// clearExp removes slot i's expiry (SET without KEEPTTL does this).
func (ks *keyspace) clearExp(i int32) {
	if p := ks.ents[i].hpos; p >= 0 {
		ks.heapRemove(int(p))
		ks.ents[i].hpos = -1
	}
}

// minExp returns the slot with the earliest expiry.
func (ks *keyspace) minExp() (int32, bool) {
	if len(ks.heap) == 0 {
		return 0, false
	}
	return ks.heap[0], true
}

// each calls f for every key in slot order, which depends only on the history of
// commands, never on map iteration.
func (ks *keyspace) each(f func(e *kentry)) {
	for i := range ks.ents {
		if ks.ents[i].hpos != -2 {
			f(&ks.ents[i])
		}
	}
}

func (ks *keyspace) less(a, b int32) bool {
	ea, eb := &ks.ents[a], &ks.ents[b]
	return ea.exp < eb.exp || (ea.exp == eb.exp && ea.key < eb.key)
}

func (ks *keyspace) place(p int, i int32) {
	ks.heap[p] = i
	ks.ents[i].hpos = int32(p)
}

func (ks *keyspace) up(p int) {
	i := ks.heap[p]
	for p > 0 {
		q := (p - 1) / 2
		if !ks.less(i, ks.heap[q]) {
			break
		}
		ks.place(p, ks.heap[q])
		p = q
	}
	ks.place(p, i)
}

func (ks *keyspace) down(p int) {
	i := ks.heap[p]
	n := len(ks.heap)
	for {
		c := 2*p + 1
		if c >= n {
			break
		}
		if c+1 < n && ks.less(ks.heap[c+1], ks.heap[c]) {
			c++
		}
		if !ks.less(ks.heap[c], i) {
			break
		}
		ks.place(p, ks.heap[c])
		p = c
	}
	ks.place(p, i)
}

func (ks *keyspace) heapRemove(p int) {
	last := len(ks.heap) - 1
	gone := ks.heap[p]
	ks.ents[gone].hpos = -1
	if p != last {
		moved := ks.heap[last]
		ks.heap = ks.heap[:last]
		ks.place(p, moved)
		ks.down(p)
		ks.up(int(ks.ents[moved].hpos))
		return
	}
	ks.heap = ks.heap[:last]
}
