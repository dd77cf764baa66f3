package core

import (
	"fmt"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/text"
)

// CLIUsage is what both CLIs (host/cmd/asyncagents, the Go one; plugin-js/cli/, the npm package's under
// Node) print for help and after an unknown command: one text for the same commands.
const CLIUsage = `usage:
  asyncagents ls        [--project DIR] [--wasm FILE]             print the project's tasks as a table
  asyncagents serve     [--project DIR] [--wasm FILE] [--port N]  serve the status API over the stored history
  asyncagents dashboard [--project DIR] [--print]                 open the project's running status API page
                                                                  in the browser (--print: print its URL)
  asyncagents doctor    [--project DIR]                           say whether the plugin loaded, and what to fix
  asyncagents workers   [--project DIR] [--json]                  list the workers of the running plugin: health,
                                                                  load and version (--json: the API's answer)
The project is the working directory unless --project (or --dir) names one; a symlink to it is
the same project.`

// ServeBanner is what `asyncagents serve` prints once it listens: what it serves, and how to
// reach it. Auth is $ASYNCAGENTS_API_AUTH as set.
type ServeBanner struct {
	Restored int    `json:"restored"`
	Project  string `json:"project"`
	URL      string `json:"url"`
	Token    string `json:"token"`
	Auth     string `json:"auth,omitempty"`
}

// Text is the banner's lines.
func (b ServeBanner) Text() string {
	s := fmt.Sprintf("asyncagents: serving %s of %s at %s (read-only)\n", text.CountOf(b.Restored, "task", "tasks"), b.Project, b.URL)
	if (config.APIConfig{Auth: b.Auth}).NoToken() {
		return s + fmt.Sprintf("auth: none (%s=%s)\n", EnvAPIAuth, b.Auth)
	}
	s += fmt.Sprintf("token: %s\n", b.Token)
	s += fmt.Sprintf("try:   curl -H 'Authorization: Bearer %s' %s/v1/tasks\n", b.Token, b.URL)
	return s + fmt.Sprintf("open:  asyncagents dashboard --project %s\n", b.Project)
}
