package config

import "strings"

// The controls over what runs and what it costs: the cascade of a parent's interruption, the
// per-model and per-provider concurrency limits, and the budgets (core/cascade.go,
// core/concurrency.go, core/budget.go).

// ConcurrencyConfig limits how many children run at once per model. Each limit is a
// first-in-first-out queue of its own; MaxConcurrentStarts stays the overall cap. 0 (or absent)
// means unlimited.
type ConcurrencyConfig struct {
	// Default caps each model that neither Models nor Providers names.
	Default int `json:"default,omitempty"`
	// Providers caps a provider as a whole: its models without an entry of their own share it.
	Providers map[string]int `json:"providers,omitempty"`
	// Models caps one "provider/model" exactly; it wins over its provider's entry.
	Models map[string]int `json:"models,omitempty"`
}

// Limit is the concurrency limit a task on model runs under: the queue's key (the model, the
// provider, or the model under the default), its value (0: none) and the option that set it,
// for the texts. An empty model (OpenCode chooses) runs under the default alone.
type Limit struct {
	Key    string
	Max    int
	Option string
}

// LimitFor picks model's limit: an exact model entry, else its provider's, else the default.
func (c ConcurrencyConfig) LimitFor(model string) Limit {
	if n, ok := c.Models[model]; ok && model != "" {
		return Limit{Key: "model:" + model, Max: n, Option: `concurrency.models["` + model + `"]`}
	}
	if p := Provider(model); p != "" {
		if n, ok := c.Providers[p]; ok {
			return Limit{Key: "provider:" + p, Max: n, Option: `concurrency.providers["` + p + `"]`}
		}
	}
	return Limit{Key: "model:" + model, Max: c.Default, Option: "concurrency.default"}
}

// Provider is the provider of a "provider/model" name, empty for a name without one.
func Provider(model string) string {
	p, _, ok := strings.Cut(model, "/")
	if !ok {
		return ""
	}
	return p
}

// BudgetConfig is the default budget of every task (asyncagents_task's budget overrides it field
// by field) and the budget of one parent session's tasks together. 0 means no limit.
type BudgetConfig struct {
	// Steps caps a task's model calls (each step-finish OpenCode records).
	Steps int `json:"steps,omitempty"`
	// Tokens caps a task's tokens (input, output, reasoning and cache, over all its calls).
	Tokens int64 `json:"tokens,omitempty"`
	// CostUsd caps a task's cost in US dollars, as OpenCode prices its model.
	CostUsd float64 `json:"costUsd,omitempty"`
	// SessionCostUsd caps the cost of all the tasks under one user's session, nested ones
	// included: past it the running ones stop and new launches are refused.
	SessionCostUsd float64 `json:"sessionCostUsd,omitempty"`
}

// PermissionConfig handles a child's permission requests (core/permission.go).
type PermissionConfig struct {
	// TimeoutMs rejects a request nobody answered for this long, telling the child to go on
	// without it; 0 (the default) waits for the user.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// CascadeOn reports whether a parent's interrupted turn cancels its tasks (unset means on).
func (c Config) CascadeOn() bool { return c.CancelOnParentAbort == nil || *c.CancelOnParentAbort }
