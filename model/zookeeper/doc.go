// Package zookeeper is a simulated ZooKeeper 3.8 ensemble, beside the Redis server in
// model/redis: servers that elect a leader, commit writes on a quorum of acknowledgements
// each made after the server's log fsync, serve reads from their own (possibly stale)
// copy of the tree, track sessions on the leader's clock and expire them in tick
// buckets, and fire one-shot watches; and the client side of a session, a model.Conn
// (NewSessionConn). It speaks the protocol of redlock/zk, so the client process carries
// its messages unread and traces print them as zkCli does.
//
// Each rule follows ZooKeeper's source; docs/zookeeper.md names the file and lines of
// each, and says what is simplified (the election's notifications, a transaction's
// contents travelling by reference) and why a lock does not see it.
//
// The servers are driven by kernel events and their network endpoints only, on their
// own clocks; their faults (Crash, Kill, Shutdown, Restart, Stall, Thaw) are methods a
// world's fault actions call.
package zookeeper
