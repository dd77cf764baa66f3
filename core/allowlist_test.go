package core

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// The agent list as OpenCode 1.x hands it over for
// "agent": {"build": {"permission": {"task": {"*": "deny", "explore": "allow"}}}}: the defaults
// first, then the agent's own rules.
const allowListAgents = `[
 {"name":"build","mode":"primary","permission":[
  {"permission":"*","pattern":"*","action":"allow"},
  {"permission":"task","pattern":"*","action":"deny"},
  {"permission":"task","pattern":"explore","action":"allow"}]},
 {"name":"plan","mode":"primary","permission":[{"permission":"*","pattern":"*","action":"allow"},{"permission":"t?sk","pattern":"gen*","action":"ask"}]},
 {"name":"explore","mode":"subagent"},
 {"name":"general","mode":"subagent"}]`

func allowListLaunch(t *testing.T, parentAgent, agent string) (*Machine, Effect) {
	m := NewMachine(config.Config{})
	out := m.Step(1, Event{Type: EventToolCall, CallID: "c1", Tool: ToolTask, SessionID: "ses_p", MessageID: "msg_p", Agent: parentAgent,
		Args: json.RawMessage(`{"description":"d","prompt":"p","agent":"` + agent + `"}`)})
	list := ofKind(out, EffectAgentsList)
	require.Len(t, list, 1)
	out = m.Step(2, Event{Type: EventEffectDone, EffectID: list[0].ID, OK: true, Result: json.RawMessage(allowListAgents)})
	replies := ofKind(out, EffectToolReply)
	require.Len(t, replies, 1)
	return m, replies[0]
}

// A denied agent is refused, nothing is created, and the error names what build may launch.
func TestAllowListRefusesADeniedAgent(t *testing.T) {
	m, r := allowListLaunch(t, "build", "general")
	require.Contains(t, r.Error, `agent "build" may not launch agent "general"`)
	require.Contains(t, r.Error, "agents it may launch: explore.")
	require.Empty(t, m.Tasks())
}

// The last matching rule wins: explore is allowed after the blanket deny.
func TestAllowListLaunchesAnAllowedAgent(t *testing.T) {
	m, r := allowListLaunch(t, "build", "explore")
	require.Empty(t, r.Error)
	require.Len(t, m.Tasks(), 1)
}

// "ask" launches (nobody can be asked in the background); a parent with no rules, or one the
// list does not name, is refused nothing.
func TestAllowListAskAndUnknownParents(t *testing.T) {
	for _, parent := range []string{"plan", "", "someone"} {
		m, r := allowListLaunch(t, parent, "general")
		require.Empty(t, r.Error, parent)
		require.Len(t, m.Tasks(), 1, parent)
	}
}

func TestWildcardMatchAsOpenCode(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{
		{"explore", "*", true}, {"explore", "explore", true}, {"explore", "expl*", true},
		{"explore", "*plore", true}, {"explore", "e?plore", true}, {"explore", "e?lore", false},
		{"explore", "explor", false}, {"explore", "xplore", false}, {"", "*", true}, {"", "?", false},
		{"a.b", "a.b", true}, {"axb", "a.b", false}, {"a\nb", "a*b", true}, {"abcabd", "*abd", true},
		{"task", "t*k", true}, {"mcp_x", "*_*", true},
	} {
		require.Equal(t, c.want, wildcardMatch(c.s, c.p), "%q ~ %q", c.s, c.p)
	}
}
