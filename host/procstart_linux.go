package host

import (
	"os"
	"strconv"
	"strings"
)

// ProcStart says whether pid runs, and when it started: field 22 of /proc/<pid>/stat (clock ticks
// since boot), which tells a reused pid from the process that wrote a file.
func ProcStart(pid int) (running bool, start string) {
	if pid <= 0 {
		return false, ""
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false, ""
	}
	return true, procStatStart(string(raw))
}

// procStatStart reads field 22 of a /proc/<pid>/stat line. The second field, the command name in
// parentheses, may hold spaces and parentheses itself: the fields are counted from its last ')'.
func procStatStart(stat string) string {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return ""
	}
	fields := strings.Fields(stat[end+1:]) // field 3 onwards
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}
