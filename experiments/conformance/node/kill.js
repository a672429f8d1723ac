// kill.js is what noderedlock.js and noderedlock5.js share to kill servers, or cut their
// hosts' power, and have them restarted. The servers are the Go test's children, so this
// script kills one itself (SIGKILL by pid, on its own clock, as it stops them) but asks the
// Go test to start it again: a line "restart i" on stdout, answered "restarted i" on stdin
// once the server answers on its old port, empty, with MONITOR attached again. A power
// loss needs the firewall, so the Go test does it all: "poweroff i" (answered "poweredoff
// i") drops every packet to and from the server's port, destroys its sockets silently and
// kills it; "boot i" (answered "booted i") lets packets through again and restarts it, so
// that the server's new kernel state knows none of the old connections.
'use strict';
const readline = require('readline');

// closeLimitMs bounds the wait for ioredis to see a killed server's connection close: the
// kernel closes it at the kill, so a wait this long means something else is wrong.
const closeLimitMs = 5000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let lines; // stdin's lines, read only by a script that asks for a restart
const waiting = new Map(); // the answer awaited ("restarted 0") → resolve of its request

// ask writes a request line to the Go test and resolves once it answered with answer.
function ask(request, answer) {
	if (!lines) {
		lines = readline.createInterface({ input: process.stdin });
		lines.on('line', (l) => {
			const done = waiting.get(l);
			if (done) {
				waiting.delete(l);
				done();
			}
		});
	}
	return new Promise((resolve) => {
		waiting.set(answer, resolve);
		process.stdout.write(`${request}\n`);
	});
}

// restart asks the Go test to start server i again and resolves once it has.
const restart = (i) => ask(`restart ${i}`, `restarted ${i}`);

// killServers kills each server in s.killed and waits until its ioredis client has seen
// the close and set its reconnect timer (the 'reconnecting' event), so that lock() or
// acquire(), which the caller starts next, finds the connection down, as the simulated
// client does. With s.restart_after_ms it returns, per killed server, a promise that
// resolves once the server was restarted that long after its kill; else none. Then it
// cuts the power of each server in s.powered_off: its ioredis client sees nothing, and
// keeps its connection. With s.boot_after_ms it returns, per such server, a promise that
// resolves once its host has booted again that long after.
async function killServers(s, clients) {
	const restarted = [];
	for (const i of s.powered_off || []) {
		await ask(`poweroff ${i}`, `poweredoff ${i}`);
		if (s.boot_after_ms) restarted.push(sleep(s.boot_after_ms).then(() => ask(`boot ${i}`, `booted ${i}`)));
	}
	for (const i of s.killed || []) {
		const closed = new Promise((resolve) => clients[i].once('reconnecting', resolve));
		process.kill(s.servers[i].pid, 'SIGKILL');
		if (s.restart_after_ms) restarted.push(sleep(s.restart_after_ms).then(() => restart(i)));
		// The limit's timer is unref'd: once the close was seen, it must not keep the
		// script's process alive for the rest of its 5s.
		const limit = new Promise((resolve) => setTimeout(resolve, closeLimitMs, false).unref());
		const seen = await Promise.race([closed.then(() => true), limit]);
		if (!seen) throw new Error(`ioredis did not see server ${i}'s connection close within ${closeLimitMs}ms of the kill`);
	}
	return restarted;
}

// deadServers returns the servers s kills for good (killed, and not restarted; powered
// off, and not booted).
function deadServers(s) {
	return new Set([...(s.restart_after_ms ? [] : s.killed || []), ...(s.boot_after_ms ? [] : s.powered_off || [])]);
}

// quitAll quits every client. A command queued for a server that never answered (a dead
// one, or one an attempt stopped waiting for) stays queued in ioredis, and quit(), which
// waits for its QUIT's reply behind it, would hang: a dead server's client is closed at
// once, the others are given a moment to quit before their sockets are closed outright.
async function quitAll(clients, dead) {
	for (const i of dead) clients[i].disconnect();
	const live = clients.filter((c, i) => !dead.has(i));
	await Promise.race([Promise.allSettled(live.map((c) => c.quit())), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
	for (const c of live) c.disconnect();
}

module.exports = { killServers, deadServers, sleep, quitAll };
