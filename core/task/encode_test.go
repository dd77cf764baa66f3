package task

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/asyncagents/asyncagents/core/internal/encodetest"
	"github.com/stretchr/testify/require"
)

// A task writes what encoding/json writes for its struct: with every field set, each field
// alone, each awkward string in each string field, and the slices nil, empty and full.
func TestTaskEncodesAsTheStruct(t *testing.T) {
	all := Task{ID: "bg_1", SessionID: "ses_1", ParentSessionID: "ses_0", ParentMessageID: "msg_0", ParentAgent: "build", ParentTitle: "Fix \"it\"", BatchID: "b", Description: "d",
		Prompt: "p", Agent: "general", Worker: "w1", Status: StatusError, StartedAt: 1, CompletedAt: 2, Result: "r",
		Error: &TaskError{Name: "APIError", Message: "m", StatusCode: 429}, Progress: Progress{ToolCalls: 3, LastTools: []string{"read", "grep"}, LastUpdate: 4},
		ResumeCount: 5, IsForked: true, RetrievedAt: 6, Queued: true, Waiting: &Wait{Limit: "concurrency.default", Max: 2, Position: 3}, Depth: 2, CancelReason: "why", ResumedAt: 7, ForkTokens: 8,
		Models: []string{"a/b", "c/d"}, Model: "c/d",
		FallbackInfo: &FallbackInfo{Occurred: true, Attempts: []FallbackAttempt{{Model: "a/b", Error: "429"}}, Skipped: []string{"x/y"}, SuccessfulModel: "c/d", TotalAttempts: 2},
		TimeoutMs:    9, StalledSince: 10, QueuedUntil: 11, Stalls: []Span{{From: 12, To: 13}, {From: 14, To: 15}}, Partial: &Partial{Text: "half", TextChars: 4, Tools: []ToolRun{{Name: "read", Title: "a.go"}}},
		Tokens: &Tokens{Input: 1, Output: 2, Reasoning: 3, CacheRead: 4, CacheWrite: 5}, Cost: 0.0125,
		Steps: 9, UsageMarks: []UsageMark{{Session: "ses_1", Message: "msg_1", Tokens: Tokens{Output: 2}, Cost: 0.5, Step: "prt_1"}, {Session: "ses_2", Step: "prt_2"}}, Budget: &Budget{Steps: 3, Tokens: 1000, CostUsd: 0.5},
		Steers:      []Steer{{At: 5, Text: "also the README", BeforeStart: true}},
		Permissions: []PermissionRequest{{ID: "per_1", SessionID: "ses_1", Permission: "bash", Patterns: []string{"echo hi"}, At: 3, Reply: "once", RepliedAt: 4, TimedOut: true}},
		Worktree:    &Worktree{Path: "/w/bg_1", WorkerPath: "/r/wt", Branch: "asyncagents/bg_1", Base: "a", Head: "b", Commit: "c", Files: []FileChange{{Path: "x.go", Added: 1, Removed: -1}}, Diff: "d", DiffCut: true, Merge: MergePending, MergeNote: "n"},
		Retry:       &Retry{Attempt: 3, Message: "HTTP 500", Next: 14},
		NoticeOwed:  11, NotifiedAt: 12, View: &View{Label: "failed", Budget: "9 of 3 model calls", Permission: "bash echo hi", PermissionAt: 13, Retry: "retrying",
			Duration: "2m 5s", Tokens: "12.3k", Cost: "$0.01", Queue: "position 1", PermissionWait: "3s", Changes: []string{"+3 −1", "binary"}, Worker: "w1",
			Attempts: []AttemptView{{Model: "a/b", Outcome: "failed (rate_limit)", Tone: "error", From: 1, To: 2, Took: "1ms", Error: "429", Compacted: true}, {Model: "c/d", Outcome: "at work", Tone: "accent", From: 3}}}}
	cases := encodetest.FieldVariants(t, all)
	for _, s := range encodetest.AwkwardStrings {
		c := all
		c.Error = &TaskError{Name: s, Message: s}
		c.Progress.LastTools = []string{s, s}
		c.Models = []string{s}
		c.Partial = &Partial{Text: s, Tools: []ToolRun{{Name: s, Title: s}}}
		c.View = &View{Label: s, Budget: s, Permission: s, Retry: s, Duration: s, Tokens: s, Cost: s, Queue: s, PermissionWait: s}
		c.Retry = &Retry{Message: s}
		c.UsageMarks = []UsageMark{{Session: s, Message: s, Step: s, Cost: 1e-7}, {Session: s}}
		cases = append(cases, c)
	}
	for _, cost := range []float64{1e-7, -2.5e-9, 3e21, 0.1 + 0.2, 1234.5, -0.000001} {
		c := all
		c.Cost = cost
		cases = append(cases, c)
	}
	for _, p := range []*Partial{{}, {TextChars: 5}, {Tools: []ToolRun{}}, {Tools: []ToolRun{{Name: "glob"}, {Name: "read", Title: "a.go"}}}, {Text: "t", Tools: []ToolRun{{Name: "x"}}}} {
		c := all
		c.Partial = p
		cases = append(cases, c)
	}
	empty := all
	empty.Progress.LastTools, empty.Models, empty.FallbackInfo, empty.Tokens = []string{}, []string{}, &FallbackInfo{}, &Tokens{}
	cases = append(cases, empty)
	for _, c := range append(cases, manyTasks(20)...) {
		want, err := json.Marshal(c)
		require.NoError(t, err)
		got, err := AppendJSON(nil, &c)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

// Any strings and numbers in a task encode as encoding/json encodes them (core/abi fuzzes the
// effect and HTTP answer encoders the same way).
func FuzzHandEncodersMatchEncodingJSON(f *testing.F) {
	for _, s := range encodetest.AwkwardStrings {
		f.Add(s, s, int64(-1), true, 0.5)
	}
	f.Fuzz(func(t *testing.T, a, b string, n int64, flag bool, cost float64) {
		if math.IsNaN(cost) || math.IsInf(cost, 0) {
			return // encoding/json refuses them; OpenCode's JSON cannot carry one
		}
		task := Task{ID: a, ParentSessionID: b, Description: a + b, Result: b, Status: Status(a), StartedAt: n, CompletedAt: -n,
			Error: &TaskError{Name: b, Message: a, StatusCode: int(n % 1000)}, Progress: Progress{LastTools: []string{a, b}, LastUpdate: n},
			IsForked: flag, Queued: flag, Models: []string{b}, Model: a,
			Tokens: &Tokens{Input: n, Output: -n, CacheWrite: n / 3}, Cost: cost,
			UsageMarks: []UsageMark{{Session: a, Message: b, Tokens: Tokens{Input: n, Reasoning: -n}, Cost: cost, Step: a}}}
		want, err := json.Marshal(task)
		require.NoError(t, err)
		got, err := AppendJSON(nil, &task)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))

	})
}

