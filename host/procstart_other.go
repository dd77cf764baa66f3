//go:build !linux

package host

import (
	"errors"
	"os"
	"syscall"
)

// ProcStart says whether pid runs. Where there is no /proc, the start time is not read (""): a
// running pid is taken for the file's writer, a best effort.
func ProcStart(pid int) (running bool, start string) {
	if pid <= 0 {
		return false, ""
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false, ""
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, os.ErrPermission), ""
}
