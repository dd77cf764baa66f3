package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/task"
)

// ls runs on the config files the plugin reads: the project's history.maxTasks keeps only the
// newest finished task of three, as OpenCode's own restart would.
func TestLsReadsTheConfigFiles(t *testing.T) {
	wasm, home, project := cliSetup(t)
	t.Setenv("XDG_CONFIG_HOME", "")
	st := core.StoragePaths("", home, project)
	require.NoError(t, os.MkdirAll(filepath.Dir(st.History), 0o700))
	var log strings.Builder
	now := time.Now().UnixMilli() - 60_000
	for i := 1; i <= 3; i++ {
		log.WriteString(core.HistoryLine(task.Task{ID: fmt.Sprintf("ses_t%d", i), SessionID: fmt.Sprintf("ses_t%d", i), ParentSessionID: "ses_p",
			Description: fmt.Sprintf("Job number %d", i), Agent: "general", Status: task.StatusCompleted, StartedAt: now + int64(i), CompletedAt: now + int64(i) + 1}))
	}
	require.NoError(t, os.WriteFile(st.History, []byte(log.String()), 0o600))

	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"ls", "--project", project, "--wasm", wasm}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "Job number 1", "no config: all three")

	require.NoError(t, os.MkdirAll(filepath.Join(project, ".opencode"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".opencode", "asyncagents.json"), []byte(`{"history": {"maxTasks": 1, "maxAgeDays": 100000}}`), 0o600))
	out.Reset()
	require.Equal(t, 0, run([]string{"ls", "--project", project, "--wasm", wasm}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "Job number 3")
	require.NotContains(t, out.String(), "Job number 1")
	require.NotContains(t, out.String(), "Job number 2")
	after, err := os.ReadFile(st.History)
	require.NoError(t, err)
	require.Equal(t, log.String(), string(after), "ls only reads the history")
}
