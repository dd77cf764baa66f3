// Package view is how a client that only draws shows the tasks: OpenCode's terminal UI (the
// "Background tasks" sidebar section, the count beside the prompt, the /tasks dialog) and the
// dashboard read its rows through the status API (GET /v1/views/...), so the order, the marks,
// the columns and the elapsed and usage formats are written once, here.
package view

import (
	"cmp"
	"slices"
	"strings"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// Row is one task as a list line: a mark and the description, then the detail (agent, elapsed
// time, usage) and a note when the task needs attention.
type Row struct {
	ID string `json:"id"`
	// SessionID is the child session a client opens when the row is chosen ("" while queued).
	SessionID string `json:"sessionID,omitempty"`
	// Group is "running", "queued" or "finished": the order of the sidebar.
	Group string `json:"group"`
	// Mark is one character for the status; Tone names the theme color a client draws the mark
	// (and the note) in: "accent", "muted", "success", "error" or "warning".
	Mark        string `json:"mark"`
	Tone        string `json:"tone"`
	Description string `json:"description"`
	Agent       string `json:"agent"`
	// Worker is the worker the task runs on, "" for local; Detail names it after the agent.
	Worker  string `json:"worker,omitempty"`
	Elapsed string `json:"elapsed"`
	// Usage is the cost when OpenCode priced the model, else the tokens, else "".
	Usage string `json:"usage,omitempty"`
	// Detail is agent (and the worker it runs on: "general on worker w1"), elapsed and usage
	// joined, the row's second line.
	Detail string `json:"detail"`
	// Note says why the task needs a look (stalled, waiting for permission, OpenCode retrying
	// its model call, over budget, its place in a queue), "" when nothing does.
	Note string `json:"note,omitempty"`
	// Cancel is the confirmation a client shows before cancelling the task (POST
	// /v1/tasks/:id/cancel), "" when it cannot be cancelled (ended, or a read-only server).
	Cancel string `json:"cancel,omitempty"`
	// ParentSessionID is the session that launched the task.
	ParentSessionID string `json:"parentSessionID"`
	// Origin is where the task comes from: its parent session's title, else its batch's name
	// (BatchName); ShortID the end of its ID, enough to tell two alike rows apart. The /tasks
	// list sets them (TaskList), and ListDetail, its row's second line.
	Origin     string `json:"origin,omitempty"`
	ShortID    string `json:"shortID,omitempty"`
	ListDetail string `json:"listDetail,omitempty"`
}

// Groups, in the order a session's section shows them.
const (
	GroupRunning  = "running"
	GroupQueued   = "queued"
	GroupFinished = "finished"
)

// Tones a client maps to its theme's colors.
const (
	ToneAccent  = "accent"
	ToneMuted   = "muted"
	ToneSuccess = "success"
	ToneError   = "error"
	ToneWarning = "warning"
)

// Marks of the statuses.
const (
	MarkRunning   = "●"
	MarkQueued    = "○"
	MarkCompleted = "✓"
	MarkError     = "✗"
	MarkCancelled = "⊘"
)

// Opts are what a row depends on beside the task and the time.
type Opts struct {
	// ReadOnly: the server cannot cancel (asyncagents serve), so no row offers it.
	ReadOnly bool
}

// MakeRow is the row of t at now.
func MakeRow(t *task.Task, now int64, o Opts) Row {
	r := Row{ID: t.ID, SessionID: t.ChildSession(), Description: t.Description, Agent: t.Agent, Worker: t.Worker,
		ParentSessionID: t.ParentSessionID}
	switch {
	case t.Queued:
		r.Group, r.Mark, r.Tone = GroupQueued, MarkQueued, ToneMuted
	case !t.Status.Terminal():
		r.Group, r.Mark, r.Tone = GroupRunning, MarkRunning, ToneAccent
	case t.Status == task.StatusCompleted:
		r.Group, r.Mark, r.Tone = GroupFinished, MarkCompleted, ToneSuccess
	case t.Status == task.StatusError:
		r.Group, r.Mark, r.Tone = GroupFinished, MarkError, ToneError
	default:
		r.Group, r.Mark, r.Tone = GroupFinished, MarkCancelled, ToneMuted
	}
	r.Elapsed = text.Elapsed(t.Duration(now))
	r.Usage = Usage(t)
	r.Detail = joinNonEmpty(" · ", AgentOn(t), r.Elapsed, r.Usage)
	if note, warn := attention(t, now); note != "" {
		r.Note = note
		if warn {
			r.Tone = ToneWarning
		}
	}
	if !t.Status.Terminal() && !o.ReadOnly {
		r.Cancel = cancelPrompt(t.Description)
	}
	return r
}

// attention is the note of a task that needs a look, and whether it is a warning. Checked in
// order: the first that applies is the one shown.
func attention(t *task.Task, now int64) (note string, warn bool) {
	h := HoldOf(t)
	switch {
	// Waiting for permission before the stall: a task that waits for the user is silent, and the
	// wait is what the user can end.
	case h.Permission != nil:
		return notePermission(h.Permission.What()), true
	// A retry says why the task is silent, which a stall does not.
	case h.Retry != nil:
		return Retrying(h.Retry), true
	case h.StalledSince > 0:
		return noteStalled(text.Elapsed(now - h.StalledSince)), true
	case t.Status == task.StatusError && t.Error != nil && t.Error.Name == ErrBudgetExceeded:
		return noteOverBudget, true
	case t.Waiting != nil:
		return Waiting(t.Waiting), false
	}
	return "", false
}

// ErrBudgetExceeded is the error name of a task stopped at its budget (core/prompts_controls.go).
const ErrBudgetExceeded = "BudgetExceeded"

// Section is a session's "Background tasks": its tasks and its children's, running first, then
// queued, then the latest finished ones (FinishedShown; More counts the rest).
type Section struct {
	Title string `json:"title"`
	Rows  []Row  `json:"rows"`
	// More is the line under the rows for the finished tasks not shown, "" when none.
	More string `json:"more,omitempty"`
	// Summary is the count beside the prompt ("2 running · 1 queued"), "" when nothing runs
	// or waits: then a client shows nothing.
	Summary string `json:"summary,omitempty"`
	// Live: something runs, so the elapsed times change; a client reads the section again each
	// LiveRefreshMs while it shows it (task changes come on the event stream).
	Live bool `json:"live"`
	// Empty is what a client shows when Rows is empty (a client may show nothing instead).
	Empty string `json:"empty"`
}

// FinishedShown is how many finished tasks a session's section lists.
const FinishedShown = 5

// LiveRefreshMs is how often a client reads a live view again, for the elapsed times.
const LiveRefreshMs = 1000

// SessionSection is the section of session sessionID over all tasks.
func SessionSection(tasks []*task.Task, sessionID string, now int64, o Opts) Section {
	mine := familyOf(tasks, sessionID)
	rows := make([]Row, 0, len(mine))
	for _, t := range mine {
		rows = append(rows, MakeRow(t, now, o))
	}
	order := map[string]int{GroupRunning: 0, GroupQueued: 1, GroupFinished: 2}
	slices.SortStableFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(order[a.Group], order[b.Group]); c != 0 {
			return c
		}
		ta, tb := byID(mine, a.ID), byID(mine, b.ID)
		switch a.Group {
		case GroupQueued:
			return cmp.Or(cmp.Compare(position(ta), position(tb)), cmp.Compare(ta.StartedAt, tb.StartedAt))
		case GroupFinished:
			return cmp.Compare(tb.CompletedAt, ta.CompletedAt) // latest first
		}
		return cmp.Compare(ta.StartedAt, tb.StartedAt) // in launch order
	})
	s := Section{Title: SectionTitle, Empty: SectionEmpty}
	running, queued, finished := 0, 0, 0
	for _, r := range rows {
		switch r.Group {
		case GroupRunning:
			running++
		case GroupQueued:
			queued++
		default:
			finished++
			if finished > FinishedShown {
				continue
			}
		}
		s.Rows = append(s.Rows, r)
	}
	if s.Rows == nil {
		s.Rows = []Row{}
	}
	if finished > FinishedShown {
		s.More = moreFinished(finished - FinishedShown)
	}
	s.Summary = summary(running, queued)
	s.Live = running > 0
	return s
}

