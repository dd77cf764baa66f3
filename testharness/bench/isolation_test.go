package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

const (
	// isolationFiles is the size of the generated repository the isolation benchmark runs in.
	isolationFiles  = 10_000
	isolationRounds = 3
	// childHold keeps each child's answer back, so its worktree still exists when it is measured.
	childHold = 2 * time.Second
)

// isolationSystems: OpenCode's native background task, ours without and ours with isolation.
var isolationSystems = []struct {
	name string
	call func(prompt string) mockmodel.ToolCall
}{
	{"native", func(p string) mockmodel.ToolCall {
		return mockmodel.ToolCall{Name: "task", Args: map[string]any{"description": "Bench", "prompt": p, "subagent_type": "general", "background": true}}
	}},
	{"asyncagents", func(p string) mockmodel.ToolCall {
		return mockmodel.ToolCall{Name: "asyncagents_task", Args: map[string]any{"description": "Bench", "prompt": p, "agent": "general"}}
	}},
	{"asyncagents isolated", func(p string) mockmodel.ToolCall {
		return mockmodel.ToolCall{Name: "asyncagents_task", Args: map[string]any{"description": "Bench", "prompt": p, "agent": "general", "isolation": "worktree"}}
	}},
}

// isolationSample is one launch: the tool call's duration as OpenCode records it, the time from
// the call's start to the child's first model request, and the worktree's disk use then.
type isolationSample struct {
	launchMs, firstRequestMs float64
	diskKB                   int64
}

// BenchmarkIsolation measures what isolation costs on a generated repository of 10,000 files
// with an uncommitted edit: the launch answer (against native's, the launch target), the time
// from the launch to the child's first model request with and without isolation, and the disk
// each worktree takes (du of its folder, while the child runs). Systems take turns within each
// round, the order reversed every other round; a first round is a discarded warm-up.
func BenchmarkIsolation(b *testing.B) {
	files := map[string]string{}
	for i := 0; i < isolationFiles; i++ {
		files[fmt.Sprintf("src/d%02d/f%05d.txt", i%100, i)] = strings.Repeat(fmt.Sprintf("line %d of a generated file\n", i), 4)
	}
	var mu sync.Mutex
	firstRequest := map[string]time.Time{}
	disk := map[string]int64{}
	var oc *ocserve.Server
	script := func(req mockmodel.Request) mockmodel.Reply {
		first := firstUser(req)
		if strings.HasPrefix(first, "CHILD ") {
			mu.Lock()
			_, seen := firstRequest[first]
			if !seen {
				firstRequest[first] = time.Now()
			}
			mu.Unlock()
			if !seen && strings.Contains(first, "isolated") {
				kb := worktreeDiskKB(oc)
				mu.Lock()
				disk[first] = kb
				mu.Unlock()
			}
			return mockmodel.Reply{Text: "done", Delay: childHold}
		}
		if strings.HasPrefix(req.LastUser, "LAUNCH ") && req.Messages[len(req.Messages)-1].Role == "user" {
			name, prompt, _ := strings.Cut(strings.TrimPrefix(req.LastUser, "LAUNCH "), "|")
			for _, s := range isolationSystems {
				if s.name == name {
					return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{s.call(prompt)}}
				}
			}
		}
		return mockmodel.Reply{Text: "ok"}
	}
	for i := 0; i < b.N; i++ {
		model := mockmodel.Start(b, script)
		oc = ocserve.Start(b, ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN", Files: files,
			Plugins: []string{ocserve.PluginSpec(b)}, Env: []string{"OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true"}})
		if err := os.WriteFile(filepath.Join(oc.Dir, "src/d00/f00000.txt"), []byte("the parent's uncommitted edit\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		samples := map[string][]isolationSample{}
		for round := 0; round <= isolationRounds; round++ {
			order := append(isolationSystems[:0:0], isolationSystems...)
			if round%2 == 1 {
				for l, r := 0, len(order)-1; l < r; l, r = l+1, r-1 {
					order[l], order[r] = order[r], order[l]
				}
			}
			for _, s := range order {
				prompt := fmt.Sprintf("CHILD %s round %d", s.name, round)
				launchMs, startMs := launchOnce(b, oc, s.name+"|"+prompt)
				var at time.Time
				waitFor(b, "the child's first request", 60*time.Second, func() bool {
					mu.Lock()
					defer mu.Unlock()
					at = firstRequest[prompt]
					return !at.IsZero()
				})
				mu.Lock()
				kb := disk[prompt]
				mu.Unlock()
				if round > 0 {
					samples[s.name] = append(samples[s.name], isolationSample{launchMs, float64(at.UnixMilli() - startMs), kb})
				}
				waitFor(b, "the task's end", 60*time.Second, func() bool { return worktreeDiskKB(oc) == 0 })
			}
		}
		printIsolation(samples)
		if err := oc.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// launchOnce prompts a new parent with text and returns its launching tool call's duration and
// start (ms since the epoch), once OpenCode has recorded its end.
func launchOnce(b *testing.B, oc *ocserve.Server, text string) (float64, int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	id, err := oc.CreateSession(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := oc.PromptAsync(ctx, id, "build", "LAUNCH "+text); err != nil {
		b.Fatal(err)
	}
	var ms float64
	var start int64
	waitFor(b, "the launch answer", 60*time.Second, func() bool {
		msgs, err := oc.Messages(ctx, id)
		if err != nil {
			return false
		}
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.Type == "tool" && (p.State.Status == "completed" || p.State.Status == "error") {
					ms, start = float64(p.State.Time.End-p.State.Time.Start), p.State.Time.Start
					return true
				}
			}
		}
		return false
	})
	return ms, start
}

// worktreeDiskKB is du -sk over the project's worktrees folder: 0 when no worktree exists.
func worktreeDiskKB(oc *ocserve.Server) int64 {
	dir, _ := filepath.EvalSymlinks(oc.Dir)
	folders, _ := filepath.Glob(filepath.Join(core.StoragePaths(filepath.Join(oc.Home, ".local", "share"), oc.Home, dir).Dir, "worktrees", "*", "*"))
	var kb int64
	for _, f := range folders {
		// du may complain of a file OpenCode removes meanwhile; its total still stands.
		out, _ := exec.Command("du", "-sk", f).Output()
		fields := strings.Fields(string(out))
		if len(fields) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		kb += n
	}
	return kb
}

func waitFor(b *testing.B, what string, bound time.Duration, cond func() bool) {
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out after %s waiting for %s", bound, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// printIsolation prints the medians over rounds, as a table for BENCHMARKS.md.
func printIsolation(samples map[string][]isolationSample) {
	fmt.Printf("\n%d files, %d rounds after a warm-up; medians over rounds\n\n", isolationFiles, isolationRounds)
	fmt.Println("| system | launch p50 | launch → child's first model request | worktree on disk |")
	fmt.Println("|---|---|---|---|")
	for _, s := range isolationSystems {
		var launch, first, kb []float64
		for _, x := range samples[s.name] {
			launch, first, kb = append(launch, x.launchMs), append(first, x.firstRequestMs), append(kb, float64(x.diskKB))
		}
		du := "-"
		if strings.Contains(s.name, "isolated") {
			du = fmt.Sprintf("%.1f MB", median(kb)/1024)
		}
		fmt.Printf("| %s | %.0f ms | %.0f ms | %s |\n", s.name, median(launch), median(first), du)
	}
}
