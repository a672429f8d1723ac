package conformance_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs up to four scripts at once, whatever the machine's CPUs: the scripts
// mostly wait (on stopped servers, read timeouts, ioredis's flushes), and at the default
// of one per CPU the package waited about 2.5 minutes on 2 cores. Each script's
// tolerances already allow a loaded machine to be late (never early), and a test that
// must not share the machine (the ZooKeeper harness) does not call t.Parallel.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.parallel"); f != nil && f.Value.String() == f.DefValue {
		_ = f.Value.Set("4")
	}
	os.Exit(m.Run())
}
