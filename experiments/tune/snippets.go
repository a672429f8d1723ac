package tune

import (
	"fmt"
	"go/format"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file renders a recommendation in each library's own terms: its options in their
// units, and the snippet to paste (library.go holds what each library lets a user set).

// millis returns d in whole milliseconds, rounded to the nearest and at least 1 when d is
// positive: what an option in ms can say.
func millis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return max(int64((d+time.Millisecond/2)/time.Millisecond), 1)
}

// msDuration is millis(d) as a duration.
func msDuration(d time.Duration) time.Duration { return time.Duration(millis(d)) * time.Millisecond }

// roundedNote says that an option in ms changed d, or nothing when it did not.
func roundedNote(d time.Duration) string {
	if msDuration(d) == d {
		return ""
	}
	return fmt.Sprintf("%v rounded to whole ms", d)
}

// goDuration writes d as a Go constant expression: 2300 * time.Millisecond.
func goDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}} {
		if d != 0 && d%u.d == 0 {
			if d == u.d {
				return "time." + u.name
			}
			return fmt.Sprintf("%d * time.%s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Nanosecond", int64(d))
}

// seconds writes d in seconds to the millisecond, as Python's time.sleep and redis-py's
// socket_timeout take it: 0.096.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(float64(millis(d))/1000, 'f', -1, 64)
}

