package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The core splits "provider/model" for the hosts, at the first slash (a model ID may hold more);
// a name with no provider sends no model, and OpenCode chooses.
func TestEffectModelIsSplitByTheCore(t *testing.T) {
	e := Effect{Kind: EffectPromptAsync}.withModel("openrouter/anthropic/claude-sonnet-4")
	require.Equal(t, Effect{Kind: EffectPromptAsync, Model: "openrouter/anthropic/claude-sonnet-4", ProviderID: "openrouter", ModelID: "anthropic/claude-sonnet-4"}, e)
	for _, bad := range []string{"gpt-4o", "/m", "p/", ""} {
		require.Equal(t, Effect{Kind: EffectPromptAsync}, Effect{Kind: EffectPromptAsync}.withModel(bad), "model %q", bad)
	}
}
