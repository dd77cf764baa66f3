package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// doctor names the files it read and, with no server running for the project and no tui.json
// naming the plugin, what is missing and the fix; a broken config file is named with its error;
// and it exits 1, for a script that checks.
func TestDoctorNamesWhatItFoundAndWhatIsMissing(t *testing.T) {
	wasm, _, project := cliSetup(t)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("PATH", t.TempDir()) // no opencode
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".opencode"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, "opencode.json"), []byte(`{"plugin": ["asyncagents@file:/x/asyncagents-0.1.0.tgz"]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".opencode", "asyncagents.json"), []byte(`{"maxDepth": "deep"}`), 0o644))

	var out, errb bytes.Buffer
	require.Equal(t, 1, run([]string{"doctor", "--project", project, "--wasm", wasm}, &out, &errb), "something stops the plugin here")
	require.Empty(t, errb.String(), "the report says what")
	got := out.String()
	require.Contains(t, got, "asyncagents doctor: project "+project+"\n")
	require.Contains(t, got, "OpenCode: not found (no opencode on the PATH)")
	require.Contains(t, got, "plugin server: none running for this project")
	require.Contains(t, got, filepath.Join(project, "opencode.json")+`: plugin "asyncagents@file:/x/asyncagents-0.1.0.tgz"`)
	require.Contains(t, got, "tui.json: no file names asyncagents")
	require.Contains(t, got, "config error: asyncagents: "+filepath.Join(project, ".opencode", "asyncagents.json"))
}