// manyTasks is n tasks of every status, as a busy store holds them.
func manyTasks(n int) []Task {
	statuses := []Status{StatusCompleted, StatusError, StatusCancelled, StatusRunning, StatusResumed}
	tasks := make([]Task, n)
	for i := range tasks {
		st := statuses[i%len(statuses)]
		tasks[i] = Task{ID: fmt.Sprintf("bg_%08d", i), SessionID: fmt.Sprintf("ses_%08d", i), ParentSessionID: "ses_parent",
			ParentMessageID: fmt.Sprintf("msg_%d", i/4), BatchID: fmt.Sprintf("batch_%d", i/4), Description: fmt.Sprintf("Investigate module %d", i),
			Prompt: "Look at the code and report what you find.", Agent: "general", Status: st, StartedAt: int64(1_700_000_000_000 + i*1000), Depth: 1,
			Progress: Progress{ToolCalls: i % 37, LastTools: []string{"read", "grep", "glob"}, LastUpdate: int64(1_700_000_000_500 + i*1000)}}
		if st.Terminal() {
			tasks[i].CompletedAt, tasks[i].Result = tasks[i].StartedAt+int64(1000+i), "result text"
		}
		if st == StatusError {
			tasks[i].Error = &TaskError{Name: "ProviderError", Message: "rate limited"}
		}
	}
	return tasks
}
