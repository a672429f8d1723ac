package redis

import (
	"math"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// The hash commands a Redisson-style lock sends (its lock is a hash of holder to
// reentrancy count): HSET, HGET, HEXISTS, HINCRBY, HDEL and HLEN, with Redis 7.0's
// replies and errors. A hash key answers string commands with WRONGTYPE, and a string
// key hash commands alike; a hash left without fields is deleted, as Redis deletes it.

// hashAt finds key as a hash: (slot, true, no error) when it is one, (0, false, no error)
// when it is absent, WRONGTYPE when it holds a string.
func (e *Engine) hashAt(key string, nowMs int64) (int32, bool, resp.Reply) {
	i, ok := e.lookup(key, nowMs)
	if !ok {
		return 0, false, resp.Reply{}
	}
	if e.ks.ents[i].hash == nil {
		return 0, false, errWrongType
	}
	return i, true, resp.Reply{}
}

// hashForWrite finds or creates key as a hash.
func (e *Engine) hashForWrite(key string, nowMs int64) (int32, resp.Reply) {
	i, ok, r := e.hashAt(key, nowMs)
	switch {
	case r.Kind == resp.ReplyError:
		return 0, r
	case ok:
		return i, r
	case e.ks.len() >= e.maxKeys:
		return 0, errOOM
	}
	i = e.ks.insert(key, "")
	e.ks.ents[i].hash = &hashVal{}
	return i, resp.Reply{}
}

// hset sets field-value pairs (pairs holds them flat) and counts the fields added.
func (e *Engine) hset(key string, pairs []string, nowMs int64) resp.Reply {
	i, r := e.hashForWrite(key, nowMs)
	if r.Kind == resp.ReplyError {
		return r
	}
	h := e.ks.ents[i].hash
	var added int64
	for j := 0; j+1 < len(pairs); j += 2 {
		if k := h.find(pairs[j]); k >= 0 {
			h.fields[k].v = pairs[j+1]
			continue
		}
		h.fields = append(h.fields, hashField{pairs[j], pairs[j+1]})
		added++
	}
	e.logKey(i)
	return resp.IntReply(added)
}

func (e *Engine) hget(key, field string, nowMs int64) resp.Reply {
	i, ok, r := e.hashAt(key, nowMs)
	if !ok {
		return orNil(r)
	}
	h := e.ks.ents[i].hash
	if k := h.find(field); k >= 0 {
		return bulk(h.fields[k].v)
	}
	return resp.Nil
}

func (e *Engine) hexists(key, field string, nowMs int64) resp.Reply {
	i, ok, r := e.hashAt(key, nowMs)
	if !ok {
		return orZero(r)
	}
	if e.ks.ents[i].hash.find(field) >= 0 {
		return resp.IntReply(1)
	}
	return resp.IntReply(0)
}

func (e *Engine) hlen(key string, nowMs int64) resp.Reply {
	i, ok, r := e.hashAt(key, nowMs)
	if !ok {
		return orZero(r)
	}
	return resp.IntReply(int64(len(e.ks.ents[i].hash.fields)))
}

// hincrby adds by to an integer field (0 when absent), as hincrbyCommand: the increment
// is parsed first, then the key's type, then the field's value.
func (e *Engine) hincrby(key, field, incr string, nowMs int64) resp.Reply {
	by, ok := parseInt(incr)
	if !ok {
		return errNotInt
	}
	i, r := e.hashForWrite(key, nowMs)
	if r.Kind == resp.ReplyError {
		return r
	}
	h := e.ks.ents[i].hash
	k := h.find(field)
	var old int64
	if k >= 0 {
		if old, ok = parseInt(h.fields[k].v); !ok {
			return errReply("ERR hash value is not an integer")
		}
	}
	if (by < 0 && old < 0 && by < math.MinInt64-old) || (by > 0 && old > 0 && by > math.MaxInt64-old) {
		return errOverflow // old is not 0, so the hash existed before this command
	}
	if k < 0 {
		h.fields = append(h.fields, hashField{f: field})
		k = len(h.fields) - 1
	}
	h.fields[k].v = formatInt(old + by)
	e.logKey(i)
	return resp.IntReply(old + by)
}

// hdel removes fields and counts those removed; an emptied hash is deleted.
func (e *Engine) hdel(key string, fields []string, nowMs int64) resp.Reply {
	i, ok, r := e.hashAt(key, nowMs)
	if !ok {
		return orZero(r)
	}
	h := e.ks.ents[i].hash
	var n int64
	for _, f := range fields {
		if k := h.find(f); k >= 0 {
			h.fields = append(h.fields[:k], h.fields[k+1:]...)
			n++
		}
	}
	switch {
	case len(h.fields) == 0:
		e.remove(i)
	case n > 0:
		e.logKey(i)
	}
	return resp.IntReply(n)
}

// orNil and orZero answer for a hash key that is absent (nil, 0) or a string (its error).
func orNil(r resp.Reply) resp.Reply {
	if r.Kind == resp.ReplyError {
		return r
	}
	return resp.Nil
}

func orZero(r resp.Reply) resp.Reply {
	if r.Kind == resp.ReplyError {
		return r
	}
	return resp.IntReply(0)
}
