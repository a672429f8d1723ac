package oracle

import "github.com/redlock-sim/redlock-sim/sim"

// Actor is the actor of the oracle's trace records; RecViolation is their kind.
const (
	Actor        = "oracle"
	RecViolation = "violation" // a violation as the oracle found it: kind, resource, first, second
)

// ViolationRecord is the oracle's violation record: the kind (a Kind* constant), the
// resource, and the clients, Second empty when the violation names one.
type ViolationRecord struct {
	Kind, Resource string
	First, Second  string
}

// DecodeViolation decodes a violation record, for the narration, which never reads a
// field by name itself: a missing field is an error naming it, never an empty name.
func DecodeViolation(r *sim.Record) (ViolationRecord, error) {
	if r.Actor != Actor || r.Kind != RecViolation {
		return ViolationRecord{}, sim.WrongKind(r, RecViolation)
	}
	d := sim.ReadRecord(r)
	x := ViolationRecord{Kind: d.Str("kind"), Resource: d.Str("resource"), First: d.Str("first"),
		Second: d.Str("second")}
	return x, d.End()
}
