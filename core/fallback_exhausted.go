package core

import (
	"fmt"
	"github.com/asyncagents/asyncagents/core/task"
	"strings"

	"github.com/asyncagents/asyncagents/core/text"
)

// exhaust marks t's chain as run out, when it is a chain: its failure then reads as every
// model's (allModelsFailed). A chain of one has no fallback to speak of.
func (m *Machine) exhaust(t *run) {
	t.exhausted = len(t.Models) > 1
}

// allModelsFailed is the error of a task whose every model failed: the number of attempts and
// each one's error, in order. last keeps its name and status code, for the classifiers.
func allModelsFailed(t *run, last *task.TaskError) *task.TaskError {
	var errs []string
	for _, a := range t.FallbackInfo.Attempts {
		if !a.Success && a.Error != "" {
			errs = append(errs, a.Error)
		}
	}
	if len(errs) == 0 {
		errs = append(errs, last.Message)
	}
	e := *last
	e.Message = fmt.Sprintf(allModelsFailedFmt, text.CountOf(len(t.FallbackInfo.Attempts), "attempt", "attempts"), strings.Join(errs, " | "))
	return &e
}
