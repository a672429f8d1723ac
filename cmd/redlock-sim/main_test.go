package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnknownCommandIsAUsageError(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"swep"}, &out, &errOut))
	assert.Contains(t, errOut.String(), `unknown command "swep"`)
	assert.Contains(t, errOut.String(), "sweep", "the usage lists the real commands")
}

func TestHelpListsCommands(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run(nil, &out, &errOut))
	for _, c := range commands() {
		assert.Contains(t, out.String(), c.name)
	}
}

func TestBadFlagExitsTwo(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run([]string{"version", "--bogus"}, &out, &errOut))
	assert.Contains(t, errOut.String(), "bogus")
}

func TestHelpIsNotAnError(t *testing.T) {
	for _, c := range commands() {
		var out, errOut bytes.Buffer
		assert.Equal(t, 0, run([]string{c.name, "--help"}, &out, &errOut), c.name)
		assert.NotContains(t, errOut.String(), "redlock-sim:", "%s: no error line", c.name)
	}
}
