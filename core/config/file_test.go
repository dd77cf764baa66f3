package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	globalJSON   = "/home/u/.config/opencode/asyncagents.json"
	globalJSONC  = "/home/u/.config/opencode/asyncagents.jsonc"
	projectJSON  = "/work/p/.opencode/asyncagents.json"
	projectJSONC = "/work/p/.opencode/asyncagents.jsonc"
)

// Every kind of problem is named with the file and the field (or the line and column).
func TestConfigFileErrors(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"model not a string", `{"agents":{"explore":{"models":["a/b",42]}}}`,
			`agents.explore.models[1]: must be a "provider/model" string, got 42`},
		{"model without provider", `{"agents":{"explore":{"model":"gpt-5"}}}`,
			`agents.explore.model: must be a "provider/model" string, got "gpt-5"`},
		{"model with a space", `{"agents":{"explore":{"models":["a/b c"]}}}`,
			`agents.explore.models[0]: must be a "provider/model" string, got "a/b c"`},
		{"empty chain", `{"agents":{"explore":{"models":[]}}}`,
			`agents.explore.models: must be a non-empty array of "provider/model" strings, got []`},
		{"chain not an array", `{"agents":{"explore":{"models":"a/b"}}}`,
			`agents.explore.models: must be a non-empty array of "provider/model" strings, got "a/b"`},
		{"duplicate model", `{"agents":{"explore":{"models":["a/b","c/d","a/b"]}}}`,
			`agents.explore.models[2]: duplicate model "a/b" (also at [0])`},
		{"agent not an object", `{"agents":{"explore":"a/b"}}`,
			`agents.explore: must be an object, got "a/b"`},
		{"agents not an object", `{"agents":["explore"]}`,
			`agents: must be an object, got ["explore"]`},
		{"empty agent name", `{"agents":{"":{"model":"a/b"}}}`,
			`agents[""]: an agent name must not be empty`},
		{"odd agent name, unknown field", `{"agents":{"my agent":{"modle":"a/b"}}}`,
			`agents["my agent"].modle: unknown field (did you mean model?)`},
		{"unknown field near a known one", `{"fallback":{"attemptTimeout":5000}}`,
			`fallback.attemptTimeout: unknown field (did you mean attemptTimeoutMs?)`},
		{"misspelt top-level field", `{"maxDepht":3}`,
			`maxDepht: unknown field (did you mean maxDepth?)`},
		{"unknown field far from any", `{"zzz":1}`,
			`zzz: unknown field (allowed: $schema, agents, budget, cancelOnParentAbort, concurrency, defaultBlockTimeoutMs, fallback, headless, history, isolation, maxBlockTimeoutMs, maxConcurrentStarts, maxDepth, maxResultChars, notify, permission, pollIntervalMs, stall, taskTimeoutMs, tmux, toasts, workers)`},
		{"attempt timeout too small", `{"fallback":{"attemptTimeoutMs":999}}`,
			`fallback.attemptTimeoutMs: must be an integer >= 1000, got 999`},
		{"threshold zero", `{"fallback":{"failureThreshold":0}}`,
			`fallback.failureThreshold: must be a positive integer, got 0`},
		{"negative cooldown", `{"fallback":{"cooldownMs":-1}}`,
			`fallback.cooldownMs: must be an integer >= 0, got -1`},
		{"fractional integer", `{"maxDepth":1.5}`, `maxDepth: must be a positive integer, got 1.5`},
		{"string for an integer", `{"maxResultChars":"many"}`, `maxResultChars: must be a positive integer, got "many"`},
		{"null", `{"maxConcurrentStarts":null}`, `maxConcurrentStarts: must be a positive integer, got null`},
		{"bool", `{"tmux":{"enabled":"yes"}}`, `tmux.enabled: must be true or false, got "yes"`},
		{"enum", `{"notify":{"wake":"all"}}`, `notify.wake: must be "batch" or "each", got "all"`},
		{"schema not a string", `{"$schema":1}`, `$schema: must be a string, got 1`},
		{"host-set tmux.inside", `{"tmux":{"inside":true}}`, `tmux.inside: not allowed in this file: the plugin sets it from $TMUX`},
		{"host-set api", `{"api":{"maxSubscribers":3}}`,
			`api: not allowed in this file: the status API's options go in the plugin options of opencode.json`},
		{"host-set development", `{"development":true}`, `development: not allowed in this file: the plugin sets it from NODE_ENV`},
		{"duplicate field", `{"maxDepth":1,"maxDepth":2}`, `maxDepth: duplicate field`},
		{"first problem in file order", `{"zeta":1,"maxDepth":0}`, `zeta: unknown field (allowed: $schema, agents, budget, cancelOnParentAbort, concurrency, defaultBlockTimeoutMs, fallback, headless, history, isolation, maxBlockTimeoutMs, maxConcurrentStarts, maxDepth, maxResultChars, notify, permission, pollIntervalMs, stall, taskTimeoutMs, tmux, toasts, workers)`},
		{"long value cut", `{"maxDepth":"` + strings.Repeat("a", 70) + `"}`,
			`maxDepth: must be a positive integer, got "` + strings.Repeat("a", 56) + `…`},
		{"top level array", `[1,2]`, `the top level must be an object, got [1,2]`},
		{"top level string", `"x"`, `the top level must be an object, got "x"`},
		{"missing comma", "{\n  \"maxDepth\": 1\n  \"tmux\": {}\n}", `line 3, column 3: invalid JSON: invalid character '"' after object key:value pair`},
		{"unterminated", "{\n  \"maxDepth\": 1,\n", `line 3, column 1: invalid JSON: unexpected end of file`},
		{"unterminated comment", "{\n  /* the chain\n}", `line 2, column 3: invalid JSON: unterminated /* comment`},
		{"column counts characters", "{\"$schema\": \"é\" x}", `line 1, column 17: invalid JSON: invalid character 'x' after object key:value pair`},
		{"two values", `{} {}`, `line 1, column 4: invalid JSON: invalid character '{' after top-level value`},
		{"comma alone is not trailing", `{"agents":{,}}`, `line 1, column 12: invalid JSON: invalid character ',' looking for beginning of object key string`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: projectJSONC, Text: c.text}})
			require.Error(t, err)
			require.Equal(t, "asyncagents: "+projectJSONC+": "+c.want, err.Error())
		})
	}
}

