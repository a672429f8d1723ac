package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the file in a sweep folder that a running sweep, resume, overwrite or merge
// holds an OS advisory lock on for its whole life. Two processes writing one folder
// interleave their rows into a file whose manifest then says complete; the lock makes the
// second one refuse at once instead. The lock is the kernel's (flock), not the file's
// existence, so a process killed with SIGKILL releases it and a stale file never blocks
// anyone. The file holds its holder's PID, for the refusal message, and is removed when
// the lock is released normally, so a finished folder holds only its results.
const LockFile = ".sweep.lock"

// folderLock is a held lock on a folder; release it with unlock.
type folderLock struct {
	f       *os.File
	path    string
	dir     string
	created bool // dir did not exist before: unlock removes it if it is still empty
}

// lockFolder creates dir if needed and takes its lock without waiting. A folder locked by
// another process (or another open of the lock file in this one) is a *UsageError naming
// the folder and the holder's PID.
func lockFolder(dir, what string) (*folderLock, error) {
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("output folder %s: cannot create: %v", dir, unwrapPath(err))
	}
	path := filepath.Join(dir, LockFile)
	// A holder removes the file as it lets go, so the file locked here may have just
	// been unlinked; then it locks nothing and the loop takes the new one. Each turn
	// means another process let go in between, so a few turns always suffice.
	for range 100 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, usagef("output folder %s: cannot create %s: %v", dir, LockFile, unwrapPath(err))
		}
		if err := flock(f); err != nil {
			f.Close()
			if errors.Is(err, errLocked) {
				return nil, usagef("output folder %s is in use by another %s (%s); wait for it to finish or stop it, or choose another folder with --out",
					dir, what, holder(path))
			}
			return nil, fmt.Errorf("output folder %s: lock %s: %w", dir, LockFile, err)
		}
		if !samePath(f, path) {
			f.Close()
			continue
		}
		// The PID is for the message above only; the lock itself is the kernel's.
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return &folderLock{f: f, path: path, dir: dir, created: created}, nil
	}
	return nil, fmt.Errorf("output folder %s: the lock file %s keeps changing under this process", dir, LockFile)
}

// samePath reports whether the open file f is still the file at path.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// unlock removes the lock file and releases the lock (closing the file is what releases
// a flock); removing first, while still holding it, is what lets lockFolder detect a file
// that was unlinked under it.
func (l *folderLock) unlock() {
	if l != nil && l.f != nil {
		os.Remove(l.path)
		l.f.Close()
		if l.created {
			os.Remove(l.dir) // only if empty: a refused merge leaves no folder behind
		}
		l.f = nil
	}
}

// holder describes the process holding the lock file at path, from the PID it wrote.
func holder(path string) string {
	b, err := os.ReadFile(path)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || perr != nil || pid <= 0 {
		return "process unknown: it has not written its PID yet"
	}
	return "PID " + strconv.Itoa(pid)
}

// errLocked is what flock returns when another open file description holds the lock.
var errLocked = errors.New("locked by another process")
