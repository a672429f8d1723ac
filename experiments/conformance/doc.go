// Package conformance holds the simulated client profiles to the real lock libraries they
// model. Its tests run the same fault scripts twice: against real redis-server processes
// with the real library (redsync, a test-only dependency), and through the simulator with
// the library's profile on a world built to the same script; then they compare what a
// user sees (acquired or not, the time each operation took, the validity returned, the
// lock keys left behind once stopped servers continue) and the commands each node ran, in
// order (MONITOR on the real side, the simulated network on the other).
//
// TestCuratorOnRealZooKeeper is the real side of the ZooKeeper comparison: Curator 5.4's
// InterProcessMutex (a Java harness in zookeeper/, compiled by the test) on a real
// 3-server ZooKeeper 3.8 ensemble (internal/zkproc) under fault scripts, each held to
// ZooKeeper's and Curator's session-timeout arithmetic and writing its observed timeline
// as JSON for the simulated ensemble to be compared with (docs/zookeeper-conformance.md).
//
// The package has no code of its own beyond this comment: it exists for its tests, which
// need redis-server (skipped without it, failed under REDLOCK_SIM_REQUIRE_REDIS=1), and
// for the ZooKeeper ones Debian's zookeeper, libcurator-recipes-java and
// default-jdk-headless (skipped without them, failed under
// REDLOCK_SIM_REQUIRE_ZOOKEEPER=1).
package conformance
