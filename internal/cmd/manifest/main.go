// Command manifest prints what a host must know before the core is loaded: the ABI version, the
// tools with their descriptions and arguments, and the OpenCode events to forward. The plugin
// bundles it, so OpenCode can list the tools at start-up without waiting for the .wasm to compile.
package main

import (
	"encoding/json"
	"os"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
)

func main() {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{
		"abi":       abi.ABIVersion,
		"version":   core.Version,
		"tools":     core.Tools(),
		"subscribe": core.SubscribedEvents(),
	}); err != nil {
		os.Exit(1)
	}
}
