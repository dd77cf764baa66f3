package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

const (
	// memoryTasks go through one OpenCode per system, memoryBatch per parent turn; the process's
	// resident memory is sampled every memoryEvery tasks.
	memoryTasks = 1_000
	memoryBatch = 50
	memoryEvery = 200
)

// rssMiB is the resident memory of process pid (its VmRSS), in MiB.
func rssMiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// BenchmarkMemory1k runs 1,000 tasks through a real `opencode serve`, in batches of 50 launched by
// one parent turn each, once with asyncagents and once with OpenCode's native background
// subagents (the same children, the same mock model), and samples the OpenCode process's resident
// memory (the plugin's Worker and its core included) every 200 tasks. What grows in both is
// OpenCode's; the difference is the plugin's. Run alone:
// go test -v -timeout 60m -run '^$' -bench 'BenchmarkMemory1k$' -benchtime 1x ./testharness/bench
func BenchmarkMemory1k(b *testing.B) {
	c := fanCase{Key: "mem", Name: "50 tasks", Delays: same(memoryBatch, 0)}
	for _, sys := range []system{ours, native} {
		model := mockmodel.Start(b, script)
		oc := ocserve.Start(b, ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN",
			Plugins: []string{ocserve.PluginSpec(b)}, Env: []string{"OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true"}})
		var samples []string
		first := 0.0
		for done := 0; done < memoryTasks; done += memoryBatch {
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			_, err := fanOut(ctx, served{oc}, model, sys, c, fmt.Sprintf("mem-%s-%d", sys.name, done))
			cancel()
			if err != nil {
				b.Fatalf("%s after %d tasks: %v", sys.name, done, err)
			}
			if (done+memoryBatch)%memoryEvery == 0 || done == 0 {
				time.Sleep(settle)
				rss, err := rssMiB(oc.PID())
				if err != nil {
					b.Fatal(err)
				}
				if done == 0 {
					first = rss
				}
				samples = append(samples, fmt.Sprintf("%d: %.1f", done+memoryBatch, rss))
				fmt.Printf("%s: %d tasks, OpenCode's resident memory %.1f MiB\n", sys.name, done+memoryBatch, rss)
				if done+memoryBatch == memoryTasks {
					perTask := (rss - first) * 1024 / float64(memoryTasks-memoryBatch)
					b.ReportMetric(rss, sys.name+"-rss-MiB")
					b.ReportMetric(perTask, sys.name+"-KiB/task")
					fmt.Printf("| %s | %s | %.0f KiB |\n", sys.name, strings.Join(samples, ", "), perTask)
				}
			}
		}
		if err := oc.Stop(); err != nil {
			b.Fatalf("stop: %v", err)
		}
	}
}
