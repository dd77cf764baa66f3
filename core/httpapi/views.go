package httpapi

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/view"
)

// GET /v1/views/session/:sessionID, /v1/views/tasks and /v1/views/batch/:batchId: the tasks as
// a client that only draws shows them (core/view): OpenCode's terminal UI reads its sidebar
// section, the count beside the prompt and the /tasks dialog here, already ordered, marked and
// formatted; the dashboard its batch timeline.
func apiServeView(tasks []*task.Task, segs []string, q []apiQueryParam, cfg config.APIConfig, now int64) Response {
	o := view.Opts{ReadOnly: cfg.ReadOnly}
	switch {
	case len(segs) == 1 && segs[0] == "tasks":
		return apiJSON(view.TaskList(tasks, now, o, apiQueryGet(q, "q")))
	case len(segs) == 2 && segs[0] == "session" && segs[1] != "":
		return apiJSON(view.SessionSection(tasks, segs[1], now, o))
	case len(segs) == 2 && segs[0] == "batch" && segs[1] != "":
		if tl, ok := view.BatchTimeline(tasks, segs[1], now); ok {
			return apiJSON(tl)
		}
		return apiFail(404, fmt.Sprintf("task group %s not found", apiEcho(segs[1])))
	}
	return apiFail(404, fmt.Sprintf("not found: no view %s (views: tasks, session/:sessionID, batch/:batchId)", apiEcho(fmt.Sprint(segs))))
}
