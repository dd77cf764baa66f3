package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// chainOptions are plugin options (opencode.json) giving the general agent the chain A, B.
var chainOptions = map[string]any{"agents": map[string]any{"general": map[string]any{"models": []string{ocserve.ModelA, ocserve.ModelB}}}}

// startWithOptions starts OpenCode with the plugin configured by options.
func startWithOptions(t *testing.T, script mockmodel.Script, options map[string]any) *env {
	t.Helper()
	model := mockmodel.Start(t, script)
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Config: map[string]any{
		"plugin": []any{[]any{ocserve.PluginSpec(t), options}},
	}})
	return &env{t: t, model: model, oc: oc}
}

// storedTask reads a task's last record from the plugin's history file, as a restart would.
func storedTask(t *testing.T, oc *ocserve.Server, id string) task.Task {
	t.Helper()
	last, ok := findStoredTask(oc, id)
	require.True(t, ok, "task %s is in the history", id)
	return last
}

// findStoredTask reads the latest record of the task with id (its own ID or its session's) from
// the project's history: every process's log (core/history_files.go), as a restart would.
func findStoredTask(oc *ocserve.Server, id string) (task.Task, bool) {
	st := storageOf(oc)
	logs, _ := filepath.Glob(filepath.Join(st.Dir, "history-"+st.HistoryKey+"*.log"))
	var last task.Task
	found := false
	for _, path := range logs {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		known := map[string]task.Task{}
		for sc.Scan() {
			_, body, _ := strings.Cut(sc.Text(), " ")
			if t, _, err := storedRecord(body, known); err == nil && t != nil && (t.ID == id || t.SessionID == id) {
				last, found = *t, true
			}
		}
		f.Close()
	}
	return last, found
}

