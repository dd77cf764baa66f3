package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/stretchr/testify/require"
)

// GET /v1/workers lists the workers by name with their state, load, version and the agents a
// task may run there (once the worker listed them), under the same token as /v1/tasks, and holds
// no credential.
func TestWorkersRoute(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	h.state("w2", false, "wrong username or password (401)")
	h.launchOn("a", "w1")
	r := h.m.ServeHTTP(apiGet("/v1/workers", ""), tasktest.APIConfig, h.now)
	require.Equal(t, 200, r.Status, r.Body)
	var got struct {
		Workers []WorkerInfo `json:"workers"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Body), &got))
	require.Equal(t, []WorkerInfo{
		{Name: "w1", URL: "http://127.0.0.1:4101", State: WorkerUp, Version: "1.18.33", Running: 1, MaxTasks: 2, LastChangeAt: got.Workers[0].LastChangeAt, Agents: []string{"general"}},
		{Name: "w2", URL: "https://w2.example:4096", State: WorkerDown, Error: "wrong username or password (401)", MaxTasks: 2, LastChangeAt: got.Workers[1].LastChangeAt},
	}, got.Workers)
	require.Positive(t, got.Workers[0].LastChangeAt)
	require.NotContains(t, r.Body, "PASSWORD", "not even the variable's name")
	noSecret(t, r.Body)

	noToken := apiGet("/v1/workers", "")
	delete(noToken.Headers, "authorization")
	require.Equal(t, 401, h.m.ServeHTTP(noToken, tasktest.APIConfig, h.now).Status)
	// With no workers: an empty list.
	empty := newWK(t, twoWorkers(nil))
	empty.m.cfg.Workers = nil
	require.JSONEq(t, `{"workers":[]}`, empty.m.ServeHTTP(apiGet("/v1/workers", ""), tasktest.APIConfig, 1).Body)
}

// No effect, history line or answer the core writes in a remote task's life has a password field:
// the core knows only the variable's name (the host reads the value when it sends a request).
func TestNoPasswordAnywhere(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.run(Event{Type: EventStart})
	h.state("w1", true, "")
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	h.answerOn("w1", tk.SessionID, "done")
	b, err := json.Marshal(h.effects)
	require.NoError(t, err)
	all := string(b) + HistoryLine(tk.Task) + h.m.ServeHTTP(apiGet("/v1/tasks", ""), tasktest.APIConfig, h.now).Body
	require.NotContains(t, all, `"password":`)
	require.Contains(t, all, `"passwordEnv":"W1_PASSWORD"`, "the effects name the variable")
	noSecret(t, all)
}

// The status API sends the host to the worker for a remote task's logs and conversation.
func TestLogsOfARemoteTaskAreReadOnItsWorker(t *testing.T) {
	h := newWK(t, twoWorkers(nil))
	h.state("w1", true, "")
	r, _ := h.launchOn("a", "w1")
	tk := h.taskOf(r)
	for _, path := range []string{"/v1/tasks/" + tk.ID + "/logs", "/v1/tasks/" + tk.ID + "/messages"} {
		resp := h.m.ServeHTTP(apiGet(path, ""), tasktest.APIConfig, h.now)
		require.Equal(t, 200, resp.Status, path)
		require.Equal(t, "w1", resp.Worker, path)
		require.Equal(t, "/srv/w1/repo", resp.Directory, path)
		require.Equal(t, "W1_PASSWORD", resp.Remote.PasswordEnv, path)
	}
	local, _ := h.launchOn("b", "local")
	resp := h.m.ServeHTTP(apiGet("/v1/tasks/"+h.taskOf(local).ID+"/logs", ""), tasktest.APIConfig, h.now)
	require.Empty(t, resp.Worker)
	require.Nil(t, resp.Remote)
}
