//go:build !unix

package redisproc

import "errors"

// Pause would stop the process as a hung server; without SIGSTOP it cannot.
func (s *Server) Pause() error { return errors.ErrUnsupported }

// Resume would continue a paused server; without SIGCONT it cannot.
func (s *Server) Resume() error { return errors.ErrUnsupported }
