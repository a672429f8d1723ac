// noderedlock.js plays one conformance script with the real node-redlock 4.2.0 over
// ioredis 4 against the redis-servers the Go test started, and prints what a user of the
// library saw as one JSON line. The Go test (redsync_test.go's sibling, noderedlock_test.go)
// runs the same script through the simulator and compares. Input: one JSON argument,
// {servers: [{host, port, pid}], ttl_ms, stopped, stop_for_ms, held, held_for_ms,
// held_for_each_ms (one hold per server in held, in place of held_for_ms), retry_count,
// retry_delay_ms, retry_jitter_ms, extend, killed, restart_after_ms, powered_off,
// boot_after_ms, unlock_wait_ms, strike_before}. Servers in killed are killed (SIGKILL)
// just before lock() and, with restart_after_ms, restarted by the Go test that long after
// (kill.js); servers in powered_off lose their host's power just before lock() and, with
// boot_after_ms, boot again that long after (kill.js); servers in stopped are stopped
// (SIGSTOP) just before lock() and continued stop_for_ms later. strike_before ('extend'
// or 'unlock') moves those faults to just before that call instead. unlock_wait_ms bounds
// the wait for unlock(), which is then reported unlock_pending.
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock');
const { performance } = require('perf_hooks');
const { killServers, deadServers, sleep, quitAll } = require('./kill');

async function main() {
	const s = JSON.parse(process.argv[2]);
	const clients = s.servers.map((v) => {
		const c = new Redis({ host: v.host, port: v.port });
		c.on('error', () => {}); // a killed server's refusals are ioredis's to retry
		return c;
	});
	const opts = {};
	if (s.retry_count !== undefined) opts.retryCount = s.retry_count;
	if (s.retry_delay_ms !== undefined) opts.retryDelay = s.retry_delay_ms;
	if (s.retry_jitter_ms !== undefined) opts.retryJitter = s.retry_jitter_ms;
	const redlock = new Redlock(clients, opts);
	redlock.on('clientError', () => {});

	// Warm connections and scripts, as a long-running service has them.
	const warm = await redlock.lock('lock', s.ttl_ms);
	await warm.extend(s.ttl_ms);
	await warm.unlock();

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

	const out = { acquired: false, warm_value: warm.value, leftover: [] };
	let t = performance.now();
	let lock;
	try {
		lock = await redlock.lock('lock', s.ttl_ms);
		out.acquired = true;
		out.lock_took_ms = performance.now() - t;
		out.validity_ms = lock.expiration - Date.now();
		out.attempts = lock.attempts;
		out.value = lock.value;
	} catch (e) {
		out.lock_took_ms = performance.now() - t;
		out.attempts = e.attempts;
	}
	if (lock && s.extend) {
		await strike('extend');
		t = performance.now();
		try {
			await lock.extend(s.ttl_ms);
			out.extended = true;
		} catch (e) {
			out.extended = false;
		}
		out.extend_took_ms = performance.now() - t;
	}
	if (lock) {
		await strike('unlock');
		t = performance.now();
		const unlocked = lock.unlock().then(() => true, () => false);
		const r = await (s.unlock_wait_ms ? Promise.race([unlocked, sleep(s.unlock_wait_ms).then(() => 'pending')]) : unlocked);
		if (r === 'pending') out.unlock_pending = true;
		else out.unlocked = r;
		out.unlock_took_ms = performance.now() - t;
	}
	await Promise.all(continued);
	await Promise.all(restarted);
	await sleep(300); // the continued servers run what waited in their sockets
	const dead = deadServers(s);
	for (const [i, c] of clients.entries()) {
		out.leftover.push(out.value !== undefined && !dead.has(i) && (await c.get('lock')) === out.value);
	}
	console.log(JSON.stringify(out));
	await quitAll(clients, dead);
}

main().catch((e) => {
	console.error(e && e.stack ? e.stack : String(e));
	process.exit(1);
});