// JSONC: comments of both kinds (also inside values' surroundings, never inside strings) and
// trailing commas.
func TestConfigFileJSONC(t *testing.T) {
	text := "\uFEFF// asyncagents\n{\n" +
		"  \"$schema\": \"./asyncagents.schema.json\", // editors only\n" +
		"  /* the chain */ \"agents\": {\n" +
		"    \"explore\": { \"models\": [\"a/m//1\", \"b/m/*2*/\",], },\n" +
		"    \"general\": { \"model\": \"c/m\" /* one */ },\n" +
		"  },\n" +
		"  \"fallback\": { \"attemptTimeoutMs\": 1e4, \"cooldownMs\": 0, },\n" +
		"  \"notify\": { \"wake\": \"each\" },\n" +
		"  \"tmux\": { \"enabled\": true },\n" +
		"  \"maxDepth\": 3.0,\n" +
		"}\n// end"
	cfg, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: globalJSONC, Text: text}})
	require.NoError(t, err)
	require.Equal(t, map[string]AgentModels{
		"explore": {Models: []string{"a/m//1", "b/m/*2*/"}},
		"general": {Model: "c/m"},
	}, cfg.Agents)
	require.Equal(t, int64(10000), cfg.Fallback.AttemptTimeoutMs)
	require.Equal(t, WakeEach, cfg.Notify.Wake)
	require.True(t, cfg.Tmux.Enabled)
	require.Equal(t, 3, cfg.MaxDepth)
}

// Layers: defaults < plugin options < global file < project file. Objects merge field by field;
// an agent's entry is replaced whole.
func TestConfigFilePrecedence(t *testing.T) {
	options := Config{
		MaxResultChars: 100, MaxDepth: 4, Notify: NotifyConfig{Wake: WakeEach},
		Tmux:     TmuxConfig{Inside: true},
		API:      APIConfig{Token: "tok"},
		Agents:   map[string]AgentModels{"general": {Model: "opt/g"}, "plan": {Model: "opt/p"}},
		Fallback: FallbackConfig{FailureThreshold: 7},
	}
	global := `{"maxDepth": 5, "maxConcurrentStarts": 2, "tmux": {"enabled": true},
		"agents": {"explore": {"models": ["g/a", "g/b"]}, "general": {"models": ["g/g1", "g/g2"]}},
		"fallback": {"attemptTimeoutMs": 5000, "cooldownMs": 60000}}`
	project := `{"maxDepth": 3, "tmux": {"enabled": false},
		"agents": {"explore": {"model": "p/x"}},
		"fallback": {"cooldownMs": 1000}}`
	cfg, err := ApplyConfigFiles(options, []ConfigFile{{Path: globalJSON, Text: global}, {Path: projectJSONC, Text: project}})
	require.NoError(t, err)
	require.Equal(t, 100, cfg.MaxResultChars, "options where no file says otherwise")
	require.Equal(t, WakeEach, cfg.Notify.Wake)
	require.Equal(t, 3, cfg.MaxDepth, "the project over the global file over the options")
	require.Equal(t, 2, cfg.MaxConcurrentStarts, "the global file over the defaults")
	require.False(t, cfg.Tmux.Enabled, "the project's false over the global true")
	require.True(t, cfg.Tmux.Inside, "the host's own field is kept")
	require.Equal(t, "tok", cfg.API.Token)
	require.Equal(t, FallbackConfig{AttemptTimeoutMs: 5000, FailureThreshold: 7, CooldownMs: Int64(1000)}, cfg.Fallback)
	require.Equal(t, map[string]AgentModels{
		"explore": {Model: "p/x"},                     // the project's entry, whole: no global models left
		"general": {Models: []string{"g/g1", "g/g2"}}, // the global entry, whole, over the options'
		"plan":    {Model: "opt/p"},
	}, cfg.Agents)
	require.Equal(t, map[string]AgentModels{"general": {Model: "opt/g"}, "plan": {Model: "opt/p"}}, options.Agents, "the options are not changed")
}

