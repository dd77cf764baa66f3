package host

import (
	"os"
	"strconv"

	"github.com/asyncagents/asyncagents/core"
)

// ProcStart says whether pid runs, and when it started (/proc/<pid>/stat, read by the core's
// rule), which tells a reused pid from the process that wrote a file.
func ProcStart(pid int) (running bool, start string) {
	if pid <= 0 {
		return false, ""
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false, ""
	}
	return true, core.ProcStatStart(string(raw))
}
