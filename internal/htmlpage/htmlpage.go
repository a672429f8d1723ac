// Package htmlpage renders the project's reports (tune's report.html, a study folder's
// index.html) as self-contained HTML pages: Markdown for the text, PNGs embedded, nothing
// fetched from the network.
package htmlpage

import (
	"bytes"
	"encoding/base64"
	"html"
	"path/filepath"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// Figure is a PNG to embed in a page, with its caption.
type Figure struct {
	Name    string // the file it was drawn to, shown under it
	PNG     []byte
	Caption string
}

// Section is a part of a page: its Markdown, then its figures.
type Section struct {
	Markdown string
	Figures  []Figure
}

// Render renders a Markdown report as one self-contained HTML page: no script, no font, no
// stylesheet or image from the network, the figures embedded as data URIs, so that it
// opens anywhere (mailed, attached to a ticket, on a machine without the tool) and
// prints as it shows. The figures come last, under a heading of their own.
func Render(title, markdown string, figures []Figure) ([]byte, error) {
	secs := []Section{{Markdown: markdown}}
	if len(figures) > 0 {
		secs = append(secs, Section{Markdown: "## Figures\n", Figures: figures})
	}
	return RenderSections(title, secs)
}

// RenderSections is Render for a page whose figures belong to its parts (a study's
// sweeps, each followed by its own figures).
func RenderSections(title string, sections []Section) ([]byte, error) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
	b.WriteString(html.EscapeString(title))
	b.WriteString("</title>\n<style>\n" + reportCSS + "</style>\n</head>\n<body>\n<main>\n")
	for _, sec := range sections {
		if err := md.Convert([]byte(sec.Markdown), &b); err != nil {
			return nil, err
		}
		for _, f := range sec.Figures {
			b.WriteString("<figure>\n<img alt=\"")
			b.WriteString(html.EscapeString(filepath.Base(f.Name)))
			b.WriteString("\" src=\"data:image/png;base64,")
			b.WriteString(base64.StdEncoding.EncodeToString(f.PNG))
			b.WriteString("\">\n<figcaption>")
			b.WriteString(html.EscapeString(f.Caption))
			b.WriteString("</figcaption>\n</figure>\n")
		}
	}
	b.WriteString("</main>\n</body>\n</html>\n")
	return b.Bytes(), nil
}

// reportCSS is the page's whole style: readable line length, tables that scroll rather
// than overflow, and figures scaled to the page.
const reportCSS = `body { font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; margin: 0; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem; }
h1, h2 { line-height: 1.2; }
table { border-collapse: collapse; display: block; overflow-x: auto; margin: 1rem 0; }
th, td { border: 1px solid #bbb; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
code { background: #f4f4f4; padding: 0 0.2rem; }
figure { margin: 1.5rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.9rem; color: #444; }
`
