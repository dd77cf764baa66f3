package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// The dashboard's Merge button: POST /v1/tasks/:id/merge under the cancel's rules; the machine
// merges as asyncagents_merge does and records the outcome in the task's mergeNote.
func TestDashboardMerge(t *testing.T) {
	h := newWT(t, config.Config{})
	iso, _, _ := h.launchIso("iso", `,"isolation":"worktree"`)
	plain, _, _ := h.launchIso("plain", "")
	h.files[iso] = `[{"path":"a.go","added":1,"removed":0}]`
	h.finishTask(iso)
	cfg := config.APIConfig{Token: "tok"}
	post := func(path, origin string) (httpapi.Response, []Effect) {
		hd := map[string]string{"host": "127.0.0.1:5165", "authorization": "Bearer tok"}
		if origin != "" {
			hd["origin"] = origin
		}
		return h.m.ServeHTTPEffects(httpapi.Request{Method: "POST", Path: path, Port: 5165, Headers: hd}, cfg, h.now)
	}
	own := "http://127.0.0.1:5165"
	for _, c := range []struct {
		path, origin string
		status       int
		body         string
	}{
		{"/v1/tasks/" + iso + "/merge", "http://evil.example", 403, "forbidden"},
		{"/v1/tasks/bg_nope/merge", own, 404, "not found"},
		{"/v1/tasks/" + plain + "/merge", own, 409, "without isolation"},
		{"/v1/tasks/" + iso + "/merge?discard=maybe", own, 400, "discard must be true or false"},
	} {
		r, eff := post(c.path, c.origin)
		require.Equal(t, c.status, r.Status, c.path)
		require.Contains(t, r.Body, c.body, c.path)
		require.Empty(t, eff, "nothing is done")
	}
	r, eff := post("/v1/tasks/"+iso+"/merge", own)
	require.Equal(t, 202, r.Status)
	var got task.Task
	require.NoError(t, json.Unmarshal([]byte(r.Body), &got))
	require.Equal(t, iso, got.ID)
	inspect := ofKind(eff, EffectWorktreeInspect)
	require.Len(t, inspect, 1)
	h.answerWT(inspect[0])
	w := h.m.task(iso).Worktree
	require.Equal(t, task.MergeMerged, w.Merge)
	require.Contains(t, w.MergeNote, "Merged task "+iso)
	r, _ = post("/v1/tasks/"+iso+"/merge", own)
	require.Equal(t, 409, r.Status)
	require.Contains(t, r.Body, "nothing to merge (merged)")
}
