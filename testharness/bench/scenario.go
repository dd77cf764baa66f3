// Package bench measures asyncagents against OpenCode's native background subagents, in the same
// run, on the same machine, with the same mock model. Run it with `make bench`.
package bench

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// mode is one background system under test.
type mode struct {
	name     string
	tool     string                                     // the launching tool
	args     func(desc, prompt string) map[string]any   // its arguments
	noticeOf func(text string) (taskID string, ok bool) // a parent message part that is a notice
	idOf     func(output string) string                 // the task ID in the launch answer
}

var (
	ourNotice    = regexp.MustCompile(`(?m)^task_id: (\S+)$`)
	nativeNotice = regexp.MustCompile(`<task id="([^"]+)" state="(completed|error)"`)
	nativeLaunch = regexp.MustCompile(`<task id="([^"]+)"`)
)

var asyncagents = mode{
	name: "asyncagents",
	tool: "asyncagents_task",
	args: func(desc, prompt string) map[string]any {
		return map[string]any{"description": desc, "prompt": prompt, "agent": "general"}
	},
	noticeOf: func(text string) (string, bool) {
		if !strings.HasPrefix(text, "Background task ") {
			return "", false
		}
		m := ourNotice.FindStringSubmatch(text)
		if m == nil {
			return "", false
		}
		return m[1], true
	},
	idOf: func(out string) string {
		if m := ourNotice.FindStringSubmatch(out); m != nil {
			return m[1]
		}
		return ""
	},
}

var native = mode{
	name: "native",
	tool: "task",
	args: func(desc, prompt string) map[string]any {
		return map[string]any{"description": desc, "prompt": prompt, "subagent_type": "general", "background": true}
	},
	noticeOf: func(text string) (string, bool) {
		m := nativeNotice.FindStringSubmatch(text)
		if m == nil {
			return "", false
		}
		return m[1], true
	},
	idOf: func(out string) string {
		if m := nativeLaunch.FindStringSubmatch(out); m != nil {
			return m[1]
		}
		return ""
	},
}

// figures are what one fan-out measured.
type figures struct {
	launch      []float64 // ms, each launching tool call's own duration
	notice      []float64 // ms, child's last message completed -> notice message created in parent
	parentTurns int       // parent model requests after the launch turn
}

// script answers for the parent (launch n tasks, then short replies) and for children (a result
// after the delay named in the prompt).
func script(m mode, n int, delays []time.Duration) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		last := req.LastUser
		if strings.HasPrefix(last, "CHILD ") {
			var i int
			fmt.Sscanf(last, "CHILD %d", &i)
			return mockmodel.Reply{Text: fmt.Sprintf("result %d", i), Delay: delays[i]}
		}
		if len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == "tool" {
			return mockmodel.Reply{Text: "waiting"}
		}
		if strings.HasPrefix(last, "FANOUT") {
			var calls []mockmodel.ToolCall
			for i := 0; i < n; i++ {
				calls = append(calls, mockmodel.ToolCall{Name: m.tool, Args: m.args(fmt.Sprintf("Task %d", i), fmt.Sprintf("CHILD %d", i))})
			}
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "noted"}
	}
}

// fanOut launches n tasks from one parent turn and measures until every notice has arrived.
func fanOut(ctx context.Context, oc *ocserve.Server, model *mockmodel.Server, m mode, delays []time.Duration) (figures, error) {
	n := len(delays)
	model.SetScript(script(m, n, delays))
	before := len(model.Requests())
	parent, err := oc.CreateSession(ctx, "bench parent")
	if err != nil {
		return figures{}, err
	}
	if err := oc.PromptAsync(ctx, parent, "build", fmt.Sprintf("FANOUT %d", n)); err != nil {
		return figures{}, err
	}
	var f figures
	noticeAt := map[string]int64{}
	for len(noticeAt) < n {
		if ctx.Err() != nil {
			return figures{}, fmt.Errorf("%s: %d of %d notices before the deadline", m.name, len(noticeAt), n)
		}
		time.Sleep(250 * time.Millisecond)
		msgs, err := oc.Messages(ctx, parent)
		if err != nil {
			return figures{}, err
		}
		for _, msg := range msgs {
			if msg.Info.Role != "user" {
				continue
			}
			for _, p := range msg.Parts {
				if id, ok := m.noticeOf(p.Text); ok && p.Type == "text" {
					noticeAt[id] = msg.Info.Time.Created
				}
			}
		}
	}
	// Let the parent settle so its turns can be counted.
	if err := oc.WaitIdle(ctx, parent); err != nil {
		return figures{}, err
	}
	msgs, err := oc.Messages(ctx, parent)
	if err != nil {
		return figures{}, err
	}
	for _, msg := range msgs {
		for _, p := range msg.Parts {
			if p.Type != "tool" || p.Tool != m.tool {
				continue
			}
			f.launch = append(f.launch, float64(p.State.Time.End-p.State.Time.Start))
			id := m.idOf(p.State.Output)
			done, err := childDone(ctx, oc, id)
			if err != nil {
				return figures{}, err
			}
			f.notice = append(f.notice, float64(noticeAt[id]-done))
		}
	}
	for _, r := range model.Requests()[before:] {
		if !r.Title && strings.HasPrefix(firstUser(r), "FANOUT") {
			f.parentTurns++
		}
	}
	f.parentTurns -= 2 // the launching turn and the turn that reads the launch answers
	return f, nil
}

func childDone(ctx context.Context, oc *ocserve.Server, id string) (int64, error) {
	msgs, err := oc.Messages(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("child %q: %w", id, err)
	}
	var done int64
	for _, m := range msgs {
		if m.Info.Role == "assistant" && m.Info.Time.Completed > done {
			done = m.Info.Time.Completed
		}
	}
	return done, nil
}

func firstUser(r mockmodel.Request) string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		if x > m {
			m = x
		}
	}
	return m
}
