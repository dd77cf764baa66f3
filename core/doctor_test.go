package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
)

func TestDoctorReportNamesWhatItFoundAndTheFix(t *testing.T) {
	server := config.ConfigFile{Path: "/d/servers-1/7.json", Text: `{"port":5165,"pid":7,"url":"http://127.0.0.1:5165","token":"t","startedAt":"2026-01-01T00:00:00.000Z"}`}
	stale := config.ConfigFile{Path: "/d/servers-1/8.json", Text: `{"port":5166,"pid":8,"url":"http://127.0.0.1:5166","token":"t"}`}
	facts := DoctorFacts{Project: "/p", OpenCodeVersion: "1.18.33\n",
		Files: []config.ConfigFile{
			{Path: "/p/opencode.json", Text: `{"plugin": ["asyncagents@file:/x/asyncagents-0.1.0.tgz", ["other", {}]]}`},
			{Path: "/p/.opencode/tui.json", Text: "{ // c\n \"plugin\": [],\n}"},
			{Path: "/p/.opencode/asyncagents.json", Text: `{"maxDepth": "x"}`},
		},
		ServerFiles: []config.ConfigFile{server, stale},
		Procs:       []ProcInfo{{PID: 7, Running: true}, {PID: 8}},
		ConfigError: "/p/.opencode/asyncagents.json: maxDepth: not a number",
	}
	r := DoctorReport(facts)
	require.Contains(t, r, "OpenCode: 1.18.33\n")
	require.Contains(t, r, "plugin server: http://127.0.0.1:5165 (pid 7, started 2026-01-01T00:00:00.000Z) answers")
	require.NotContains(t, r, "5166", "a stale server file is not a server")
	require.Contains(t, r, `/p/opencode.json: plugin "asyncagents@file:/x/asyncagents-0.1.0.tgz"`)
	require.Contains(t, r, "/p/.opencode/tui.json: no asyncagents entry")
	require.Contains(t, r, "tui.json: no file names asyncagents")
	require.Contains(t, r, "config file: /p/.opencode/asyncagents.json")
	require.Contains(t, r, "config error: /p/.opencode/asyncagents.json: maxDepth")

	facts.Probes = map[string]string{"http://127.0.0.1:5165": "connection refused"}
	facts.Procs = nil
	facts.OpenCodeVersion, facts.OpenCodeError = "", "opencode: not on PATH"
	r = DoctorReport(facts)
	require.Contains(t, r, "plugin server: none running for this project")
	require.Contains(t, r, "OpenCode: not found (opencode: not on PATH)")

	facts.Procs = []ProcInfo{{PID: 7, Running: true}}
	require.Contains(t, DoctorReport(facts), "plugin server: http://127.0.0.1:5165 (pid 7) does not answer: connection refused")
}

func TestDoctorCandidatesCoverOpenCodesFilesAndOurs(t *testing.T) {
	c := DoctorCandidates("", "/h", "/p")
	for _, want := range []string{"/h/.config/opencode/opencode.json", "/h/.config/opencode/config.json", "/p/opencode.jsonc", "/p/.opencode/tui.json",
		"/h/.config/opencode/tui.json", "/p/.opencode/asyncagents.jsonc"} {
		require.Contains(t, c, want)
	}
}

func TestServeBannerSaysHowToReachIt(t *testing.T) {
	b := ServeBanner{Restored: 2, Project: "/p", URL: "http://127.0.0.1:5165", Token: "tok"}
	require.Equal(t, "asyncagents: serving 2 tasks of /p at http://127.0.0.1:5165 (read-only)\ntoken: tok\n"+
		"try:   curl -H 'Authorization: Bearer tok' http://127.0.0.1:5165/v1/tasks\nopen:  asyncagents dashboard --project /p\n", b.Text())
	b.Auth = "NONE"
	require.Equal(t, "asyncagents: serving 2 tasks of /p at http://127.0.0.1:5165 (read-only)\nauth: none (ASYNCAGENTS_API_AUTH=NONE)\n", b.Text())
}
