package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/internal/fixture"
	"github.com/asyncagents/asyncagents/internal/wasmbuild"
)

// TestMain removes the module wasmbuild built for the tests when they end.
func TestMain(m *testing.M) {
	os.Exit(wasmbuild.Main(m))
}

// The CLI reads the history the plugin wrote (here written by the core itself, as the plugin does)
// and prints it, through the same .wasm, without OpenCode.
func TestLsReadsThePluginsHistory(t *testing.T) {
	wasm, home, project := cliSetup(t)

	m := core.NewMachine(config.Config{})
	var log strings.Builder
	collect := func(effects []core.Effect) []core.Effect {
		for _, e := range effects {
			if e.Kind == core.EffectHistoryAppend {
				log.WriteString(e.Line)
			}
		}
		return effects
	}
	eff := collect(m.Step(1_700_000_000_000, core.Event{Type: core.EventToolCall, CallID: "c", Tool: core.ToolTask, SessionID: "ses_p", MessageID: "m",
		Args: json.RawMessage(`{"description":"Survey auth","prompt":"p","agent":"general"}`)}))
	eff = collect(m.Step(1_700_000_000_001, core.Event{Type: core.EventEffectDone, EffectID: eff[0].ID, OK: true, Result: json.RawMessage(`[{"name":"general","mode":"subagent"}]`)}))
	var create core.Effect
	for _, e := range eff {
		if e.Kind == core.EffectSessionCreate {
			create = e
		}
	}
	collect(m.Step(1_700_000_000_002, core.Event{Type: core.EventEffectDone, EffectID: create.ID, OK: true, Result: json.RawMessage(`{"id":"ses_abc"}`)}))
	st := core.StoragePaths("", home, project)
	require.NoError(t, os.MkdirAll(filepath.Dir(st.History), 0o700))
	require.NoError(t, os.WriteFile(st.History, []byte(log.String()+"00000000 torn"), 0o600))

	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"ls", "--dir", project, "--wasm", wasm}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "TASK ID")
	require.Contains(t, out.String(), "SESSION")
	require.Regexp(t, `bg_[0-9a-f]{22} +ses_abc +running`, out.String())
	require.Contains(t, out.String(), "Survey auth")
	require.Contains(t, out.String(), "running")
	require.Contains(t, out.String(), "(1 corrupt history lines skipped)")

	out.Reset()
	require.Equal(t, 0, run([]string{"ls", "--dir", filepath.Join(home, "elsewhere"), "--wasm", wasm}, &out, &errb))
	require.Equal(t, "No background tasks found\n", out.String())

	require.Equal(t, 2, run([]string{"frobnicate"}, &out, &errb))
	require.Contains(t, errb.String(), `unknown command "frobnicate"`)
}

// ls reads the index the plugin leaves beside a long history (serve does the same): the table is
// the one the history alone gives, and a stale index changes nothing.
func TestLsPrintsTheSameWithTheIndex(t *testing.T) {
	wasm, home, project := cliSetup(t)
	st := core.StoragePaths("", home, project)
	require.NoError(t, os.MkdirAll(filepath.Dir(st.History), 0o700))
	history := fixture.History(300)
	require.NoError(t, os.WriteFile(st.History, []byte(history), 0o600))
	ls := func() string {
		var out, errb bytes.Buffer
		require.Equal(t, 0, run([]string{"ls", "--dir", project, "--wasm", wasm}, &out, &errb), errb.String())
		return out.String()
	}
	alone := ls()
	require.Equal(t, 300+1, strings.Count(alone, "\n"), "a header and 300 tasks")
	index := fixture.HistoryIndex(history)
	require.NotEmpty(t, index)
	require.NoError(t, os.WriteFile(st.HistoryIndex, []byte(index), 0o600))
	require.Equal(t, alone, ls())
	require.NoError(t, os.WriteFile(st.HistoryIndex, []byte(fixture.HistoryIndex(fixture.History(280)+fixture.History(1))), 0o600))
	require.Equal(t, alone, ls())
}

// cliSetup builds the module and gives the CLI a home of its own (HOME, no XDG_DATA_HOME) with a
// project in it, so that its storage paths are the test's.
func cliSetup(t *testing.T) (wasm, home, project string) {
	t.Helper()
	wasm = wasmbuild.Build(t)
	home = t.TempDir()
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", home)
	return wasm, home, filepath.Join(home, "project")
}

// The command line is the core's to read (core/cli_args.go): each command's --help, the version,
// and a bad argument named for what it is, with the command's usage and exit 2.
func TestTheCommandLineIsReadByTheCore(t *testing.T) {
	cases := []struct {
		args        []string
		code        int
		out, errOut string
	}{
		{[]string{"ls", "--help"}, 0, "usage: asyncagents ls [flags]", ""},
		{[]string{"help", "workers"}, 0, "--json", ""},
		{[]string{"--version"}, 0, "asyncagents " + core.Version, ""},
		{[]string{"ls", "extra"}, 2, "", `asyncagents ls: "extra" is not a flag: ls takes no arguments`},
		{[]string{"doctor", "--frob"}, 2, "", "asyncagents doctor: unknown flag --frob\nusage: asyncagents doctor"},
		{[]string{"serve", "--port"}, 2, "", "asyncagents serve: --port needs a value (N)"},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		require.Equal(t, tc.code, run(tc.args, &out, &errb), "%v", tc.args)
		if tc.out != "" {
			require.Contains(t, out.String(), tc.out, "%v", tc.args)
		}
		if tc.errOut != "" {
			require.Contains(t, errb.String(), tc.errOut, "%v", tc.args)
			require.Empty(t, out.String())
		}
	}
}
