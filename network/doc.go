// Package network carries messages between the simulated processes of a redlock-sim
// world in virtual time, with the faults that make distributed locks hard: latency with
// heavy tails, loss, duplication, reordering, partitions (also one-way) and clogged links.
//
// A Net[M] carries messages of one type M (the model's Redis commands and replies)
// between endpoints, small integers added with a name and a Receiver. Send draws the
// message's fate from the network's own random stream: loss, then a latency from the
// link's distribution, then possibly a duplicate with a latency of its own. Reordering is
// not a separate fault: it arises from random latency, unless the link is FIFO (like a
// TCP connection), when no message overtakes an earlier one.
//
// # Faults and messages in flight
//
// A message crosses a link only if the link is up both when it is sent and when it
// arrives: a message in flight when a partition cuts its link is lost, as packets are on
// a dead cable, and one sent while the link is cut is dropped at once. A clog is not a
// cut: it holds the messages that arrive while it lasts, then delivers them in send
// order, in one burst at its end (dropping those whose link is cut by then). Partitions
// last until healed (Heal, HealAll) or for a given duration; they can be applied now
// (Isolate, Split, Block, Clog, Apply), scheduled at a true time (At), or drawn at random
// rates (Config.Random).
//
// # TCP links
//
// A link is a datagram link unless SetTCP (one link) or SetTCPEndpoint (every link of an
// endpoint, also those of endpoints added later) makes it a TCP connection, as the
// ZooKeeper ensemble's links are. A partition delays a TCP link's messages instead of
// losing them: what a cut would drop, at send or at arrival, and what loss would lose, is
// held (a hold record with the reason: partition, loss, or queued behind an earlier held
// message) and goes again at the kernel's retransmissions, sent + RTO·(2^k − 1) with RTO
// Linux's TCP_RTO_MIN of 200ms, each doubling capped at TCP_RTO_MAX (120s); it arrives at
// the first one at which the link is up, plus a latency drawn then, with every message
// the link sent after it, in send order. After tcp_retries2 (15) retransmissions the
// kernel gives up: the held messages are dropped (reason retries). Reset discards what a
// link holds, as closing a connection does. The backoff is the oldest held message's
// (the kernel backs off per connection, from the first unacknowledged segment: the same
// times), and a retransmission that crosses carries the whole backlog at once, however
// large. The common path does not look at any of it: a link holding messages is marked
// stopped, as a cut one is, and only the stopped branches tell the two apart.
//
// The network only delivers: what a crashed process does with a message it receives is
// the process's business.
//
// # Trace
//
// Every hold, delivery, drop (with its reason: loss, partition, dropped, retries, reset) and duplicate is a
// trace record with actor "net" and fields from, to (endpoint names), id (the message's
// send number; a duplicate shares it), the message as SetMessage packs it, and the
// latency or drop reason; with SetDeliveryNotes, a delivery shows the message as a note
// that is not folded into the trace hash, for worlds whose processes fold it. Partitions, heals and clogs are records too. For queries the
// oracle and the timeline need without reading the trace, Connected and Clogged answer
// about now, and Faults lists every fault with its interval in true time.
//
// # Cost
//
// In-flight messages live in a slab with a free list, and the kernel event's argument is
// the slab index, so Send and delivery allocate nothing in steady state. Each message
// record is written once, over sim.Emitter (emitDeliver, emitMsgRecord; go generate copies
// them per emitter into emit_gen.go): without a trace sink it is folded into the trace
// hash without building its fields; per-link state lives in a dense matrix indexed
// by endpoint ids, not in maps. Everything is bounded:
// endpoints, messages in flight, faults, latencies.
package network
