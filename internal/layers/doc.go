// Package layers holds no code: its test asserts the module's whole import graph, which
// package may import which (docs/architecture.md, "Layers"), so that a new import that
// points up a layer fails in one place, with the rule it breaks, rather than being found in
// review.
package layers
