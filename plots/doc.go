// Package plots draws figures from sweep results and space-time diagrams of single runs,
// with gonum.org/v1/plot.
package plots
