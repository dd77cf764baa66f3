package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/internal/encodetest"
	"github.com/stretchr/testify/require"
)

// A task writes what encoding/json writes for its struct: with every field set, each field
// alone, each awkward string in each string field, and the slices nil, empty and full.
func TestTaskEncodesAsTheStruct(t *testing.T) {
	all := Task{ID: "bg_1", SessionID: "ses_1", ParentSessionID: "ses_0", ParentMessageID: "msg_0", ParentAgent: "build", BatchID: "b", Description: "d",
		Prompt: "p", Agent: "general", Status: StatusError, StartedAt: 1, CompletedAt: 2, Result: "r",
		Error: &TaskError{Name: "APIError", Message: "m", StatusCode: 429}, Progress: Progress{ToolCalls: 3, LastTools: []string{"read", "grep"}, LastUpdate: 4},
		ResumeCount: 5, IsForked: true, RetrievedAt: 6, Queued: true, Depth: 2, CancelReason: "why", ResumedAt: 7, ForkTokens: 8,
		Models: []string{"a/b", "c/d"}, Model: "c/d",
		FallbackInfo: &FallbackInfo{Occurred: true, Attempts: []FallbackAttempt{{Model: "a/b", Error: "429"}}, Skipped: []string{"x/y"}, SuccessfulModel: "c/d", TotalAttempts: 2}}
	cases := encodetest.FieldVariants(t, all)
	for _, s := range encodetest.AwkwardStrings {
		c := all
		c.Error = &TaskError{Name: s, Message: s}
		c.Progress.LastTools = []string{s, s}
		c.Models = []string{s}
		cases = append(cases, c)
	}
	empty := all
	empty.Progress.LastTools, empty.Models, empty.FallbackInfo = []string{}, []string{}, &FallbackInfo{}
	cases = append(cases, empty)
	for _, c := range append(cases, apiManyTasks(20)...) {
		want, err := json.Marshal(c)
		require.NoError(t, err)
		got, err := appendTask(nil, &c)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

// GET /v1/tasks writes what encoding/json writes for APITaskList, empty pages included.
func TestAPITaskListEncodesAsTheStruct(t *testing.T) {
	tasks := apiManyTasks(30)
	tasks[4].Error = &TaskError{Name: "E", Message: "<&>"}
	for _, query := range []string{"", "limit=1", "limit=200&offset=3", "offset=100", "status=running&search=zzz"} {
		resp := ServeHTTP(apiGet("/v1/tasks", query), tasks, apiCfg, apiNow)
		require.Equal(t, 200, resp.Status, query)
		var list APITaskList
		require.NoError(t, json.Unmarshal([]byte(resp.Body), &list), query)
		want, err := json.Marshal(list)
		require.NoError(t, err)
		require.Equal(t, string(want), resp.Body, query)
	}
}

// Any strings and numbers in a task encode as encoding/json encodes them (core/abi fuzzes the
// effect and HTTP answer encoders the same way).
func FuzzHandEncodersMatchEncodingJSON(f *testing.F) {
	for _, s := range encodetest.AwkwardStrings {
		f.Add(s, s, int64(-1), true)
	}
	f.Fuzz(func(t *testing.T, a, b string, n int64, flag bool) {
		task := Task{ID: a, ParentSessionID: b, Description: a + b, Result: b, Status: Status(a), StartedAt: n, CompletedAt: -n,
			Error: &TaskError{Name: b, Message: a, StatusCode: int(n % 1000)}, Progress: Progress{LastTools: []string{a, b}, LastUpdate: n},
			IsForked: flag, Queued: flag, Models: []string{b}, Model: a}
		want, err := json.Marshal(task)
		require.NoError(t, err)
		got, err := appendTask(nil, &task)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))

	})
}
