package lock

import "strconv"

// Payload is one request or reply of a lock service's own protocol (RESP for the Redis
// families, another service's operations for another), packed into a fixed shape: a word
// of kind and flags, an integer and two strings. The protocol's package packs and unpacks
// it (resp.Command.Payload, resp.ReplyOf); the client process, its connections and the
// network carry it as a plain value without reading it. A fixed shape rather than an
// interface keeps every message a value the network copies without boxing, so a request
// and its reply allocate nothing, and its four words are what a trace record folds into
// the trace hash, so a message is traced without being rendered.
type Payload struct {
	Str, Str2 string
	Int       int64
	// Word holds the protocol's kind of request or reply and its flags. Only its low 28
	// bits reach a trace record.
	Word uint64
}

// String renders the payload's words, for a reader that does not know its protocol.
func (p Payload) String() string {
	return "word=" + strconv.FormatUint(p.Word, 10) + " int=" + strconv.FormatInt(p.Int, 10) +
		" str=" + strconv.Quote(p.Str) + " str2=" + strconv.Quote(p.Str2)
}

// Protocol is a lock service's wire protocol as traces show it: its name, and how its
// requests, replies and pushes read. Each service registers one (RESP's is resp.Protocol).
// The Append methods append the rendering of p to dst and return the extended slice, so a
// trace renders without allocating more than its line.
type Protocol interface {
	Name() string
	AppendRequest(dst []byte, p *Payload) []byte
	AppendReply(dst []byte, p *Payload) []byte
	AppendPush(dst []byte, p *Payload) []byte
}
