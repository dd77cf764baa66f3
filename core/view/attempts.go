package view

import (
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/asyncagents/asyncagents/core/text"
)

// attempts is t's model attempts as a page lists them, nil when they tell nothing: a task with
// no chain, or a chain of one model whose attempts did not fail. Each attempt says how it went;
// the last one of a task that ended under it (a cancel, a timeout, a budget) says so, never that
// its model failed.
func attempts(t *task.Task) []task.AttemptView {
	f := t.FallbackInfo
	if f == nil || len(f.Attempts) == 0 {
		return nil
	}
	failed := false
	for _, a := range f.Attempts {
		failed = failed || a.Error != ""
	}
	if len(t.Models) < 2 && !failed {
		return nil
	}
	out := make([]task.AttemptView, len(f.Attempts))
	for i, a := range f.Attempts {
		v := task.AttemptView{Model: a.Model, From: a.Timestamp, To: a.EndedAt, Error: a.Error, Compacted: a.Compacted}
		last := i == len(f.Attempts)-1
		switch {
		case a.Success:
			v.Outcome, v.Tone = outcomeAnswered, ToneSuccess
		case a.Error != "":
			v.Outcome, v.Tone = outcomeFailed(a.Class), ToneError
		case last && !t.Status.Terminal():
			v.Outcome, v.Tone = outcomeAtWork, ToneAccent
		case last && t.Status == task.StatusCancelled:
			v.Outcome, v.Tone = outcomeCancelled, ToneMuted
		case last && t.Error != nil:
			v.Outcome, v.Tone = outcomeStopped(t.Error.Name), ToneWarning
		default:
			v.Outcome, v.Tone = outcomeLeft, ToneMuted
		}
		if v.To == 0 && last && t.Status.Terminal() {
			v.To = t.CompletedAt // a record of an earlier release: the task's end is the attempt's
		}
		if v.To != 0 {
			v.Took = text.Duration(v.To - v.From)
		}
		out[i] = v
	}
	return out
}
