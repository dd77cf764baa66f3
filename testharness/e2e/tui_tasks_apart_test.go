package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/view"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// /tasks with alike tasks from two sessions (the TUI's, then one made through the server): each
// row names its parent's title or batch, its start and the end of its ID; a filter keeps the
// rows newest first; Enter opens the row selected, not the first; and the confirmation offers
// "Keep running" (the default) and "Cancel task". The launch's line in the TUI is logged: 1.18
// draws a plugin tool from its arguments (issue 37).
func TestTUITasksTellSessionsApart(t *testing.T) {
	tm := startTmux(t)
	release := newGate(t)
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasPrefix(req.LastUser, "CHILD "):
			release.wait(2 * time.Minute)
			return mockmodel.Reply{Text: "done: " + req.LastUser}
		case lastRole(req) == "tool" || strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "ok"}
		case strings.HasPrefix(req.LastUser, "GO "):
			from := strings.TrimPrefix(req.LastUser, "GO ")
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{
				taskCall("job 1", "CHILD "+from+" 1", "general"), taskCall("job 2", "CHILD "+from+" 2", "general")}}
		}
		return mockmodel.Reply{Text: "?"}
	})
	oc := ocserve.StartTUI(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, Files: tuiModule(t)}, tm.socket)
	e := &env{t: t, model: model, oc: oc}
	pane := oc.Pane
	t.Cleanup(func() {
		release.open()
		if t.Failed() {
			t.Logf("the TUI showed:\n%s", tm.screen(pane))
		}
	})

	e.eventually("the TUI's prompt", 60*time.Second, func() bool { return strings.Contains(tm.screen(pane), "Ask anything") })
	tm.typeLine(pane, "GO tui")
	var screen string
	e.eventually("the TUI session's tasks running", 90*time.Second, func() bool {
		screen = tm.screen(pane)
		return strings.Contains(screen, "● job 1") && strings.Contains(screen, "● job 2")
	})
	t.Logf("the launch, as 1.18 draws it:\n%s", screen)
	other := e.prompt("GO api")
	e.eventually("the other session's launches", 60*time.Second, func() bool { return finishedParts(e.toolParts(other, "asyncagents_task")) })

	// What the rows must show, from the core's own view.
	var sj serverJSON
	b, err := os.ReadFile(serverFileOf(storageOf(oc)))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sj))
	var list view.List
	e.eventually("four tasks in the list", 30*time.Second, func() bool {
		_, body := apiGet(t, sj.URL+"/v1/views/tasks", sj.Token, "")
		return json.Unmarshal([]byte(body), &list) == nil && len(list.Rows) == 4
	})
	var ones, twos []view.Row // the two "job 1" rows, newest first, and the "job 2" ones
	for _, r := range list.Rows {
		if r.Description == "job 1" {
			ones = append(ones, r)
		} else {
			twos = append(twos, r)
		}
	}
	require.Len(t, ones, 2)
	require.NotEqual(t, ones[0].Origin+ones[0].ShortID, ones[1].Origin+ones[1].ShortID)

	screen = tm.openTasks(e, pane)
	t.Logf("/tasks:\n%s", screen)
	for _, r := range list.Rows {
		require.Contains(t, screen, r.Origin+" · started ")
		require.Contains(t, screen, r.ShortID)
	}

	// The confirmation's words, and its default keeps the task running.
	tm.run("send-keys", "-t", pane, "C-d")
	e.eventually("the confirmation", 15*time.Second, func() bool {
		screen = tm.screen(pane)
		return strings.Contains(screen, `Cancel "job 2"?`) && strings.Contains(screen, "Keep running") && strings.Contains(screen, "Cancel task")
	})
	t.Logf("confirmation:\n%s", screen)
	tm.run("send-keys", "-t", pane, "Enter") // on "Keep running", the default
	e.eventually("the list again", 15*time.Second, func() bool { return strings.Contains(tm.screen(pane), "Filter · enter") })
	_, body := apiGet(t, sj.URL+"/v1/views/tasks", sj.Token, "")
	require.NotContains(t, body, `"mark":"⊘"`, "Keep running cancelled nothing")

	// A filter: the two "job 1" rows, newest first; Down then Enter opens the older one.
	tm.run("send-keys", "-t", pane, "-l", "job 1")
	e.eventually("the filtered list", 15*time.Second, func() bool {
		screen = tm.screen(pane)
		// (The sidebar behind the dialog still shows its session's job 2.)
		return !strings.Contains(screen, twos[0].ShortID) && !strings.Contains(screen, twos[1].ShortID) &&
			strings.Index(screen, ones[0].ShortID) >= 0 && strings.Index(screen, ones[1].ShortID) > strings.Index(screen, ones[0].ShortID)
	})
	t.Logf("filtered:\n%s", screen)
	tm.run("send-keys", "-t", pane, "Down")
	tm.run("send-keys", "-t", pane, "Enter")
	e.eventually("the older job 1's session", 30*time.Second, func() bool {
		screen = tm.screen(pane)
		return strings.Contains(screen, "Parent") && strings.Contains(screen, "CHILD ")
	})
	t.Logf("opened:\n%s", screen)
	require.Contains(t, screen, "CHILD tui 1", "the row selected, the older job 1 (the TUI session's)")
}
