package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/internal/tasktest"
	"github.com/stretchr/testify/require"
)

// GET /v1/workers lists the workers by name with their state, load and version, under the same
// token as /v1/tasks, and holds no credential.
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
		{Name: "w1", URL: "http://127.0.0.1:4101", State: WorkerUp, Version: "1.18.33", Running: 1, MaxTasks: 2, LastChangeAt: got.Workers[0].LastChangeAt},
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