// List is every task of the project, newest first, for the /tasks dialog.
type List struct {
	Title       string `json:"title"`
	Placeholder string `json:"placeholder"`
	Empty       string `json:"empty"`
	// CancelKey is the key that cancels the chosen task (after its Cancel confirmation); the
	// placeholder says so.
	CancelKey string `json:"cancelKey"`
	// The confirmation asks the row's Cancel and offers CancelKeep (the default) and
	// CancelConfirm; CancelReason is the reason the cancel records.
	CancelKeep    string `json:"cancelKeep"`
	CancelConfirm string `json:"cancelConfirm"`
	CancelReason  string `json:"cancelReason"`
	// Query is the filter the rows match ("" for none): the list keeps its order, newest first.
	Query string `json:"query,omitempty"`
	Rows  []Row  `json:"rows"`
	Live  bool   `json:"live"`
}

// ListMax bounds the rows of the list: the newest ones, which a dialog can still filter.
const ListMax = 200

// TaskList is the list over all tasks whose row matches query ("" for all; see matches): the
// newest ListMax of them, newest first, whatever the query.
func TaskList(tasks []*task.Task, now int64, o Opts, query string) List {
	// Newest first; tasks launched in the same millisecond, the later launch first.
	sorted := slices.Clone(tasks)
	slices.Reverse(sorted)
	slices.SortStableFunc(sorted, func(a, b *task.Task) int { return cmp.Compare(b.StartedAt, a.StartedAt) })
	l := List{Title: ListTitle, Placeholder: ListPlaceholder, Empty: ListEmpty, CancelKey: CancelKey,
		CancelKeep: CancelKeep, CancelConfirm: CancelConfirm, CancelReason: CancelReason, Query: query,
		Rows: make([]Row, 0, min(len(sorted), ListMax))}
	if query != "" {
		l.Empty = listNoMatch(query)
	}
	batches := map[string][]*task.Task{}
	for _, t := range tasks {
		batches[t.BatchID] = append(batches[t.BatchID], t)
	}
	for _, t := range sorted {
		if len(l.Rows) == ListMax {
			break
		}
		history.Load(t)
		r := MakeRow(t, now, o)
		r.Origin, r.ShortID = t.ParentTitle, shortID(t.ID)
		if r.Origin == "" {
			r.Origin = BatchName(batches[t.BatchID])
		}
		if !matches(r, query) {
			continue
		}
		// The worker first: the dialog cuts the line at its width.
		r.ListDetail = joinNonEmpty(" · ", OnWorker(t.Worker), r.Origin, started(text.Ago(now-t.StartedAt)), r.ShortID, joinNonEmpty(" · ", r.Agent, r.Elapsed, r.Usage), r.Note)
		l.Live = l.Live || r.Group == GroupRunning
		l.Rows = append(l.Rows, r)
	}
	return l
}

