package core

import (
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

const isoArg = `,"isolation":"worktree"`

// twoEditors launches two isolated tasks of ses_p that change the same file.
func twoEditors(t *testing.T, cfg config.Config) (*wtHarness, string, string) {
	h := newWT(t, cfg)
	a, _, _ := h.launchIso("a", isoArg)
	b, _, _ := h.launchIso("b", isoArg)
	h.files[a] = `[{"path":"src/x.go","added":3,"removed":1}]`
	h.files[b] = `[{"path":"src/x.go","added":1,"removed":0}]`
	return h, a, b
}

// endNoticeIn is the text (visible and hidden) of task id's end notice among the notices in eff,
// "" when none tells of it.
func endNoticeIn(eff []Effect, id string) string {
	for _, e := range ofKind(eff, EffectPromptAsync) {
		if !e.Notice {
			continue
		}
		for _, n := range splitNotices(e) {
			if strings.Contains(n.Parts[1].Text, "task_id: "+id+"\n") {
				return n.Parts[0].Text + "\n" + n.Parts[1].Text
			}
		}
	}
	return ""
}

// Both children end together: the first commit's answer comes while the second's is under way.
// The first notice waits for it (no timer: the answer is in flight), and both notices go as one
// message, each naming the other.
func TestEachNoticeNamesTheOverlapWhenBothEndTogether(t *testing.T) {
	h, a, b := twoEditors(t, config.Config{})
	h.hold[EffectWorktreeCommit] = true
	h.finishTask(a)
	h.finishTask(b)
	require.Len(t, h.held, 2, "both commits under way")
	h.hold[EffectWorktreeCommit] = false
	first, second := h.held[0], h.held[1]
	h.held = nil

	eff := h.answerWT(first)
	require.Empty(t, ofKind(eff, EffectPromptAsync), "a's notice waits for its sibling's commit")
	require.Empty(t, ofKind(eff, EffectTimerSet), "and no timer stands for that wait")
	eff = h.answerWT(second)
	notices := ofKind(eff, EffectPromptAsync)
	require.Len(t, notices, 1, "one message tells of both")
	require.Contains(t, endNoticeIn(eff, a), "also changed by "+b+": src/x.go")
	require.Contains(t, endNoticeIn(eff, b), "also changed by "+a+": src/x.go")
	require.False(t, notices[0].NoReply, "the batch is done: it wakes the parent")
}

// A notice that waited for a busy parent is written when it goes: the sibling that ended
// meanwhile is named in it, and its progress line is still the one of its own end.
func TestAHeldNoticeNamesASiblingThatEndedMeanwhile(t *testing.T) {
	h, a, b := twoEditors(t, config.Config{})
	h.busy("ses_p")
	eff := h.finishChild(a)
	require.Empty(t, ofKind(eff, EffectPromptAsync), "a's notice does not wake a busy parent: it waits")
	eff = h.finishChild(b) // the batch is done: its notice wakes the parent, and a's goes with it
	first := endNoticeIn(eff, a)
	require.Contains(t, first, "also changed by "+b+": src/x.go")
	require.Contains(t, first, "Task Progress: 1/2")
	require.Contains(t, endNoticeIn(eff, b), "also changed by "+a+": src/x.go")
}

// The limit: a notice that goes while its sibling still works cannot name it; the sibling's
// own notice names the first.
func TestASiblingStillAtWorkIsNamedByItsOwnNotice(t *testing.T) {
	h, a, b := twoEditors(t, config.Config{})
	eff := h.finishTask(a)
	require.NotEmpty(t, endNoticeIn(eff, a), "a's notice goes at once")
	require.NotContains(t, endNoticeIn(eff, a), "also changed by")
	eff = h.finishTask(b)
	require.Contains(t, endNoticeIn(eff, b), "also changed by "+a+": src/x.go")
}

// A notice of a task that changed nothing, or of a plain task, waits for no sibling's commit.
func TestOnlyANoticeWithChangesWaitsForASibling(t *testing.T) {
	h, a, b := twoEditors(t, config.Config{})
	h.files[a] = ""
	h.hold[EffectWorktreeCommit] = true
	h.finishTask(a)
	h.finishTask(b)
	h.hold[EffectWorktreeCommit] = false
	first := h.held[0]
	h.held = h.held[1:]
	eff := h.answerWT(first)
	require.Contains(t, endNoticeIn(eff, a), "no changes", "it goes at once")
	eff = h.release()
	require.NotContains(t, endNoticeIn(eff, b), "also changed by")
}
