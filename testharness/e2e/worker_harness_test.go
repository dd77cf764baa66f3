package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// fleet is a parent OpenCode with the plugin and its workers (ocserve.StartFleet): each worker a
// plain `opencode serve` (no plugin) on its own home and its own git clone of the parent's
// project, with its own password, all on the one mock model.
type fleet struct {
	*env
	workers map[string]*ocserve.Server // by name: w1, w2, ...
	names   []string
	opt     ocserve.Options // the parent's, for a restart
}

type fleetOptions struct {
	workers int
	config  map[string]any // asyncagents.json keys besides workers
	worker  map[string]any // keys every worker entry gets (maxTasks, lostAfterMs, ...)
	// workerConfig is merged over every worker's opencode.json.
	workerConfig map[string]any
	// password is what the parent's environment holds for a worker; its real one when nil.
	password func(name, real string) string
	// plugin is the parent's plugin spec; the plugin as built when empty.
	plugin string
	// directory is the path the parent's config gives for a worker's clone; its own when nil.
	directory func(name string, w *ocserve.Server) string
	// workerEnv is extra environment for a worker's OpenCode, by name.
	workerEnv map[string][]string
}

// startFleet starts a fleet on the isolation project's files (committed) and the script.
func startFleet(t *testing.T, script mockmodel.Script, fo fleetOptions) *fleet {
	t.Helper()
	model := mockmodel.Start(t, script)
	if fo.plugin == "" {
		fo.plugin = ocserve.PluginSpec(t)
	}
	fl := ocserve.StartFleet(t, ocserve.FleetOptions{
		Parent:  ocserve.Options{ModelURL: model.URL(), Plugins: []string{fo.plugin}, Files: isolatedFiles},
		Workers: fo.workers, Config: fo.config, Worker: fo.worker, Password: fo.password, WorkerConfig: fo.workerConfig,
		Directory: fo.directory, WorkerEnv: fo.workerEnv})
	return &fleet{env: &env{t: t, model: model, oc: fl.Parent}, workers: fl.Workers, names: fl.Names, opt: fl.Options}
}

// restartParent ends the parent (kill -9 when kill, else SIGTERM) and starts it again on the
// same home and project, as the crash and restart tests do; the workers keep running.
func (f *fleet) restartParent(kill bool) {
	f.t.Helper()
	if kill {
		f.oc.Kill()
	}
	f.oc = ocserve.Restart(f.t, f.oc, f.opt)
}

// api is the parent plugin's status API, from the server file of the running parent (one killed
// leaves its own behind), read once it is there.
func (f *fleet) api() serverJSON {
	f.t.Helper()
	var sj serverJSON
	f.eventually("the plugin's server.json", 60*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(storageOf(f.oc).ServerDir, strconv.Itoa(f.oc.PID())+".json"))
		return err == nil && json.Unmarshal(b, &sj) == nil && sj.Port != 0
	})
	return sj
}

// workerView is one entry of GET /v1/workers.
type workerView = core.WorkerInfo

// workerViews reads GET /v1/workers from the parent's status API, with its raw body.
func (f *fleet) workerViews() (map[string]workerView, string) {
	sj := f.api()
	code, body := apiGet(f.t, sj.URL+"/v1/workers", sj.Token, "")
	var v struct {
		Workers []workerView `json:"workers"`
	}
	out := map[string]workerView{}
	if code == 200 && json.Unmarshal([]byte(body), &v) == nil {
		for _, w := range v.Workers {
			out[w.Name] = w
		}
	}
	return out, body
}

// waitWorkersUp loads the plugin (its first request) and waits until the parent follows every
// worker's event stream, so placement sees them all.
func (f *fleet) waitWorkersUp() {
	f.t.Helper()
	_, err := f.oc.CreateSession(f.ctx(30*time.Second), "warm-up")
	require.NoError(f.t, err)
	f.eventually("every worker up in /v1/workers", 60*time.Second, func() bool {
		views, _ := f.workerViews()
		for _, n := range f.names {
			if views[n].State != "up" {
				return false
			}
		}
		return true
	})
}

// placeOf is where a task's child session lives: "local" or the worker's name ("" while unknown).
func (f *fleet) placeOf(id string) string {
	f.t.Helper()
	task, _ := findStoredTask(f.oc, id)
	if task.SessionID == "" {
		return ""
	}
	if _, err := f.oc.Session(f.ctx(15*time.Second), task.SessionID); err == nil {
		return "local"
	}
	for _, n := range f.names {
		if _, err := f.workers[n].Session(f.ctx(15*time.Second), task.SessionID); err == nil {
			return n
		}
	}
	return ""
}

// leaks lists every place a secret shows in: the files of the parent's home and project (the
// history, OpenCode's logs and storage), its captured server log, its status API (tasks,
// workers and the dashboard's task view) and the parent session's messages.
func (f *fleet) leaks(parent, secret string) []string {
	f.t.Helper()
	var found []string
	for _, root := range []string{f.oc.Home, f.oc.Dir} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
				found = append(found, p)
			}
			return nil
		})
	}
	if strings.Contains(f.oc.Logs(), secret) {
		found = append(found, "the parent's server log")
	}
	sj := f.api()
	for _, route := range []string{"/v1/tasks", "/v1/workers", "/v1/views/tasks"} {
		if _, body := apiGet(f.t, sj.URL+route, sj.Token, ""); strings.Contains(body, secret) {
			found = append(found, route)
		}
	}
	for _, m := range f.messages(parent) {
		for _, p := range m.Parts {
			if strings.Contains(string(p.Raw), secret) {
				found = append(found, "the parent's messages")
			}
		}
	}
	return found
}