// matches reports whether query, in any case, is in the row's description, origin, agent or
// "on worker w1" (so "worker" keeps the remote tasks, "w1" those of w1), or
// in its IDs once it is long enough (idQueryMin) to name one: "job 1" must not match every ID
// with a 1 in it.
func matches(r Row, query string) bool {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return true
	}
	for _, f := range []string{r.Description, r.Origin, r.Agent, OnWorker(r.Worker)} {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return len(q) >= idQueryMin && !strings.Contains(q, " ") &&
		(strings.Contains(strings.ToLower(r.ID), q) || strings.Contains(strings.ToLower(r.SessionID), q))
}

// idQueryMin is the shortest filter matched against the IDs.
const idQueryMin = 4

// shortIDLen is how much of the end of a task's ID a row shows: the ID's last digits are
// random (core/taskid.go), its first ones the launch time, alike in a batch.
const shortIDLen = 6

func shortID(id string) string {
	if len(id) <= shortIDLen {
		return id
	}
	return "…" + id[len(id)-shortIDLen:]
}

// familyOf is the tasks launched from session, and from those tasks' child sessions, however
// deep.
func familyOf(tasks []*task.Task, session string) []*task.Task {
	parents := map[string]bool{session: true}
	var out []*task.Task
	taken := map[*task.Task]bool{}
	for grew := true; grew; {
		grew = false
		for _, t := range tasks {
			if taken[t] || !parents[t.ParentSessionID] {
				continue
			}
			taken[t], grew = true, true
			history.Load(t) // a finished task's head lacks its session and its end
			out = append(out, t)
			if c := t.ChildSession(); c != "" {
				parents[c] = true
			}
		}
	}
	return out
}

func byID(tasks []*task.Task, id string) *task.Task {
	for _, t := range tasks {
		if t.ID == id {
			return t
		}
	}
	return &task.Task{}
}

func position(t *task.Task) int {
	if t.Waiting == nil {
		return 0
	}
	return t.Waiting.Position
}

func joinNonEmpty(sep string, parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}
