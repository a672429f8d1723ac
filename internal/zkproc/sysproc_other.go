//go:build !linux

package zkproc

import "syscall"

// sysProcAttr is nil off Linux: the parent's own cleanup is what stops its servers.
func sysProcAttr() *syscall.SysProcAttr { return nil }
