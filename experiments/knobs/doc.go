// Package knobs is the registry of a simulated world's knobs and their parsing: Config (one
// world, every knob), the registry behind `redlock-sim params` and sweep specs (name, unit,
// default, allowed range, help), the value and distribution parsers whose errors speak the
// user's words, the limits several knobs reach together, and the registry of lock
// algorithms the `algorithm` knob names. It assembles nothing and runs nothing, so the CLI,
// the sweep engine and the world all read one definition of every knob.
package knobs
