// noderedlock5.js plays one conformance script with the real node-redlock 5.0.0-beta.2
// over ioredis 5 (the npm aliases redlock5 and ioredis5, beside 4.2.0 and ioredis 4)
// against the redis-servers the Go test started, and prints what a user of the library saw
// as one JSON line. The Go test (noderedlock5_test.go) runs the same script through the
// simulator with client=node-redlock-5 and compares. Input: one JSON argument, as
// noderedlock.js's: {servers: [{host, port, pid}], ttl_ms, stopped, stop_for_ms, held,
// held_for_ms, held_for_each_ms, retry_count, retry_delay_ms, retry_jitter_ms, extend,
// killed, restart_after_ms, powered_off, boot_after_ms, unlock_wait_ms, strike_before}.
// strike_before ('lock', the default, 'extend' or 'unlock') names the call the stops and
// kills come just before; unlock_wait_ms bounds the wait for release(), which is then
// reported unlock_pending.
//
// Output: acquired, lock_took_ms, validity_ms (lock.expiration − Date.now() as acquire()
// returned: 5.0.0-beta.2 never checks it, so it may be negative), attempts (the attempts
// acquire() made), extended, extend_took_ms, unlocked (release() reached a quorum),
// unlock_took_ms, value (the compared acquire's value, or "" when it failed: the Go side
// then reads it from MONITOR), warm_value (the warm-up's value, which it skips), leftover.
'use strict';
const Redis = require('ioredis5');
const Redlock = require('redlock5').default;
const { performance } = require('perf_hooks');
const { killServers, deadServers, sleep, quitAll } = require('./kill');

// limitMs bounds the whole script: a bug that leaves a promise unresolved fails the Go
// test with a message instead of hanging it until go test's own timeout.
const limitMs = 120000;

// votesWaitMs bounds the wait for the servers an operation did not wait for (its
// attempts' statistics, which resolve once every server answered): a restarted server
// answers at ioredis's reconnect, within a second of its restart. (A dead one answers
// only when ioredis fails its queued commands, 10.5s into the outage and then every
// 33s: a script with one does not wait.)
const votesWaitMs = 1000;

async function main() {
	const s = JSON.parse(process.argv[2]);
	const clients = s.servers.map((v) => {
		const c = new Redis({ host: v.host, port: v.port });
		c.on('error', () => {}); // a stopped or killed server's errors are votes against, not crashes
		return c;
	});
	const settings = {};
	if (s.retry_count !== undefined) settings.retryCount = s.retry_count;
	if (s.retry_delay_ms !== undefined) settings.retryDelay = s.retry_delay_ms;
	if (s.retry_jitter_ms !== undefined) settings.retryJitter = s.retry_jitter_ms;
	const redlock = new Redlock(clients, settings);

	// Warm connections and scripts, as a long-running service has them. Each operation
	// resolves at a quorum; the last servers' replies are awaited here so that the
	// compared acquire starts with nothing of the warm-up in flight.
	const warm = await redlock.acquire(['lock'], s.ttl_ms);
	const warmExt = await warm.extend(s.ttl_ms);
	await Promise.all(warmExt.attempts);
	const warmRel = await warmExt.release();
	await Promise.all(warmRel.attempts);

	const heldFor = s.held_for_each_ms || s.held.map(() => s.held_for_ms);
	for (const [k, i] of s.held.entries()) await clients[i].set('lock', 'outside', 'PX', heldFor[k], 'NX');
	// strike stops and kills servers as the script says, just before the call it names
	// (strike_before: 'lock' by default, 'extend' or 'unlock'). A kill after the first call
	// waits 100ms first: Redis writes MONITOR's lines after the replies of the same loop,
	// and the last call's lines must reach the monitors before the kill cuts them off.
	const strikeBefore = s.strike_before || 'lock';
	let continued = [];
	let restarted = [];
	const strike = async (call) => {
		if (call !== strikeBefore) return;
		if (call !== 'lock' && (s.killed.length > 0 || (s.powered_off || []).length > 0)) await sleep(100);
		continued = s.stopped.map((i) => {
			process.kill(s.servers[i].pid, 'SIGSTOP');
			return new Promise((resolve) => setTimeout(() => {
				process.kill(s.servers[i].pid, 'SIGCONT');
				resolve();
			}, s.stop_for_ms));
		});
		restarted = await killServers(s, clients);
	};
	await strike('lock');

	const out = { acquired: false, value: '', warm_value: warm.value, leftover: [] };
	const votes = []; // every attempt's statistics: all of its servers' answers
	let t = performance.now();
	let lock;
	try {
		lock = await redlock.acquire(['lock'], s.ttl_ms);
		out.acquired = true;
		out.lock_took_ms = performance.now() - t;
		out.validity_ms = lock.expiration - Date.now();
		out.attempts = lock.attempts.length;
		out.value = lock.value;
		votes.push(...lock.attempts);
	} catch (e) {
		out.lock_took_ms = performance.now() - t;
		out.attempts = e.attempts ? e.attempts.length : 0;
		out.error = String(e && e.message);
	}
	if (lock && s.extend) {
		await strike('extend');
		t = performance.now();
		try {
			lock = await lock.extend(s.ttl_ms);
			out.extended = true;
			votes.push(...lock.attempts);
		} catch (e) {
			out.extended = false;
			out.extend_error = String(e && e.message);
		}
		out.extend_took_ms = performance.now() - t;
	}
	if (lock) {
		await strike('unlock');
		t = performance.now();
		const released = lock.release().then(({ attempts }) => {
			votes.push(...attempts);
			return true;
		}, () => false);
		const r = await (s.unlock_wait_ms ? Promise.race([released, sleep(s.unlock_wait_ms).then(() => 'pending')]) : released);
		if (r === 'pending') out.unlock_pending = true;
		else out.unlocked = r;
		out.unlock_took_ms = performance.now() - t;
	}
	await Promise.all(continued);
	await Promise.all(restarted);
	// A killed server's commands wait in ioredis's offline queue until the reconnect after
	// its restart: the keys are read once it ran them (or after votesWaitMs).
	const dead = deadServers(s);
	if (dead.size === 0) await Promise.race([Promise.all(votes), sleep(votesWaitMs)]);
	await sleep(300); // the continued servers run what waited in their sockets
	const value = out.value;
	for (const [i, c] of clients.entries()) out.leftover.push(value !== '' && !dead.has(i) && (await c.get('lock')) === value);
	console.log(JSON.stringify(out));
	await quitAll(clients, dead);
}

const watchdog = setTimeout(() => {
	console.error(`noderedlock5.js: not done after ${limitMs}ms`);
	process.exit(2);
}, limitMs);
watchdog.unref();

main().catch((e) => {
	console.error(e && e.stack ? e.stack : String(e));
	process.exit(1);
});
