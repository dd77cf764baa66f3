package ocserve

// Models offered by the mock provider; both answer from the same mock server
// (Request.Model tells them apart), so fallback tests can switch models.
const (
	ModelA = "mock/mock-a"
	ModelB = "mock/mock-b"
)

// baseConfig is the project's opencode.json before Options.Config is merged
// over it (top-level keys replace ours).
//
//   - provider "mock": the openai-compatible SDK bundled in the binary, so no
//     npm install; includeUsage asks for the usage chunk, as real providers
//     send token counts.
//   - enabled_providers keeps OpenCode from loading the providers of its
//     built-in catalogue.
//   - permission: allow everything, external directories and repeated
//     calls (doom_loop) included, so no tool call ever waits for an answer;
//     the question tool stays denied because it waits for a user by design.
//   - autoupdate/share off: no network.
func baseConfig(modelURL string, plugins []string) map[string]any {
	model := func(name string) map[string]any {
		return map[string]any{
			"name":        name,
			"tool_call":   true,
			"temperature": true,
			"limit":       map[string]any{"context": 200000, "output": 32000},
			"cost":        map[string]any{"input": 0, "output": 0},
		}
	}
	if plugins == nil {
		plugins = []string{}
	}
	return map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{
			"mock": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Mock",
				"options": map[string]any{"baseURL": modelURL, "apiKey": "mock-key", "includeUsage": true},
				"models":  map[string]any{"mock-a": model("Mock A"), "mock-b": model("Mock B")},
			},
		},
		"enabled_providers": []string{"mock"},
		"model":             ModelA,
		"small_model":       ModelA,
		"plugin":            plugins,
		"permission": map[string]any{
			"*":                  "allow",
			"external_directory": "allow",
			"doom_loop":          "allow",
			"question":           "deny",
		},
		"autoupdate": false,
		"share":      "disabled",
	}
}
