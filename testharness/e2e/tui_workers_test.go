package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/host"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// The real TUI's /tasks rows name the worker a task ran on (the core's row: "on worker w1" first,
// where the dialog does not cut it), and say nothing of a worker for a local task. The tasks come from another live process's
// history log of the project (this test's), which the plugin follows and lists as its own.
func TestTUITasksNameTheWorker(t *testing.T) {
	tm := startTmux(t)
	model := mockmodel.Start(t, func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "ok"} })
	oc := ocserve.StartTUI(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Files: tuiModule(t)}, tm.socket)
	e := &env{t: t, model: model, oc: oc}
	pane := oc.Pane
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the TUI showed:\n%s", tm.screen(pane))
		}
	})
	e.eventually("the TUI's prompt", 60*time.Second, func() bool { return strings.Contains(tm.screen(pane), "Ask anything") })

	now := time.Now().UnixMilli()
	done := func(id, desc, worker string) string {
		return core.HistoryLine(task.Task{ID: id, SessionID: "ses_" + id, ParentSessionID: "ses_elsewhere", Description: desc, Prompt: "p",
			Agent: "general", Worker: worker, Status: task.StatusCompleted, StartedAt: now - 9_000, CompletedAt: now - 5_000,
			Progress: task.Progress{LastTools: []string{}}, Depth: 1})
	}
	_, start := host.ProcStart(os.Getpid())
	log := storageOf(oc).OwnHistory(os.Getpid(), start).History
	require.NoError(t, os.WriteFile(log, []byte(done("bg_00000000000000000000r1", "Remote survey", "w1")+done("bg_00000000000000000000l1", "Local survey", "")), 0o600))

	var sj serverJSON
	b, err := os.ReadFile(serverFileOf(storageOf(oc)))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sj))
	e.eventually("the plugin following the other log", 60*time.Second, func() bool {
		code, body := apiGet(t, sj.URL+"/v1/tasks", sj.Token, "")
		return code == 200 && strings.Contains(body, "Remote survey") && strings.Contains(body, "Local survey")
	})
	screen := tm.openTasks(e, pane)
	e.eventually("both tasks in /tasks", 15*time.Second, func() bool {
		screen = tm.screen(pane)
		return strings.Contains(screen, "Remote survey") && strings.Contains(screen, "Local survey")
	})
	t.Logf("/tasks:\n%s", screen)
	row := func(desc string) string {
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, "✓ "+desc) {
				return l
			}
		}
		return ""
	}
	require.Contains(t, row("Remote survey"), "✓ Remote survey on worker w1 · ", "the remote task's row names its worker first")
	require.NotContains(t, row("Local survey"), "worker", "the local task's row names none")
}
