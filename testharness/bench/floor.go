package bench

import (
	"os"
	"path/filepath"
)

// floorTool is the floor system's launching tool: a plugin tool that launches nothing.
const floorTool = "noop_task"

// floorPlugin is a plugin module with one tool that takes asyncagents_task's arguments and
// answers at once: what any plugin tool call costs in OpenCode, the floor under our launch.
// OpenCode calls every export of a plugin module as a plugin, so it exports one function.
const floorPlugin = `import { tool } from "@opencode-ai/plugin";

export const BenchFloor = async () => ({
  tool: {
    ` + floorTool + `: tool({
      description: "Does nothing and answers at once (benchmark floor).",
      args: {
        description: tool.schema.string().optional(),
        prompt: tool.schema.string().optional(),
        agent: tool.schema.string().optional(),
      },
      execute: async () => "ok",
    }),
  },
});
`

// writeFloorPlugin writes the floor plugin into dir and returns its opencode.json "plugin"
// entry. dir gets a node_modules link to the repository's, where @opencode-ai/plugin (and the zod
// it imports) resolve from, as they do for the config dirs ocserve seeds.
func writeFloorPlugin(dir, repoRoot string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Symlink(filepath.Join(repoRoot, "node_modules"), filepath.Join(dir, "node_modules")); err != nil && !os.IsExist(err) {
		return "", err
	}
	js := filepath.Join(dir, "bench-floor.js")
	if err := os.WriteFile(js, []byte(floorPlugin), 0o644); err != nil {
		return "", err
	}
	return "file://" + js, nil
}

// pluginSwitches passes the plugin's transport switches from the benchmark's environment to
// OpenCode's, to compare the paths an effect can take: ASYNCAGENTS_DIRECT=false sends every
// effect through the plugin's client (as in the TUI without --port), ASYNCAGENTS_WORKER=false
// runs the core in OpenCode's thread rather than in a Worker.
func pluginSwitches() []string {
	var env []string
	for _, k := range []string{"ASYNCAGENTS_DIRECT", "ASYNCAGENTS_WORKER"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
