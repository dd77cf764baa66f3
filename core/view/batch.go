package view

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// BatchNameShown is how many descriptions a batch's name lists before "+N more".
const BatchNameShown = 2

// BatchName names a batch as its user knows it: the descriptions of its first tasks, in launch
// order, and how many more there are ("Alpha survey, Beta survey +1 more"), rather than the ID of
// the message that launched it. The parent session's title is not known to the core.
func BatchName(tasks []*task.Task) string {
	var names []string
	for _, t := range tasks {
		if len(names) == BatchNameShown {
			break
		}
		names = append(names, t.Description)
	}
	name := strings.Join(names, ", ")
	if more := len(tasks) - len(names); more > 0 {
		name += fmt.Sprintf(" +%d more", more)
	}
	return name
}
