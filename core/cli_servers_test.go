package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDashboardLink(t *testing.T) {
	live := ServerFile{Port: 5165, PID: 42, Token: "tok"}
	open := ServerFile{Port: 5166, PID: 43, Auth: "none", ReadOnly: true}
	for _, c := range []struct {
		name string
		f    ServerFile
		code string
		want DashboardLink
	}{
		{"a server that asks a token needs a code first", live, "", DashboardLink{CodePath: "/v1/dashboard/code"}},
		{"with the code, the page opens with it, never the token", live, "a b", DashboardLink{
			URL:     "http://127.0.0.1:5165/?code=a+b",
			Opening: "opening the plugin's live server in OpenCode (pid 42): http://127.0.0.1:5165/?code=a+b (the link opens the dashboard once, within a minute)",
			Plain:   "the plugin's live server in OpenCode (pid 42): http://127.0.0.1:5165/?code=a+b",
		}},
		{"a server without a token opens as it is, as often as asked", open, "", DashboardLink{
			URL:     "http://127.0.0.1:5166/",
			Opening: "opening the read-only server of asyncagents serve (pid 43; no live plugin server was found): http://127.0.0.1:5166/",
			Plain:   "the read-only server of asyncagents serve (pid 43; no live plugin server was found): http://127.0.0.1:5166/",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, DashboardLinkFor(c.f, c.code))
		})
	}
	require.Equal(t, "the server at http://127.0.0.1:5165 did not give a dashboard link: 401 unauthorized",
		ServerAskFailure(live, "dashboard", " 401 unauthorized\n"))
	require.Equal(t, "the server at http://127.0.0.1:5165 did not list its workers: connection refused",
		ServerAskFailure(live, "workers", "connection refused"))
}

func TestPickedServerLine(t *testing.T) {
	live := ServerFile{Port: 5165, PID: 42}
	serve := ServerFile{Port: 5166, PID: 43, ReadOnly: true}
	require.Equal(t, "the plugin's live server in OpenCode (pid 42)", PickedServerLine("dashboard", live))
	require.Equal(t, "the read-only server of asyncagents serve (pid 43; no live plugin server was found)", PickedServerLine("dashboard", serve))
	require.Empty(t, PickedServerLine("workers", live), "the plugin's own workers need no word")
	require.Equal(t, "from the read-only server of asyncagents serve (pid 43; no live plugin server was found)", PickedServerLine("workers", serve))
}
