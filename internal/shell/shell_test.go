package shell

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestQuote(t *testing.T) {
	assert.Equal(t, "ttl=2.3s", Quote("ttl=2.3s"))
	assert.Equal(t, "'latency=lognormal(1ms,0.7)'", Quote("latency=lognormal(1ms,0.7)"))
	assert.Equal(t, "'pause_len=lognormal(743.6µs,2.1)'", Quote("pause_len=lognormal(743.6µs,2.1)"), "anything not plain is quoted")
	assert.Equal(t, `'it'\''s'`, Quote("it's"))
	assert.Equal(t, "''", Quote(""))
}
