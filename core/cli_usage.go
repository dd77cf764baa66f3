package core

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/text"
)

// CLIUsage is what both CLIs (host/cmd/asyncagents, the Go one; plugin-js/cli/, the npm package's
// under Node) print for help and after an unknown command: one text for the same commands, made
// from the commands ParseCLIArgs reads.
var CLIUsage = cliUsage()

func cliUsage() string {
	var b strings.Builder
	b.WriteString("usage: asyncagents <command> [flags]\n")
	for _, c := range cliCommands {
		fmt.Fprintf(&b, "  %-10s %s", c.name, c.does)
		for _, f := range c.flags {
			fmt.Fprintf(&b, " [--%s", f.name)
			if f.arg != "" {
				b.WriteString(" " + f.arg)
			}
			b.WriteString("]")
		}
		b.WriteString("\n")
	}
	b.WriteString(`Every command takes --project DIR (default: the working directory; a symlink to it is the
same project) and --wasm FILE. "asyncagents <command> --help" says more; --version prints the
version.`)
	return b.String()
}

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
