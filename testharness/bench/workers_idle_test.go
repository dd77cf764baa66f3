package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// idleRounds is how many fan-outs BenchmarkWorkerIdleParent measures after its warm-up.
const idleRounds = 3

// workersIdleReport is BenchmarkWorkerIdleParent's field of dist/bench.json: the CPU seconds of
// two idle parents with our plugin while another parent's fan-out (the remote floor's: 20
// children on the two workers) runs, one whose workers rest (restAfterMs 1 s) and one that keeps
// following them (restAfterMs an hour), per round and as medians, and their ratio.
type workersIdleReport struct {
	RestingCPU    []float64 `json:"resting_cpu_s"`
	FollowingCPU  []float64 `json:"following_cpu_s"`
	RestingP50    float64   `json:"resting_cpu_p50_s"`
	FollowingP50  float64   `json:"following_cpu_p50_s"`
	RestingOverFo float64   `json:"resting_over_following"`
	FanOutWallS   []float64 `json:"fan_out_wall_s"`
}

// BenchmarkWorkerIdleParent: what a parent with no task on a worker pays while other sessions
// stream there (a second parent's fan-out, here the remote floor's, which follows nothing itself).
// Two parents with our plugin stay idle on the same two workers: in one the workers rest
// (core/workers_rest.go), in the other they never do, which is how every parent followed them
// before resting. Both are measured over the same fan-outs.
func BenchmarkWorkerIdleParent(b *testing.B) {
	root := ocserve.RepoRoot(b)
	for i := 0; i < b.N; i++ {
		model := mockmodel.Start(b, workersScript)
		fl, floor := startFloorFleet(b, root, model)
		resting, restingAPI := startIdleParent(b, model, fl, map[string]any{"restAfterMs": 1000})
		following, followingAPI := startIdleParent(b, model, fl, map[string]any{"restAfterMs": 3_600_000})
		// Never used, the resting parent's workers rest at its first heartbeat (30 s) past 1 s.
		waitWorkerStates(b, restingAPI, core.WorkerResting, 90*time.Second)
		waitWorkerStates(b, followingAPI, core.WorkerUp, 30*time.Second)
		oc := fleetServed{served{fl.Parent}, statusAPI{restingAPI}, []*ocserve.Server{fl.Workers["w1"], fl.Workers["w2"]}}
		var rep workersIdleReport
		cpu, wall := cpuDuringFanOuts(b, floor, oc, "idle", map[string]int{"resting": resting.PID(), "following": following.PID()})
		rep.RestingCPU, rep.FollowingCPU, rep.FanOutWallS = cpu["resting"], cpu["following"], wall
		// Still so after the fan-outs: nothing woke the resting parent's workers.
		waitWorkerStates(b, restingAPI, core.WorkerResting, 5*time.Second)
		waitWorkerStates(b, followingAPI, core.WorkerUp, 5*time.Second)
		rep.RestingP50, rep.FollowingP50 = median(rep.RestingCPU), median(rep.FollowingCPU)
		if rep.FollowingP50 > 0 {
			rep.RestingOverFo = rep.RestingP50 / rep.FollowingP50
		}
		fmt.Printf("idle parents during another parent's fan-out on their workers, medians of %d rounds: resting %.2f s, following %.2f s (%.2f)\n",
			idleRounds, rep.RestingP50, rep.FollowingP50, rep.RestingOverFo)
		b.ReportMetric(rep.RestingOverFo, "cpu-resting/following")
		if err := addReportField(filepath.Join(root, "dist", "bench.json"), "workers_idle", rep); err != nil {
			b.Fatal(err)
		}
	}
}

