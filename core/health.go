package core

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/asyncagents/asyncagents/core/httpapi"
)

// Model health: a circuit breaker per model. fallback.failureThreshold consecutive provider
// failures (3 by default) open a model's circuit for fallback.cooldownMs (1 hour): chains skip it
// meanwhile. A success closes it and resets the count. The state is the plugin's own file
// (ModelHealthFile in the storage directory), written whole on every change: it holds a few
// models, and it is never the user's config (see RATIONALE.md).

// ModelHealthFile is the health state's file name in the plugin's storage directory.
const ModelHealthFile = "model-health.json"

// modelHealth is one model's record.
type modelHealth struct {
	Failures      int    `json:"failures"`
	OpenUntil     int64  `json:"openUntil,omitempty"` // Unix ms; skipped until then
	LastError     string `json:"lastError,omitempty"`
	LastFailureAt int64  `json:"lastFailureAt,omitempty"`
}

// healthState is the file's content.
type healthState struct {
	Version int                     `json:"version"`
	Models  map[string]*modelHealth `json:"models"`
}

func (m *Machine) circuitOpen(model string) bool {
	h := m.health[model]
	return h != nil && h.OpenUntil > m.now
}

// recordHealth counts a failure or resets the model on success, and persists the change.
func (m *Machine) recordHealth(model string, ok bool, errText string) {
	if model == "" {
		return
	}
	if m.health == nil {
		m.health = map[string]*modelHealth{}
	}
	if ok {
		if m.health[model] == nil {
			return
		}
		delete(m.health, model)
	} else {
		h := m.health[model]
		if h == nil {
			h = &modelHealth{}
			m.health[model] = h
		}
		h.Failures++
		h.LastError, h.LastFailureAt = firstLine(errText), m.now
		if cooldown := m.cfg.Fallback.Cooldown(); cooldown > 0 && h.Failures >= m.cfg.Fallback.FailureThreshold {
			h.OpenUntil = m.now + cooldown
			m.log("warn", fmt.Sprintf("model %s failed %d times in a row; skipping it until %s", model, h.Failures, httpapi.ISOMillis(h.OpenUntil)))
		}
	}
	b, _ := json.MarshalIndent(healthState{Version: 1, Models: m.health}, "", "  ")
	m.out = append(m.out, Effect{Kind: EffectStateWrite, File: ModelHealthFile, Content: string(b) + "\n"})
}

// RestoreHealth loads the health file's content; an unreadable file is reported and ignored
// (every circuit starts closed).
func (m *Machine) RestoreHealth(text string) {
	if text == "" {
		return
	}
	var s healthState
	if err := json.Unmarshal([]byte(text), &s); err != nil || s.Version != 1 {
		m.log("warn", "model health state unreadable; starting with every model healthy")
		return
	}
	m.health = map[string]*modelHealth{}
	for model, h := range s.Models {
		if h != nil {
			m.health[model] = h
		}
	}
}

// ModelHealth lists the models with failures on record, for the API and tests.
func (m *Machine) ModelHealth() []string {
	var out []string
	for model, h := range m.health {
		out = append(out, fmt.Sprintf("%s failures=%d open=%v", model, h.Failures, h.OpenUntil > m.now))
	}
	sort.Strings(out)
	return out
}
