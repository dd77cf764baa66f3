package core

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/httpapi"
)

// What the CLI commands that talk to a running server (dashboard, workers) say about it, and how
// the dashboard is opened: both CLIs, the Go one and the npm package's, take the rule and the
// words from here; they make the requests and start the browser.

// PickedServerLine is what command says on stderr of the server it took (the servers op's pick):
// dashboard names it (with --print, where stdout is the URL alone); workers names a read-only
// serve's, whose table shows its own asks of the workers' health, not a plugin's streams.
func PickedServerLine(command string, f ServerFile) string {
	switch {
	case command == "workers" && f.ReadOnly:
		return "from " + ServerName(f)
	case command == "workers":
		return ""
	}
	return ServerName(f)
}

// DashboardLink is the dashboard command's next step with the server it took (the servers op's
// pick, ServerName): ask for a code at CodePath, or open URL.
type DashboardLink struct {
	// CodePath is where a one-time code is asked for (POST, with the server file's token), set
	// while the server needs one and none was given.
	CodePath string `json:"codePath,omitempty"`
	// URL is the page to open: the code in it, never the token (DashboardURL).
	URL string `json:"url,omitempty"`
	// Opening is the line once a browser was started on URL; Plain the line when none could be.
	Opening string `json:"opening,omitempty"`
	Plain   string `json:"plain,omitempty"`
}

// DashboardLinkFor is f's dashboard with code ("" before one was asked for).
func DashboardLinkFor(f ServerFile, code string) DashboardLink {
	if f.NeedsCode() && code == "" {
		return DashboardLink{CodePath: httpapi.DashboardCodePath}
	}
	u, which := f.DashboardURL(code), ServerName(f)
	l := DashboardLink{URL: u, Opening: "opening " + which + ": " + u, Plain: which + ": " + u}
	if code != "" {
		l.Opening += " (the link opens the dashboard once, within a minute)"
	}
	return l
}

// ServerAskFailure is the error when command's request to f failed: failure is the request's
// error, or the answer's status and body.
func ServerAskFailure(f ServerFile, command, failure string) string {
	what := "give a dashboard link"
	if command == "workers" {
		what = "list its workers"
	}
	return fmt.Sprintf("the server at %s did not %s: %s", f.Origin(), what, strings.TrimSpace(failure))
}
