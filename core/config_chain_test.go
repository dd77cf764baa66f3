package core

import (
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

// The chain the fallback code reads follows the layered files: models, else model; an agent's
// entry replaced whole by a later file.
func TestChainFromConfigFiles(t *testing.T) {
	options := config.Config{Agents: map[string]config.AgentModels{"general": {Model: "opt/g"}, "plan": {Model: "opt/p"}}}
	global := `{"agents": {"explore": {"models": ["g/a", "g/b"]}, "general": {"models": ["g/g1", "g/g2"]}}}`
	project := `{"agents": {"explore": {"model": "p/x"}}}`
	cfg, err := config.ApplyConfigFiles(options, []config.ConfigFile{{Path: "/home/u/.config/opencode/asyncagents.json", Text: global}, {Path: "/work/p/.opencode/asyncagents.jsonc", Text: project}})
	require.NoError(t, err)
	m := NewMachine(cfg)
	require.Equal(t, []string{"p/x"}, m.resolveChain("", "explore", "ses_parent"))
	require.Equal(t, []string{"g/g1", "g/g2"}, m.resolveChain("", "general", "ses_parent"))
	require.Nil(t, m.resolveChain("", "build", "ses_parent"), "no entry and no parent model: OpenCode chooses")
}
