package view

// NoServer is what the terminal UI's sidebar section says when the TUI module (tui.json) runs
// but no plugin server of this process appeared within NoServerAfterMs: the server part is not
// loaded (opencode.json lacks it, or names a spec OpenCode could not install), or its API is off.
// OpenCode itself says nothing then, so the section names the fix. The module has these as
// constants (bridge/abi_types.gen.ts).
const (
	NoServer = "No asyncagents server in this OpenCode: put the spec of tui.json in opencode.json's " +
		"\"plugin\" too, restart OpenCode, and run `npx asyncagents doctor` (or the API is off: ASYNCAGENTS_API_ENABLED=false)"
	// NoServerAfterMs leaves the plugin time to load its core and write its server file.
	NoServerAfterMs = 15000
)
