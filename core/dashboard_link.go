package core

import (
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core/httpapi"
)

// Both CLIs, the Go one and the npm package's, open the dashboard the same way, and say the same
// words: the rule and the words are here, the CLIs ask for the code and start the browser.

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

// DashboardCodeFailure is the error when f gave no code: failure is the request's error, or the
// answer's status and body.
func DashboardCodeFailure(f ServerFile, failure string) string {
	return fmt.Sprintf("the server at %s did not give a dashboard link: %s", f.Origin(), strings.TrimSpace(failure))
}
