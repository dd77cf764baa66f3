package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// polledEveryMs is the polled parent's pollMs: a second, so a remote notice waits half of one
// on average; ASYNCAGENTS_BENCH_POLL_MS sets it otherwise.
var polledEveryMs = func() int {
	if n, err := strconv.Atoi(os.Getenv("ASYNCAGENTS_BENCH_POLL_MS")); err == nil && n > 0 {
		return n
	}
	return 1000
}()

// polledParent is a parent of ours of its own, on the fleet's workers, polling them.
type polledParent struct {
	fleetServed
}

// startPolledParent starts a second parent OpenCode with the plugin, in a project of its own,
// whose config names the fleet's workers as the fleet's parent does (10 tasks each), but polled
// every polledEveryMs instead of followed.
func startPolledParent(b *testing.B, model *mockmodel.Server, fl *ocserve.Fleet) polledParent {
	port := freePort(b)
	opt := ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN", Plugins: []string{ocserve.PluginSpec(b)},
		Env: []string{"ASYNCAGENTS_API_PORT=" + strconv.Itoa(port), "ASYNCAGENTS_API_AUTH=none"}}
	entries := map[string]any{}
	var workers []*ocserve.Server
	for _, name := range fl.Names {
		w := fl.Workers[name]
		entries[name] = map[string]any{"url": w.URL, "passwordEnv": ocserve.PasswordEnv(name), "directory": w.Dir, "maxTasks": 10, "pollMs": polledEveryMs}
		opt.Env = append(opt.Env, ocserve.PasswordEnv(name)+"="+w.Password())
		workers = append(workers, w)
	}
	project := ocserve.Prepare(b, opt)
	raw, _ := json.Marshal(map[string]any{"workers": entries, "maxConcurrentStarts": 20})
	dir := filepath.Join(project.Dir, ".opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "asyncagents.json"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	srv := ocserve.Launch(b, project, opt)
	return polledParent{fleetServed{served{srv}, statusAPI{fmt.Sprintf("http://127.0.0.1:%d", port)}, workers}}
}
