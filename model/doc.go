// Package model holds what every simulated world has, whatever lock service it runs: the
// client process, the fenced storage the lock protects, and the messages they exchange
// with the service's servers. The servers themselves live in packages of their own beside
// it (model/redis: the Redis node, its replication group, and the Redis drivers'
// connections), so that another service's servers can sit beside Redis's.
//
// Client is a client process: a local clock, a network endpoint, a workload (acquire,
// work, release, think), pauses and crashes, and a lock algorithm it drives through
// lock.Client. It knows no protocol: the algorithm's requests and its servers' replies are
// lock.Payload values in the service's protocol, which the process hands to its Conn
// (what the library's driver does between the algorithm and the network: DirectConn adds
// nothing; Redis's are in model/redis) and which the network carries inside a Message.
// The process turns the algorithm's outputs into messages and local timers, and tells its
// Observer (the oracle) the algorithm's neutral lock events in true time.
//
// Storage is Kleppmann's storage service: it accepts a fenced write only if its token is
// not below the highest it has seen for that resource, always accepts an unfenced one,
// records every verdict, and may acknowledge each write (MsgWritten).
//
// Message is the network's message type (a request, a reply, a push, a storage write and
// its verdict, a TCP probe and its acknowledgement); MessageParts packs one into a trace
// field and MessageFormat renders it in a protocol's words. Every process registers one
// receiver type with the network (see endpoint; a server registers ServerEndpoint).
package model
