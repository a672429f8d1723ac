package sweep

import (
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWriteErrorNamesThePathOnce: a failed write names its file once (the os error names
// it too), and a full disk says how to go on.
func TestWriteErrorNamesThePathOnce(t *testing.T) {
	path := "/data/out/ttl/runs.csv"
	full := writeError(path, &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC})
	assert.Equal(t, 1, strings.Count(full.Error(), path), full.Error())
	assert.Contains(t, full.Error(), "the disk is full")
	assert.Contains(t, full.Error(), "--resume")
	assert.ErrorIs(t, full, syscall.ENOSPC)

	other := writeError(path, &fs.PathError{Op: "write", Path: path, Err: syscall.EIO})
	assert.Equal(t, "write "+path+": "+syscall.EIO.Error(), other.Error())
}
