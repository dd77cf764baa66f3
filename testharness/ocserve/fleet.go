package ocserve

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
)

// FleetOptions describe a parent OpenCode with the plugin and its workers (issue 36).
type FleetOptions struct {
	Parent  Options        // the parent's options: ModelURL, Plugins, Files, Env
	Workers int            // how many workers: w1, w2, ...
	Config  map[string]any // the parent's asyncagents.json keys besides workers
	Worker  map[string]any // keys every worker's entry gets (maxTasks, lostAfterMs, ...)
	// WorkerConfig is merged over every worker's own opencode.json (its agents' permissions, ...).
	WorkerConfig map[string]any
	// Password is what the parent's environment holds for a worker; its real one when nil.
	Password func(name, real string) string
	// Directory is the path the parent's config gives for a worker's clone; w.Dir when nil.
	Directory func(name string, w *Server) string
	// WorkerEnv is extra environment for a worker's OpenCode, by name.
	WorkerEnv map[string][]string
}

// Fleet is a running parent and its workers.
type Fleet struct {
	Parent  *Server
	Workers map[string]*Server // by name
	Names   []string           // w1, w2, ... in order
	Options Options            // the parent's, with the passwords in Env: for a Restart
}

// PasswordEnv names the variable the parent reads worker name's password from.
func PasswordEnv(name string) string { return strings.ToUpper(name) + "_PASSWORD" }

// StartFleet prepares the parent's project, starts the workers on clones of it (each a plain
// OpenCode with its own home and password, StartWorker), writes the parent's
// .opencode/asyncagents.json with `workers` pointing at them (url, passwordEnv, directory), and
// starts the parent with the passwords in its environment, and only there.
func StartFleet(t testing.TB, fo FleetOptions) *Fleet {
	t.Helper()
	opt := fo.Parent
	project := Prepare(t, opt)
	f := &Fleet{Workers: map[string]*Server{}}
	entries := map[string]any{}
	for i := 1; i <= fo.Workers; i++ {
		name := fmt.Sprintf("w%d", i)
		w := StartWorker(t, WorkerOptions{ModelURL: opt.ModelURL, CloneOf: project.Dir, LogLevel: opt.LogLevel, Config: fo.WorkerConfig, Env: fo.WorkerEnv[name]})
		f.Workers[name], f.Names = w, append(f.Names, name)
		dir := w.Dir
		if fo.Directory != nil {
			dir = fo.Directory(name, w)
		}
		entry := map[string]any{"url": w.URL, "passwordEnv": PasswordEnv(name), "directory": dir}
		maps.Copy(entry, fo.Worker)
		entries[name] = entry
		pw := w.Password()
		if fo.Password != nil {
			pw = fo.Password(name, pw)
		}
		opt.Env = append(append([]string(nil), opt.Env...), PasswordEnv(name)+"="+pw)
	}
	cfg := map[string]any{"workers": entries}
	maps.Copy(cfg, fo.Config)
	if err := writeJSON(filepath.Join(project.Dir, ".opencode", "asyncagents.json"), cfg); err != nil {
		t.Fatalf("ocserve: asyncagents.json: %v", err)
	}
	f.Options = opt
	f.Parent = Launch(t, project, opt)
	return f
}
