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

// LockFile is the file in a sweep folder that a running sweep, resume, overwrite, merge
// or plot holds an OS advisory lock on for its whole life, figures and index pages
// included. Two processes writing one folder interleave their rows into a file whose
// manifest then says complete, or leave one sweep's data under another's figures; the lock
// makes the second one refuse at once instead. The lock is the kernel's (flock), not the
// file's existence, so a process killed with SIGKILL releases it and a stale file never
// blocks anyone. The file holds its holder's PID and command, for the refusal message, and
// is removed when the lock is released normally, so a finished folder holds only its
// results.
const LockFile = ".sweep.lock"

// Lock is a held lock on a folder (see LockFile); release it with Unlock. A command that
// writes more into a sweep folder after Run or Merge returns (the figures, an index page)
// takes the lock with LockFolder, passes it in Options.Lock or MergeOptions.Lock, and
// unlocks once its last file is written, so that no other sweep can slip in between the
// data and the figures drawn from it.
type Lock struct {
	f       *os.File
	path    string
	dir     string
	created bool // dir did not exist before: unlock removes it if it is still empty
}

// LockFolder creates dir if needed, takes its lock without waiting and removes the
// temporary files an interrupted write of the tool's left in it (see IsTempFile): nobody
// else can be writing them while the lock is held. by names the command taking it
// ("sweep", "merge", "plot"), for the refusal another one gets. A path that is not a
// folder, or a folder locked by another process (or another open of the lock file in this
// one), is a *UsageError naming the folder and the holder.
func LockFolder(dir, by string) (*Lock, error) {
	if err := checkFolder(dir); err != nil {
		return nil, err
	}
	return lockFolder(dir, by)
}

// lockFolder is LockFolder for a path already checked to be a folder or missing.
func lockFolder(dir, by string) (*Lock, error) {
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
				return nil, usagef("output folder %s is in use by another %s; wait for it to finish or stop it, or choose another folder with --out",
					dir, holder(path))
			}
			return nil, fmt.Errorf("output folder %s: lock %s: %w", dir, LockFile, err)
		}
		if !samePath(f, path) {
			f.Close()
			continue
		}
		// The PID and command are for the message above only; the lock itself is the kernel's.
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+" "+by+"\n"), 0)
		}
		l := &Lock{f: f, path: path, dir: dir, created: created}
		if err := removeTempFiles(dir); err != nil {
			l.Unlock()
			return nil, err
		}
		return l, nil
	}
	return nil, fmt.Errorf("output folder %s: the lock file %s keeps changing under this process", dir, LockFile)
}

// Dir returns the folder l locks.
func (l *Lock) Dir() string { return l.dir }

// covers refuses a lock that is released or that is not dir's (a programming error of
// the caller, not the user's).
func (l *Lock) covers(dir string) error {
	if l.f == nil {
		return fmt.Errorf("sweep: the lock on %s was released before writing into it", l.dir)
	}
	a, errA := os.Stat(l.dir)
	b, errB := os.Stat(dir)
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		return fmt.Errorf("sweep: the lock held is on %s, not on %s, the folder to write", l.dir, dir)
	}
	return nil
}

// IsTempFile reports whether name (a file name, no folder) is one of the temporary files
// the tool writes into a sweep folder and renames into place, which a kill before the
// rename leaves behind: NAME.tmp of the manifest, runs.csv (Merge), summary.csv, a
// study's index.html and tune's report.md and report.html, and the figures' .knob-….png.tmpNNN and .heatmap-….svg.tmpNNN (package
// plots writes each figure through os.CreateTemp with the pattern ".NAME.tmp*"). Nothing
// else matches, so the user's own files are never touched.
func IsTempFile(name string) bool {
	switch name {
	case ManifestFile + ".tmp", RunsFile + ".tmp", SummaryFile + ".tmp", "index.html.tmp",
		"report.md.tmp", "report.html.tmp": // tune's report, written beside its sweeps
		return true
	}
	if !strings.HasPrefix(name, ".knob-") && !strings.HasPrefix(name, ".heatmap-") {
		return false
	}
	for _, ext := range []string{".png.tmp", ".svg.tmp"} {
		if i := strings.LastIndex(name, ext); i > 0 {
			digits := name[i+len(ext):]
			return digits != "" && strings.Trim(digits, "0123456789") == ""
		}
	}
	return false
}

// removeTempFiles removes dir's stray temporary files (IsTempFile); the caller holds the
// folder's lock, so none of them is being written.
func removeTempFiles(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output folder %s: %w", dir, unwrapPath(err))
	}
	for _, e := range ents {
		if e.Type().IsRegular() && IsTempFile(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("output folder %s: remove the stray %s: %w", dir, e.Name(), unwrapPath(err))
			}
		}
	}
	return nil
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

// Unlock removes the lock file and releases the lock (closing the file is what releases
// a flock); removing first, while still holding it, is what lets lockFolder detect a file
// that was unlinked under it. A second Unlock does nothing.
func (l *Lock) Unlock() {
	if l != nil && l.f != nil {
		os.Remove(l.path)
		l.f.Close()
		if l.created {
			os.Remove(l.dir) // only if empty: a refused merge leaves no folder behind
		}
		l.f = nil
	}
}

// holder describes the process holding the lock file at path, from the PID and the
// command it wrote: "sweep (PID 4242)".
func holder(path string) string {
	b, err := os.ReadFile(path)
	pidText, by, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	pid, perr := strconv.Atoi(pidText)
	if by == "" || strings.ContainsAny(by, "\x00\n") || len(by) > 20 {
		by = "sweep, merge or plot"
	}
	if err != nil || perr != nil || pid <= 0 {
		return by + " (process unknown: it has not written its PID yet)"
	}
	return by + " (PID " + strconv.Itoa(pid) + ")"
}

// errLocked is what flock returns when another open file description holds the lock.
var errLocked = errors.New("locked by another process")
