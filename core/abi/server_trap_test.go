package abi

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
)

// init carries the decision: a host that passes the traps it saw gets the recovery back.
func TestInitAnswersTheRecovery(t *testing.T) {
	rt := NewRuntime()
	out, err := DecodeResponse(rt.Call([]byte(`{"op":"init","traps":[{"at":5,"error":"boom"}]}`)))
	require.NoError(t, err)
	require.True(t, out.OK)
	require.NotNil(t, out.Recovery)
	require.Contains(t, out.Recovery.Message, "(boom)")
	plain, err := DecodeResponse(rt.Call([]byte(`{"op":"init"}`)))
	require.NoError(t, err)
	require.Nil(t, plain.Recovery)
}

// Each process of a project has its own server file, in the project's folder; a path with a
// trailing slash or a ".." that cleans to the same path is the same project.
func TestStorageServerFilesPerProjectAndProcess(t *testing.T) {
	rt := NewRuntime()
	st := func(dir string, pid int) core.Storage {
		r, err := DecodeResponse(rt.Call([]byte(`{"op":"storage","env":{"home":"/h","directory":"` + dir + `","pid":` + strconv.Itoa(pid) + `}}`)))
		require.NoError(t, err)
		require.True(t, r.OK, r.Error)
		return *r.Storage
	}
	a1, a2, b := st("/p/a", 100), st("/p/a", 200), st("/p/b", 100)
	require.Equal(t, a1.ServerDir, a2.ServerDir)
	require.NotEqual(t, a1.ServerJSON, a2.ServerJSON)
	require.Equal(t, a1.ServerDir+"/100.json", a1.ServerJSON)
	require.NotEqual(t, a1.ServerDir, b.ServerDir)
	require.Equal(t, a1.History, st("/p/x/../a/", 100).History)
	require.NotEqual(t, a1.History, a2.History, "a log of its own per process")
	require.Equal(t, "/h/.local/share/opencode/asyncagents", a1.Dir)
	require.Equal(t, a1.Dir, a1.ServerDir[:len(a1.Dir)], "next to the history")
	require.Empty(t, core.StoragePaths("", "/h", "/p/a").ServerJSON, "no pid, no file of its own")
}

// The server.file op formats the file; the host's /proc/self/stat line gives its start time.
func TestServerFileOpReadsTheStartFromProcStat(t *testing.T) {
	rt := NewRuntime()
	r, err := DecodeResponse(rt.Call([]byte(`{"op":"server.file","server":{"port":5165,"pid":9,"url":"u","token":"t"},"procStat":"9 (bun) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0"}`)))
	require.NoError(t, err)
	require.True(t, r.OK, r.Error)
	f, err := core.ParseServerFile([]byte(r.ServerFile))
	require.NoError(t, err)
	require.Equal(t, core.ServerFile{Port: 5165, PID: 9, ProcStart: "555", URL: "u", Token: "t", Auth: "token"}, f)
}

// A core started read-only (asyncagents serve) marks its server file so, whatever the host
// passed: the npm CLI's serve once did not, and commands took it for the plugin's.
func TestAReadOnlyCoresServerFileSaysSo(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		rt := NewRuntime()
		init := fmt.Sprintf(`{"op":"init","config":{"api":{"readOnly":%v}}}`, readOnly)
		r, err := DecodeResponse(rt.Call([]byte(init)))
		require.NoError(t, err)
		require.True(t, r.OK, r.Error)
		r, err = DecodeResponse(rt.Call([]byte(`{"op":"server.file","server":{"port":5165,"pid":9,"url":"u","token":"t"}}`)))
		require.NoError(t, err)
		f, err := core.ParseServerFile([]byte(r.ServerFile))
		require.NoError(t, err)
		require.Equal(t, readOnly, f.ReadOnly)
	}
}

// The host passes $ASYNCAGENTS_API_AUTH as it is; the file says what it means, as the API does.
func TestServerFileOpSaysWhatTheAuthMeans(t *testing.T) {
	rt := NewRuntime()
	for given, want := range map[string]string{"": "token", "token": "token", " NONE ": "none", "none": "none", "bogus": "token"} {
		r, err := DecodeResponse(rt.Call([]byte(`{"op":"server.file","server":{"port":5165,"pid":9,"token":"t","auth":"` + given + `"}}`)))
		require.NoError(t, err)
		f, err := core.ParseServerFile([]byte(r.ServerFile))
		require.NoError(t, err)
		require.Equal(t, want, f.Auth, "auth %q", given)
		require.Equal(t, want == "token", f.NeedsCode(), "auth %q", given)
	}
}

// The histories op names the logs as the storage op does: with the host's pid and its
// /proc/self/stat line, a process's own log; it asks about the other writers first, then plans.
func TestHistoriesOpPlansFromTheStorageNames(t *testing.T) {
	rt := NewRuntime()
	stat := `"procStat":"9 (bun) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0"`
	env := `"env":{"home":"/h","directory":"/p/a","pid":9}`
	r, err := DecodeResponse(rt.Call([]byte(`{"op":"storage",` + env + `,` + stat + `}`)))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(r.Storage.History, ".9-555.log"), r.Storage.History)
	require.Equal(t, "9-555", r.Storage.HistoryOwner)
	key := r.Storage.HistoryKey
	files := `"files":["history-` + key + `.log","history-` + key + `.7-70.log","history-` + key + `.9-555.log","model-health.json"]`
	r, err = DecodeResponse(rt.Call([]byte(`{"op":"histories",` + env + `,` + stat + `,` + files + `,"adopt":true}`)))
	require.NoError(t, err)
	require.Equal(t, []int{7}, r.Histories.Check)
	r, err = DecodeResponse(rt.Call([]byte(`{"op":"histories",` + env + `,` + stat + `,` + files + `,"adopt":true,"procs":[{"pid":7,"running":true,"stat":"7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 70 0"}]}`)))
	require.NoError(t, err)
	require.Equal(t, []string{"history-" + key + ".7-70.log"}, r.Histories.Follow)
	require.Equal(t, []core.HistoryAdopt{{From: "history-" + key + ".log", To: "history-" + key + ".9-555.1.log", Merge: true}}, r.Histories.Adopt)
}
