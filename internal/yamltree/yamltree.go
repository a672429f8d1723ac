// Package yamltree reads a YAML file as a node tree for the project's strict decoders (sweep
// specs, scenario files): one document, syntax errors with the right line and a hint for
// the usual mistakes, mappings listed in file order with their keys' lines, duplicate and
// unknown keys refused with the closest allowed name. Decoders walk the tree rather than
// decode into structs, because the tree keeps every line and the file order, and walking it
// lets each message name the field and what is allowed.
package yamltree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/redlock-sim/redlock-sim/internal/suggest"
)

// Error is a problem at a line of the file (0 when it belongs to no single line); the
// decoders wrap it into their own error types, which name the file.
type Error struct {
	Line int
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return e.Err.Error()
}

// Unwrap returns the underlying problem.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error at line.
func Errorf(line int, format string, args ...any) *Error {
	return &Error{Line: line, Err: fmt.Errorf(format, args...)}
}

// ReadFile reads the file at path, refusing one larger than max bytes; an open error is
// the bare cause ("no such file or directory"), since callers name the file themselves.
func ReadFile(path string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data, nil
}

// Document parses data as exactly one YAML document and returns its root node. empty
// says what the file should hold, for the message about an empty one.
func Document(data []byte, empty string) (*yaml.Node, *Error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, &Error{Err: errors.New("empty: want " + empty)}
		}
		return nil, syntaxError(data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, syntaxError(data, err)
	default:
		return nil, &Error{Line: extra.Line, Err: errors.New("a second YAML document: the file is one document")}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{Line: doc.Line, Err: errors.New("want one YAML document")}
	}
	return Resolve(doc.Content[0]), nil
}

// yamlLine picks the line out of a yaml.v3 syntax error, which carries it only as text.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(data []byte, err error) *Error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg := m[2]
		// yaml.v3 reports an unclosed flow list or mapping at the 0-based line of its
		// opening bracket (its parser errors skip the +1 its scanner errors get); a test
		// pins this, so a fixed library shows up as a failing test, not a wrong line.
		if strings.HasPrefix(msg, "did not find expected ',' or ") {
			line++
			msg += " (a [list] or {mapping} opened on this line is not closed)"
		}
		if strings.HasPrefix(msg, "found character that cannot start any token") && tabAt(data, line) {
			msg += " (YAML does not allow tabs for indentation; use spaces)"
		}
		return &Error{Line: line, Err: errors.New(msg)}
	}
	return &Error{Err: errors.New(strings.TrimPrefix(err.Error(), "yaml: "))}
}

// tabAt reports whether the 1-based line of data holds a tab. yaml.v3 reports a tab in
// indentation only as "found character that cannot start any token", which names neither
// the tab nor the fix, so the message gets a hint when the line has one.
func tabAt(data []byte, line int) bool {
	lines := bytes.Split(data, []byte("\n"))
	if line < 1 || line > len(lines) {
		return false
	}
	return bytes.IndexByte(lines[line-1], '\t') >= 0
}

// Entry is one key of a YAML mapping with the line of the key.
type Entry struct {
	Key     string
	KeyLine int
	Val     *yaml.Node // aliases resolved
}

// Entries lists a mapping's keys in file order, refusing duplicates and, when allowed is
// not nil, keys outside it (with the closest allowed key). what names the mapping in
// messages.
func Entries(n *yaml.Node, allowed []string, what string) ([]Entry, *Error) {
	seen := map[string]int{}
	out := make([]Entry, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := Resolve(n.Content[i]), Resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, Errorf(k.Line, "%s: want a plain name as key, got %s", what, Describe(k))
		}
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return nil, Errorf(k.Line, "unknown key %q in %s%s; allowed: %s",
				k.Value, what, Suggest(k.Value, allowed), strings.Join(allowed, ", "))
		}
		if l, dup := seen[k.Value]; dup {
			return nil, Errorf(k.Line, "%s: key %q given twice (first at line %d)", what, k.Value, l)
		}
		seen[k.Value] = k.Line
		out = append(out, Entry{k.Value, k.Line, v})
	}
	return out, nil
}

// Scalar returns a single value's text, refusing lists, mappings and nothing.
func Scalar(n *yaml.Node, what string) (string, *Error) {
	if n.Kind != yaml.ScalarNode {
		return "", Errorf(n.Line, "%s: want a single value, got %s", what, Describe(n))
	}
	if IsNull(n) {
		return "", Errorf(n.Line, "%s has no value", what)
	}
	return n.Value, nil
}

// Resolve follows aliases (*anchor) to the node they name; the bound stops a malicious
// alias chain.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is YAML's null (an empty value, ~ or null).
func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// Describe names what n is, for messages: a mapping, a list, nothing, or the value "x".
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if IsNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("the value %q", n.Value)
	}
	return "something else"
}

// Suggest returns a " (did you mean X?)" hint naming the option closest to name, so a
// typo in a key gets its fix in the message, or "" when none is close.
func Suggest(name string, options []string) string {
	best := suggest.Closest(name, options, 1)
	if len(best) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best[0])
}
