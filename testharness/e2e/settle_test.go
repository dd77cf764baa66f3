package e2e

import (
	"encoding/json"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// settlePrompt is the question a test asks a parent to show that nothing else happened there.
const settlePrompt = "SETTLE"

// settle stands for "nothing happened" in a parent session, without a sleep: it asks the parent
// one more question and waits until the model has answered it and the session is idle. OpenCode
// runs a session's prompts in order, so whatever the plugin had sent the parent before (a
// notice, a turn it started) is there by then.
func (e *env) settle(parent string) {
	e.t.Helper()
	asked := len(e.model.Turns())
	e.promptIn(parent, settlePrompt)
	e.eventually("the parent's answer to "+settlePrompt, 90*time.Second, func() bool {
		for _, r := range e.model.Turns()[asked:] {
			if r.LastUser == settlePrompt {
				return true
			}
		}
		return false
	})
	e.waitIdle(parent)
}

// onlyTurnSince settles the parent whose conversation started with first and requires that its
// answer to settlePrompt is its only model turn since turns were counted.
func (e *env) onlyTurnSince(parent, first string, turns int, why string) {
	e.t.Helper()
	e.settle(parent)
	require.Equal(e.t, turns+1, parentTurns(e.model, first), why)
}

// childSessionsCreated counts the sessions OpenCode announced under parent, deleted ones included.
func childSessionsCreated(rec *ocserve.Recorder, parent string) int {
	return len(rec.Filter(func(ev ocserve.Event) bool {
		if ev.Type != "session.created" {
			return false
		}
		var p struct {
			Info struct {
				ParentID string `json:"parentID"`
			} `json:"info"`
		}
		return json.Unmarshal(ev.Properties, &p) == nil && p.Info.ParentID == parent
	}))
}
