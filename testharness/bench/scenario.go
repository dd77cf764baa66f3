// Package bench measures asyncagents against OpenCode's native background subagents, in the same
// run, on the same machine, with the same mock model. Run it with `make bench`.
package bench

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// system is one way of launching background work that the fan-out benchmark measures.
type system struct {
	name    string
	tool    string                                   // the launching tool
	args    func(desc, prompt string) map[string]any // its arguments
	notices func(text string) []notice               // the notices in one parent message part; nil: launches nothing
	idOf    func(output string) string               // the task ID in the launch answer
	// quiet: its notices ask for no model turn (noReply), so the parent's newest message stays a
	// user message and the parent is settled once it is no longer busy.
	quiet bool
}

// notice is one task's notice in the parent: the task it names and that task's child session.
type notice struct{ task, session string }

var (
	ourTaskID    = regexp.MustCompile(`(?m)^task_id: (\S+)$`)
	ourSessionID = regexp.MustCompile(`(?m)^session_id: (\S+)$`)
	nativeNotice = regexp.MustCompile(`<task id="([^"]+)" state="(completed|error)"`)
	nativeLaunch = regexp.MustCompile(`<task id="([^"]+)"`)
)

// ours is asyncagents: its launch answer's first line is `task_id: <id>`; its notice's hidden
// part (a user message part starting "Background task ") carries `task_id:` and, since task IDs
// are no longer session IDs, `session_id:` with the child session (a build without that line
// used the session ID as task ID).
var ours = system{
	name: "asyncagents",
	tool: "asyncagents_task",
	args: func(desc, prompt string) map[string]any {
		return map[string]any{"description": desc, "prompt": prompt, "agent": "general"}
	},
	notices: func(text string) []notice {
		if !strings.HasPrefix(text, "Background task ") {
			return nil
		}
		m := ourTaskID.FindStringSubmatch(text)
		if m == nil {
			return nil
		}
		n := notice{task: m[1], session: m[1]}
		if s := ourSessionID.FindStringSubmatch(text); s != nil {
			n.session = s[1]
		}
		return []notice{n}
	},
	idOf: func(out string) string {
		if m := ourTaskID.FindStringSubmatch(out); m != nil {
			return m[1]
		}
		return ""
	},
}

// native is OpenCode's own background subagents (OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS):
// the task ID is the child session's ID.
var native = system{
	name: "native",
	tool: "task",
	args: func(desc, prompt string) map[string]any {
		return map[string]any{"description": desc, "prompt": prompt, "subagent_type": "general", "background": true}
	},
	notices: func(text string) []notice {
		var out []notice
		for _, m := range nativeNotice.FindAllStringSubmatch(text, -1) {
			out = append(out, notice{task: m[1], session: m[1]})
		}
		return out
	},
	idOf: func(out string) string {
		if m := nativeLaunch.FindStringSubmatch(out); m != nil {
			return m[1]
		}
		return ""
	},
}

// floor is a plugin tool that does nothing (floor.go): the least a plugin tool call costs.
var floor = system{
	name: "floor",
	tool: floorTool,
	args: func(desc, prompt string) map[string]any {
		return map[string]any{"description": desc, "prompt": prompt, "agent": "general"}
	},
}

var systems = []system{ours, native, floor, noticeFloor}

// fanCase is one fan-out: one child per delay, all launched in one parent turn, each answering
// after its delay.
type fanCase struct {
	Key    string          `json:"key"`
	Name   string          `json:"name"`
	Delays []time.Duration `json:"-"`
}

var cases = []fanCase{
	{"n3", "3 tasks, same length", same(3, 500*time.Millisecond)},
	{"n10", "10 tasks, same length", same(10, 500*time.Millisecond)},
	{"n25", "25 tasks, same length", same(25, 500*time.Millisecond)},
	{"n3-apart", "3 tasks finishing 3 s apart", []time.Duration{500 * time.Millisecond, 3500 * time.Millisecond, 6500 * time.Millisecond}},
}

