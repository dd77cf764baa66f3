package budget

import (
	"math"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

func f(v float64) *float64 { return &v }

// The argument overrides the defaults field by field, all zero is no budget, and a bad field is
// named with what it must be.
func TestForOverridesTheDefaults(t *testing.T) {
	d := config.BudgetConfig{Steps: 5, Tokens: 100}
	g, err := For(d, &Args{Tokens: f(7), CostUsd: f(0.5)})
	require.NoError(t, err)
	require.Equal(t, &task.Budget{Steps: 5, Tokens: 7, CostUsd: 0.5}, g)
	g, err = For(config.BudgetConfig{}, &Args{Steps: f(0)})
	require.NoError(t, err)
	require.Nil(t, g)
	for _, c := range []struct {
		a     Args
		field string
	}{{Args{Steps: f(1.5)}, "steps"}, {Args{Tokens: f(-1)}, "tokens"}, {Args{CostUsd: f(math.Inf(1))}, "costUsd"}} {
		_, err := For(d, &c.a)
		var e *ArgError
		require.ErrorAs(t, err, &e)
		require.Equal(t, c.field, e.Field)
	}
}

// The last step ends the turn: no stop. Tokens are checked before cost, and only past a limit.
func TestLimitsPassed(t *testing.T) {
	g := &task.Budget{Steps: 2, Tokens: 10, CostUsd: 1}
	require.False(t, StepsUsed(g, 1, "tool-calls"))
	require.True(t, StepsUsed(g, 2, "tool-calls"))
	require.False(t, StepsUsed(g, 2, "stop"))
	require.False(t, StepsUsed(nil, 9, ""))
	require.Equal(t, Limit(0), Spent(g, 10, 1))
	require.Equal(t, Tokens, Spent(g, 11, 2))
	require.Equal(t, CostUsd, Spent(g, 10, 1.01))
	require.False(t, SessionPassed(1, 1))
	require.True(t, SessionRefuses(1, 1))
	require.False(t, SessionRefuses(0, 9), "0 is no limit")
}

// The walk finds the top of the tree, stops at the limit on a cycle, and finds the first session
// where the test holds.
func TestWalkUpTheSessionTree(t *testing.T) {
	above := map[string]string{"c": "b", "b": "a", "x": "y", "y": "x"}
	up := func(s string) string { return above[s] }
	require.Equal(t, "a", Root("c", 8, up))
	require.Equal(t, "z", Root("z", 8, up))
	require.Equal(t, "", Root("", 8, up))
	require.NotEmpty(t, Root("x", 5, up), "a cycle ends at the limit")
	s, ok := Find("c", 8, up, func(s string) bool { return s == "b" })
	require.True(t, ok)
	require.Equal(t, "b", s)
	_, ok = Find("c", 8, up, func(s string) bool { return s == "q" })
	require.False(t, ok)
	_, ok = Find("c", 1, up, func(s string) bool { return s == "a" })
	require.False(t, ok, "the limit bounds the walk")
}