// startFloorFleet starts two workers with a parent of ours that stays idle, and the remote floor's
// parent on them, whose fan-outs are the other sessions' traffic there.
func startFloorFleet(b *testing.B, root string, model *mockmodel.Server) (*ocserve.Fleet, *remoteFloorParent) {
	fl := ocserve.StartFleet(b, ocserve.FleetOptions{
		Parent:  ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN", Plugins: []string{ocserve.PluginSpec(b)}},
		Workers: 2, Config: map[string]any{"maxConcurrentStarts": 20}, Worker: map[string]any{"maxTasks": 10}})
	return fl, startRemoteFloor(b, root, model, fl, false)
}

// startIdleParent starts a parent with our plugin and its own status API on fl's workers, each
// worker's entry with the keys of entry (restAfterMs, pollMs), loads its plugin and returns it
// with its status API's URL.
func startIdleParent(b *testing.B, model *mockmodel.Server, fl *ocserve.Fleet, entry map[string]any) (*ocserve.Server, string) {
	port := freePort(b)
	opt := ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN", Plugins: []string{ocserve.PluginSpec(b)},
		Env: []string{"ASYNCAGENTS_API_PORT=" + strconv.Itoa(port), "ASYNCAGENTS_API_AUTH=none"}}
	workers := map[string]any{}
	for name, w := range fl.Workers {
		one := map[string]any{"url": w.URL, "passwordEnv": ocserve.PasswordEnv(name), "directory": w.Dir}
		maps.Copy(one, entry)
		workers[name] = one
		opt.Env = append(opt.Env, ocserve.PasswordEnv(name)+"="+w.Password())
	}
	project := ocserve.Prepare(b, opt)
	raw, _ := json.Marshal(map[string]any{"workers": workers})
	if err := os.WriteFile(filepath.Join(project.Dir, ".opencode", "asyncagents.json"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	oc := ocserve.Launch(b, project, opt)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := oc.CreateSession(ctx, "warm-up"); err != nil { // loads the plugin
		b.Fatal(err)
	}
	return oc, fmt.Sprintf("http://127.0.0.1:%d", port)
}

// waitWorkerStates waits, bounded, until every worker in api's /v1/workers is in state.
func waitWorkerStates(b *testing.B, api, state string, bound time.Duration) {
	var last []core.WorkerInfo
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		last = nil
		res, err := http.Get(api + "/v1/workers")
		if err != nil {
			continue
		}
		var v struct{ Workers []core.WorkerInfo }
		err = json.NewDecoder(res.Body).Decode(&v)
		res.Body.Close()
		last = v.Workers
		all := err == nil && len(v.Workers) > 0
		for _, w := range v.Workers {
			all = all && w.State == state
		}
		if all {
			return
		}
	}
	b.Fatalf("%s: the workers are not all %s after %s: %+v", api, state, bound, last)
}

// cpuDuringFanOuts runs the floor's fan-out idleRounds times after a warm-up, and returns the
// CPU seconds each parent (by name, its pid) spent during each measured one, and their walls.
func cpuDuringFanOuts(b *testing.B, floor *remoteFloorParent, oc fleetServed, label string, pids map[string]int) (map[string][]float64, []float64) {
	cpu, names := map[string][]float64{}, slices.Sorted(maps.Keys(pids))
	var wall []float64
	for round := 0; round <= idleRounds; round++ {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		before := map[string]float64{}
		for name, pid := range pids {
			before[name] = treeCPU(pid)
		}
		r, err := floor.fanOut(ctx, oc, fmt.Sprintf("floor-%s-r%d", label, round))
		cancel()
		if err != nil {
			b.Fatalf("%s round %d: %v", label, round, err)
		}
		line := fmt.Sprintf("%s round %d: fan-out %.1f s", label, round, r.WallMs/1000)
		for _, name := range names {
			spent := treeCPU(pids[name]) - before[name]
			line += fmt.Sprintf("; %s parent %.2f s", name, spent)
			if round > 0 {
				cpu[name] = append(cpu[name], spent)
			}
		}
		fmt.Println(line)
		if round > 0 {
			wall = append(wall, r.WallMs/1000)
		}
	}
	return cpu, wall
}
