// Package conformance is the kit every host of the core runs: JSON cases, each a sequence of
// envelope requests and the responses they must give. The native core, the .wasm under wazero
// (../../host) and the .wasm under Bun (../../bridge) all run the same files, so the three can
// never drift apart. The format is described in cases/README.md.
package conformance

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"
)

//go:embed cases/*.json
var files embed.FS

// Case is one scenario: requests sent in order, each with the response it must get.
type Case struct {
	Name  string `json:"name"`
	File  string `json:"-"`
	Steps []Step `json:"steps"`
	// History keeps the history.* effects and the progress timer in the lists matched by
	// expectEffects, SSE the sse.* ones and the heartbeat timer, Toasts the tui.* ones; other
	// cases leave them out, so each case speaks of one concern.
	History bool `json:"history,omitempty"`
	SSE     bool `json:"sse,omitempty"`
	Toasts  bool `json:"toasts,omitempty"`
}

// Step is one request and what its response must contain. Expect is matched as a subset (see
// Match); ExpectEffects, when present, must match the effects list element by element and have
// the same length.
type Step struct {
	Note          string            `json:"note,omitempty"`
	Request       json.RawMessage   `json:"request"`
	Expect        json.RawMessage   `json:"expect,omitempty"`
	ExpectEffects []json.RawMessage `json:"expectEffects,omitempty"`
}

// Cases loads every case file, sorted by file name.
func Cases() ([]Case, error) {
	entries, err := files.ReadDir("cases")
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, e := range entries {
		b, err := files.ReadFile(path.Join("cases", e.Name()))
		if err != nil {
			return nil, err
		}
		var c Case
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		c.File = e.Name()
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// Caller sends one raw request envelope to a fresh-per-case core and returns the raw response.
type Caller func(req []byte) ([]byte, error)

// Run plays a case against call and returns the first mismatch, naming the step.
func Run(c Case, call Caller) error {
	for i, s := range c.Steps {
		raw, err := call(s.Request)
		if err != nil {
			return fmt.Errorf("step %d (%s): call failed: %w", i, s.Note, err)
		}
		// An http op's body travels raw after a NUL byte (ABI.md).
		envelope, body := raw, []byte(nil)
		if i := bytes.IndexByte(raw, 0); i >= 0 {
			envelope, body = raw[:i], raw[i+1:]
		}
		var got map[string]any
		if err := json.Unmarshal(envelope, &got); err != nil {
			return fmt.Errorf("step %d (%s): response is not JSON: %s", i, s.Note, raw)
		}
		if http, ok := got["http"].(map[string]any); ok && body != nil {
			http["body"] = string(body)
		}
		if len(s.Expect) > 0 {
			var want any
			if err := json.Unmarshal(s.Expect, &want); err != nil {
				return fmt.Errorf("step %d: bad expect: %w", i, err)
			}
			if err := Match(want, got, "response"); err != nil {
				return fmt.Errorf("step %d (%s): %w\nfull response: %s", i, s.Note, err, raw)
			}
		}
		if s.ExpectEffects != nil {
			effects, _ := got["effects"].([]any)
			effects = c.relevant(effects)
			if len(effects) != len(s.ExpectEffects) {
				return fmt.Errorf("step %d (%s): %d effects, want %d\nfull response: %s", i, s.Note, len(effects), len(s.ExpectEffects), raw)
			}
			for j, e := range s.ExpectEffects {
				var want any
				if err := json.Unmarshal(e, &want); err != nil {
					return fmt.Errorf("step %d: bad expectEffects[%d]: %w", i, j, err)
				}
				if err := Match(want, effects[j], fmt.Sprintf("effects[%d]", j)); err != nil {
					return fmt.Errorf("step %d (%s): %w\nfull response: %s", i, s.Note, err, raw)
				}
			}
		}
	}
	return nil
}

// Match checks that got contains want: objects match key by key (extra keys in got are fine),
// arrays element by element with equal length, scalars by equality. Two matcher objects exist:
// {"$contains": "text"} for a string holding text, and {"$absent": true} for a missing key.
func Match(want, got any, where string) error {
	switch w := want.(type) {
	case map[string]any:
		if sub, ok := w["$contains"]; ok {
			s, isStr := got.(string)
			if !isStr || !strings.Contains(s, sub.(string)) {
				return fmt.Errorf("%s: want a string containing %q, got %#v", where, sub, got)
			}
			return nil
		}
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %#v", where, got)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := w[k]
			if m, isMap := v.(map[string]any); isMap && m["$absent"] == true {
				if _, present := g[k]; present {
					return fmt.Errorf("%s.%s: want absent, got %#v", where, k, g[k])
				}
				continue
			}
			gv, present := g[k]
			if !present {
				return fmt.Errorf("%s.%s: missing (want %#v)", where, k, v)
			}
			if err := Match(v, gv, where+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: want %d-element array, got %#v", where, len(w), got)
		}
		for i := range w {
			if err := Match(w[i], g[i], fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
		return nil
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Errorf("%s: want %#v, got %#v", where, want, got)
		}
		return nil
	}
}

// relevant drops the effects of concerns the case does not test (see Case.History, Case.SSE,
// Case.Toasts).
func (c Case) relevant(effects []any) []any {
	var out []any
	for _, e := range effects {
		m, _ := e.(map[string]any)
		kind := fmt.Sprint(m["kind"])
		switch {
		// The timers' names are core.ProgressTimer and core.HeartbeatTimer (this package is
		// imported by the core's tests, so it cannot import the core).
		case (strings.HasPrefix(kind, "history.") || m["timerID"] == "history.progress") && !c.History:
			continue
		case (strings.HasPrefix(kind, "sse.") || m["timerID"] == "sse.heartbeat") && !c.SSE:
			continue
		case strings.HasPrefix(kind, "tui.") && !c.Toasts:
			continue
		}
		out = append(out, e)
	}
	return out
}