func TestConfigFilePlaces(t *testing.T) {
	t.Run("both .json and .jsonc in one place", func(t *testing.T) {
		_, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: projectJSON, Text: `{}`}, {Path: projectJSONC, Text: `{}`}})
		require.EqualError(t, err, "asyncagents: /work/p/.opencode: both asyncagents.json and asyncagents.jsonc exist; keep one of them")
	})
	t.Run(".json globally and .jsonc in the project", func(t *testing.T) {
		cfg, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: globalJSON, Text: `{"maxDepth":5}`}, {Path: projectJSONC, Text: `{"maxDepth":6}`}})
		require.NoError(t, err)
		require.Equal(t, 6, cfg.MaxDepth)
	})
	t.Run("an invalid global file names it, and nothing of the project applies", func(t *testing.T) {
		opts := Config{MaxDepth: 9}
		cfg, err := ApplyConfigFiles(opts, []ConfigFile{{Path: globalJSON, Text: `{"maxDepth":"x"}`}, {Path: projectJSONC, Text: `{"maxDepth":6}`}})
		require.EqualError(t, err, `asyncagents: `+globalJSON+`: maxDepth: must be a positive integer, got "x"`)
		require.Equal(t, opts, cfg)
	})
	t.Run("a file the host could not read", func(t *testing.T) {
		_, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: projectJSON, Error: "EACCES: permission denied"}})
		require.EqualError(t, err, "asyncagents: "+projectJSON+": cannot read it: EACCES: permission denied")
	})
	for _, empty := range []string{"", "  \n", "// nothing yet\n", "/* */", "{}"} {
		t.Run("empty "+empty, func(t *testing.T) {
			cfg, err := ApplyConfigFiles(Config{MaxDepth: 4}, []ConfigFile{{Path: projectJSON, Text: empty}})
			require.NoError(t, err)
			require.Equal(t, Config{MaxDepth: 4}, cfg)
		})
	}
	t.Run("candidates", func(t *testing.T) {
		require.Equal(t, []string{globalJSON, globalJSONC, projectJSON, projectJSONC}, ConfigCandidates("", "/home/u", "/work/p"))
		require.Equal(t, []string{"/x/opencode/asyncagents.json", "/x/opencode/asyncagents.jsonc"}, ConfigCandidates("/x", "/home/u", ""))
		require.Empty(t, ConfigCandidates("", "", ""))
	})
}

// cooldownMs 0 is no cooldown, not the default; fallback.enabled false stays false; both unset
// take the defaults. From a file and from the options alike.
func TestFallbackZeroAndFalseAreValues(t *testing.T) {
	cfg, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: globalJSON, Text: `{"fallback": {"cooldownMs": 0, "enabled": false}}`}})
	require.NoError(t, err)
	cfg = cfg.WithDefaults()
	require.Equal(t, int64(0), cfg.Fallback.Cooldown())
	require.False(t, cfg.Fallback.FallbackOn())

	var opts Config
	require.NoError(t, json.Unmarshal([]byte(`{"fallback": {"cooldownMs": 0, "enabled": false}}`), &opts))
	opts = opts.WithDefaults()
	require.Equal(t, int64(0), opts.Fallback.Cooldown())
	require.False(t, opts.Fallback.FallbackOn())

	def := Config{}.WithDefaults()
	require.Equal(t, int64(defaultCooldownMs), def.Fallback.Cooldown())
	require.True(t, def.Fallback.FallbackOn())
}
