// Package budget is the budgets' policy: the budget a task runs under (asyncagents_task's budget
// argument over the config's defaults, field by field), which limit a task's spending passed, and
// the one walk up the session tree (a task's child session leads to its task's parent) that both
// the session's budget and the permission routing use. It returns decisions; the machine stops
// the tasks and words the reasons.
package budget

import (
	"math"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/task"
)

// Args is asyncagents_task's budget argument; nil fields take the config's defaults.
type Args struct {
	Steps   *float64 `json:"steps"`
	Tokens  *float64 `json:"tokens"`
	CostUsd *float64 `json:"costUsd"`
}

// ArgError names the budget field that is wrong, what it must be, and what it was.
type ArgError struct {
	Field, Want string
	Got         float64
}

func (e *ArgError) Error() string { return "budget." + e.Field + " must be " + e.Want }

// For is the budget a new task runs under (nil: none), or an *ArgError.
func For(d config.BudgetConfig, a *Args) (*task.Budget, error) {
	g := task.Budget{Steps: d.Steps, Tokens: d.Tokens, CostUsd: d.CostUsd}
	if a != nil {
		whole := func(name string, v *float64) (int64, error) {
			if math.IsNaN(*v) || *v < 0 || *v != math.Trunc(*v) || *v > 1e15 {
				return 0, &ArgError{Field: name, Want: "a whole number >= 0 (0: no limit)", Got: *v}
			}
			return int64(*v), nil
		}
		if a.Steps != nil {
			n, err := whole("steps", a.Steps)
			if err != nil {
				return nil, err
			}
			g.Steps = int(n)
		}
		if a.Tokens != nil {
			n, err := whole("tokens", a.Tokens)
			if err != nil {
				return nil, err
			}
			g.Tokens = n
		}
		if a.CostUsd != nil {
			if v := *a.CostUsd; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, &ArgError{Field: "costUsd", Want: "a number of US dollars >= 0 (0: no limit)", Got: v}
			}
			g.CostUsd = *a.CostUsd
		}
	}
	if g == (task.Budget{}) {
		return nil, nil
	}
	return &g, nil
}

// Limit names the limit of a task's budget a task passed.
type Limit int

const (
	Steps Limit = iota + 1
	Tokens
	CostUsd
)

// StepsUsed reports whether a task that made steps model calls, the last ending with the finish
// reason given, has used its steps and must stop: a call that ends the turn ("stop") never
// stops it, its answer is the task's result.
func StepsUsed(g *task.Budget, steps int, finish string) bool {
	return g != nil && g.Steps > 0 && steps >= g.Steps && finish != "stop"
}

// Spent names the limit a task's tokens or cost passed, 0 when neither did.
func Spent(g *task.Budget, tokens int64, cost float64) Limit {
	switch {
	case g == nil:
		return 0
	case g.Tokens > 0 && tokens > g.Tokens:
		return Tokens
	case g.CostUsd > 0 && cost > g.CostUsd:
		return CostUsd
	}
	return 0
}

// SessionPassed reports whether the tasks under one user's session, having spent spent, passed
// budget.sessionCostUsd (limit; 0: none): their running tasks stop.
func SessionPassed(limit, spent float64) bool { return limit > 0 && spent > limit }

// SessionRefuses reports whether a launch (or resume) from a session whose tasks spent spent is
// refused: they reached budget.sessionCostUsd (limit; 0: none).
func SessionRefuses(limit, spent float64) bool { return limit > 0 && spent >= limit }

// Root is the top of the session tree above session: up gives the session above s ("" at the
// top); at most limit steps are taken.
func Root(session string, limit int, up func(string) string) string {
	s, _ := walk(session, limit, up, nil)
	return s
}

// Find is the first session, from session up, where at holds; ok is false when the walk reached
// the top (or limit steps) without finding one.
func Find(session string, limit int, up func(string) string, at func(string) bool) (string, bool) {
	return walk(session, limit, up, at)
}

// walk goes up from session through up for at most limit steps. With at, it stops at the first
// session where at holds; without, at the top.
func walk(session string, limit int, up func(string) string, at func(string) bool) (string, bool) {
	for range limit {
		if session == "" {
			return "", false
		}
		if at != nil && at(session) {
			return session, true
		}
		next := up(session)
		if next == "" {
			return session, at == nil
		}
		session = next
	}
	return session, at == nil
}
