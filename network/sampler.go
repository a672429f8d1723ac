package network

// Validate reports the first bad field of l, named param.field.
func (l Latency) Validate(param string) error { return l.validate(param) }
