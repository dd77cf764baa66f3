package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// results are what the three children of a headless fan-out answer; the parent's last answer
// quotes every one it sees.
var resultRE = regexp.MustCompile(`RESULT-[A-Z]+`)

// fanOutScript: "FANOUT" launches three tasks; the parent says "launched" after the launches and,
// given the results, answers "FINAL:" with each of them. child answers the children.
func fanOutScript(child func(req mockmodel.Request) mockmodel.Reply) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(firstUser(req), "CHILD "):
			return child(req)
		case lastRole(req) == "user" && resultRE.MatchString(req.LastUser):
			seen := map[string]bool{}
			for _, m := range req.Messages {
				for _, r := range resultRE.FindAllString(m.Content, -1) {
					seen[r] = true
				}
			}
			var all []string
			for r := range seen {
				all = append(all, r)
			}
			sort.Strings(all)
			return mockmodel.Reply{Text: "FINAL: " + strings.Join(all, " ")}
		case req.LastUser == "FANOUT" && lastRole(req) == "user":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				taskCall("Part A", "CHILD A", "general"), taskCall("Part B", "CHILD B", "general"), taskCall("Part C", "CHILD C", "general"),
			}}
		}
		return mockmodel.Reply{Text: "launched"}
	}
}

// childDelays are the three children's lengths: the slowest bounds the run from below.
var childDelays = map[string]time.Duration{"CHILD A": 2 * time.Second, "CHILD B": 3 * time.Second, "CHILD C": 4 * time.Second}

// `opencode run` collects its tasks: the parent's turn does not end while they run, their results
// reach it, and its last answer, which quotes them all, is printed before the process exits 0;
// in a git project and in a plain folder alike.
func TestOpenCodeRunCollectsItsTasks(t *testing.T) {
	for _, c := range []struct {
		name  string
		noGit bool
	}{{"git project", false}, {"plain folder", true}} {
		t.Run(c.name, func(t *testing.T) {
			model := mockmodel.Start(t, fanOutScript(func(req mockmodel.Request) mockmodel.Reply {
				name := firstUser(req)
				return mockmodel.Reply{Text: "RESULT-" + strings.TrimPrefix(name, "CHILD "), Delay: childDelays[name]}
			}))
			out, took, err := ocserve.Run(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, NoGit: c.noGit}, 120*time.Second, "FANOUT")
			require.NoError(t, err, "opencode run exits 0 by itself (%s):\n%s", took, out)
			require.Contains(t, out, "launched")
			require.Contains(t, out, "FINAL: RESULT-A RESULT-B RESULT-C", "the last answer quotes every task's result:\n%s", out)
			require.Greater(t, strings.Index(out, "FINAL:"), strings.Index(out, "launched"), "the last answer comes after the launch's")
			exit := time.Now()
			childDone, final := afterChildren(model.Turns())
			require.False(t, final.IsZero(), "the parent's last turn")
			require.True(t, final.After(childDone), "the parent's last turn comes after the slowest child's answer")
			t.Logf("opencode run took %s; the slowest child answered, then %s to the parent's last turn, %s to the exit",
				took.Round(time.Millisecond), final.Sub(childDone).Round(time.Millisecond), exit.Sub(childDone).Round(time.Millisecond))
		})
	}
}

// A task that never answers does not keep a headless run alive past the task's own limit: its
// timeout fails it, the failure reaches the parent, and the run ends with the parent's answer.
func TestOpenCodeRunStopsAtATasksTimeout(t *testing.T) {
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case firstUser(req) == "CHILD hang":
			return mockmodel.Reply{Text: "never", Delay: stallLong}
		case lastRole(req) == "user" && strings.Contains(req.LastUser, "timed out after"):
			return mockmodel.Reply{Text: "FINAL: the survey timed out"}
		case req.LastUser == "HANG" && lastRole(req) == "user":
			call := taskCall("Survey", "CHILD hang", "general")
			call.Args["timeout"] = 4
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{call}}
		}
		return mockmodel.Reply{Text: "launched"}
	})
	out, took, err := ocserve.Run(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}}, 120*time.Second, "HANG")
	require.NoError(t, err, "opencode run exits 0 by itself (%s):\n%s", took, out)
	require.Contains(t, out, "FINAL: the survey timed out", "the parent answered the failure:\n%s", out)
}

// afterChildren is when the slowest child's answer was sent (its request's arrival plus its
// delay) and when the parent's last turn (the one given the results) was asked for.
func afterChildren(turns []mockmodel.Request) (childDone, final time.Time) {
	for _, r := range turns {
		if d, ok := childDelays[firstUser(r)]; ok && r.Received.Add(d).After(childDone) {
			childDone = r.Received.Add(d)
		}
		if lastRole(r) == "user" && resultRE.MatchString(r.LastUser) {
			final = r.Received
		}
	}
	return childDone, final
}

// A SIGINT halfway through a headless run cancels its three tasks, each keeping the work it had
// done in the history, and the process exits promptly.
func TestOpenCodeRunInterrupted(t *testing.T) {
	var working atomic.Int32 // children past their first step, now in their long one
	model := mockmodel.Start(t, fanOutScript(func(req mockmodel.Request) mockmodel.Reply {
		if lastRole(req) == "tool" {
			working.Add(1)
		}
		return workThen(req, mockmodel.Reply{Text: "never", Delay: stallLong})
	}))
	r := ocserve.StartRun(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}}, "FANOUT")
	deadline := time.Now().Add(90 * time.Second)
	for working.Load() < 3 {
		require.True(t, time.Now().Before(deadline), "three children at work:\n%s", r.Output())
		time.Sleep(100 * time.Millisecond)
	}
	sent := time.Now()
	require.NoError(t, r.Signal(syscall.SIGINT))
	err := r.Wait(30 * time.Second)
	exited := time.Since(sent)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "the process exits:\n%s", r.Output())
	require.Less(t, exited, 10*time.Second, "promptly")
	t.Logf("exited %s after SIGINT (%v)", exited.Round(time.Millisecond), err)

	tasks := storedTasks(t, r.Server)
	require.Len(t, tasks, 3, "three tasks in the history")
	for _, tk := range tasks {
		require.Equal(t, task.StatusCancelled, tk.Status, tk.Description)
		require.Contains(t, tk.CancelReason, "stopped", tk.Description)
		require.NotNil(t, tk.Partial, "%s keeps its partial work", tk.Description)
		require.Equal(t, halfWork, tk.Partial.Text, tk.Description)
		require.NotEmpty(t, tk.Partial.Tools, tk.Description)
		require.Equal(t, "glob", tk.Partial.Tools[0].Name, tk.Description)
	}
}

// storedTasks reads every task's latest record from the project's history logs.
func storedTasks(t *testing.T, oc *ocserve.Server) map[string]task.Task {
	t.Helper()
	st := storageOf(oc)
	logs, _ := filepath.Glob(filepath.Join(st.Dir, "history-"+st.HistoryKey+"*.log"))
	out := map[string]task.Task{}
	for _, path := range logs {
		f, err := os.Open(path)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			_, body, _ := strings.Cut(sc.Text(), " ")
			var rec struct {
				Task *task.Task `json:"task"`
			}
			if json.Unmarshal([]byte(body), &rec) == nil && rec.Task != nil {
				out[rec.Task.ID] = *rec.Task
			}
		}
		f.Close()
	}
	return out
}
