package bench

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// threadCPU is the CPU seconds (utime + stime) of each live thread of process pid, summed by the
// thread's name: OpenCode's main thread, the plugin's Worker, Bun's helpers and the garbage
// collector each name theirs, and where a process's CPU goes shows in which name grows.
func threadCPU(pid int) map[string]float64 {
	out := map[string]float64{}
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(raw)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		name := s[open+1 : end]
		if e.Name() == strconv.Itoa(pid) {
			name = "main"
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(fields[11], 10, 64)
		st, _ := strconv.ParseInt(fields[12], 10, 64)
		out[name] += float64(u+st) / clockTicks
	}
	return out
}

// threadDelta is after minus before, by name, the names sorted by the CPU they grew by.
func threadDelta(before, after map[string]float64) []threadGrowth {
	var g []threadGrowth
	for name, v := range after {
		if d := v - before[name]; d > 0.005 {
			g = append(g, threadGrowth{name, d})
		}
	}
	sort.Slice(g, func(i, j int) bool { return g[i].CPU > g[j].CPU })
	return g
}

// threadGrowth is the CPU seconds the threads of one name used over a window.
type threadGrowth struct {
	Name string  `json:"name"`
	CPU  float64 `json:"cpu_s"`
}
