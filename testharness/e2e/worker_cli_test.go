package e2e

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// `asyncagents workers`, both the Go CLI and the npm one, against a running parent with two real
// workers, one of them killed: each worker's URL, load, OpenCode's version for the one up, and
// for the one down since when and why; never a password.
func TestWorkerCLIListsTheFleet(t *testing.T) {
	f := startFleet(t, func(mockmodel.Request) mockmodel.Reply { return mockmodel.Reply{Text: "ok"} }, fleetOptions{
		workers: 2, worker: map[string]any{"maxTasks": 3}})
	f.waitWorkersUp()
	// The version comes from the health request each stream's connect sends: w2 is killed once it
	// has answered, so the listing can show the version it keeps for a worker that went down.
	f.eventually("both versions in /v1/workers", 60*time.Second, func() bool {
		v, _ := f.workerViews()
		return v["w1"].Version != "" && v["w2"].Version != ""
	})
	f.workers["w2"].Kill()
	f.eventually("w2 down in /v1/workers", 60*time.Second, func() bool { v, _ := f.workerViews(); return v["w2"].State == "down" })

	root := ocserve.RepoRoot(t)
	dist := filepath.Join(root, "dist")
	for name, argv := range map[string][]string{
		"go":  {filepath.Join(dist, "asyncagents"), "workers", "--project", f.oc.Dir, "--wasm", filepath.Join(dist, "asyncagents.wasm")},
		"npm": {filepath.Join(root, "node_modules", ".bin", "bun"), filepath.Join(dist, "asyncagents-cli.js"), "workers", "--project", f.oc.Dir},
	} {
		out := runBounded(t, argv, append(f.oc.Env(), "PATH=/usr/bin:/bin"))
		t.Logf("%s CLI:\n%s", name, out)
		w1, w2 := regexp.QuoteMeta(f.workers["w1"].URL), regexp.QuoteMeta(f.workers["w2"].URL)
		require.Regexp(t, `(?m)^NAME +URL +RUNNING +QUEUED +VERSION +HEALTH$`, out, name)
		require.Regexp(t, `(?m)^w1 +`+w1+` +0/3 +0 +1\.18\.33 +up for \S+`, out, name)
		require.Regexp(t, `(?m)^w2 +`+w2+` +0/3 +0 +1\.18\.33 +down for \S+: \S+`, out, name)
		for _, w := range f.workers {
			require.NotContains(t, string(out), w.Password(), name)
		}
	}
}
