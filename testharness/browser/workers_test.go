// The worker a task ran on, as the dashboard shows it (workers.mjs), over `asyncagents serve`.
package browser

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/internal/fixture"
)

// workerTasks: one task that ran on worker w1 and one that ran here, both finished (a finished
// task is shown as it ended, whatever the config says of its worker now).
func workerTasks() []task.Task {
	at := fixture.Base + 3_600_000
	base := task.Task{ParentSessionID: "ses_user", ParentMessageID: "msg_9", BatchID: "msg_9", Agent: "general", Depth: 1,
		Progress: task.Progress{LastTools: []string{}}, Status: task.StatusCompleted, Result: "Done."}
	remote := base
	remote.ID, remote.SessionID, remote.Description, remote.Prompt, remote.Worker = "bg_000000000000000000000w1", "ses_w1", "Ran on the worker", "Go.", "w1"
	remote.StartedAt, remote.CompletedAt = at, at+4_000
	local := base
	local.ID, local.SessionID, local.Description, local.Prompt = "bg_00000000000000000000l1", "ses_l1", "Ran right here", "Go."
	local.StartedAt, local.CompletedAt = at+1, at+3_000
	return []task.Task{remote, local}
}

func TestDashboardNamesTheWorker(t *testing.T) {
	root := repoRoot(t)
	history := ""
	for _, tk := range workerTasks() {
		history += core.HistoryLine(tk)
	}
	s := startServe(t, root, history)
	Script(t, root, "workers.mjs", 3*time.Minute, nil, "DASH_URL="+s.URL, "DASH_TOKEN="+s.Token, "DASH_SHOTS="+filepath.Join(root, "dist", "screenshots"))
}
