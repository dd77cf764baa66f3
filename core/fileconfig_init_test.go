package core

import (
	"encoding/json"
	"testing"

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

	step := func(ev Event) []Effect {
		return call(rt, map[string]any{"op": "step", "now": 1000, "event": ev}).Effects
	}
	effects := step(Event{Type: EventToolCall, CallID: "c1", Tool: ToolTask, SessionID: "ses_p", MessageID: "m1", Agent: "build",
		Args: json.RawMessage(`{"description":"Job","prompt":"p","agent":"general"}`)})
	require.Len(t, effects, 1, "nothing launched: %+v", effects)
	require.Equal(t, EffectToolReply, effects[0].Kind)
	require.Equal(t, want, effects[0].Error)

	effects = step(Event{Type: EventToolCall, CallID: "c2", Tool: ToolList, SessionID: "ses_p", MessageID: "m1", Agent: "build", Args: json.RawMessage(`{}`)})
	require.Len(t, effects, 1)
	require.Empty(t, effects[0].Error, "the other tools work")
	require.Contains(t, effects[0].Output, "No background tasks found")

	// A later init without the bad file clears the error.
	again := call(rt, map[string]any{"op": "init", "config": map[string]any{}})
	require.Empty(t, again.ConfigError)
	effects = step(Event{Type: EventToolCall, CallID: "c3", Tool: ToolTask, SessionID: "ses_p", MessageID: "m1", Agent: "build",
		Args: json.RawMessage(`{"description":"Job","prompt":"p","agent":"general"}`)})
	require.NotEmpty(t, effects)
	require.Equal(t, EffectAgentsList, effects[0].Kind)
}

// The chain the fallback code reads follows the layered files: models, else model; an agent's
// entry replaced whole by a later file.
func TestChainFromConfigFiles(t *testing.T) {
	options := config.Config{Agents: map[string]config.AgentModels{"general": {Model: "opt/g"}, "plan": {Model: "opt/p"}}}
	global := `{"agents": {"explore": {"models": ["g/a", "g/b"]}, "general": {"models": ["g/g1", "g/g2"]}}}`
	project := `{"agents": {"explore": {"model": "p/x"}}}`
	cfg, err := config.ApplyConfigFiles(options, []config.ConfigFile{{Path: globalJSON, Text: global}, {Path: projectJSONC, Text: project}})
	require.NoError(t, err)
	m := NewMachine(cfg)
	require.Equal(t, []string{"p/x"}, m.resolveChain("explore", "ses_parent"))
	require.Equal(t, []string{"g/g1", "g/g2"}, m.resolveChain("general", "ses_parent"))
	require.Nil(t, m.resolveChain("build", "ses_parent"), "no entry and no parent model: OpenCode chooses")
}
