// Package report turns one run into what a person reads: the narrated trace (Narrator,
// the text of `run --trace` and of the golden files), the timeline a figure draws
// (TimelineCollector), and the replay the viewer steps through (ReplayCollector). Each is
// a trace sink and a client-event hook that only reads, so a run is the same with or
// without them. It reads the trace's records through the typed decoders their writers
// define (model.DecodeExec, network.DecodeMsgRecord, oracle.DecodeViolation, ...), never a
// field by name or a command by its printed text; a record that does not decode is shown
// and reported (Narrator.Undecoded), never read as zeros.
package report
