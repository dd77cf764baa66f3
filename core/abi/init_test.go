package abi

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// The init op through the envelope: files layered, a bad file reported and the task tool
// refused with its text while the other tools work; the storage op names the candidates.
const (
	globalJSON   = "/home/u/.config/opencode/asyncagents.json"
	globalJSONC  = "/home/u/.config/opencode/asyncagents.jsonc"
	projectJSON  = "/work/p/.opencode/asyncagents.json"
	projectJSONC = "/work/p/.opencode/asyncagents.jsonc"
)

func TestInitWithConfigFiles(t *testing.T) {
	call := func(rt *Runtime, req any) Response {
		b, err := json.Marshal(req)
		require.NoError(t, err)
		var res Response
		require.NoError(t, json.Unmarshal(rt.Call(b), &res))
		require.True(t, res.OK, res.Error)
		return res
	}
	rt := NewRuntime()
	st := call(rt, map[string]any{"op": "storage", "env": map[string]any{"home": "/home/u", "xdgConfigHome": "/cfg", "directory": "/work/p"}})
	require.Equal(t, []string{"/cfg/opencode/asyncagents.json", "/cfg/opencode/asyncagents.jsonc", projectJSON, projectJSONC}, st.Storage.ConfigFiles)

	good := call(rt, map[string]any{"op": "init", "config": map[string]any{"maxDepth": 4, "maxResultChars": 50},
		"configFiles": []config.ConfigFile{
			{Path: globalJSON, Text: `{"agents": {"general": {"models": ["a/1", "b/2"]}}, "maxDepth": 5}`},
			{Path: projectJSONC, Text: "{ // mine\n \"maxDepth\": 3, }"},
		}})
	require.Empty(t, good.ConfigError)
	require.Equal(t, 3, good.Config.MaxDepth)
	require.Equal(t, 50, good.Config.MaxResultChars)
	require.Equal(t, []string{"a/1", "b/2"}, good.Config.Agents["general"].Models)
	require.Equal(t, config.Config{}.WithDefaults().MaxConcurrentStarts, good.Config.MaxConcurrentStarts)

	bad := call(rt, map[string]any{"op": "init", "config": map[string]any{"maxDepth": 4},
		"configFiles": []config.ConfigFile{
			{Path: globalJSON, Text: `{"maxDepth": 5}`},
			{Path: projectJSON, Text: `{"agents": {"general": {"models": ["a/1", 42]}}}`},
		}})
	const want = `asyncagents: ` + projectJSON + `: agents.general.models[1]: must be a "provider/model" string, got 42`
	require.Equal(t, want, bad.ConfigError)
	require.Equal(t, 4, bad.Config.MaxDepth, "the host's options alone")
	require.Empty(t, bad.Config.Agents)

	step := func(ev core.Event) []core.Effect {
		return call(rt, map[string]any{"op": "step", "now": 1000, "event": ev}).Effects
	}
	effects := step(core.Event{Type: core.EventToolCall, CallID: "c1", Tool: core.ToolTask, SessionID: "ses_p", MessageID: "m1", Agent: "build",
		Args: json.RawMessage(`{"description":"Job","prompt":"p","agent":"general"}`)})
	require.Len(t, effects, 1, "nothing launched: %+v", effects)
	require.Equal(t, core.EffectToolReply, effects[0].Kind)
	require.Equal(t, want, effects[0].Error)

	effects = step(core.Event{Type: core.EventToolCall, CallID: "c2", Tool: core.ToolList, SessionID: "ses_p", MessageID: "m1", Agent: "build", Args: json.RawMessage(`{}`)})
	require.Len(t, effects, 1)
	require.Empty(t, effects[0].Error, "the other tools work")
	require.Contains(t, effects[0].Output, "No background tasks found")

	// A later init without the bad file clears the error.
	again := call(rt, map[string]any{"op": "init", "config": map[string]any{}})
	require.Empty(t, again.ConfigError)
	effects = step(core.Event{Type: core.EventToolCall, CallID: "c3", Tool: core.ToolTask, SessionID: "ses_p", MessageID: "m1", Agent: "build",
		Args: json.RawMessage(`{"description":"Job","prompt":"p","agent":"general"}`)})
	require.NotEmpty(t, effects)
	require.Equal(t, core.EffectAgentsList, effects[0].Kind)
}
