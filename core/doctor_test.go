package core

import (
	"fmt"
	"strings"
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
	r, trouble := DoctorReport(facts)
	require.True(t, trouble, "a config error")
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
	r, _ = DoctorReport(facts)
	require.Contains(t, r, "plugin server: none running for this project")
	require.Contains(t, r, "OpenCode: not found (opencode: not on PATH)")

	facts.Procs = []ProcInfo{{PID: 7, Running: true}}
	r, _ = DoctorReport(facts)
	require.Contains(t, r, "plugin server: http://127.0.0.1:5165 (pid 7) does not answer: connection refused")
}

// What counts as trouble (exit 1): no plugin of OpenCode's answering, no opencode.json naming it,
// OpenCode missing, a config error; a read-only `asyncagents serve` is named as what it is, not
// taken for the plugin; a spec npm is asked for is explained while no plugin runs.
func TestDoctorTellsTroubleFromWhatIsFine(t *testing.T) {
	server := func(pid int, readOnly bool) config.ConfigFile {
		ro := ""
		if readOnly {
			ro = `,"readOnly":true`
		}
		return config.ConfigFile{Path: fmt.Sprintf("/d/servers-1/%d.json", pid),
			Text: fmt.Sprintf(`{"port":%d,"pid":%d,"url":"http://127.0.0.1:%d","token":"t"%s}`, 5100+pid, pid, 5100+pid, ro)}
	}
	tarball := config.ConfigFile{Path: "/p/opencode.json", Text: `{"plugin": ["asyncagents@file:/x/asyncagents-0.1.0.tgz"]}`}
	bare := config.ConfigFile{Path: "/p/opencode.json", Text: `{"plugin": [["asyncagents", {"maxResultChars": 20000}]]}`}
	fine := DoctorFacts{Project: "/p", OpenCodeVersion: "1.18.33", Files: []config.ConfigFile{tarball},
		ServerFiles: []config.ConfigFile{server(7, false)}, Procs: []ProcInfo{{PID: 7, Running: true}}}
	r, trouble := DoctorReport(fine)
	require.False(t, trouble, "no tui.json entry is no trouble: a headless OpenCode needs none\n%s", r)
	require.Contains(t, r, "tui.json: no file names asyncagents")

	readOnly := fine
	readOnly.ServerFiles, readOnly.Procs = []config.ConfigFile{server(8, true)}, []ProcInfo{{PID: 8, Running: true}}
	r, trouble = DoctorReport(readOnly)
	require.True(t, trouble)
	require.Contains(t, r, "plugin server: none running for this project")
	require.Contains(t, r, "asyncagents serve (read-only, the history only: not the plugin): http://127.0.0.1:5108 (pid 8")
	require.NotContains(t, r, "plugin server: http://127.0.0.1:5108")

	npm := readOnly
	npm.Files = []config.ConfigFile{bare}
	r, _ = DoctorReport(npm)
	require.Contains(t, r, "OpenCode asks npm for a name")
	require.Contains(t, r, `"asyncagents@file:/path/to/`)
	npm.ServerFiles, npm.Procs = fine.ServerFiles, fine.Procs
	r, trouble = DoctorReport(npm)
	require.False(t, trouble)
	require.NotContains(t, r, "OpenCode asks npm", "it loaded: npm had it")

	notOnPath := fine
	notOnPath.OpenCodeVersion, notOnPath.OpenCodeNotFound = "", true
	r, trouble = DoctorReport(notOnPath)
	require.False(t, trouble, "a plugin that answers runs in an OpenCode, whatever this PATH holds\n%s", r)
	require.Contains(t, r, "OpenCode: not found here (no opencode on the PATH), but the plugin below runs in one\n")
	notOnPath.OpenCodeNotFound, notOnPath.OpenCodeError = false, "exit 1: boom"
	r, trouble = DoctorReport(notOnPath)
	require.False(t, trouble)
	require.Contains(t, r, "OpenCode: could not run here (exit 1: boom), but the plugin below runs in one\n")

	elsewhere := fine
	elsewhere.Files = nil
	r, trouble = DoctorReport(elsewhere)
	require.False(t, trouble, "a plugin that answers was named in a config doctor does not read (a parent folder's)")
	require.Contains(t, r, "opencode.json: no file names asyncagents")

	for name, f := range map[string]func(*DoctorFacts){
		"no opencode, no plugin": func(f *DoctorFacts) {
			f.OpenCodeVersion, f.OpenCodeNotFound = "", true
			f.Probes = map[string]string{"http://127.0.0.1:5107": "connection refused"}
		},
		"no opencode.json entry, no plugin": func(f *DoctorFacts) { f.Files, f.ServerFiles = nil, nil },
		"a plugin that is silent":           func(f *DoctorFacts) { f.Probes = map[string]string{"http://127.0.0.1:5107": "connection refused"} },
		"a config error":                    func(f *DoctorFacts) { f.ConfigError = "asyncagents.json: bad" },
		"an unreadable opencode.json": func(f *DoctorFacts) {
			f.Files = []config.ConfigFile{tarball, {Path: "/h/.config/opencode/opencode.json", Error: "permission denied"}}
		},
		"the plugin's options in error": func(f *DoctorFacts) {
			f.Files = []config.ConfigFile{{Path: "/p/opencode.json", Text: `{"plugin": [["asyncagents", {"maxResultChar": 1}]]}`}}
		},
		"a plugin that started with a config error": func(f *DoctorFacts) {
			f.Health = map[string]string{"http://127.0.0.1:5107": `{"status":"degraded","configError":"bad"}`}
		},
		"a plugin that cannot write its history": func(f *DoctorFacts) {
			f.Health = map[string]string{"http://127.0.0.1:5107": `{"status":"degraded","reason":"the task history cannot be written"}`}
		},
	} {
		facts := fine
		f(&facts)
		_, trouble := DoctorReport(facts)
		require.True(t, trouble, name)
	}
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

// The config a user sees in error is the one the running plugin holds: the options given with the
// plugin's entry in opencode.json are checked as the plugin checks them at its start, and a
// plugin that started with a config error (its /v1/health says so) is named, with the fix.
func TestDoctorNamesConfigErrorsWhereverTheyAre(t *testing.T) {
	server := config.ConfigFile{Path: "/d/servers-1/7.json", Text: `{"port":5107,"pid":7,"url":"http://127.0.0.1:5107","token":"t"}`}
	facts := DoctorFacts{Project: "/p", OpenCodeVersion: "1.18.33",
		Files:       []config.ConfigFile{{Path: "/p/opencode.json", Text: `{"plugin": [["asyncagents@file:/x.tgz", {"maxResultChar": 20000}], ["other", {"maxResultChar": 1}]]}`}},
		ServerFiles: []config.ConfigFile{server}, Procs: []ProcInfo{{PID: 7, Running: true}},
		Health: map[string]string{"http://127.0.0.1:5107": `{"status":"degraded","configError":"opencode.json (the asyncagents plugin's options): maxResultChar: unknown field"}`},
	}
	r, trouble := DoctorReport(facts)
	require.True(t, trouble)
	require.Contains(t, r, "/p/opencode.json: plugin \"asyncagents@file:/x.tgz\"\n  asyncagents: opencode.json (the asyncagents plugin's options): maxResultChar: unknown field (did you mean maxResultChars?)\n")
	require.Equal(t, 1, strings.Count(r, "did you mean"), "another plugin's options are its own")
	require.Contains(t, r, "answers\n  it started with a config error, and every launch fails: opencode.json (the asyncagents plugin's options): maxResultChar: unknown field\n  mend it, then restart OpenCode")

	// A read-only serve's config error launches nothing either way: said, not taken for trouble.
	serve := facts
	serve.ServerFiles = []config.ConfigFile{{Path: "/d/servers-1/7.json", Text: `{"port":5107,"pid":7,"url":"http://127.0.0.1:5107","token":"t","readOnly":true}`}}
	r, _ = DoctorReport(serve)
	require.Contains(t, r, "answers\n  it started with a config error: opencode.json")
	require.NotContains(t, r, "every launch fails")

	facts.Files[0].Text = `{"plugin": [["asyncagents@file:/x.tgz", {"maxResultChars": 20000}]]}`
	// The TUI module's options are its own: tui.json's entry is not checked as the server's.
	facts.Files = append(facts.Files, config.ConfigFile{Path: "/p/.opencode/tui.json", Text: `{"plugin": [["asyncagents@file:/x.tgz", {"rows": 3}]]}`})
	facts.Health = map[string]string{"http://127.0.0.1:5107": `{"status":"ok"}`}
	r, trouble = DoctorReport(facts)
	require.False(t, trouble, r)
	require.NotContains(t, r, "config error")
}

func TestDoctorKnowsItsOwnEntries(t *testing.T) {
	for spec, ours := range map[string]bool{
		"asyncagents":       true,
		"asyncagents@0.1.0": true,
		"asyncagents@file:/x/asyncagents-0.1.0.tgz":       true,
		"file:/x/asyncagents-0.1.0.tgz":                   true,
		"file:///src/asyncagents/dist/asyncagents.js":     true,
		"file:///src/asyncagents/dist/asyncagents-tui.js": true,
		"opencode-asyncagents-notify":                     false,
		"opencode-asyncagents-notify@1.0.0":               false,
		"file:///src/asyncagents/dist/other.js":           false,
		"@someone/asyncagents":                            false,
	} {
		require.Equal(t, ours, isOurs(spec), spec)
	}
	// Another plugin's options, whatever its name holds, are its own.
	facts := DoctorFacts{Project: "/p", OpenCodeVersion: "1.18.33", Files: []config.ConfigFile{
		{Path: "/p/opencode.json", Text: `{"plugin": ["asyncagents", ["opencode-asyncagents-notify", {"sound": true}]]}`}}}
	r, _ := DoctorReport(facts)
	require.NotContains(t, r, "sound", r)
	require.Contains(t, r, `/p/opencode.json: plugin "asyncagents"`+"\n")
}
