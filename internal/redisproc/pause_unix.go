//go:build unix

package redisproc

import "syscall"

// Pause stops the process with SIGSTOP: it keeps its port and connections but answers
// nothing, as a hung server would, until Resume. Kill works on a paused server.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }
