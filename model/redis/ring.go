package redis

// ring is a bounded FIFO queue. It grows by doubling up to its limit and is reused
// afterwards, so a node's request queue and replication backlog cost nothing per item in
// steady state and never hold more than their limit.
type ring[T any] struct {
	buf   []T
	head  int
	n     int
	limit int
}

func newRing[T any](limit int) ring[T] { return ring[T]{limit: limit} }

// push appends v and reports whether there was room.
func (r *ring[T]) push(v T) bool {
	if r.n >= r.limit {
		return false
	}
	if r.n == len(r.buf) {
		r.grow()
	}
	i := r.head + r.n
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.buf[i] = v
	r.n++
	return true
}

func (r *ring[T]) grow() {
	size := min(max(8, 2*len(r.buf)), r.limit)
	buf := make([]T, size)
	for i := 0; i < r.n; i++ {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}

func (r *ring[T]) at(i int) *T {
	j := r.head + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return &r.buf[j]
}

func (r *ring[T]) front() *T { return &r.buf[r.head] }

func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero // let the strings go
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
	return v
}

// drop removes the front item without copying it out.
func (r *ring[T]) drop() {
	var zero T
	r.buf[r.head] = zero
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
}

func (r *ring[T]) clear() {
	for r.n > 0 {
		r.pop()
	}
	r.head = 0
}