func same(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// taskRun is what one launched task measured. Times are Unix ms as OpenCode records them.
type taskRun struct {
	CallID      string  `json:"call_id"`
	TaskID      string  `json:"task_id,omitempty"`
	Session     string  `json:"child_session,omitempty"`
	LaunchStart int64   `json:"launch_start"` // the tool part's state.time.start
	LaunchEnd   int64   `json:"launch_end"`   // its state.time.end
	LaunchMs    float64 `json:"launch_ms"`
	ChildDone   int64   `json:"child_done,omitempty"` // the child's last assistant message completed
	NoticeAt    int64   `json:"notice_at,omitempty"`  // the parent's notice message created
	NoticeMs    float64 `json:"notice_ms,omitempty"`
	// Profile is the plugin's hop times for this task (ASYNCAGENTS_PROFILE), with OpenCode's
	// points around them, in Unix ms.
	Profile map[string]float64 `json:"profile,omitempty"`
}

// run is one fan-out of one system in one round.
type run struct {
	Round       int       `json:"round"`             // 0 is the warm-up
	Project     string    `json:"project,omitempty"` // projectGit or projectNoGit
	Case        string    `json:"case"`
	System      string    `json:"system"`
	Position    int       `json:"position"` // the system's place in the round's order, from 0
	Parent      string    `json:"parent_session"`
	Tasks       []taskRun `json:"tasks"`
	LaunchP50   float64   `json:"launch_p50_ms"`
	NoticeP50   *float64  `json:"notice_p50_ms,omitempty"`
	ParentTurns *int      `json:"parent_turns,omitempty"` // parent model turns after the launch turn
	Noticed     int       `json:"noticed"`                // launched tasks with a notice
	DistinctIDs int       `json:"distinct_task_ids"`      // distinct task IDs among the launch answers
	NoticeIDs   int       `json:"distinct_notice_ids"`    // distinct task IDs among the notices
	NoticeParts int       `json:"notice_parts"`           // notice parts in the parent, duplicates included
	NoticeMsgs  int       `json:"notice_messages"`        // parent messages that carry notices
	WallMs      float64   `json:"wall_ms"`                // prompt sent -> parent settled
}

// The prompts carry everything the model needs, so one script serves every run: the parent's
// first prompt names the tool and the children's delays; a child's prompt names its delay.
const (
	fanoutPrefix = "FANOUT "
	childPrefix  = "CHILD "
)

func fanoutPrompt(tool, label string, delays []time.Duration) string {
	ms := make([]string, len(delays))
	for i, d := range delays {
		ms[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return fmt.Sprintf("%stool=%s run=%s delays=%s", fanoutPrefix, tool, label, strings.Join(ms, ","))
}

// script answers the parent's first turn with the tool calls its prompt names, a turn that reads
// tool answers with "waiting", a notice with "noted", and a child with a result after its delay.
func script(req mockmodel.Request) mockmodel.Reply {
	last := req.LastUser
	if strings.HasPrefix(last, childPrefix) {
		var i, ms int
		fmt.Sscanf(last, childPrefix+"%d %d", &i, &ms)
		return mockmodel.Reply{Text: fmt.Sprintf("result %d", i), Delay: time.Duration(ms) * time.Millisecond}
	}
	if len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == "tool" {
		return mockmodel.Reply{Text: "waiting"}
	}
	if strings.HasPrefix(last, fanoutPrefix) {
		var tool string
		var delays []string
		for _, f := range strings.Fields(last) {
			if v, ok := strings.CutPrefix(f, "tool="); ok {
				tool = v
			}
			if v, ok := strings.CutPrefix(f, "delays="); ok {
				delays = strings.Split(v, ",")
			}
		}
		var calls []mockmodel.ToolCall
		for _, s := range systems {
			if s.tool != tool {
				continue
			}
			for i, d := range delays {
				calls = append(calls, mockmodel.ToolCall{Name: tool, Args: s.args(fmt.Sprintf("Task %d", i), fmt.Sprintf("%s%d %s", childPrefix, i, d))})
			}
		}
		return mockmodel.Reply{ToolCalls: calls}
	}
	return mockmodel.Reply{Text: "noted"}
}

// pollEvery paces the reads of the parent's messages while a fan-out runs. The figures are
// OpenCode's own timestamps, so it only bounds how soon a run ends.
const pollEvery = 200 * time.Millisecond

// opencode is where a fan-out runs: `opencode serve` through its HTTP API (served), or the TUI
// without a port, driven through its terminal and read from OpenCode's storage (tui.go).
type opencode interface {
	// start opens a new parent session and sends it prompt, and returns the session's ID.
	start(ctx context.Context, title, prompt string) (string, error)
	messages(ctx context.Context, session string) ([]ocserve.Message, error)
	// busy says whether OpenCode is still working on the session.
	busy(ctx context.Context, session string) (bool, error)
	// waitIdle waits until the session has answered its newest message.
	waitIdle(ctx context.Context, session string) error
	// pace is how often a running fan-out looks at the parent.
	pace() time.Duration
}

// served is `opencode serve`, through its HTTP API.
type served struct{ oc *ocserve.Server }

func (s served) start(ctx context.Context, title, prompt string) (string, error) {
	parent, err := s.oc.CreateSession(ctx, title)
	if err != nil {
		return "", err
	}
	return parent, s.oc.PromptAsync(ctx, parent, "build", prompt)
}

func (s served) messages(ctx context.Context, session string) ([]ocserve.Message, error) {
	return s.oc.Messages(ctx, session)
}

func (s served) busy(ctx context.Context, session string) (bool, error) {
	st, err := s.oc.Status(ctx)
	_, busy := st[session]
	return busy, err
}

func (s served) waitIdle(ctx context.Context, session string) error {
	return s.oc.WaitIdle(ctx, session)
}
func (s served) pace() time.Duration { return pollEvery }

// fanOut launches one task per delay from one parent turn, waits until every tool call has
// answered and (unless the system launches nothing) every task's notice has reached the parent,
// then until the parent is idle, and measures.
func fanOut(ctx context.Context, oc opencode, model *mockmodel.Server, sys system, c fanCase, label string) (*run, error) {
	n := len(c.Delays)
	prompt := fanoutPrompt(sys.tool, label, c.Delays)
	t0 := time.Now()
	parent, err := oc.start(ctx, "bench "+label, prompt)
	if err != nil {
		return nil, err
	}
	r := &run{Case: c.Key, System: sys.name, Parent: parent}
	var msgs []ocserve.Message
	var tools []ocserve.Part
	noticeAt := map[string]int64{}
	sessionOf := map[string]string{}
	prober, probes := oc.(toldProber)
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s %s: %d of %d tool calls answered, %d of %d notices before the deadline (status API probed: %v)",
				sys.name, label, len(tools), n, len(noticeAt), n, probes)
		case <-time.After(oc.pace()):
		}
		// Until the tasks are all told, a cheap probe stands in for reading the conversation.
		if probes && sys.notices != nil {
			told, err := prober.allTold(ctx, parent, n)
			if err != nil {
				return nil, err
			}
			if !told {
				continue
			}
		}
		if msgs, err = oc.messages(ctx, parent); err != nil {
			return nil, err
		}
		tools, r.NoticeParts, r.NoticeMsgs = tools[:0], 0, 0
		for _, msg := range msgs {
			parts := r.NoticeParts
			for _, p := range msg.Parts {
				switch {
				case p.Type == "tool" && p.Tool == sys.tool && p.State.Status == "error":
					return nil, fmt.Errorf("%s %s: %s failed: %s", sys.name, label, sys.tool, p.State.Error)
				case p.Type == "tool" && p.Tool == sys.tool && p.State.Status == "completed":
					tools = append(tools, p)
				case p.Type == "text" && msg.Info.Role == "user" && sys.notices != nil:
					for _, nt := range sys.notices(p.Text) {
						r.NoticeParts++
						if at, ok := noticeAt[nt.task]; !ok || msg.Info.Time.Created < at {
							noticeAt[nt.task] = msg.Info.Time.Created
						}
						sessionOf[nt.task] = nt.session
					}
				}
			}
			if r.NoticeParts > parts {
				r.NoticeMsgs++
			}
		}
		if len(tools) < n {
			continue
		}
		if sys.notices == nil {
			break
		}
		all := true
		for _, p := range tools {
			if _, ok := noticeAt[sys.idOf(p.State.Output)]; !ok {
				all = false
			}
		}
		// Every launched task noticed, or as many notices as launches (should two launches
		// answer the same task ID, the notices still all come).
		if all || r.NoticeParts >= n {
			break
		}
	}
	// The parent settles (the turns the notices start), so its turns can be counted.
	if sys.quiet {
		err = waitNotBusy(ctx, oc, parent)
	} else {
		err = oc.waitIdle(ctx, parent)
	}
	if err != nil {
		return nil, err
	}
	r.WallMs = float64(time.Since(t0).Microseconds()) / 1000

	ids := map[string]bool{}
	var launch, notices []float64
	for _, p := range tools {
		t := taskRun{CallID: p.CallID, LaunchStart: p.State.Time.Start, LaunchEnd: p.State.Time.End,
			LaunchMs: float64(p.State.Time.End - p.State.Time.Start)}
		launch = append(launch, t.LaunchMs)
		if sys.idOf != nil {
			t.TaskID = sys.idOf(p.State.Output)
			if t.TaskID == "" {
				return nil, fmt.Errorf("%s %s: no task ID in the launch answer %q", sys.name, label, p.State.Output)
			}
			ids[t.TaskID] = true
		}
		if at, ok := noticeAt[t.TaskID]; ok && sys.notices != nil {
			t.Session = sessionOf[t.TaskID]
			done, err := childDone(ctx, oc, t.Session)
			if err != nil {
				return nil, err
			}
			t.ChildDone, t.NoticeAt = done, at
			t.NoticeMs = float64(at - done)
			notices = append(notices, t.NoticeMs)
			r.Noticed++
		}
		r.Tasks = append(r.Tasks, t)
	}
	r.DistinctIDs, r.NoticeIDs = len(ids), len(noticeAt)
	r.LaunchP50 = median(launch)
	if sys.notices != nil {
		p := median(notices)
		r.NoticeP50 = &p
		turns := -2 // the launching turn and the turn that reads the launch answers
		for _, req := range model.Requests() {
			if !req.Title && strings.HasPrefix(firstUser(req), prompt) {
				turns++
			}
		}
		r.ParentTurns = &turns
	}
	return r, nil
}

// waitNotBusy waits until OpenCode no longer works on the session.
func waitNotBusy(ctx context.Context, oc opencode, session string) error {
	for {
		busy, err := oc.busy(ctx, session)
		if err != nil {
			return err
		}
		if !busy {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("session %s still busy: %w", session, ctx.Err())
		case <-time.After(oc.pace()):
		}
	}
}

// childDone is when a child session's last assistant message completed (Unix ms).
func childDone(ctx context.Context, oc opencode, session string) (int64, error) {
	msgs, err := oc.messages(ctx, session)
	if err != nil {
		return 0, fmt.Errorf("child %q: %w", session, err)
	}
	var done int64
	for _, m := range msgs {
		if m.Info.Role == "assistant" && m.Info.Time.Completed > done {
			done = m.Info.Time.Completed
		}
	}
	if done == 0 {
		return 0, fmt.Errorf("child %q: no completed assistant message", session)
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
