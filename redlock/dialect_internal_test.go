package redlock

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUUIDFromBytes: a GUID value is the 16 drawn bytes with the version-4 and variant
// bits set, in lowercase 8-4-4-4-12 form, as RedLock.net's Guid.NewGuid().ToString()
// prints one.
func TestUUIDFromBytes(t *testing.T) {
	raw := []byte{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0xf6, 0x07, 0xc8, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0xff}
	assert.Equal(t, "00010203-0405-4607-8809-0a0b0c0d0eff", uuidFrom(raw))
}
