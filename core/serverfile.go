package core

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
)

// ServerFile is what a status API server writes about itself for the CLI to find it: one file per
// process (ServerFilePath), written by that process and removed by it alone. A process is named
// by its pid and its start time as the OS tells it (ProcStart; Linux: /proc/<pid>/stat field 22),
// because a pid alone is reused: a file whose pid now runs another program is not that server's.
type ServerFile struct {
	Port int `json:"port"`
	PID  int `json:"pid"`
	// ProcStart is the writer's start time as the OS reports it ("" where the host cannot tell).
	ProcStart string `json:"procStart,omitempty"`
	// StartedAt is when the plugin (or asyncagents serve) started, as ISO 8601.
	StartedAt string `json:"startedAt"`
	URL       string `json:"url"`
	Token     string `json:"token"`
	// Auth is "none" when the server asks no token (ASYNCAGENTS_API_AUTH=none).
	Auth string `json:"auth,omitempty"`
	// ReadOnly marks `asyncagents serve`'s file: it reads the history and cancels nothing, where
	// the plugin's server is live.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// Content is the file's text: JSON, two-space indented, one newline at the end.
func (f ServerFile) Content() string {
	b, _ := json.MarshalIndent(f, "", "  ") // a struct of strings and ints always encodes
	return string(b) + "\n"
}

// ParseServerFile reads a server file's content.
func ParseServerFile(content []byte) (ServerFile, error) {
	var f ServerFile
	err := json.Unmarshal(content, &f)
	return f, err
}

// Live says whether the file's server may still run: its pid runs (running), and, where both
// are known, it is the process that wrote the file (the same start time). A file that is not
// live is stale: its writer is gone, and a reader ignores it.
func (f ServerFile) Live(running bool, procStartNow string) bool {
	if !running || f.PID <= 0 || f.Port <= 0 {
		return false
	}
	return f.ProcStart == "" || procStartNow == "" || f.ProcStart == procStartNow
}

// Origin is the status API's address, http://127.0.0.1:<port>.
func (f ServerFile) Origin() string { return "http://127.0.0.1:" + strconv.Itoa(f.Port) }

// NeedsCode says whether the dashboard opens with a one-time code (the server asks a token):
// the CLI asks the server for one, with the token, and opens DashboardURL(code).
func (f ServerFile) NeedsCode() bool {
	return !(config.APIConfig{Auth: f.Auth}).NoToken()
}

// DashboardURL is the status API's page for a browser, with a one-time code when code is not
// "" (httpapi.Codes), never with the token: a browser's command line is readable by every
// local user, and its history keeps what it opened.
func (f ServerFile) DashboardURL(code string) string {
	u := f.Origin() + "/"
	if code != "" {
		u += "?code=" + url.QueryEscape(code)
	}
	return u
}

// ProcStatStart reads a process's start time from its /proc/<pid>/stat line: field 22 (clock
// ticks since boot). The second field, the command name in parentheses, may hold spaces and
// parentheses itself, so the fields are counted from its last ')'. "" when the line is not one.
func ProcStatStart(stat string) string {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return ""
	}
	fields := strings.Fields(stat[end+1:]) // field 3 onwards
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// NoServerText is the error of a CLI command that talks to a live server (dashboard, workers)
// when none runs for project.
func NoServerText(command, project string) string {
	if command == "workers" {
		return fmt.Sprintf("no running asyncagents server for %s: start OpenCode there (only a running plugin reaches its workers)", project)
	}
	return fmt.Sprintf("no running asyncagents server for %s: start OpenCode there, or run `asyncagents serve --project %s`", project, project)
}

// ServerName says which server a file is, for the user of a CLI command.
func ServerName(f ServerFile) string {
	if f.ReadOnly {
		return fmt.Sprintf("the read-only server of asyncagents serve (pid %d; no live plugin server was found)", f.PID)
	}
	return fmt.Sprintf("the plugin's live server in OpenCode (pid %d)", f.PID)
}
