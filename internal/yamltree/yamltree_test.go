package yamltree_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/redlock-sim/redlock-sim/internal/yamltree"
)

// doc parses text as a document and fails the test on an error.
func doc(t *testing.T, text string) *yaml.Node {
	t.Helper()
	root, err := yamltree.Document([]byte(text), "a mapping")
	require.Nil(t, err, "%v", err)
	return root
}

// TestDocumentRoot: one document gives its root node with the right line, aliases
// resolved; a scalar root is returned too (which kind a file needs is the decoder's call).
func TestDocumentRoot(t *testing.T) {
	root := doc(t, "# a comment\nname: x\nseed: 3\n")
	assert.Equal(t, yaml.MappingNode, root.Kind)
	assert.Equal(t, 2, root.Line)
	root = doc(t, "7\n")
	assert.Equal(t, yaml.ScalarNode, root.Kind)
	assert.Equal(t, "7", root.Value)
}

// TestDocumentErrors: each way a file fails to be one document is an *Error with the line
// a reader should look at and words that say what is wrong.
func TestDocumentErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		msg        string
	}{
		{"empty", "", 0, "empty: want a mapping with base and axes"},
		{"only comments", "# nothing yet\n", 0, "empty: want a mapping with base and axes"},
		{"second document, at its --- marker", "a: 1\n---\nb: 2\n", 2, "a second YAML document: the file is one document"},
		{"unclosed list", "a: 1\nb: [1, 2\nc: 3\n", 2,
			"did not find expected ',' or ']' (a [list] or {mapping} opened on this line is not closed)"},
		{"tab indentation", "a:\n\tb: 1\n", 2,
			"found character that cannot start any token (YAML does not allow tabs for indentation; use spaces)"},
		{"bad indentation", "a: 1\n b: 2\n", 2, "mapping values are not allowed in this context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := yamltree.Document([]byte(tc.text), "a mapping with base and axes")
			assert.Nil(t, root)
			require.NotNil(t, err)
			assert.Equal(t, tc.line, err.Line)
			assert.Equal(t, tc.msg, err.Err.Error())
		})
	}
}

// TestEntries: a mapping's keys come in file order with their lines, values with aliases
// resolved; a nil allowed list accepts any key.
func TestEntries(t *testing.T) {
	root := doc(t, "seed: 1\nbase: &b\n  ttl: 10s\naxes: *b\n")
	es, err := yamltree.Entries(root, []string{"base", "axes", "seed"}, "the spec")
	require.Nil(t, err)
	require.Len(t, es, 3)
	assert.Equal(t, []string{"seed", "base", "axes"}, []string{es[0].Key, es[1].Key, es[2].Key})
	assert.Equal(t, []int{1, 2, 4}, []int{es[0].KeyLine, es[1].KeyLine, es[2].KeyLine})
	assert.Equal(t, "1", es[0].Val.Value)
	assert.Equal(t, yaml.MappingNode, es[2].Val.Kind, "the alias *b is resolved to the mapping it names")
	assert.Same(t, es[1].Val, es[2].Val)

	es, err = yamltree.Entries(doc(t, "anything: 1\ngoes: 2\n"), nil, "the spec")
	require.Nil(t, err)
	assert.Len(t, es, 2)
}

// TestEntriesRefused: an unknown key (with the closest allowed name and the whole list),
// a duplicate key (with the line of its first use) and a key that is no plain name are
// refused at their own line.
func TestEntriesRefused(t *testing.T) {
	allowed := []string{"name", "story", "knobs"}
	for _, tc := range []struct {
		name, text string
		line       int
		msg        string
	}{
		{"unknown key", "name: a\nstroy: b\n", 2,
			`line 2: unknown key "stroy" in the scenario (did you mean "story"?); allowed: name, story, knobs`},
		{"unknown key, nothing close", "name: a\nzzzzzz: b\n", 2,
			`line 2: unknown key "zzzzzz" in the scenario; allowed: name, story, knobs`},
		{"duplicate key", "name: a\nstory: b\nname: c\n", 3,
			`line 3: the scenario: key "name" given twice (first at line 1)`},
		{"list as key", "name: a\n? [x, y]\n: 1\n", 2,
			"line 2: the scenario: want a plain name as key, got a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, err := yamltree.Entries(doc(t, tc.text), allowed, "the scenario")
			assert.Nil(t, es)
			require.NotNil(t, err)
			assert.Equal(t, tc.line, err.Line)
			assert.EqualError(t, err, tc.msg)
		})
	}
}

