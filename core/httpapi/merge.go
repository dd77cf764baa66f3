package httpapi

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// POST /v1/tasks/:id/merge: the dashboard's Merge button, under the cancel's rules (apiMayChange).
// ?discard=true throws the changes away instead. The machine merges as asyncagents_merge does,
// after any merge under way; it answers 202 with the task at once, and the outcome arrives as the
// task's worktree.mergeNote (and merge state) in its event frame.
func apiServeMerge(req Request, tasks []*task.Task, id string, q []apiQueryParam, cfg config.APIConfig) Response {
	if r, denied := apiMayChange(req, q, cfg, "a merge", "merge with asyncagents_merge in OpenCode"); denied {
		return r
	}
	t := apiFindTask(tasks, id)
	if t == nil {
		return apiFail(404, fmt.Sprintf("task %s not found", apiEcho(id)))
	}
	w := t.Worktree
	switch {
	case w == nil:
		return apiFail(409, fmt.Sprintf("task %s ran without isolation: it has no branch to merge", t.ID))
	case w.Merge == "":
		return apiFail(409, fmt.Sprintf("task %s is still at work; merge it once it has ended", t.ID))
	case w.Merge != task.MergePending:
		return apiFail(409, fmt.Sprintf("task %s has nothing to merge (%s)", t.ID, w.Merge))
	}
	discard := apiQueryGet(q, "discard")
	if discard != "" && discard != "true" && discard != "false" {
		return apiFail(400, fmt.Sprintf("discard must be true or false, not %s", apiEcho(discard)))
	}
	return Response{Status: 202, Headers: apiJSONHeaders(), Merge: t, MergeDiscard: discard == "true"}
}
