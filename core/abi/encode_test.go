package abi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// Response's own encoding writes what encoding/json writes for the struct: the same bytes, for
// every field set alone, all of them together, and each kind of empty value omitempty skips.
func TestResponseEncodesAsTheStruct(t *testing.T) {
	type structOnly Response // the same fields, without MarshalJSON
	m := core.NewMachine(config.Config{})
	cfg := m.Config()
	tasks := someTasks(3)
	tasks[1].Error = &task.TaskError{Name: "APIError", Message: "<b>&</b>"}
	one := tasks[2]
	all := Response{OK: true, Error: "bad <input> & more", Effects: []core.Effect{{Kind: core.EffectLog, Level: "info", Message: "x"}, {Kind: core.EffectTimerSet, TimerID: "t", DelayMs: 5}},
		ABI: ABIVersion, Version: core.Version, Tools: core.Tools(), Subscribe: core.SubscribedEvents(), Config: &cfg, ConfigError: "asyncagents.json: bad",
		Recovery: &core.Recovery{Message: "restarted <x>", Traps: []core.Trap{{At: 1, Error: "wasm error: unreachable"}}},
		Tasks:    tasks, Task: &one, Restore: &core.RestoreResult{Restored: 2, Corrupt: 1, Problems: []string{"line 3: torn"}, Indexed: 1},
		Storage: &core.Storage{Dir: "/d", History: "/d/h.log", HistoryIndex: "/d/h.idx", ServerDir: "/d/servers-1", ServerJSON: "/d/servers-1/7.json", APIPorts: []int{5165}}, Table: "ID  STATUS\n",
		Histories: &core.HistoryPlan{Adopt: []core.HistoryAdopt{{From: "history-k.log", To: "history-k.7.log", Merge: true}}, Follow: []string{"history-k.8.log"}},
		HTTP:      &httpapi.Response{Status: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"a":1}`}, ServerFile: "{\n  \"port\": 5165\n}\n",
		State: "{\n  \"version\": 1\n}\n", Follow: &core.FollowRead{Read: true, From: 7, Replace: true, First: true},
		Paths: []string{"/p/opencode.json"}, Report: "asyncagents doctor: <p>\n", Servers: []core.ServerFile{{Port: 5165, PID: 7, URL: "http://127.0.0.1:5165"}},
		Trouble: true, CLI: &core.CLIArgs{Command: "serve", Project: "/p <x>", Port: "5165", Print: true}, UsageError: "asyncagents ls: \"x\" is not a flag",
		Link: &core.DashboardLink{URL: "http://127.0.0.1:5165/?code=a", Opening: "opening <x>", Plain: "<x>"}}
	// Every field is set in all, so a field added to Response and not to MarshalJSON fails here.
	v := reflect.ValueOf(all)
	for i := range v.NumField() {
		require.False(t, v.Field(i).IsZero(), "set %s in this test's all", v.Type().Field(i).Name)
	}
	cases := map[string]Response{
		"nothing":                 {},
		"ok alone":                {OK: true},
		"empty slices":            {OK: true, Effects: []core.Effect{}, Tools: []core.ToolSpec{}, Subscribe: []string{}, Tasks: []task.Task{}},
		"empty restore":           {OK: true, Restore: &core.RestoreResult{}},
		"everything":              all,
		"error":                   {Error: all.Error},
		"effects":                 {OK: true, Effects: all.Effects},
		"version":                 {OK: true, ABI: all.ABI, Version: all.Version},
		"init":                    {OK: true, ABI: all.ABI, Version: all.Version, Tools: all.Tools, Subscribe: all.Subscribe, Config: all.Config, ConfigError: all.ConfigError},
		"init after a trap":       {OK: true, ABI: all.ABI, Version: all.Version, Recovery: all.Recovery},
		"tasks":                   {OK: true, Tasks: all.Tasks},
		"task":                    {OK: true, Task: all.Task},
		"restore":                 {OK: true, Restore: all.Restore, Effects: all.Effects},
		"storage":                 {OK: true, Storage: all.Storage},
		"table":                   {OK: true, Table: all.Table},
		"state.merge":             {OK: true, State: all.State},
		"follow.look":             {OK: true, Follow: all.Follow, Restore: &core.RestoreResult{}},
		"http":                    {OK: true, HTTP: all.HTTP},
		"doctor":                  {OK: true, Report: all.Report, Trouble: true},
		"cli.args":                {OK: true, CLI: all.CLI},
		"cli.args refused":        {OK: true, UsageError: all.UsageError},
		"servers":                 {OK: true, Servers: all.Servers},
		"http with an empty body": {OK: true, HTTP: &httpapi.Response{Status: 204}},
	}
	for name, r := range cases {
		want, err := json.Marshal(structOnly(r))
		require.NoError(t, err, name)
		got, err := r.MarshalJSON()
		require.NoError(t, err, name)
		require.Equal(t, string(want), string(got), name)
		viaMarshal, err := json.Marshal(r)
		require.NoError(t, err, name)
		require.Equal(t, string(want), string(viaMarshal), name)
		require.Equal(t, string(want), string(encode(r)), name)
	}
}
