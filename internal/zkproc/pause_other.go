//go:build !unix

package zkproc

import "errors"

// Pause would stop the server as a GC pause does; without SIGSTOP it cannot.
func (s *Server) Pause() error { return errors.ErrUnsupported }

// Resume would continue a paused server; without SIGCONT it cannot.
func (s *Server) Resume() error { return errors.ErrUnsupported }
