package abi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
)

// The servers op, asked for a command, picks its server with the core's words: none live is an
// error naming the project and what to do; a read-only serve picked is said to be one.
func TestServersOpPicksForACommand(t *testing.T) {
	call := func(command string, files []config.ConfigFile, procs []core.ProcInfo) Response {
		req, err := json.Marshal(Request{Op: "servers", Command: command, Doctor: &core.DoctorFacts{Project: "/p", ServerFiles: files, Procs: procs}})
		require.NoError(t, err)
		var res Response
		require.NoError(t, json.Unmarshal(NewRuntime().Call(req), &res))
		return res
	}
	res := call("workers", nil, nil)
	require.False(t, res.OK)
	require.Equal(t, "no running asyncagents server for /p: start OpenCode there (only a running plugin reaches its workers)", res.Error)
	require.Contains(t, call("dashboard", nil, nil).Error, "or run `asyncagents serve --project /p`")

	serve := core.ServerFile{Port: 5001, PID: 7, URL: "http://127.0.0.1:5001", ReadOnly: true}
	res = call("workers", []config.ConfigFile{{Path: "/s/7.json", Text: serve.Content()}}, []core.ProcInfo{{PID: 7, Running: true}})
	require.True(t, res.OK, res.Error)
	require.Equal(t, 7, res.Servers[0].PID)
	require.Equal(t, "from the read-only server of asyncagents serve (pid 7; no live plugin server was found)", res.Report)
	require.Empty(t, call("", nil, nil).Error, "without a command, none live is no error")
}

// The dashboard.link op gives both CLIs the dashboard command's steps: a code to ask for, then
// the page and the words; a code that did not come is the core's error, naming the server.
func TestDashboardLinkOp(t *testing.T) {
	call := func(q Request) Response {
		q.Op = "dashboard.link"
		req, err := json.Marshal(q)
		require.NoError(t, err)
		var res Response
		require.NoError(t, json.Unmarshal(NewRuntime().Call(req), &res))
		return res
	}
	live := core.ServerFile{Port: 5001, PID: 7, Token: "t"}
	require.Equal(t, "dashboard.link: missing server", call(Request{}).Error)
	require.Equal(t, &core.DashboardLink{CodePath: "/v1/dashboard/code"}, call(Request{Server: &live}).Link)
	res := call(Request{Server: &live, Code: "c"})
	require.True(t, res.OK, res.Error)
	require.Equal(t, "http://127.0.0.1:5001/?code=c", res.Link.URL)
	require.Equal(t, "the plugin's live server in OpenCode (pid 7): http://127.0.0.1:5001/?code=c", res.Link.Plain)
	res = call(Request{Server: &live, Failure: "connection refused"})
	require.False(t, res.OK)
	require.Equal(t, "the server at http://127.0.0.1:5001 did not give a dashboard link: connection refused", res.Error)
}
