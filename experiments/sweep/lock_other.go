//go:build !unix

package sweep

import "os"

// flock does nothing where there is no flock: two sweeps into one folder are not
// detected there.
func flock(*os.File) error { return nil }
