package htmlpage

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTMLIsSelfContained: the Markdown's tables and code become HTML, text is escaped,
// and the figures are embedded, with nothing left to fetch.
func TestHTMLIsSelfContained(t *testing.T) {
	page, err := Render("a <b> report", "# Title\n\n| a | b |\n| --- | --- |\n| 1 | `x` |\n", []Figure{
		{Name: "/tmp/out/knob-ttl.png", PNG: []byte{0x89, 'P', 'N', 'G'}, Caption: "ttl & more"}})
	require.NoError(t, err)
	s := string(page)
	assert.True(t, strings.HasPrefix(s, "<!DOCTYPE html>"))
	assert.Contains(t, s, "<title>a &lt;b&gt; report</title>")
	assert.Contains(t, s, "<table>")
	assert.Contains(t, s, "<code>x</code>")
	assert.Contains(t, s, `alt="knob-ttl.png" src="data:image/png;base64,iVBORw=="`)
	assert.Contains(t, s, "<figcaption>ttl &amp; more</figcaption>")
	assert.NotContains(t, s, "http")
}