// storedRecord reads a history line's record (a task, or the ID of one removed) and notes the
// task in known: a line that keeps its large fields (core/history_keep.go) gets them from the
// task as known's earlier lines made it.
func storedRecord(body string, known map[string]task.Task) (*task.Task, string, error) {
	var r struct {
		Keep    string     `json:"keep"`
		Task    *task.Task `json:"task"`
		Removed string     `json:"removed"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return nil, "", err
	}
	if r.Task == nil {
		delete(known, r.Removed)
		return nil, r.Removed, nil
	}
	was := known[r.Task.ID]
	for _, f := range strings.Split(r.Keep, ",") {
		switch f {
		case "prompt":
			r.Task.Prompt = was.Prompt
		case "result":
			r.Task.Result = was.Result
		case "partial":
			r.Task.Partial = was.Partial
		}
	}
	known[r.Task.ID] = *r.Task
	return r.Task, "", nil
}

// parentScript launches one task per "GO <name>" prompt and acknowledges notices.
func parentScript(child func(req mockmodel.Request) (mockmodel.Reply, bool)) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		if r, ok := child(req); ok {
			return r
		}
		switch {
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case strings.HasPrefix(req.LastUser, "GO "):
			name := strings.TrimPrefix(req.LastUser, "GO ")
			var calls []mockmodel.ToolCall
			for _, n := range strings.Split(name, ",") {
				calls = append(calls, taskCall("Job "+n, "CHILD "+n, "general"))
			}
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "?"}
	}
}

func providerError(status int, typ, msg string) mockmodel.Reply {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": typ}})
	// retry-after-ms: 0 keeps OpenCode's own retries of a 429/503 from waiting.
	return mockmodel.Reply{Status: status, ErrorBody: string(body), Header: http.Header{"Retry-After-Ms": []string{"0"}}}
}

func modelOf(req mockmodel.Request) string { return "mock/" + req.Model }

// Model A answers 429 (and, in the second case, 503): the task completes on B, in the same
// session, and its fallbackInfo and notice say so.
func TestFallbackToModelB(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		typ    string
		msg    string
		class  string
	}{
		{"429", 429, "rate_limit_exceeded", "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1.", "rate_limit"},
		{"503", 503, "overloaded", "The server is overloaded. Please try again later.", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := startWithOptions(t, parentScript(func(req mockmodel.Request) (mockmodel.Reply, bool) {
				if req.LastUser != "CHILD fb" {
					return mockmodel.Reply{}, false
				}
				if modelOf(req) == ocserve.ModelA {
					return providerError(c.status, c.typ, c.msg), true
				}
				return mockmodel.Reply{Text: "answer from B"}, true
			}), chainOptions)
			parent := e.prompt("GO fb")
			e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
			n := e.notices(parent)[0]
			require.Contains(t, n.visible, `"Job fb" finished`)
			require.Contains(t, n.visible, "Model: mock/mock-b (fallback after mock/mock-a")
			require.Contains(t, n.hidden, "answer from B")

			id := idOf(e.toolParts(parent, "asyncagents_task")[0])
			stored := storedTask(t, e.oc, id)
			require.Equal(t, task.StatusCompleted, stored.Status)
			info := stored.FallbackInfo
			require.NotNil(t, info)
			require.True(t, info.Occurred)
			require.Equal(t, ocserve.ModelB, info.SuccessfulModel)
			require.Equal(t, ocserve.ModelA, info.Attempts[0].Model)
			require.False(t, info.Attempts[0].Success)
			if c.class != "" {
				require.Equal(t, c.class, info.Attempts[0].Class)
			}
			require.Equal(t, ocserve.ModelB, info.Attempts[len(info.Attempts)-1].Model)
			require.True(t, info.Attempts[len(info.Attempts)-1].Success)
			children, err := e.oc.Children(e.ctx(10*time.Second), parent)
			require.NoError(t, err)
			require.Len(t, children, 1, "the fallback stays in the task's own session")
		})
	}
}

// Three tasks fail on A (an auth error, which OpenCode does not retry): A's circuit opens, the
// fourth task starts on B without calling A, and the health file in the plugin's storage says so.
func TestCircuitBreakerSkipsModelA(t *testing.T) {
	var calledA4 atomic.Int32
	e := startWithOptions(t, parentScript(func(req mockmodel.Request) (mockmodel.Reply, bool) {
		if !strings.HasPrefix(req.LastUser, "CHILD ") {
			return mockmodel.Reply{}, false
		}
		if modelOf(req) == ocserve.ModelA {
			if req.LastUser == "CHILD 4" {
				calledA4.Add(1)
			}
			return providerError(401, "invalid_api_key", "Incorrect API key provided: mock-key. You can find your API key at https://platform.openai.com/account/api-keys."), true
		}
		return mockmodel.Reply{Text: "B did " + req.LastUser}, true
	}), chainOptions)
	parent := e.prompt("GO 1,2,3")
	e.eventually("three notices", 90*time.Second, func() bool { return len(e.notices(parent)) == 3 })
	e.waitIdle(parent)
	health, err := os.ReadFile(filepath.Join(storageOf(e.oc).Dir, core.ModelHealthFile))
	require.NoError(t, err)
	require.Contains(t, string(health), `"mock/mock-a"`)
	require.Contains(t, string(health), `"failures": 3`)

	e.promptIn(parent, "GO 4")
	e.eventually("the fourth notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 4 })
	parts := e.toolParts(parent, "asyncagents_task")
	stored := storedTask(t, e.oc, idOf(parts[len(parts)-1]))
	require.Equal(t, task.StatusCompleted, stored.Status)
	require.Equal(t, []string{ocserve.ModelA}, stored.FallbackInfo.Skipped)
	require.Len(t, stored.FallbackInfo.Attempts, 1)
	require.Equal(t, ocserve.ModelB, stored.FallbackInfo.Attempts[0].Model)
	require.Zero(t, calledA4.Load(), "the open circuit kept the fourth task off A")
}

// A context-length error on A compacts the child's session and retries once on A, which then
// answers. OpenCode 1.18 compacts by itself on the overflows it recognises (the task records the
// compaction); on one it does not recognise, the core asks for the compaction.
func TestContextLengthCompactsAndRetries(t *testing.T) {
	for _, c := range []struct {
		name     string
		err      mockmodel.Reply
		attempts int
	}{
		{"recognised by OpenCode", providerError(400, "context_length_exceeded", "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages."), 1},
		{"recognised by the core only", mockmodel.Reply{Status: 422, ErrorBody: `{"error":"Input validation error: ` + "`inputs` tokens + `max_new_tokens` must be <= 4096. Given: 3900 `inputs` tokens and 512 `max_new_tokens`" + `","error_type":"validation"}`}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var failed, compactions atomic.Int32
			e := startWithOptions(t, parentScript(func(req mockmodel.Request) (mockmodel.Reply, bool) {
				switch {
				case req.LastUser == "CHILD big" && failed.Add(1) == 1:
					return c.err, true
				case strings.Contains(req.LastUser, "context was compacted"): // OpenCode's compaction prompt
					compactions.Add(1)
					return mockmodel.Reply{Text: "Summary: the user asked for CHILD big; nothing done yet."}, true
				case req.LastUser == "CHILD big" || strings.Contains(req.LastUser, "Continue if you have next steps"):
					return mockmodel.Reply{Text: "fits now"}, true
				}
				return mockmodel.Reply{}, false
			}), chainOptions)
			parent := e.prompt("GO big")
			e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
			n := e.notices(parent)[0]
			require.Contains(t, n.visible, `"Job big" finished`)
			require.Contains(t, n.hidden, "fits now")
			require.Equal(t, int32(1), compactions.Load(), "one compaction, not two")
			stored := storedTask(t, e.oc, idOf(e.toolParts(parent, "asyncagents_task")[0]))
			info := stored.FallbackInfo
			require.Len(t, info.Attempts, c.attempts)
			if c.attempts == 2 {
				require.Equal(t, "context_length", info.Attempts[0].Class)
				require.False(t, info.Attempts[0].Success)
			}
			last := info.Attempts[len(info.Attempts)-1]
			require.Equal(t, ocserve.ModelA, last.Model)
			require.True(t, last.Compacted)
			require.True(t, last.Success)
			require.False(t, info.Occurred, "no other model was needed")
		})
	}
}

// A non-provider error (a 400 about the request itself) fails the task at once: B is never asked.
func TestBadRequestFailsWithoutFallback(t *testing.T) {
	var calledB atomic.Int32
	e := startWithOptions(t, parentScript(func(req mockmodel.Request) (mockmodel.Reply, bool) {
		if req.LastUser != "CHILD bad" {
			return mockmodel.Reply{}, false
		}
		if modelOf(req) == ocserve.ModelB {
			calledB.Add(1)
			return mockmodel.Reply{Text: "should not be asked"}, true
		}
		return providerError(400, "invalid_request_error", "Invalid schema for function 'read': In context=('properties', 'filePath'), 'type' is a required property."), true
	}), chainOptions)
	parent := e.prompt("GO bad")
	e.eventually("the notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	n := e.notices(parent)[0]
	require.Contains(t, n.visible, `"Job bad" failed`)
	require.Contains(t, n.hidden, "Invalid schema for function")
	id := idOf(e.toolParts(parent, "asyncagents_task")[0])
	stored := storedTask(t, e.oc, id)
	require.Equal(t, task.StatusError, stored.Status)
	require.Len(t, stored.FallbackInfo.Attempts, 1)
	require.Equal(t, "other", stored.FallbackInfo.Attempts[0].Class)
	require.Zero(t, calledB.Load())
}

// A resume falls back like a launch: A answered the task, then answers its follow-up with a 429,
// and B gets the follow-up (never the task's first prompt) in the same session; the resume's
// notice carries B's answer.
func TestResumeFallsBackToModelB(t *testing.T) {
	var taskID string
	var firstPromptOnB atomic.Int32
	e := startWithOptions(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case req.LastUser == "CHILD first" && modelOf(req) == ocserve.ModelA:
			return mockmodel.Reply{Text: "first answer from A"}
		case req.LastUser == "CHILD first":
			firstPromptOnB.Add(1)
			return mockmodel.Reply{Text: "the first job again, on B"}
		case req.LastUser == "CHILD follow up" && modelOf(req) == ocserve.ModelA:
			return providerError(429, "rate_limit_exceeded", "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1.")
		case req.LastUser == "CHILD follow up":
			return mockmodel.Reply{Text: "follow-up answer from B"}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \"") || strings.Contains(req.LastUser, "Resume #"):
			return mockmodel.Reply{Text: "ok"}
		case req.LastUser == "LAUNCH":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{taskCall("Chain job", "CHILD first", "general")}}
		case req.LastUser == "RESUME":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "asyncagents_task", Args: map[string]any{"resume": taskID, "prompt": "CHILD follow up"}}}}
		}
		return mockmodel.Reply{Text: "?"}
	}, chainOptions)
	parent := e.prompt("LAUNCH")
	e.eventually("the first notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 1 })
	e.waitIdle(parent)
	taskID = idOf(e.toolParts(parent, "asyncagents_task")[0])
	require.Contains(t, e.notices(parent)[0].hidden, "first answer from A")

	e.promptIn(parent, "RESUME")
	e.eventually("the resume notice", 90*time.Second, func() bool { return len(e.notices(parent)) == 2 })
	n := e.notices(parent)[1]
	require.Contains(t, n.visible, "Resume #1 completed")
	require.Contains(t, n.visible, "Model: mock/mock-b (fallback after mock/mock-a")
	require.Contains(t, n.hidden, "follow-up answer from B")
	require.Zero(t, firstPromptOnB.Load(), "B was never given the task's first prompt")

	stored := storedTask(t, e.oc, taskID)
	require.Equal(t, task.StatusCompleted, stored.Status)
	require.Equal(t, 1, stored.ResumeCount)
	require.Equal(t, ocserve.ModelB, stored.FallbackInfo.SuccessfulModel)
	attempts := stored.FallbackInfo.Attempts
	require.Len(t, attempts, 3, "the first run on A, the follow-up on A, the follow-up on B")
	require.False(t, attempts[1].Success)
	require.Equal(t, ocserve.ModelB, attempts[2].Model)
	children, err := e.oc.Children(e.ctx(10*time.Second), parent)
	require.NoError(t, err)
	require.Len(t, children, 1, "the resume and its fallback stay in the task's own session")
}
