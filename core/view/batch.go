package view

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// BatchNameShown is how many descriptions a batch's name lists before "+N more".
const BatchNameShown = 2

// BatchName names a batch as its user knows it, rather than by the ID of the message that
// launched it: its parent session's title, when OpenCode told it, then the descriptions of its
// first tasks, in launch order, and how many more there are ("Fix the login: Alpha survey, Beta
// survey +1 more").
func BatchName(tasks []*task.Task) string {
	title := ""
	var names []string
	for _, t := range tasks {
		if title == "" {
			title = t.ParentTitle
		}
	}
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
	if title != "" {
		name = title + ": " + name
	}
	return name
}
