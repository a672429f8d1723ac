// CuratorLock is the real side of the ZooKeeper conformance tests
// (experiments/conformance/zookeeper_test.go), compiled by the test with javac against
// Debian's jars (no build tool, no network).
//
// java CuratorLock lock --name a --connect host:port,... --session-timeout-ms 3000
//      --connection-timeout-ms 2000 --path /lock --retry-base-ms 100 --retry-max 5
//   One client of Curator 5.4's InterProcessMutex over a CuratorFramework with
//   ExponentialBackoffRetry. It reads commands on stdin, one a line, and runs them in
//   order on one thread (the mutex is owned by the thread that acquired it):
//     acquire <timeout_ms> [<hold_ms>]
//                            acquire(timeout) -> acquired or acquire_timeout or error;
//                            with hold_ms, once acquired, hold that long and release
//     release                release()        -> released or error
//     exit (or end of input) close the client and exit
//   It prints one JSON object a line on stdout for every event, each with t_ns, the
//   machine's monotonic clock (System.nanoTime: CLOCK_MONOTONIC on Linux, the clock the
//   Go test reads), and the client's name: ready, acquire_start, acquired (lock node,
//   czxid, session), acquire_timeout, release_start, released, state (Curator's connection
//   states: CONNECTED, SUSPENDED, RECONNECTED, LOST), zk (ZooKeeper's own connection
//   events: SyncConnected, Disconnected, Expired), error.
//
// java CuratorLock tree host:port ...
//   For each server in turn, a plain ZooKeeper client connected to that server alone
//   lists every znode it has (but /zookeeper), as one JSON line: reads are served by the
//   server a client is connected to, so this is that server's own copy.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public final class CuratorLock {
    private CuratorLock() {}

    /** Mutex exposes InterProcessMutex's lock node, which it keeps protected. */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String lockPath() {
            return getLockPath();
        }
    }

    private static String name = "";

    /** emit prints one event as a JSON line; fields alternate key and value. */
    static synchronized void emit(String event, Object... fields) {
        StringBuilder b = new StringBuilder(128);
        b.append("{\"t_ns\":").append(System.nanoTime());
        b.append(",\"client\":").append(quote(name));
        b.append(",\"event\":").append(quote(event));
        for (int i = 0; i + 1 < fields.length; i += 2) {
            b.append(',').append(quote(String.valueOf(fields[i]))).append(':');
            Object v = fields[i + 1];
            if (v instanceof Number || v instanceof Boolean) {
                b.append(v);
            } else if (v instanceof List) {
                b.append('[');
                List<?> l = (List<?>) v;
                for (int k = 0; k < l.size(); k++) {
                    if (k > 0) {
                        b.append(',');
                    }
                    b.append(l.get(k));
                }
                b.append(']');
            } else {
                b.append(quote(String.valueOf(v)));
            }
        }
        b.append('}');
        System.out.println(b);
        System.out.flush();
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

    static String flag(String[] args, String key, String def) {
        for (int i = 1; i + 1 < args.length; i++) {
            if (args[i].equals(key)) {
                return args[i + 1];
            }
        }
        if (def == null) {
            throw new IllegalArgumentException("missing " + key);
        }
        return def;
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("lock")) {
            lock(args);
        } else if (args.length > 0 && args[0].equals("tree")) {
            tree(args);
        } else {
            System.err.println("usage: CuratorLock lock --name N --connect HOSTS ... | CuratorLock tree HOST:PORT...");
            System.exit(2);
        }
    }

    static String session(CuratorFramework client) {
        try {
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            return "0x" + Long.toHexString(zk.getSessionId());
        } catch (Exception e) {
            return "";
        }
    }

    static int negotiatedTimeout(CuratorFramework client) {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionTimeout();
        } catch (Exception e) {
            return 0;
        }
    }

    static void lock(String[] args) throws Exception {
        name = flag(args, "--name", null);
        String connect = flag(args, "--connect", null);
        int sessionMs = Integer.parseInt(flag(args, "--session-timeout-ms", "60000"));
        int connectionMs = Integer.parseInt(flag(args, "--connection-timeout-ms", "15000"));
        String path = flag(args, "--path", "/lock");
        int retryBaseMs = Integer.parseInt(flag(args, "--retry-base-ms", "100"));
        int retryMax = Integer.parseInt(flag(args, "--retry-max", "5"));

        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(connectionMs)
                .retryPolicy(new ExponentialBackoffRetry(retryBaseMs, retryMax))
                .build();
        client.getConnectionStateListenable().addListener((c, state) ->
                emit("state", "state", state.name(), "session", session(c), "negotiated_timeout_ms", negotiatedTimeout(c)));
        client.getCuratorListenable().addListener((c, event) -> {
            if (event.getType() == CuratorEventType.WATCHED && event.getWatchedEvent() != null
                    && event.getWatchedEvent().getType() == Watcher.Event.EventType.None) {
                emit("zk", "state", event.getWatchedEvent().getState().name());
            }
        });
        client.start();
        if (!client.blockUntilConnected(Math.max(connectionMs, 10000), TimeUnit.MILLISECONDS)) {
            emit("error", "op", "connect", "error", "not connected");
            System.exit(1);
        }
        emit("ready", "session", session(client), "negotiated_timeout_ms", negotiatedTimeout(client));

        Mutex mutex = new Mutex(client, path);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] cmd = line.trim().split("\\s+");
            if (cmd[0].equals("exit")) {
                break;
            }
            long start = System.nanoTime();
            try {
                switch (cmd[0]) {
                    case "acquire": {
                        long timeoutMs = Long.parseLong(cmd[1]);
                        emit("acquire_start", "timeout_ms", timeoutMs, "session", session(client));
                        if (!mutex.acquire(timeoutMs, TimeUnit.MILLISECONDS)) {
                            emit("acquire_timeout", "took_ns", System.nanoTime() - start);
                            break;
                        }
                        long took = System.nanoTime() - start;
                        String node = mutex.lockPath();
                        // The lock node's czxid is the fencing token issue 36 asks for.
                        Stat stat = client.checkExists().forPath(node);
                        emit("acquired", "took_ns", took, "node", node, "czxid", stat == null ? -1 : stat.getCzxid(),
                                "ephemeral_owner", stat == null ? "" : "0x" + Long.toHexString(stat.getEphemeralOwner()),
                                "session", session(client));
                        if (cmd.length > 2) {
                            Thread.sleep(Long.parseLong(cmd[2]));
                            release(mutex);
                        }
                        break;
                    }
                    case "release":
                        release(mutex);
                        break;
                    default:
                        emit("error", "op", cmd[0], "error", "unknown command: " + line);
                }
            } catch (Exception e) {
                emit("error", "op", cmd[0], "error", e.toString(), "took_ns", System.nanoTime() - start);
            }
        }
        client.close();
        emit("closed");
    }

    static void release(Mutex mutex) throws Exception {
        long start = System.nanoTime();
        emit("release_start");
        mutex.release();
        emit("released", "took_ns", System.nanoTime() - start);
    }

    static void tree(String[] args) throws Exception {
        name = "tree";
        for (int i = 1; i < args.length; i++) {
            String server = args[i];
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper zk = new ZooKeeper(server, 4000, event -> {
                if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            });
            try {
                if (!connected.await(4, TimeUnit.SECONDS)) {
                    emit("tree", "server", server, "ok", false, "error", "not connected");
                    continue;
                }
                List<String> nodes = new ArrayList<>();
                walk(zk, "/", nodes);
                emit("tree", "server", server, "ok", true, "nodes", nodes);
            } catch (Exception e) {
                emit("tree", "server", server, "ok", false, "error", e.toString());
            } finally {
                zk.close();
            }
        }
    }

    /** walk adds every znode below path (but /zookeeper) to nodes, as JSON objects. */
    static void walk(ZooKeeper zk, String path, List<String> nodes) throws Exception {
        List<String> children = zk.getChildren(path, false);
        Collections.sort(children);
        for (String child : children) {
            String p = path.equals("/") ? "/" + child : path + "/" + child;
            if (p.equals("/zookeeper")) {
                continue;
            }
            Stat stat = zk.exists(p, false);
            if (stat == null) {
                continue;
            }
            nodes.add("{\"path\":" + quote(p) + ",\"czxid\":" + stat.getCzxid()
                    + ",\"ephemeral_owner\":" + quote(stat.getEphemeralOwner() == 0 ? "" : "0x" + Long.toHexString(stat.getEphemeralOwner())) + "}");
            walk(zk, p, nodes);
        }
    }
}
