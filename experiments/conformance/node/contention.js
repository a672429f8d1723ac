// contention.js plays a contention script with the real node-redlock (4.2.0 over ioredis 4,
// or 5.0.0-beta.2 over ioredis 5) against the redis-servers the Go test started
// (noderedlock_contention_test.go), and prints what the two clients saw as one JSON line.
// Input: one JSON argument, {version: 4 or 5, servers: [{host, port, pid}], killed (servers
// killed for good before either client starts), ttl_ms, retry_delay_ms (retryJitter 0),
// lag_ms (how long after client1 client2 starts), hold_ms (how long client1 holds from its
// lock's return to its unlock), cut_ms (how long after its start client2's lock is waited
// for: then it is reported pending)}. Each client is its own Redlock over its own ioredis
// clients, as two processes have. Neither warms up: the servers' script caches start
// empty on both sides.
//
// Output: {c1: {acquired, took_ms, value}, c2: {acquired, pending, took_ms, attempts,
// value}}: attempts and value only when the lock returned (4.2.0 reports attempts on the
// lock, 5.0.0 an array of them); the Go test reads a pending client's from MONITOR.
'use strict';
const { performance } = require('perf_hooks');
const { sleep } = require('./kill');

// limitMs bounds the whole script, as noderedlock5.js's does.
const limitMs = 60000;

async function main() {
	const s = JSON.parse(process.argv[2]);
	const v5 = s.version === 5;
	const Redis = require(v5 ? 'ioredis5' : 'ioredis');
	const Redlock = v5 ? require('redlock5').default : require('redlock');
	const settings = { retryDelay: s.retry_delay_ms, retryJitter: 0 };
	const connect = () => s.servers.map((v) => {
		const c = new Redis({ host: v.host, port: v.port });
		c.on('error', () => {}); // a killed server's refusals are ioredis's to retry
		return c;
	});
	const clients = [connect(), connect()];
	await Promise.all(clients.flat().map((c) => (c.status === 'ready' ? null : new Promise((r) => c.once('ready', r)))));
	const redlocks = clients.map((cs) => {
		const r = new Redlock(cs, settings);
		r.on(v5 ? 'error' : 'clientError', () => {});
		return r;
	});
	const lock = (r) => (v5 ? r.acquire(['lock'], s.ttl_ms) : r.lock('lock', s.ttl_ms));
	const unlock = (l) => (v5 ? l.release() : l.unlock());

	// Kill the servers, and wait until both clients' connections to them have seen the
	// close (ioredis's 'reconnecting'), as kill.js's killServers does for one.
	for (const i of s.killed) {
		const closed = clients.map((cs) => new Promise((resolve) => cs[i].once('reconnecting', resolve)));
		process.kill(s.servers[i].pid, 'SIGKILL');
		await Promise.all(closed);
	}

	const out = { c1: { acquired: false }, c2: { acquired: false, pending: false } };
	const t1 = performance.now();
	const first = lock(redlocks[0]).then(async (l) => {
		Object.assign(out.c1, { acquired: true, took_ms: performance.now() - t1, value: l.value });
		await sleep(s.hold_ms);
		unlock(l).catch(() => {}); // it may wait for a dead server: nobody waits for it
	}, () => {
		out.c1.took_ms = performance.now() - t1;
	});
	await sleep(s.lag_ms - (performance.now() - t1));
	const t2 = performance.now();
	const second = lock(redlocks[1]).then((l) => {
		Object.assign(out.c2, { acquired: true, took_ms: performance.now() - t2, value: l.value,
			attempts: v5 ? l.attempts.length : l.attempts });
	}, (e) => {
		Object.assign(out.c2, { took_ms: performance.now() - t2, attempts: v5 ? (e.attempts || []).length : e.attempts });
	});
	const r = await Promise.race([second.then(() => 'done'), sleep(s.cut_ms).then(() => 'pending')]);
	if (r === 'pending') out.c2.pending = true;
	await Promise.race([first, sleep(0)]);
	console.log(JSON.stringify(out));
	for (const c of clients.flat()) c.disconnect();
	process.exit(0);
}

const watchdog = setTimeout(() => {
	console.error(`contention.js: not done after ${limitMs}ms`);
	process.exit(2);
}, limitMs);
watchdog.unref();

main().catch((e) => {
	console.error(e && e.stack ? e.stack : String(e));
	process.exit(1);
});