// TestScalar: a single value's text, whatever YAML type it reads as; lists, mappings and
// nothing are refused with what was found.
func TestScalar(t *testing.T) {
	root := doc(t, "n: 42\nb: true\ns: \"null\"\nq: ''\nl: [1]\nm: {a: 1}\ne:\nt: ~\nz: null\n")
	es, err := yamltree.Entries(root, nil, "x")
	require.Nil(t, err)
	val := map[string]*yaml.Node{}
	for _, e := range es {
		val[e.Key] = e.Val
	}
	for key, want := range map[string]string{"n": "42", "b": "true", "s": "null", "q": ""} {
		got, err := yamltree.Scalar(val[key], "knob "+key)
		require.Nil(t, err, key)
		assert.Equal(t, want, got, key)
	}
	for key, want := range map[string]string{
		"l": "line 5: knob l: want a single value, got a list",
		"m": "line 6: knob m: want a single value, got a mapping",
		"e": "line 7: knob e has no value",
		"t": "line 8: knob t has no value",
		"z": "line 9: knob z has no value",
	} {
		_, err := yamltree.Scalar(val[key], "knob "+key)
		require.NotNil(t, err, key)
		assert.EqualError(t, err, want, key)
	}
	assert.False(t, yamltree.IsNull(val["s"]), `a quoted "null" is a string`)
	assert.True(t, yamltree.IsNull(val["e"]))
	assert.False(t, yamltree.IsNull(val["l"]), "a list is not null")
}

// TestDescribe names what a node is, as messages say it.
func TestDescribe(t *testing.T) {
	root := doc(t, "m: {a: 1}\nl: [1]\nn: ~\nv: ten\n")
	es, err := yamltree.Entries(root, nil, "x")
	require.Nil(t, err)
	var got []string
	for _, e := range es {
		got = append(got, yamltree.Describe(e.Val))
	}
	assert.Equal(t, []string{"a mapping", "a list", "nothing", `the value "ten"`}, got)
	assert.Equal(t, "something else", yamltree.Describe(&yaml.Node{Kind: yaml.DocumentNode}))
}

// TestResolveBounded: Resolve follows a chain of aliases to its end, and stops on a cycle
// (which a hand-built tree can hold) instead of looping for ever.
func TestResolveBounded(t *testing.T) {
	target := &yaml.Node{Kind: yaml.ScalarNode, Value: "v"}
	chain := &yaml.Node{Kind: yaml.AliasNode, Alias: &yaml.Node{Kind: yaml.AliasNode, Alias: target}}
	assert.Same(t, target, yamltree.Resolve(chain))
	a := &yaml.Node{Kind: yaml.AliasNode}
	b := &yaml.Node{Kind: yaml.AliasNode, Alias: a}
	a.Alias = b
	got := yamltree.Resolve(a)
	assert.Equal(t, yaml.AliasNode, got.Kind, "a cycle ends unresolved, after the bound")
	assert.Same(t, target, yamltree.Resolve(target), "a node that is no alias is itself")
}

// TestReadFile: a file up to max bytes is read whole; a larger one is refused with the
// limit; a missing one gives the bare cause, without the path the caller names itself.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spec.yaml")
	require.NoError(t, os.WriteFile(path, []byte("seed: 1\n"), 0o644))
	data, err := yamltree.ReadFile(path, 8)
	require.NoError(t, err)
	assert.Equal(t, "seed: 1\n", string(data))
	_, err = yamltree.ReadFile(path, 7)
	assert.EqualError(t, err, "larger than 7 bytes")
	_, err = yamltree.ReadFile(filepath.Join(dir, "missing.yaml"), 8)
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	assert.NotContains(t, err.Error(), dir)
}

// TestError: the line prefixes the message when there is one, and the cause unwraps.
func TestError(t *testing.T) {
	cause := errors.New("bad")
	assert.EqualError(t, &yamltree.Error{Line: 4, Err: cause}, "line 4: bad")
	assert.EqualError(t, &yamltree.Error{Err: cause}, "bad")
	assert.ErrorIs(t, &yamltree.Error{Line: 4, Err: cause}, cause)
	e := yamltree.Errorf(9, "knob %q: %d", "ttl", 3)
	assert.Equal(t, 9, e.Line)
	assert.EqualError(t, e, `line 9: knob "ttl": 3`)
}

// TestSuggest: a near miss gets the closest option; nothing close gets no hint.
func TestSuggest(t *testing.T) {
	opts := []string{"replicates", "seed", "axes"}
	assert.Equal(t, ` (did you mean "replicates"?)`, yamltree.Suggest("replicate", opts))
	assert.Equal(t, ` (did you mean "seed"?)`, yamltree.Suggest("sede", opts))
	assert.Equal(t, "", yamltree.Suggest(strings.Repeat("q", 12), opts))
}
