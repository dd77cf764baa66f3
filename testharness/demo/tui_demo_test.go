//go:build demo

package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// TestDemoTUI is the TUI side of `make demo`, where a terminal is available (tmux): the same
// fan-out typed into OpenCode's own terminal UI, with the TUI module loaded from tui.json. It
// prints the sidebar's "Background tasks" section while the tasks run and once they are done.
func TestDemoTUI(t *testing.T) {
	say := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	if _, err := exec.LookPath("tmux"); err != nil {
		say("\nthe TUI side of the demo did not run: it draws OpenCode's terminal UI in tmux, which is not installed here")
		return
	}
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		for _, c := range children {
			if req.LastUser == c.prompt {
				return mockmodel.Reply{Text: c.answer, Delay: 3 * c.delay}
			}
		}
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
			return mockmodel.Reply{Text: "Three surveys are running in the background."}
		}
		if strings.HasPrefix(req.LastUser, "Survey") {
			var calls []mockmodel.ToolCall
			for _, c := range children {
				calls = append(calls, mockmodel.ToolCall{Name: "asyncagents_task", Args: map[string]any{"description": c.desc, "prompt": c.prompt, "agent": "general"}})
			}
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "ok"}
	})
	socket := fmt.Sprintf("aa-demo-%d", os.Getpid())
	tmux := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, _ := exec.CommandContext(ctx, "tmux", append([]string{"-L", socket}, args...)...).Output()
		return strings.TrimRight(string(out), "\n")
	}
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "demo", "-x", "220", "-y", "50")
	t.Cleanup(func() { tmux("kill-server") })
	tuiJSON, _ := json.Marshal(map[string]any{"plugin": []string{"file://" + filepath.Join(ocserve.RepoRoot(t), "dist", "asyncagents-tui.js")}})
	say("\nthe same fan-out in OpenCode's terminal UI (220×50, in tmux), with the TUI module from .opencode/tui.json:")
	oc := ocserve.StartTUI(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)},
		Files: map[string]string{".opencode/tui.json": string(tuiJSON)}}, socket)
	screen := func() string { return tmux("capture-pane", "-p", "-t", oc.Pane) }
	wait := func(what string, cond func(string) bool) string {
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if s := screen(); cond(s) {
				return s
			}
		}
		t.Fatalf("the TUI never showed %s; it shows:\n%s", what, screen())
		return ""
	}
	wait("its prompt", func(s string) bool { return strings.Contains(s, "Ask anything") })
	tmux("send-keys", "-t", oc.Pane, "-l", "Survey the auth, billing and search modules")
	tmux("send-keys", "-t", oc.Pane, "Enter")
	running := wait("the tasks running", func(s string) bool { return strings.Count(s, "● Survey") == len(children) })
	say("  while they run, the sidebar and the prompt's right side:\n%s", sidebar(running))
	done := wait("the tasks done", func(s string) bool { return strings.Count(s, "✓ Survey") == len(children) })
	say("  when they are done (no keypress in between):\n%s", sidebar(done))
	say("  /tasks lists them; Enter opens one's child session, ctrl+d cancels one.")
}

// sidebar is the right-hand column of the screen from the section's title on, and the line of
// the prompt's count.
func sidebar(screen string) string {
	var out []string
	in := false
	for _, line := range strings.Split(screen, "\n") {
		r := []rune(line)
		right := ""
		if len(r) > 176 {
			right = strings.TrimSpace(string(r[176:]))
		}
		if strings.HasPrefix(right, "Background tasks") {
			in = true
		}
		if in && right == "" || strings.HasPrefix(right, "Context") {
			in = false
		}
		if in {
			out = append(out, "    │ "+right)
		}
		if strings.Contains(line, "running") && !in && strings.Contains(line, "┃") {
			out = append(out, "    beside the prompt: "+strings.TrimSpace(string(r[min(len(r), 140):min(len(r), 176)])))
		}
	}
	return strings.Join(out, "\n")
}
