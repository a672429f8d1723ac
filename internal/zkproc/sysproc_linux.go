package zkproc

import "syscall"

// sysProcAttr puts the server in a process group of its own, so a Ctrl-C at the terminal
// reaches only the parent, which then stops its servers; and it has the kernel kill the
// server if the parent dies without doing so (kill -9, a crash).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
