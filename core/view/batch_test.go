package view

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

func TestBatchName(t *testing.T) {
	mk := func(descs ...string) []*task.Task {
		var out []*task.Task
		for _, d := range descs {
			out = append(out, &task.Task{Description: d})
		}
		return out
	}
	for _, c := range []struct {
		tasks []*task.Task
		want  string
	}{
		{mk("Alpha survey"), "Alpha survey"},
		{mk("Alpha survey", "Beta survey"), "Alpha survey, Beta survey"},
		{mk("Alpha survey", "Beta survey", "Gamma"), "Alpha survey, Beta survey +1 more"},
		{mk("A", "B", "C", "D", "E"), "A, B +3 more"},
		{nil, ""},
	} {
		require.Equal(t, c.want, BatchName(c.tasks))
	}
	titled := mk("Alpha survey", "Beta survey", "Gamma")
	titled[1].ParentTitle = "Fix the login"
	require.Equal(t, "Fix the login: Alpha survey, Beta survey +1 more", BatchName(titled), "the parent's title first, from whichever task heard it")
}
