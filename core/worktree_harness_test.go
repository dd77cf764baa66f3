package core

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// wtHarness is fbHarness with a fake git host: it answers the worktree effects as the contract
// says a host does, from what the test set (files each task changed, the parent's dirty files,
// the tasks whose merge conflicts), and keeps every worktree effect it answered.
type wtHarness struct {
	*fbHarness
	createErr string
	files     map[string]string // task ID -> the commit's files, as JSON
	dirty     []string
	conflicts map[string][]string
	found     string // worktree.list's worktrees, as JSON
	hold      map[string]bool
	held      []Effect
	done      []Effect
}

const wtProject, wtFolder = "/p", "/d/worktrees/k"

func newWT(t *testing.T, cfg config.Config) *wtHarness {
	m := NewMachineWith(cfg, Setup{Project: wtProject, Worktrees: wtFolder})
	return &wtHarness{fbHarness: &fbHarness{t: t, m: m, now: 1_000_000}, files: map[string]string{}, conflicts: map[string][]string{}, hold: map[string]bool{}}
}

// run feeds an event, then answers every worktree effect until none is left.
func (h *wtHarness) run(ev Event) []Effect {
	own := h.step(ev)
	all := own
	for _, e := range own {
		if !e.Reply || len(e.Kind) < 9 || e.Kind[:9] != "worktree." {
			continue
		}
		if h.hold[e.Kind] {
			h.held = append(h.held, e)
			continue
		}
		all = append(all, h.answerWT(e)...)
	}
	return all
}

// answerWT answers one worktree effect as the fake host.
func (h *wtHarness) answerWT(e Effect) []Effect {
	h.done = append(h.done, e)
	ok, errText, result := true, "", "{}"
	switch e.Kind {
	case EffectWorktreeCreate:
		if h.createErr != "" {
			ok, errText = false, h.createErr
		} else {
			result = fmt.Sprintf(`{"path":%q,"base":"snap_%s","head":"head0"}`, e.Path, e.TaskID)
		}
	case EffectWorktreeCommit:
		files := h.files[e.TaskID]
		if files == "" {
			result = `{"commit":"","files":[]}`
		} else {
			result = fmt.Sprintf(`{"commit":"c_%s","files":%s,"diff":"diff of %s"}`, e.TaskID, files, e.TaskID)
		}
	case EffectWorktreeInspect:
		b, _ := json.Marshal(map[string]any{"dirty": h.dirty})
		result = string(b)
	case EffectWorktreeMerge:
		var b []byte
		if c := h.conflicts[e.TaskID]; len(c) > 0 {
			b, _ = json.Marshal(map[string]any{"conflicts": c})
		} else {
			b, _ = json.Marshal(map[string]any{"applied": []string{"merged-files-of-" + e.TaskID}})
		}
		result = string(b)
	case EffectWorktreeList:
		result = `{"worktrees":` + h.found + `}`
	}
	return h.run(Event{Type: EventEffectDone, EffectID: e.ID, OK: ok, Error: errText, Result: json.RawMessage(result)})
}

// release answers the held effects.
func (h *wtHarness) release() []Effect {
	held := h.held
	h.held = nil
	var all []Effect
	for _, e := range held {
		all = append(all, h.answerWT(e)...)
	}
	return all
}

// launchIso launches a task with extra arguments and returns its ID and the tool's answer.
func (h *wtHarness) launchIso(desc, extra string) (string, Effect, []Effect) {
	eff := h.run(Event{Type: EventToolCall, CallID: "call_" + desc, Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p",
		Args: json.RawMessage(fmt.Sprintf(`{"description":%q,"prompt":"work","agent":"general"%s}`, desc, extra))})
	reply := ofKind(eff, EffectToolReply)[0]
	id, _ := reply.Metadata["taskId"].(string)
	return id, reply, eff
}

// finishTask has task id's child write its answer and go idle, answering the worktree effects
// that follow, then the parent go idle.
func (h *wtHarness) finishTask(id string) []Effect {
	all := h.finishChild(id)
	return append(all, h.run(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: "session.idle", Properties: json.RawMessage(`{"sessionID":"ses_p"}`)}})...)
}

// finishChild is finishTask with the parent left as it is.
func (h *wtHarness) finishChild(id string) []Effect {
	ses := h.m.task(id).SessionID
	require.NotEmpty(h.t, ses, "task %s has a session", id)
	h.busy(ses)
	msgID, created := fmt.Sprintf("msg_%d", h.now), h.now+1
	var all []Effect
	oc := func(typ, props string) []Effect {
		all = append(all, h.run(Event{Type: EventOpenCode, Event: &OpenCodeEvent{Type: typ, Properties: json.RawMessage(props)}})...)
		return all
	}
	oc("message.part.updated", fmt.Sprintf(`{"part":{"id":"prt_%d","sessionID":%q,"messageID":%q,"type":"text","text":"done","time":{"end":%d}}}`, h.now, ses, msgID, created+1))
	oc("message.updated", fmt.Sprintf(`{"info":{"id":%q,"sessionID":%q,"role":"assistant","finish":"stop","time":{"created":%d,"completed":%d}}}`, msgID, ses, created, created+1))
	return oc("session.idle", fmt.Sprintf(`{"sessionID":%q}`, ses))
}

// merge calls asyncagents_merge and returns its answer.
func (h *wtHarness) merge(args string) Effect {
	eff := h.run(Event{Type: EventToolCall, CallID: "merge_" + args, Tool: ToolMerge, SessionID: "ses_p", Args: json.RawMessage(args)})
	replies := ofKind(eff, EffectToolReply)
	require.Len(h.t, replies, 1, args)
	return replies[0]
}

func (h *wtHarness) doneOfKind(kind string) []Effect { return ofKind(h.done, kind) }
