package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// tuiTasks is how many tasks BenchmarkTUISection fans out: more than maxConcurrentStarts, so the
// section shows queued tasks too.
const tuiTasks = 25

// BenchmarkTUISection measures what the terminal UI module costs OpenCode's TUI: the same fan-out
// of 25 tasks (each child answers after 4 s; 10 run at once, the rest queue) typed into the real
// TUI in tmux (220×50), with the module loaded from tui.json and without it. Per run, from the
// Enter to the 25th completion: the CPU time of the OpenCode process (all its threads: the TUI, the
// server, the plugin's Worker), the frames the TUI drew (its synchronized-output updates, as tmux
// received them) and the bytes it wrote to the terminal. The runs alternate off, on, off, on.
func BenchmarkTUISection(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Fatal("tmux is not installed: the TUI cannot be drawn, so nothing was measured")
	}
	type result struct{ cpuMs, frames, bytes, seconds float64 }
	runs := map[bool][]result{}
	for i := 0; i < 4; i++ {
		on := i%2 == 1
		r := tuiRun(b, on)
		runs[on] = append(runs[on], r)
		fmt.Printf("module %-3s: cpu %6.0f ms, frames %5.0f, bytes %8.0f, %.1f s\n", map[bool]string{true: "on", false: "off"}[on], r.cpuMs, r.frames, r.bytes, r.seconds)
	}
	for _, on := range []bool{false, true} {
		var s result
		for _, r := range runs[on] {
			s.cpuMs += r.cpuMs / float64(len(runs[on]))
			s.frames += r.frames / float64(len(runs[on]))
			s.bytes += r.bytes / float64(len(runs[on]))
		}
		name := map[bool]string{true: "on", false: "off"}[on]
		b.ReportMetric(s.cpuMs, "cpu-ms-"+name)
		b.ReportMetric(s.frames, "frames-"+name)
		b.ReportMetric(s.bytes, "bytes-"+name)
	}
}

// tuiRun is one fan-out in a fresh TUI.
func tuiRun(b *testing.B, module bool) (r struct{ cpuMs, frames, bytes, seconds float64 }) {
	model := mockmodel.Start(b, func(req mockmodel.Request) mockmodel.Reply {
		if strings.HasPrefix(req.LastUser, "CHILD ") {
			return mockmodel.Reply{Text: "done", Delay: 4 * time.Second}
		}
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
			return mockmodel.Reply{Text: "launched"}
		}
		if req.LastUser == "GO" {
			var calls []mockmodel.ToolCall
			for i := range tuiTasks {
				calls = append(calls, mockmodel.ToolCall{Name: "asyncagents_task", Args: map[string]any{
					"description": fmt.Sprintf("Task %02d", i), "prompt": fmt.Sprintf("CHILD %d", i), "agent": "general"}})
			}
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	socket := fmt.Sprintf("aa-bench-tui-%d-%d", os.Getpid(), time.Now().UnixNano())
	tmux := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(ctx, "tmux", append([]string{"-L", socket}, args...)...).Output()
		return strings.TrimSpace(string(out))
	}
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", "220", "-y", "50")
	b.Cleanup(func() { tmux("kill-server") })
	files := map[string]string{}
	if module {
		j, _ := json.Marshal(map[string]any{"plugin": []string{"file://" + filepath.Join(ocserve.RepoRoot(b), "dist", "asyncagents-tui.js")}})
		files[".opencode/tui.json"] = string(j)
	}
	oc := ocserve.StartTUI(b, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(b)}, Files: files}, socket)
	pid, err := strconv.Atoi(tmux("display", "-p", "-t", oc.Pane, "#{pane_pid}"))
	if err != nil {
		b.Fatalf("the TUI's pid: %v", err)
	}
	waitScreen := func(what string, cond func(string) bool) {
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if cond(tmux("capture-pane", "-p", "-t", oc.Pane)) {
				return
			}
		}
		b.Fatalf("the TUI never showed %s", what)
	}
	waitScreen("its prompt", func(s string) bool { return strings.Contains(s, "Ask anything") })
	out := filepath.Join(b.TempDir(), "pane.out")
	tmux("pipe-pane", "-o", "-t", oc.Pane, "cat >> "+out)
	tmux("send-keys", "-t", oc.Pane, "-l", "GO")
	start, cpu0 := time.Now(), cpuTicks(b, pid)
	tmux("send-keys", "-t", oc.Pane, "Enter")
	stats := serverStats(b, oc.Home, pid)
	for deadline := time.Now().Add(3 * time.Minute); stats() < tuiTasks; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the %d tasks did not all complete within 3 minutes", tuiTasks)
		}
	}
	r.seconds = time.Since(start).Seconds()
	r.cpuMs = float64(cpuTicks(b, pid)-cpu0) * 10 // USER_HZ is 100 on Linux
	tmux("pipe-pane", "-t", oc.Pane)
	data, _ := os.ReadFile(out)
	r.bytes = float64(len(data))
	r.frames = float64(strings.Count(string(data), "\x1b[?2026h"))
	return r
}

// cpuTicks is the user and system time of process pid, in clock ticks (/proc/<pid>/stat fields
// 14 and 15, counted after the command name's closing parenthesis).
func cpuTicks(b *testing.B, pid int) int64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+1:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// serverStats returns a function that reads how many tasks the plugin's status API counts as
// completed (0 while its server file is not there yet).
func serverStats(b *testing.B, home string, pid int) func() int {
	client := &http.Client{Timeout: 5 * time.Second}
	return func() int {
		files, _ := filepath.Glob(filepath.Join(home, ".local/share/opencode/asyncagents/servers-*", strconv.Itoa(pid)+".json"))
		if len(files) == 0 {
			return 0
		}
		var sf struct{ URL, Token string }
		if data, err := os.ReadFile(files[0]); err != nil || json.Unmarshal(data, &sf) != nil {
			return 0
		}
		req, _ := http.NewRequest("GET", sf.URL+"/v1/stats", nil)
		req.Header.Set("Authorization", "Bearer "+sf.Token)
		res, err := client.Do(req)
		if err != nil {
			return 0
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		var st struct {
			ByStatus map[string]int `json:"byStatus"`
		}
		_ = json.Unmarshal(body, &st)
		return st.ByStatus["completed"]
	}
}
