package plots

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tickBudget is how many characters of tick labels one axis holds side by side: a panel
// a third of a 1600-pixel figure wide fits about 40 at the tick font before neighbouring
// labels run into each other.
const tickBudget = 40

// hole marks, in an axis's common part, where each value's tick label goes.
const hole = "·"

// maxExprDepth bounds how deep shortLabels reads a value's nested calls: a knob value is
// a few calls deep at most (tail(uniform(a,b),p,const(d))), and a limit keeps a
// pathological value from costing more than it is worth.
const maxExprDepth = 8

// tooLong reports whether labels set side by side at even spacing pass the budget: the
// longest one sets the pitch.
func tooLong(labels []string) bool {
	longest := 0
	for _, l := range labels {
		longest = max(longest, utf8.RuneCountInString(l))
	}
	return len(labels)*longest > tickBudget
}

// shortLabels returns the tick labels of an axis's values: the values themselves when
// they fit side by side, and otherwise only the parts that tell them apart, with the part
// they share as common ("tail(uniform(200µs,800µs),0.02,const(·))", · where each label
// goes), so that the figure still says what the full values are. It reads each value as
// nested calls (name(arg,arg,...)) and keeps the arguments every value shares, going one
// call deeper at a time until the labels fit or the values' shapes part. It returns the
// values and "" when no shorter labels tell every value apart: values of different
// shapes, ambiguous or empty labels, unbalanced parentheses.
func shortLabels(values []string) (labels []string, common string) {
	if !tooLong(values) {
		return values, ""
	}
	exprs := make([]expr, len(values))
	for i, v := range values {
		e, ok := parseExpr(v, maxExprDepth)
		if !ok {
			return values, ""
		}
		exprs[i] = e
	}
	best, bestCommon := values, ""
	for depth := 1; depth <= maxExprDepth; depth++ {
		tmpl, holes := diffExprs(exprs, depth)
		ls := make([]string, len(values))
		for i, h := range holes {
			ls[i] = strings.Join(h, ",")
		}
		if tmpl == bestCommon || !distinct(ls) {
			break // no deeper structure, or labels that no longer tell the values apart
		}
		best, bestCommon = ls, tmpl
		if !tooLong(ls) {
			break
		}
	}
	if bestCommon == hole || longestRunes(best) >= longestRunes(values) {
		return values, "" // nothing shared, or nothing gained
	}
	return best, bestCommon
}

func longestRunes(ss []string) int {
	n := 0
	for _, s := range ss {
		n = max(n, utf8.RuneCountInString(s))
	}
	return n
}

// distinct reports whether every label is non-empty and no two are the same.
func distinct(labels []string) bool {
	seen := make([]string, 0, len(labels))
	for _, l := range labels {
		if l == "" || slices.Contains(seen, l) {
			return false
		}
		seen = append(seen, l)
	}
	return true
}

// expr is a knob value read as a call: a name and, with parentheses, its arguments; a
// leaf ("5ms", "0.02", "none") has no arguments.
type expr struct {
	text string // the value without spaces: how two values are compared and labelled
	name string // before the parenthesis; the whole text for a leaf
	call bool
	args []expr
}

// parseExpr reads s as nested calls, down to depth levels (deeper calls stay leaves). It
// reports false for unbalanced parentheses or text after a call's closing one.
func parseExpr(s string, depth int) (expr, bool) {
	text := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	open := strings.IndexByte(text, '(')
	if open < 0 || depth == 0 {
		return expr{text: text, name: text}, balanced(text)
	}
	if !strings.HasSuffix(text, ")") || !balanced(text) {
		return expr{}, false
	}
	e := expr{text: text, name: text[:open], call: true}
	for _, a := range splitArgs(text[open+1 : len(text)-1]) {
		arg, ok := parseExpr(a, depth-1)
		if !ok {
			return expr{}, false
		}
		e.args = append(e.args, arg)
	}
	// A call must close only at its end: "f(a)(b)" or "f(a)b" is not one call.
	if e.name+"("+joinTexts(e.args)+")" != text {
		return expr{}, false
	}
	return e, true
}

func joinTexts(es []expr) string {
	ts := make([]string, len(es))
	for i, e := range es {
		ts[i] = e.text
	}
	return strings.Join(ts, ",")
}

// balanced reports whether every parenthesis of s closes, in order.
func balanced(s string) bool {
	open := 0
	for _, r := range s {
		switch r {
		case '(':
			open++
		case ')':
			open--
			if open < 0 {
				return false
			}
		}
	}
	return open == 0
}

// splitArgs splits a call's argument list at its top-level commas.
func splitArgs(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	open, from := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			open++
		case ')':
			open--
		case ',':
			if open == 0 {
				out = append(out, s[from:i])
				from = i + 1
			}
		}
	}
	return append(out, s[from:])
}

// diffExprs compares values down to depth calls and returns the part they share, with
// a hole (·) for each part that differs, and each value's differing parts in order. A
// part is shared when every value has the same text there; the comparison goes inside a
// call only when every value has the same call (name and number of arguments) there.
func diffExprs(es []expr, depth int) (string, [][]string) {
	holes := make([][]string, len(es))
	same, shape := true, depth > 0
	for _, e := range es[1:] {
		same = same && e.text == es[0].text
		shape = shape && e.call && e.name == es[0].name && len(e.args) == len(es[0].args)
	}
	switch {
	case same:
		return es[0].text, holes
	case !shape || !es[0].call:
		for i, e := range es {
			holes[i] = []string{e.text}
		}
		return hole, holes
	}
	parts := make([]string, len(es[0].args))
	for j := range es[0].args {
		args := make([]expr, len(es))
		for i, e := range es {
			args[i] = e.args[j]
		}
		var hs [][]string
		parts[j], hs = diffExprs(args, depth-1)
		for i := range holes {
			holes[i] = append(holes[i], hs[i]...)
		}
	}
	return es[0].name + "(" + strings.Join(parts, ",") + ")", holes
}
