//go:build unix

package sweep

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// flock takes an exclusive advisory lock on f without waiting.
func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return errLocked
		}
		return err
	}
}
