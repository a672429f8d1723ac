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
// The network only delivers: what a crashed process does with a message it receives is
// the process's business.
//
// # Trace
//
// Every hold, delivery, drop (with its reason, loss or partition) and duplicate is a
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
