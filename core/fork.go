package core

import (
	"encoding/json"
	"fmt"

	"github.com/asyncagents/asyncagents/core/forkctx"
	"github.com/asyncagents/asyncagents/core/task"
)

// Fork: asyncagents_task(fork: true) gives the child this conversation's context.
//
// The spec names session.fork. In OpenCode 1.18 that makes a new *root* session (no parentID)
// holding an unprocessed copy of every message: the child would not be linked to its parent (the
// TUI would not show it as a subagent, deleting the parent would not reach it) and a long
// conversation would be copied whole, tool outputs included. So the child is created like any
// task (under the parent), then given the parent's conversation as one processed text (tool
// results cut at 1,500 characters, parameters previewed, at most 100,000 tokens, oldest messages
// dropped first, with the preamble; see forkctx.go) through a noReply prompt, and only then its
// task prompt. That is the spec's observable behaviour: processed context, the preamble, a
// child linked to its parent.

// startFork reads the parent's conversation for a forked task.
func (m *Machine) startFork(t *run) {
	m.request(Effect{Kind: EffectMessages, SessionID: t.ParentSessionID}, pending{taskID: t.ID, fork: true})
}

// onForkMessages builds the context and hands it to the child without a model turn.
func (m *Machine) onForkMessages(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Status.Terminal() {
		return
	}
	if !ev.OK {
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "ForkError", Message: forkReadErrorPrefix + ev.Error})
		return
	}
	text, stats, err := forkctx.BuildForkContext(json.RawMessage(ev.Result), forkctx.ForkOptions{})
	if err != nil {
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "ForkError", Message: forkProcessErrorPrefix + err.Error()})
		return
	}
	t.ForkTokens = stats.Tokens
	m.touch(t)
	m.log("info", fmt.Sprintf("fork for task %s: %d of %d messages, %d tool results cut, about %d tokens", t.ID, stats.KeptMessages, stats.Messages, stats.TruncatedToolResults, stats.Tokens))
	m.request(Effect{
		Kind:      EffectPromptAsync,
		SessionID: t.SessionID,
		TaskID:    t.ID,
		Agent:     t.Agent,
		NoReply:   true,
		Parts:     []TextPart{{Type: "text", Text: text}},
	}, pending{taskID: t.ID, forkContext: true})
}

// onForkContextSent starts the forked task once its context is in place.
func (m *Machine) onForkContextSent(p pending, ev Event) {
	t := m.task(p.taskID)
	if t == nil || t.Status.Terminal() {
		return
	}
	if !ev.OK {
		m.finish(t, task.StatusError, "", &task.TaskError{Name: "ForkError", Message: forkRefusedPrefix + ev.Error})
		return
	}
	t.forkReady = true
	m.startTask(t)
}
