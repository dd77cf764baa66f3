package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// holdPrompt is the prompt of the one long task each parent of BenchmarkWorkerSharedParent holds
// on w1; its child answers only after the benchmark is over.
const holdPrompt = "HOLD the worker"

// workersSharedReport is BenchmarkWorkerSharedParent's field of dist/bench.json: the CPU seconds
// of two parents with our plugin, each holding one task on w1, while another parent's fan-out
// (the remote floor's 20 children) runs on the same workers: one follows the workers' streams,
// one polls them (pollMs 1000); per round, medians and their ratio.
type workersSharedReport struct {
	FollowedCPU    []float64 `json:"followed_cpu_s"`
	PolledCPU      []float64 `json:"polled_cpu_s"`
	FollowedP50    float64   `json:"followed_cpu_p50_s"`
	PolledP50      float64   `json:"polled_cpu_p50_s"`
	PolledOverFoll float64   `json:"polled_over_followed"`
	FanOutWallS    []float64 `json:"fan_out_wall_s"`
}

// sharedScript is workersScript, and a parent told holdPrompt launches one task on w1 whose
// child answers only long after the benchmark.
func sharedScript(req mockmodel.Request) mockmodel.Reply {
	switch {
	case firstUser(req) == holdPrompt:
		return mockmodel.Reply{Text: "held", Delay: 30 * time.Minute}
	case req.LastUser == "LAUNCH "+holdPrompt && req.Messages[len(req.Messages)-1].Role == "user":
		args := ours.args("Hold", holdPrompt)
		args["worker"] = "w1"
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: ours.tool, Args: args}}}
	case strings.HasPrefix(req.LastUser, "LAUNCH "):
		return mockmodel.Reply{Text: "holding"}
	}
	return workersScript(req)
}

// BenchmarkWorkerSharedParent: what a parent with a task on a worker pays while other sessions
// stream there (another parent's fan-out; the remote floor's, which follows nothing itself).
// Resting does not help it: it holds a task there. A followed worker's stream carries every
// session's events, so the parent that follows it reads the other fan-out's too; the polled one
// reads its own task's status and newest messages.
func BenchmarkWorkerSharedParent(b *testing.B) {
	root := ocserve.RepoRoot(b)
	for i := 0; i < b.N; i++ {
		model := mockmodel.Start(b, sharedScript)
		fl, floor := startFloorFleet(b, root, model)
		followed, followedAPI := startIdleParent(b, model, fl, map[string]any{"maxTasks": 10})
		polled, polledAPI := startIdleParent(b, model, fl, map[string]any{"maxTasks": 10, "pollMs": polledEveryMs})
		waitWorkerStates(b, followedAPI, core.WorkerUp, 30*time.Second)
		waitWorkerStates(b, polledAPI, core.WorkerUp, 30*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		for _, p := range []*ocserve.Server{followed, polled} {
			if _, err := (served{p}).start(ctx, "hold", "LAUNCH "+holdPrompt); err != nil {
				b.Fatal(err)
			}
		}
		for held := 0; held < 2; held = heldChildren(model) {
			if ctx.Err() != nil {
				b.Fatalf("the two held children did not start: %d", held)
			}
			time.Sleep(200 * time.Millisecond)
		}
		cancel()
		settleToRest(followed.PID())
		settleToRest(polled.PID())
		oc := fleetServed{served{fl.Parent}, statusAPI{followedAPI}, []*ocserve.Server{fl.Workers["w1"], fl.Workers["w2"]}}
		var rep workersSharedReport
		cpu, wall := cpuDuringFanOuts(b, floor, oc, "shared", map[string]int{"followed": followed.PID(), "polled": polled.PID()})
		rep.FollowedCPU, rep.PolledCPU, rep.FanOutWallS = cpu["followed"], cpu["polled"], wall
		rep.FollowedP50, rep.PolledP50 = median(rep.FollowedCPU), median(rep.PolledCPU)
		if rep.FollowedP50 > 0 {
			rep.PolledOverFoll = rep.PolledP50 / rep.FollowedP50
		}
		fmt.Printf("parents holding one task each on w1 during another parent's fan-out, medians of %d rounds: followed %.2f s, polled %.2f s (%.2f)\n",
			idleRounds, rep.FollowedP50, rep.PolledP50, rep.PolledOverFoll)
		b.ReportMetric(rep.PolledOverFoll, "cpu-polled/followed")
		if err := addReportField(filepath.Join(root, "dist", "bench.json"), "workers_shared", rep); err != nil {
			b.Fatal(err)
		}
	}
}

// heldChildren counts the held children that have started (their first model request).
func heldChildren(model *mockmodel.Server) int {
	n := 0
	for _, r := range model.Turns() {
		if firstUser(r) == holdPrompt && r.Messages[len(r.Messages)-1].Role == "user" {
			n++
		}
	}
	return n
}
