// Package redis is the simulated Redis server that the Redis lock families run against: a
// Redis node that answers the commands Redlock implementations send with Redis 7's exact
// replies, failing the ways the Redlock debate is about, its replication group, and the
// connections the Redis drivers under the lock libraries keep to it (go-redis's, ioredis's:
// model.Conn types, chosen by the `connection` knob). It sits in package redis's world
// beside any other lock service's servers: the client process and the fenced storage are
// package redis's, and know no Redis.
//
// # Layers
//
// Engine is the data path of one redis-server process: the keyspace, expiry and the
// script cache. It takes the wall time as an argument and holds no notion of time itself,
// so the same code runs in the simulator and in the differential test, which feeds it
// the machine's clock. It executes resp.Command values (the simulator's path, no
// allocation) and raw argv (Do: the differential test's path, and how to issue what a
// Command cannot express, such as SCRIPT LOAD).
//
// Node is one redis-server process: an Engine, a local clock (package clock), a bounded
// request queue served one command at a time, persistence, crash/restart, pause/resume,
// and the replica side of replication. Nodes are not network endpoints.
//
// Group is one logical Redis endpoint: a master and zero or more replicas behind a single
// network endpoint, with asynchronous replication and Sentinel-like failover. Clients
// address the group; it routes each command to whichever node is master now and replies
// from the same endpoint, so clients keep one address across failovers, as with a
// Sentinel-aware client or a proxy. A group of one node is a standalone Redis, which is
// what Redlock's N independent masters are.
//
// A request reaches a group as a model.Message whose body is a resp.Command packed into a
// lock.Payload, and its reply leaves as a resp.Reply packed the same way.
//
// # Time and expiry
//
// A key's expiry is an absolute time in milliseconds on the node's own wall clock,
// mstime = EpochMs + ⌊Wall(t) / 1ms⌋, and a key is gone once mstime > expiry (Redis's
// keyIsExpired), so PTTL reads 0 at the expiry instant itself. Expiry is lazy on every
// access, plus active: a cron running Hz times per second of the node's monotonic clock
// removes every key already expired, using a min-heap on (expiry, key). The cron is armed
// only while a key may expire or a write awaits fsync, so an idle world schedules nothing
// and sim.Run returns. A forward wall-clock step therefore expires keys early and a
// backward one keeps them longer, and SET PX is recorded (for the AOF and the replicas)
// with its absolute expiry, as Redis 7 propagates it as SET PXAT: keys keep their expiry
// across restarts and failovers, and time passes for them while a node is down.
//
// # Serving
//
// A node serves one command at a time. A command takes effect and is answered when its
// ServiceTime ends (at once when it is zero); commands arriving meanwhile wait in a queue
// of at most MaxQueue requests, and one arriving at a full queue, or at a node that is
// down, is dropped unanswered. A paused node serves, expires and fsyncs nothing but keeps
// its queue, including the command in service, which finishes its remaining service time
// after the resume.
//
// # Persistence and crashes
//
// PersistNone loses everything on any stop. PersistAOFAlways puts every write on disk
// before its reply leaves. PersistAOFEverySec follows Redis's rule: after every command
// and at every cron run, fsync if there are unsynced writes and the wall clock's second is
// later than the last fsync's (so fsync instants are on the node's clock, and a backward
// step delays them). Crash is a power loss: memory, the queue and unsynced AOF writes are
// lost. Kill (kill -9) keeps what reached the AOF file, which is every acknowledged write.
// Shutdown fsyncs first. While a node is down after a power loss nothing answers its
// requests (they are dropped, and a client waits out its timeout); after a kill or a
// shutdown its host is still up and refuses the connection, so each request is answered at
// once, over the network, with resp.NoReply: the connection error a client library
// raises. A power loss's restart is a new boot of the host: for the clients that model
// their TCP connections (ConnOffline, Message.Conn), a request or retransmission on a
// connection opened before it is reset, and a TCP probe (MsgProbe) gets an
// acknowledgement from a host that is up, even with its process paused, a reset from one
// whose process is gone, and nothing without power. Restart reloads the AOF with absolute expiries and an empty script cache. Faults are applied at once (Node.Crash, ...) or scheduled (Group.At),
// with an optional automatic restart or resume after a delay.
//
// # Replication and failover
//
// Every write of the master reaches each running replica ReplicationDelay (plus a uniform
// jitter) later, in order, as the key's full new state. A replica applies what has
// arrived unless it is paused; one whose backlog overflows MaxBacklog resynchronises in
// full. When the master has been down for FailoverAfter, the running, unpaused replica
// with the most writes applied is promoted, and the others resynchronise from it; the
// writes it had not received are lost (GroupStats.LostWrites). A power loss of the master
// also loses the writes it had sent that had not arrived; after a kill or shutdown they
// still arrive. A node that restarts rejoins as a replica of the current master (full
// resynchronisation); a master that restarts before the failover stays master and its
// replicas resynchronise from it, inheriting whatever it lost.
//
// # Scripts
//
// Any script runs. The three standard Redlock scripts of package redlock are recognised
// by their exact source (EVAL, SCRIPT LOAD) or SHA1 (EVALSHA, case-insensitive) and run
// natively on a fast path that allocates nothing, including how their Lua fails on short
// KEYS/ARGV and how Redis 7 wraps errors raised inside them ("... script: <sha>, on
// @user_script:1."). Every other script runs in a real Lua 5.1 (gopher-lua, lua.go), one
// VM per engine started at its first such script, with Redis 7.0's environment: KEYS and
// ARGV; redis.call and redis.pcall onto the engine's commands at the script's frozen wall
// time, their writes among the EVAL's effects; Redis's conversions (an integer reply is
// a number, a nil bulk false, a status {ok=...}; a number returned is truncated to an
// integer, true is 1, false and nil a nil bulk, {ok=...} and {err=...} a status and an
// error, any other table an array up to its first nil; a number passed as an argument
// is formatted as %.17g); redis.sha1hex,
// redis.error_reply and redis.status_reply; the error texts of redis.call and of the
// script's own errors with the line they were raised on; the globals protection
// (reading an undefined global or writing any is an error); and math.random over Redis's
// own generator, which runs on from process start across scripts (a restart starts it
// again), so draws match a fresh redis-server's. Only the base, table, string
// and math libraries are opened, so no script reaches time, I/O or the process.
// TestFastPathAnswersAsTheVM runs the standard scripts both ways and requires the same
// replies and keys.
//
// The script cache is per process, as in Redis 7: EVALSHA gets NOSCRIPT until EVAL or
// SCRIPT LOAD loads the script on that node, and a restart or a promotion finds it empty,
// because Redis 7 neither persists nor replicates scripts (NodeConfig.PreloadScripts
// models a deployment that loads them at boot). A simulated client sends only the
// standard scripts (a resp.Command names one); the argv path (Engine.Do) runs any.
//
// # Trace
//
// Nodes trace with their name as actor: exec (cmd, reply), expire (key), drop (reason
// down or queue-full, cmd), fsync (writes), crash/kill/shutdown (keys held, dropped requests, lost_writes: AOF
// writes not yet fsynced),
// restart (keys), pause and resume (queued), apply (key, offset: a replicated write),
// sync (from, keys), repl-overflow. A group traces failover (from, to, lost_writes) and
// the storage traces write (resource, token, fenced, accepted). Fields carrying commands,
// replies and messages are sim.FieldCustom values formatted only when a sink prints them,
// so a run without a sink pays for the trace hash alone and allocates nothing. Each hot
// record (exec, the client's events, storage writes, and the network's message records
// through MessageParts) is written once, by a generic function over sim.Emitter
// (emitExec, emitEvent, emitWrite), and go generate copies each for the two emitters into
// emit_gen.go (see internal/cmd/emitgen): without a sink the Hasher copy folds the values
// into the hash directly and builds nothing; with one the Texter copy builds the record
// from the same calls, so the two cannot disagree.
//
// # Proof
//
// The differential test runs 2,000 seeded sequences of 50 commands against a real
// redis-server 7 on a free loopback port and against the Engine fed the real wall time,
// through both the Command path and the argv path, and requires identical replies (PTTL
// within the pipeline's round trip, TTL within a second of rounding); a second test checks
// keys with PX 50-200 ms read after real waits. The sequences include scripts in the
// shapes lock libraries use, run in the Lua VM, with their error texts. Two more tests
// drive the same server: each lock library's own scripts, byte for byte at a named
// version (redlock/resp/libscripts), on random keyspaces (libscripts_test.go), and small
// generated Lua programs over every modelled command (luagen_test.go); both compare
// every reply and the keys after each script.
//
// # Divergences from Redis 7.0
//
// Known and deliberate; none is reachable from a resp.Command the differential test
// draws.
//
//   - Lua, where gopher-lua differs from Lua 5.1: the wording of syntax errors (after
//     Redis's "ERR Error compiling script (new function): user_script: " prefix) and of
//     Lua's own runtime errors ("attempt to index ..."), and tostring of numbers that are
//     not integers or need an exponent. The bit, cjson, cmsgpack and struct libraries are
//     absent, and so are redis.setresp and redis.acl_check_cmd.
//   - A script that runs MaxScriptSteps Lua instructions is stopped with an error that
//     says so, keeping the writes it made (as any failing script's writes stay). Redis
//     has no limit: it would run on, answer BUSY to every other client after five
//     seconds, and accept SCRIPT KILL. A script's memory is not bounded either.
//   - SCRIPT HELP and DEBUG (a help text, a debugger) answer an explicit "not modelled"
//     error after Redis's arity check.
//   - Only the commands lock clients send exist: SET, SETNX, GET, DEL, UNLINK, EXISTS,
//     PEXPIRE, EXPIRE, PEXPIREAT, EXPIREAT, PTTL, TTL, PERSIST, INCR, INCRBY, the hash
//     commands HSET, HGET, HEXISTS, HINCRBY, HDEL and HLEN, PUBLISH, SUBSCRIBE and
//     UNSUBSCRIBE, PING, and EVAL, EVALSHA and SCRIPT; any other command, real or not
//     (PSUBSCRIBE, SPUBLISH, TYPE, FLUSHALL, ...), gets Redis's unknown-command error,
//     and from a script "Unknown Redis command called from script", where Redis would
//     run it (or, for PSUBSCRIBE and the like, answer that it is not allowed from
//     scripts). Keys are strings or hashes, and each answers the other's commands with
//     WRONGTYPE. An empty argv is an error (Redis ignores an empty request).
//   - Pub/sub is what a lock that waits for its release message needs (pubsub.go):
//     SUBSCRIBE and UNSUBSCRIBE of one channel each (the forms with several channels, or
//     none, answer an explicit "not modelled" error, as their replies are several frames),
//     and PUBLISH, also from scripts, pushing ["message", channel, payload] to each
//     subscriber in subscription order. A client's subscriptions live on a connection of
//     their own, so the RESP2 rule that a subscribed connection may only (un)subscribe
//     and PING is not enforced; RESP3 push frames, pattern and sharded channels, and the
//     propagation of PUBLISH to replicas (whose subscribers would hear it) are not
//     modelled. Subscriptions die with the process; a failover leaves them on the old
//     master, and nothing resubscribes a client (Redisson does, on reconnect).
//   - SET with an EXAT or PXAT in the past stores the key, which then reads as absent and
//     is removed lazily or by the cron, exactly as redis-server 7.0.15 does (DBSIZE still
//     counts it); later Redis versions delete it at once.
//   - The key limit is a count (MaxKeys): creating a key beyond it answers Redis's OOM
//     error, where Redis limits memory and refuses every write command when over it.
//   - Active expiry removes every expired key at each cron run, exactly and
//     deterministically; Redis samples keys at random and also expires between event-loop
//     iterations. Commands cannot tell (lazy expiry is exact); only memory, the timing of
//     the DELs sent to replicas and the trace can.
//   - Expired keys are dropped when the AOF is reloaded (Redis loads them and expires them
//     right after). Commands cannot tell.
//   - An fsync is instantaneous and never postponed (Redis fsyncs in a background thread
//     and may postpone a write while one is in progress).
//   - Crash models a power loss. A real process crash keeps AOF data in the OS page cache;
//     use Kill for that.
//   - A request to a full queue is dropped silently, so a client sees a timeout. Redis has
//     no bounded request queue; MaxQueue stands for the TCP backlog and client limits.
//   - Service time is the same for every command.
//   - Replication ships each write's resulting key state, not the command; full
//     resynchronisation is an instant snapshot (no RDB transfer time) and partial
//     resynchronisation is not modelled. Replicas serve no clients. The link from master
//     to replica is modelled by the delay alone: network partitions apply to client
//     traffic, not to replication.
//   - Failover is decided by the group alone (no Sentinel quorum, no replica priority): it
//     follows a crash, kill or shutdown of the master, never a pause, so the "old master
//     keeps accepting writes after being failed over" split brain is not modelled. SHUTDOWN
//     does not wait for replicas to catch up; the writes already sent still arrive.
package redis
