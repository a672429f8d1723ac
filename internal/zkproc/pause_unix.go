//go:build unix

package zkproc

import "syscall"

// Pause stops the server with SIGSTOP: it keeps its ports and connections but answers
// nothing and sends nothing (no pings to its peers, no session expiry), as a server in a
// long GC pause would, until Resume. Kill works on a paused server.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }
