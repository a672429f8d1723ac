package viewer

// SetBeforeRun makes every run of s call f in its slot before it simulates: a test holds
// runs there to fill the slots and the queue whatever the machine's speed.
func SetBeforeRun(s *Server, f func()) { s.beforeRun = f }
