// Package plots draws the simulator's figures with gonum.org/v1/plot: the sweep figures
// (safety and liveness against each swept knob, heatmaps over pairs of knobs) from a sweep
// folder's runs.csv, summary.csv and manifest.json, and one run's space-time diagram from
// an report.Timeline, for teaching.
//
// Every figure is computed first as plain data (the series, the grid, the lanes and their
// shapes) by a function of its own, and only then drawn, so that tests check the numbers a
// figure shows rather than its pixels. Figures are PNG or SVG, chosen by the file's
// extension, 1600×900 pixels by default: legible on a slide.
//
// Plots is not on the simulation path: it reads results and never runs a world, so
// nothing here can change a trace hash.
package plots
