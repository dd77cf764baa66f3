package core

import (
	"encoding/json"
	"fmt"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"sort"

	"github.com/asyncagents/asyncagents/core/text"
)

// Model health: a circuit breaker per model. fallback.failureThreshold consecutive provider
// failures (3 by default) open a model's circuit for fallback.cooldownMs (1 hour): chains skip it
// meanwhile. A success closes it and resets the count. The state is the plugin's own file
// (ModelHealthFile in the storage directory), written whole on every change: it holds a few
// models, and it is never the user's config (see RATIONALE.md).
//
// Every project and every OpenCode process shares the file. So a write is a merge: the host reads
// the file as it is just before it writes, and the core (MergeHealth) keeps, per model, the record
// changed last, its own or the file's; a success leaves a record with no failures, so a newer
// success elsewhere closes a circuit that an older failure here opened. What the merge takes from
// the file counts here too: a model another process found failing is skipped in this one.

// ModelHealthFile is the health state's file name in the plugin's storage directory.
const ModelHealthFile = "model-health.json"

// modelHealth is one model's record.
type modelHealth struct {
	Failures      int    `json:"failures"`
	OpenUntil     int64  `json:"openUntil,omitempty"` // Unix ms; skipped until then
	LastError     string `json:"lastError,omitempty"`
	LastFailureAt int64  `json:"lastFailureAt,omitempty"`
	// At is when the record last changed (Unix ms): the merge keeps the later of two. A record
	// with no failures is a success, kept for healthSuccessKeptMs so that it wins over an older
	// failure in another process's figures.
	At int64 `json:"at,omitempty"`
}

// healthSuccessKeptMs is how long a success stays in the file: longer than any cooldown a
// failure elsewhere could have opened.
const healthSuccessKeptMs = 24 * 60 * 60 * 1000

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
		if h := m.health[model]; h == nil || h.Failures == 0 {
			return
		}
		m.health[model] = &modelHealth{At: m.now}
	} else {
		h := m.health[model]
		if h == nil {
			h = &modelHealth{}
			m.health[model] = h
		}
		h.Failures++
		h.LastError, h.LastFailureAt, h.At = firstLine(errText), m.now, m.now
		if cooldown := m.cfg.Fallback.Cooldown(); cooldown > 0 && h.Failures >= m.cfg.Fallback.FailureThreshold {
			h.OpenUntil = m.now + cooldown
			m.log("warn", fmt.Sprintf("model %s failed %s in a row; skipping it until %s", model, text.CountOf(h.Failures, "time", "times"), httpapi.ISOMillis(h.OpenUntil)))
		}
	}
	m.out = append(m.out, Effect{Kind: EffectStateWrite, File: ModelHealthFile, Content: m.healthContent()})
}

// healthContent is the health file's content for the records held, less the successes past
// healthSuccessKeptMs.
func (m *Machine) healthContent() string {
	for model, h := range m.health {
		if h.Failures == 0 && h.At < m.now-healthSuccessKeptMs {
			delete(m.health, model)
		}
	}
	b, _ := json.MarshalIndent(healthState{Version: 1, Models: m.health}, "", "  ")
	return string(b) + "\n"
}

// MergeHealth takes from the health file's content as it is now (another process may have
// written it since) each record changed later than the one held, and returns what to write in
// its place: nothing another process recorded is lost to this one's write. An unreadable file
// is written over with the records held.
func (m *Machine) MergeHealth(text string) string {
	var s healthState
	if text != "" && json.Unmarshal([]byte(text), &s) == nil && s.Version == 1 {
		if m.health == nil {
			m.health = map[string]*modelHealth{}
		}
		for model, h := range s.Models {
			if h != nil && (m.health[model] == nil || h.At > m.health[model].At) {
				m.health[model] = h
			}
		}
	}
	return m.healthContent()
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
		if h.Failures == 0 {
			continue // a success on record
		}
		out = append(out, fmt.Sprintf("%s failures=%d open=%v", model, h.Failures, h.OpenUntil > m.now))
	}
	sort.Strings(out)
	return out
}