// formatFactor writes a factor as the shortest decimal that reads back as it.
func formatFactor(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// retryWindow is the recommendation's retry wait, uniform in [lo, hi), with the note
// that lo was clamped at 0 when the jitter exceeds the delay.
func retryWindow(r Recommendation) (lo, hi time.Duration, note string) {
	lo, hi = r.RetryDelay-r.RetryJitter, r.RetryDelay+r.RetryJitter
	if lo < 0 {
		note = fmt.Sprintf("the jitter exceeds the delay: waits below 0 (%v) are 0", lo)
		lo = 0
	}
	return lo, hi, note
}

// spec

func renderSpec(r Recommendation) rendering {
	lo, hi, _ := retryWindow(r)
	opts := []Option{
		{"TTL", r.TTL.String(), "SET resource_name my_random_value NX PX " + strconv.FormatInt(millis(r.TTL), 10)},
		{"CLOCK_DRIFT", fmt.Sprintf("TTL × %s + %v", formatFactor(r.DriftFactor), r.DriftPad), ""},
		{"per-instance timeout", r.Timeout.String(), ""},
		{"retry after a random delay", waitText(lo, hi), fmt.Sprintf("%v ± %v", r.RetryDelay, r.RetryJitter)},
		{"attempts", strconv.Itoa(r.Tries), ""},
	}
	extend := "no extension: the work fits in the validity"
	if r.Extend {
		opts = append(opts, Option{"extend the lock", fmt.Sprintf("every %v, at most %d times a hold", r.ExtendEvery, r.MaxExtensions), ""})
		extend = fmt.Sprintf("every %v, at most %d times a hold", r.ExtendEvery, r.MaxExtensions)
	}
	var b strings.Builder
	b.WriteString("# Redlock as the page (redis.io, Distributed Locks with Redis) describes it:\n")
	b.WriteString("# the settings redlock-sim tune recommended.\n")
	fmt.Fprintf(&b, "TTL                   %v   # SET resource_name my_random_value NX PX %d\n", r.TTL, millis(r.TTL))
	fmt.Fprintf(&b, "CLOCK_DRIFT           TTL × %s + %v\n", formatFactor(r.DriftFactor), r.DriftPad)
	fmt.Fprintf(&b, "per-instance timeout  %v   # small compared to the auto-release time\n", r.Timeout)
	fmt.Fprintf(&b, "attempts              %d\n", r.Tries)
	fmt.Fprintf(&b, "retry after           %s   # %v ± %v\n", waitText(lo, hi), r.RetryDelay, r.RetryJitter)
	fmt.Fprintf(&b, "extend                %s\n", extend)
	b.WriteString("MIN_VALIDITY = TTL − (T2 − T1) − CLOCK_DRIFT\n")
	b.WriteString(fencingLine(r, "# "))
	return rendering{opts: opts, code: b.String(), eff: r}
}

// attempts writes n attempts in words: "1 attempt", "12 attempts".
func attempts(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return strconv.Itoa(n) + " attempts"
}

// waitText describes a retry wait uniform in [lo, hi), or a fixed one when they meet.
func waitText(lo, hi time.Duration) string {
	if lo == hi {
		return fmt.Sprintf("a fixed %v", lo)
	}
	return fmt.Sprintf("uniform in [%v, %v)", lo, hi)
}

// waitTextMs is waitText for whole milliseconds.
func waitTextMs(lo, hi int64) string {
	if lo == hi {
		return fmt.Sprintf("a fixed %d ms", lo)
	}
	return fmt.Sprintf("uniform in [%d, %d) ms", lo, hi)
}

// notes joins the non-empty notes with "; ".
func notes(ns ...string) string {
	var out []string
	for _, n := range ns {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// fencingLine is the snippet's closing comment when r relies on fencing tokens: the lock
// libraries modelled issue none (Redisson's RFencedLock is not its RLock), so the
// engineer must add them, and the snippet says so where it will be read.
func fencingLine(r Recommendation, comment string) string {
	if !r.Fencing {
		return ""
	}
	return "\n" + comment + "Fencing: this recommendation is safe only if the resource checks a fencing token on\n" +
		comment + "every write and refuses an older one. The lock does not issue one: take it from a\n" +
		comment + "counter that only grows, and pass it with every write.\n"
}

// redsync

// timeoutFactor returns redsync's timeoutFactor for a per-node timeout and ttl: their
// ratio rounded down to three significant digits, so that it reads well and never waits
// longer than the arithmetic assumed; and the wait redsync then gives, computed as
// mutex.go does (time.Duration(int64(float64(expiry) × timeoutFactor))).
func timeoutFactor(timeout, ttl time.Duration) (string, time.Duration) {
	if ttl <= 0 || timeout <= 0 {
		return "0", 0
	}
	x := float64(timeout) / float64(ttl) * (1 + 1e-12) // forgive the ulp below an exact ratio
	e := int(math.Floor(math.Log10(x))) - 2
	digits := math.Floor(x / math.Pow10(e))
	s := strconv.FormatFloat(digits, 'f', 0, 64) + "e" + strconv.Itoa(e)
	f, _ := strconv.ParseFloat(s, 64) // a decimal written here always parses
	s = formatFactor(f)
	return s, time.Duration(int64(float64(ttl) * f))
}

// goReadTimeout is go-redis v9's default ReadTimeout (options.go).
const goReadTimeout = 5 * time.Second

func renderRedsync(r Recommendation) rendering {
	r.Tries = max(r.Tries, 1)
	factor, wait := timeoutFactor(r.Timeout, r.TTL)
	eff := r
	eff.DriftPad, eff.Timeout = 0, wait
	opts := []Option{
		{"redsync.WithExpiry", goDuration(r.TTL), ""},
		{"redsync.WithDriftFactor", formatFactor(r.DriftFactor), "validity = expiry − elapsed − expiry × driftFactor, nothing added"},
		{"redsync.WithTimeoutFactor", factor, fmt.Sprintf("%v × %s = %v per node; needs ContextTimeoutEnabled", r.TTL, factor, wait)},
		{"goredislib.Options.ContextTimeoutEnabled", "true", "on every client: without it each node's wait is ReadTimeout (5s), retried"},
	}
	if wait > goReadTimeout {
		opts = append(opts, Option{"goredislib.Options.ReadTimeout", goDuration(wait), "above go-redis's 5s default, which would otherwise end the read first and retry it"})
	}
	opts = append(opts, Option{"redsync.WithTries", strconv.Itoa(r.Tries), ""})
	lo, hi, note := retryWindow(r)
	var delayOpt string
	if r.RetryJitter == 0 {
		opts = append(opts, Option{"redsync.WithRetryDelay", goDuration(r.RetryDelay), "no jitter"})
		delayOpt = fmt.Sprintf("redsync.WithRetryDelay(%s),", goDuration(r.RetryDelay))
	} else {
		opts = append(opts, Option{"redsync.WithRetryDelayFunc", fmt.Sprintf("%s + rand.N(%s)", goDuration(lo), goDuration(hi-lo)),
			notes(fmt.Sprintf("%s: %v ± %v", waitText(lo, hi), r.RetryDelay, r.RetryJitter), note)})
		delayOpt = fmt.Sprintf(`redsync.WithRetryDelayFunc(func(int) time.Duration {
			// uniform in [%v, %v): %v ± %v
			return %s + rand.N(%s)
		}),`, lo, hi, r.RetryDelay, r.RetryJitter, goDuration(lo), goDuration(hi-lo))
	}
	if r.Extend {
		opts = append(opts, Option{"mutex.ExtendContext", fmt.Sprintf("every %v, at most %d times a hold", r.ExtendEvery, r.MaxExtensions), "the application's loop"})
	}
	imports := []string{`"context"`}
	if r.RetryJitter != 0 {
		imports = append(imports, `"math/rand/v2"`)
	}
	imports = append(imports, `"time"`)
	var b strings.Builder
	fmt.Fprintf(&b, `// redsync v4.17.0 over go-redis v9.23.0: the settings redlock-sim tune recommended.
// go get github.com/go-redsync/redsync/v4@v4.17.0 github.com/redis/go-redis/v9@v9.23.0
package lock

import (
	%s

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

// expiry is the keys' ttl; timeoutFactor × expiry (%v) is each node's wait, as redsync
// computes it.
const (
	expiry        = %s
	timeoutFactor = %s
)

// newMutex returns the lock named name on the independent masters at addrs.
func newMutex(addrs []string, name string) *redsync.Mutex {
	pools := make([]redis.Pool, 0, len(addrs))
	for _, addr := range addrs {
		client := goredislib.NewClient(&goredislib.Options{
			Addr: addr,
			// Without it go-redis ignores redsync's deadlines: every node's wait is
			// ReadTimeout (5s), and a read that timed out is retried (MaxRetries 3).
			ContextTimeoutEnabled: true,
`, strings.Join(imports, "\n"), wait, goDuration(r.TTL), factor)
	if wait > goReadTimeout {
		fmt.Fprintf(&b, "\t\t\t// Above the 5s default, which would end the read first.\n\t\t\tReadTimeout: %s,\n", goDuration(wait))
	}
	fmt.Fprintf(&b, `		})
		pools = append(pools, goredis.NewPool(client))
	}
	return redsync.New(pools...).NewMutex(name,
		redsync.WithExpiry(expiry),
		redsync.WithDriftFactor(%s), // the whole drift allowance: redsync adds nothing to it
		redsync.WithTimeoutFactor(timeoutFactor),
		redsync.WithTries(%d),
		%s
	)
}

// nodeDeadline bounds a call to each master by the per-node wait: Extend and Unlock
// pass no deadline of their own.
func nodeDeadline() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Duration(float64(expiry)*timeoutFactor))
}
`, formatFactor(r.DriftFactor), r.Tries, delayOpt)
	if r.Extend {
		fmt.Fprintf(&b, `
// extend renews m's keys to the full expiry. redsync does not extend by itself: call it
// every %v, at most %d times a hold, and stop using the resource once it fails or
// m.Until() has passed.
func extend(m *redsync.Mutex) (bool, error) {
	ctx, cancel := nodeDeadline()
	defer cancel()
	return m.ExtendContext(ctx)
}
`, r.ExtendEvery, r.MaxExtensions)
	}
	b.WriteString(`
// unlock releases m on every master.
func unlock(m *redsync.Mutex) (bool, error) {
	ctx, cancel := nodeDeadline()
	defer cancel()
	return m.UnlockContext(ctx)
}
`)
	b.WriteString(fencingLine(r, "// "))
	return rendering{opts: opts, code: gofmt(b.String()), eff: eff}
}

// gofmt formats Go source, or returns it as it is if it does not parse (a test catches
// that).
func gofmt(src string) string {
	out, err := format.Source([]byte(src))
	if err != nil {
		return src
	}
	return string(out)
}

// node-redlock 4.2.0 and 5.0.0-beta.2

func renderNodeRedlock(r Recommendation, v5 bool) rendering {
	r.Tries = max(r.Tries, 1) // retryCount −1 would retry without end
	ttl, timeout := millis(r.TTL), millis(r.Timeout)
	delay, jitter := millis(r.RetryDelay), millis(r.RetryJitter)
	every := millis(r.ExtendEvery)
	eff := r
	eff.TTL, eff.DriftPad, eff.Timeout = msDuration(r.TTL), 2*time.Millisecond, msDuration(r.Timeout)
	eff.RetryDelay, eff.RetryJitter = msDuration(r.RetryDelay), msDuration(r.RetryJitter)
	if r.Extend {
		eff.ExtendEvery = msDuration(r.ExtendEvery)
	}
	var clamp string
	if delay < jitter {
		clamp = "waits below 0 are 0"
	}
	lockCall, ttlName, waits := "redlock.lock(resource, ttl)", "ttl", "an attempt waits for every server"
	if v5 {
		lockCall, ttlName, waits = "redlock.acquire([resource], duration)", "duration", "an attempt waits until a quorum voted"
	}
	opts := []Option{
		{lockCall, strconv.FormatInt(ttl, 10), notes("ms", roundedNote(r.TTL))},
		{"driftFactor", formatFactor(r.DriftFactor), fmt.Sprintf("drift = round(%s × %s) + 2 ms: the 2 ms pad is fixed", formatFactor(r.DriftFactor), ttlName)},
		{"commandTimeout", strconv.FormatInt(timeout, 10), notes("ms, on each ioredis client: node-redlock has no timeout of its own", roundedNote(r.Timeout))},
		{"retryCount", strconv.Itoa(r.Tries - 1), fmt.Sprintf("tries − 1: %s in all", attempts(r.Tries))},
		{"retryDelay", strconv.FormatInt(delay, 10), notes("ms", roundedNote(r.RetryDelay))},
		{"retryJitter", strconv.FormatInt(jitter, 10), notes("ms: each wait "+waitTextMs(max(delay-jitter, 0), delay+jitter)+", in whole ms", roundedNote(r.RetryJitter), clamp)},
	}
	if r.Extend {
		opts = append(opts, Option{"lock.extend(" + ttlName + ")", fmt.Sprintf("every %d ms, at most %d times a hold", every, r.MaxExtensions), "the application's timer"})
	}
	var b strings.Builder
	if v5 {
		b.WriteString(`// node-redlock 5.0.0-beta.2 over ioredis 5: the settings redlock-sim tune recommended.
// npm install redlock@5.0.0-beta.2 ioredis@5
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock').default;
`)
	} else {
		b.WriteString(`// node-redlock 4.2.0 over ioredis 4: the settings redlock-sim tune recommended.
// npm install redlock@4.2.0 ioredis@4
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock');
`)
	}
	fmt.Fprintf(&b, `
// One client per independent master (your hosts here). node-redlock has no timeout of
// its own (%s), so ioredis's commandTimeout, in ms, bounds
// each node's wait, for the releases and extensions too.
const clients = ['redis-1', 'redis-2', 'redis-3'].map(
  (host) => new Redis({ host, port: 6379, commandTimeout: %d }),
);

const redlock = new Redlock(clients, {
  driftFactor: %s, // drift = round(%s × %s) + 2 ms
  retryCount: %d, // %s in all
  retryDelay: %d, // ms
  retryJitter: %d, // ms: each wait %s
});

const %s = %d; // ms
`, waits, timeout, formatFactor(r.DriftFactor), formatFactor(r.DriftFactor), ttlName, r.Tries-1, attempts(r.Tries), delay, jitter, waitTextMs(max(delay-jitter, 0), delay+jitter), ttlName, ttl)
	if v5 {
		renderNodeRedlock5Use(&b, r, every)
	} else {
		renderNodeRedlock4Use(&b, r, every)
	}
	b.WriteString("\nmodule.exports = { redlock, withLock };\n")
	b.WriteString(fencingLine(r, "// "))
	return rendering{opts: opts, code: b.String(), eff: eff}
}

func renderNodeRedlock4Use(b *strings.Builder, r Recommendation, every int64) {
	if !r.Extend {
		b.WriteString(`
// withLock runs work(lock) holding resource; work must stop once Date.now() passes
// lock.expiration.
async function withLock(resource, work) {
  const lock = await redlock.lock(resource, ttl);
  try {
    return await work(lock);
  } finally {
    await lock.unlock().catch(() => {});
  }
}
`)
		return
	}
	fmt.Fprintf(b, `
// withLock runs work(lock) holding resource. node-redlock does not extend by itself: this
// extends every %d ms, at most %d times; work must stop once Date.now() passes
// lock.expiration (a lost extension leaves it as it was, and unlocks the lock).
async function withLock(resource, work) {
  const lock = await redlock.lock(resource, ttl);
  let extensions = 0;
  const timer = setInterval(() => {
    if (extensions === %d) {
      clearInterval(timer);
      return;
    }
    extensions++;
    lock.extend(ttl).catch(() => clearInterval(timer));
  }, %d);
  try {
    return await work(lock);
  } finally {
    clearInterval(timer);
    await lock.unlock().catch(() => {});
  }
}
`, every, r.MaxExtensions, r.MaxExtensions, every)
}

func renderNodeRedlock5Use(b *strings.Builder, r Recommendation, every int64) {
	b.WriteString(`
// withLock runs work(current) holding resource; current() is the lock, whose expiration
// work must not pass. acquire() never checks the validity it returns, so this does.
async function withLock(resource, work) {
  let lock = await redlock.acquire([resource], duration);
  if (lock.expiration <= Date.now()) {
    await lock.release().catch(() => {});
    throw new Error('the lock on ' + resource + ' came after its validity ended');
  }
`)
	if !r.Extend {
		b.WriteString(`  try {
    return await work(() => lock);
  } finally {
    await lock.release().catch(() => {});
  }
}
`)
		return
	}
	fmt.Fprintf(b, `  // node-redlock does not extend by itself (using() would, on a rhythm of its own):
  // this extends every %d ms, at most %d times.
  let extensions = 0;
  const timer = setInterval(() => {
    if (extensions === %d) {
      clearInterval(timer);
      return;
    }
    extensions++;
    lock.extend(duration).then(
      (next) => {
        lock = next;
      },
      () => clearInterval(timer),
    );
  }, %d);
  try {
    return await work(() => lock);
  } finally {
    clearInterval(timer);
    await lock.release().catch(() => {});
  }
}
`, every, r.MaxExtensions, r.MaxExtensions, every)
}

// redlock-py 1.0.8

func renderRedlockPy(r Recommendation, redis8 bool) rendering {
	r.Tries = max(r.Tries, 1)
	eff := r
	eff.TTL, eff.DriftPad, eff.Timeout = msDuration(r.TTL), 2*time.Millisecond, msDuration(r.Timeout)
	eff.RetryDelay, eff.RetryJitter = msDuration(r.RetryDelay), 0
	eff.Extend, eff.ExtendEvery, eff.MaxExtensions = false, 0, 0
	ttl := millis(r.TTL)
	opts := []Option{
		{"dlm.lock(resource, ttl)", strconv.FormatInt(ttl, 10), notes("ms, an int", roundedNote(r.TTL))},
		{"clock_drift_factor", formatFactor(r.DriftFactor), "set on the instance; drift = int(factor × ttl) + 2 ms: the 2 ms pad is fixed"},
		{"socket_timeout", seconds(r.Timeout), notes("s, in each connection dict (redis-py): redlock-py has no timeout of its own", roundedNote(r.Timeout))},
		{"retry_count", strconv.Itoa(r.Tries), attempts(r.Tries) + " in all"},
		{"retry_delay", seconds(r.RetryDelay), notes(fmt.Sprintf("s, every time: no jitter (the recommendation's ± %v cannot be set)", r.RetryJitter), roundedNote(r.RetryDelay))},
	}
	head, conn := `# redlock-py 1.0.8 over redis-py 3.1 to 6.x: the settings redlock-sim tune recommended.
# pip install redlock-py==1.0.8 "redis>=3.1,<7"
from redlock import Redlock
`, `"socket_timeout": %s`
	if redis8 {
		opts = append(opts, Option{"retry", "Retry(NoBackoff(), 0)", "in each connection dict: redis-py 8 retries a failed command 10 times, which would multiply the timeout"})
		head, conn = `# redlock-py 1.0.8 over redis-py 8: the settings redlock-sim tune recommended.
# pip install redlock-py==1.0.8 "redis>=8,<9"
from redlock import Redlock
from redis.backoff import NoBackoff
from redis.retry import Retry
`, `"socket_timeout": %s, "retry": Retry(NoBackoff(), 0)`
	}
	var b strings.Builder
	fmt.Fprintf(&b, head+`
# One dict per independent master (your hosts here). redlock-py has no timeout of its
# own: redis-py's socket_timeout, in seconds, bounds each node's wait. The masters are
# asked one after another, and a server that timed out makes an attempt that won anyway
# raise MultipleRedlockException, leaving its keys to expire.
servers = [
    {"host": host, "port": 6379, `+conn+`}
    for host in ("redis-1", "redis-2", "redis-3")
]
# %s, %s s apart: redlock-py has no jitter.
dlm = Redlock(servers, retry_count=%d, retry_delay=%s)
dlm.clock_drift_factor = %s  # drift = int(%s * ttl) + 2 ms

TTL_MS = %d

lock = dlm.lock("resource", TTL_MS)  # False when not acquired
if lock:
    try:
        pass  # the work: lock.validity ms from the attempt's start
    finally:
        dlm.unlock(lock)
`, seconds(r.Timeout), attempts(r.Tries), seconds(r.RetryDelay), r.Tries, seconds(r.RetryDelay),
		formatFactor(r.DriftFactor), formatFactor(r.DriftFactor), ttl)
	if r.Extend {
		fmt.Fprintf(&b, "\n# redlock-py cannot extend a lock: the recommended extension every %v cannot be\n# set, and a hold must end within its validity.\n", r.ExtendEvery)
	}
	b.WriteString(fencingLine(r, "# "))
	return rendering{opts: opts, code: b.String(), eff: eff}
}

// RedLock.net 2.3.2

// redlockNetMinRetryDelayMs and redlockNetMinExpiry are RedLock.net's floors
// (RedLockRetryConfiguration's check; RedLock's MinimumExpiryTime).
const (
	redlockNetMinRetryDelayMs = 10
	redlockNetMinExpiry       = 10 * time.Millisecond
)

func renderRedlockNet(r Recommendation) rendering {
	ttl := millis(max(r.TTL, redlockNetMinExpiry))
	timeout := millis(r.Timeout)
	_, hi, _ := retryWindow(r)
	wait := max(millis(hi), redlockNetMinRetryDelayMs)
	eff := r
	eff.TTL, eff.DriftFactor, eff.DriftPad = time.Duration(ttl)*time.Millisecond, 0.01, 2*time.Millisecond
	eff.Timeout = msDuration(r.Timeout)
	eff.RetryDelay = time.Duration(wait) * time.Millisecond / 2
	eff.RetryJitter = eff.RetryDelay
	eff.Tries = max(r.Tries, 1)
	eff.Extend, eff.ExtendEvery, eff.MaxExtensions = true, time.Duration(ttl/2)*time.Millisecond, 1000000
	opts := []Option{
		{"CreateLock(resource, expiryTime)", fmt.Sprintf("TimeSpan.FromMilliseconds(%d)", ttl), notes(roundedNote(r.TTL))},
		{"RedLockEndPoint.SyncTimeout", strconv.FormatInt(timeout, 10), notes("ms, on each endpoint; with CreateLock, the synchronous call", roundedNote(r.Timeout))},
		{"RedLockRetryConfiguration retryCount", strconv.Itoa(eff.Tries), attempts(eff.Tries) + " in all"},
		{"RedLockRetryConfiguration retryDelayMs", strconv.FormatInt(wait, 10),
			fmt.Sprintf("each wait uniform in [0, %d) ms, RedLock.net's only shape: it keeps the recommendation's longest wait (%v + %v), not its shortest (%v)",
				wait, r.RetryDelay, r.RetryJitter, max(r.RetryDelay-r.RetryJitter, 0))},
	}
	var b strings.Builder
	fmt.Fprintf(&b, `// RedLock.net 2.3.2: the settings redlock-sim tune recommended.
// dotnet add package RedLock.net --version 2.3.2
using System;
using System.Collections.Generic;
using System.Net;
using RedLockNet.SERedis;
using RedLockNet.SERedis.Configuration;

// One endpoint per independent master (your hosts here). SyncTimeout, in ms, is each
// node's wait.
var endPoints = new List<RedLockEndPoint>
{
    new RedLockEndPoint(new DnsEndPoint("redis-1", 6379)) { SyncTimeout = %d },
    new RedLockEndPoint(new DnsEndPoint("redis-2", 6379)) { SyncTimeout = %d },
    new RedLockEndPoint(new DnsEndPoint("redis-3", 6379)) { SyncTimeout = %d },
};

// %s, each wait uniform in [0, %d) ms: RedLock.net has no other retry shape.
var factory = RedLockFactory.Create(endPoints, new RedLockRetryConfiguration(retryCount: %d, retryDelayMs: %d));

var expiry = TimeSpan.FromMilliseconds(%d);

// The synchronous CreateLock waits SyncTimeout exactly; CreateLockAsync's calls time out
// only on StackExchange.Redis's 1 s heartbeat. The drift (0.01 × expiry + 2 ms) is fixed.
using (var redLock = factory.CreateLock("resource", expiry))
{
    if (redLock.IsAcquired)
    {
        // The work. RedLock.net extends the lock every expiry/2 (%d ms) until it is
        // disposed, whatever the work does.
    }
}
`, timeout, timeout, timeout, attempts(eff.Tries), wait, eff.Tries, wait, ttl, ttl/2)
	b.WriteString(fencingLine(r, "// "))
	return rendering{opts: opts, code: b.String(), eff: eff}
}

// Redisson 3.43.0

func renderRedisson(r Recommendation, redLock bool) rendering {
	ttl, timeout := millis(r.TTL), millis(r.Timeout)
	eff := r
	eff.TTL, eff.DriftFactor, eff.DriftPad = time.Duration(ttl)*time.Millisecond, 0, 0
	eff.Timeout = msDuration(r.Timeout)
	eff.RetryDelay, eff.RetryJitter, eff.Tries = 1500*time.Millisecond, 0, 4
	eff.ExtendEvery, eff.MaxExtensions = 0, 0
	if r.Extend {
		eff.ExtendEvery, eff.MaxExtensions = time.Duration(ttl/3)*time.Millisecond, 1000000
	}
	opts := []Option{}
	if r.Extend {
		opts = append(opts, Option{"Config.setLockWatchdogTimeout", strconv.FormatInt(ttl, 10),
			notes(fmt.Sprintf("ms, with lock(): the watchdog renews every %d ms, without limit", ttl/3), roundedNote(r.TTL))})
	} else {
		opts = append(opts, Option{"lock(leaseTime, unit)", fmt.Sprintf("lock(%d, TimeUnit.MILLISECONDS)", ttl),
			notes("no watchdog: the key expires after the lease", roundedNote(r.TTL))})
	}
	opts = append(opts, Option{"setTimeout", strconv.FormatInt(timeout, 10), notes("ms, on each server config", roundedNote(r.Timeout))})
	var b strings.Builder
	b.WriteString("// Redisson 3.43.0: the settings redlock-sim tune recommended.\n// Maven: org.redisson:redisson:3.43.0\n")
	if redLock {
		b.WriteString("import java.util.List;\n")
	}
	if !r.Extend {
		b.WriteString("import java.util.concurrent.TimeUnit;\n")
	}
	if redLock {
		b.WriteString("import org.redisson.RedissonRedLock;\n")
	}
	b.WriteString(`import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

public class LockSettings {
`)
	watchdog := ""
	if r.Extend {
		watchdog = fmt.Sprintf("        // The lease (ms); lock() renews it every %d ms (a third) while held, without limit.\n        config.setLockWatchdogTimeout(%d);\n", ttl/3, ttl)
	}
	fmt.Fprintf(&b, `    // client connects to one master. Redisson computes no validity: there is no drift to
    // set, and its retryInterval and retryAttempts (a command's resends) keep their values.
    static RedissonClient client(String address) {
        Config config = new Config();
%s        config.useSingleServer()
                .setAddress(address)
                .setTimeout(%d); // ms: each command's wait for its reply
        return Redisson.create(config);
    }
`, watchdog, timeout)
	lockCall := "lock.lock(); // waits for the holder's unlock message, without limit"
	if !r.Extend {
		lockCall = fmt.Sprintf("lock.lock(%d, TimeUnit.MILLISECONDS); // the lease, without a watchdog", ttl)
	}
	if redLock {
		fmt.Fprintf(&b, `
    // withLock runs work holding name on a majority of masters (one client each), as
    // RedissonRedLock (deprecated) takes it: one master after another.
    static void withLock(List<RedissonClient> masters, String name, Runnable work) {
        RLock lock = new RedissonRedLock(masters.stream().map(c -> c.getLock(name)).toArray(RLock[]::new));
        %s
        try {
            work.run();
        } finally {
            lock.unlock();
        }
    }
}
`, lockCall)
	} else {
		fmt.Fprintf(&b, `
    // withLock runs work holding name.
    static void withLock(RedissonClient redisson, String name, Runnable work) {
        RLock lock = redisson.getLock(name);
        %s
        try {
            work.run();
        } finally {
            lock.unlock();
        }
    }
}
`, lockCall)
	}
	b.WriteString(fencingLine(r, "// "))
	return rendering{opts: opts, code: b.String(), eff: eff}
}

// renderCurator writes a session recommendation (session.go) as Curator takes it: the
// CuratorFrameworkFactory builder's session and connection timeouts and retry policy, the
// ConnectionStateListener that stops work at SUSPENDED, the czxid read for fencing when it
// is needed, and the zoo.cfg lines when the ensemble's tick or maximum session must
// change. Every value is whole milliseconds (int), maxRetries at most 29, and the
// connection timeout at most the session's.
func renderCurator(r Recommendation) rendering {
	if r.Session == nil {
		return rendering{eff: r}
	}
	s := *r.Session
	s.Timeout, s.ConnectionTimeout = msDuration(s.Timeout), msDuration(min(s.ConnectionTimeout, s.Timeout))
	s.TickTime, s.MaxSessionTimeout = msDuration(s.TickTime), msDuration(s.MaxSessionTimeout)
	eff := r
	eff.Session = &s
	eff.RetryDelay = max(msDuration(r.RetryDelay), time.Millisecond)
	retries := min(max(r.Tries-1, 0), 29)
	eff.Tries = retries + 1
	session, conn, base := millis(s.Timeout), millis(s.ConnectionTimeout), millis(eff.RetryDelay)
	opts := []Option{
		{"sessionTimeoutMs", strconv.FormatInt(session, 10), notes("ms", roundedNote(r.Session.Timeout))},
		{"connectionTimeoutMs", strconv.FormatInt(conn, 10), notes("ms", "at most the session timeout")},
		{"ExponentialBackoffRetry baseSleepTimeMs", strconv.FormatInt(base, 10), notes("ms", roundedNote(r.RetryDelay))},
		{"ExponentialBackoffRetry maxRetries", strconv.Itoa(retries), "tries − 1, at most 29"},
		{"ConnectionStateListener", "stop work on the lock at SUSPENDED (and LOST)", "on_suspended = " + s.OnSuspended},
	}
	if r.Fencing {
		opts = append(opts, Option{"fencing token", "the lock node's czxid, checked by the resource on every write", "fence_token = czxid"})
	}
	var zoo []string
	if s.TickChanged {
		zoo = append(zoo, fmt.Sprintf("tickTime=%d", millis(s.TickTime)), fmt.Sprintf("initLimit=%d", s.InitLimit), fmt.Sprintf("syncLimit=%d", s.SyncLimit))
	}
	if s.MaxSessionTimeout > 0 {
		zoo = append(zoo, fmt.Sprintf("maxSessionTimeout=%d", millis(s.MaxSessionTimeout)))
	}
	for _, l := range zoo {
		k, v, _ := strings.Cut(l, "=")
		opts = append(opts, Option{"zoo.cfg " + k, v, "on every server of the ensemble"})
	}
	var b strings.Builder
	b.WriteString("// Apache Curator 5.4.0 on ZooKeeper 3.8, as redlock-sim tune recommended.\n")
	b.WriteString("import org.apache.curator.framework.CuratorFramework;\n" +
		"import org.apache.curator.framework.CuratorFrameworkFactory;\n" +
		"import org.apache.curator.framework.recipes.locks.InterProcessMutex;\n" +
		"import org.apache.curator.framework.state.ConnectionState;\n" +
		"import org.apache.curator.retry.ExponentialBackoffRetry;\n")
	if r.Fencing {
		b.WriteString("import org.apache.zookeeper.data.Stat;\n")
	}
	b.WriteString("\nclass LockSettings {\n")
	b.WriteString("    static volatile boolean mayWork; // true after acquire(), false from SUSPENDED: read before every write\n\n")
	grant := "within the ensemble's default [2, 20] ticks"
	if len(zoo) > 0 {
		grant = "the ensemble grants it with the zoo.cfg below"
	}
	fmt.Fprintf(&b, "    static CuratorFramework client(String connectString) {\n"+
		"        CuratorFramework client = CuratorFrameworkFactory.builder()\n"+
		"            .connectString(connectString)\n"+
		"            .sessionTimeoutMs(%d)  // %v: %s\n"+
		"            .connectionTimeoutMs(%d)\n"+
		"            .retryPolicy(new ExponentialBackoffRetry(%d, %d))\n"+
		"            .build();\n", session, s.Timeout, grant, conn, base, retries)
	b.WriteString("        // on_suspended = stop: the mutex does not react to SUSPENDED or LOST; the application must.\n" +
		"        client.getConnectionStateListenable().addListener((c, state) -> {\n" +
		"            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {\n" +
		"                mayWork = false; // stop relying on the lock: another client may hold it soon\n" +
		"            }\n" +
		"        });\n" +
		"        client.start();\n" +
		"        return client;\n" +
		"    }\n")
	if r.Fencing {
		b.WriteString("\n    // Fencing: fence_token = czxid. The pauses outlast any session the targets allow, so\n" +
			"    // the resource must refuse a write whose token is older than one it has seen.\n" +
			"    static class FencedMutex extends InterProcessMutex {\n" +
			"        FencedMutex(CuratorFramework client, String path) { super(client, path); }\n\n" +
			"        // token returns the czxid of this process's lock node; call it after acquire().\n" +
			"        long token(CuratorFramework client) throws Exception {\n" +
			"            Stat stat = client.checkExists().forPath(getLockPath());\n" +
			"            if (stat == null) throw new IllegalStateException(\"lock node gone: the session expired\");\n" +
			"            return stat.getCzxid();\n" +
			"        }\n" +
			"    }\n")
	}
	b.WriteString("}\n")
	if len(zoo) > 0 {
		b.WriteString("\n/* zoo.cfg, on every server of the ensemble:\n")
		for _, l := range zoo {
			b.WriteString(l + "\n")
		}
		b.WriteString("*/\n")
	}
	return rendering{opts: opts, code: b.String(), eff: eff}
}
