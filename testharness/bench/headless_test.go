package bench

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// headlessRounds is how many times each system runs in each project.
const headlessRounds = 3

// headlessDelays are the three children's lengths.
var headlessDelays = map[string]time.Duration{"CHILD A": 2 * time.Second, "CHILD B": 3 * time.Second, "CHILD C": 4 * time.Second}

var headlessResult = regexp.MustCompile(`RESULT-[A-Z]+`)

// headlessSystem is one way of having `opencode run` collect three subagents' results.
type headlessSystem struct {
	name string
	call func(desc, prompt string) mockmodel.ToolCall
	// plugins: the run loads asyncagents.
	plugins bool
}

// OpenCode's native background tasks cannot wait in `opencode run` (its loop ends at the parent's
// first idle, and the run with it): the comparison is OpenCode's native `task` tool called in
// the foreground, three calls in one step, which OpenCode runs at once and waits for.
var headlessSystems = []headlessSystem{
	{name: "ours", plugins: true, call: func(desc, prompt string) mockmodel.ToolCall {
		return mockmodel.ToolCall{Name: "asyncagents_task", Args: map[string]any{"description": desc, "prompt": prompt, "agent": "general"}}
	}},
	{name: "native foreground task", call: func(desc, prompt string) mockmodel.ToolCall {
		return mockmodel.ToolCall{Name: "task", Args: map[string]any{"description": desc, "prompt": prompt, "subagent_type": "general"}}
	}},
}

// headlessScript: "FANOUT" launches three children; a step that sees their results answers
// "FINAL:" with each of them (ours: the notice; native: the tools' results).
func headlessScript(sys headlessSystem) mockmodel.Script {
	return func(req mockmodel.Request) mockmodel.Reply {
		first, last := "", mockmodel.Message{}
		for _, m := range req.Messages {
			if m.Role == "user" && first == "" {
				first = m.Content
			}
		}
		if len(req.Messages) > 0 {
			last = req.Messages[len(req.Messages)-1]
		}
		if d, ok := headlessDelays[first]; ok {
			return mockmodel.Reply{Text: "RESULT-" + strings.TrimPrefix(first, "CHILD "), Delay: d}
		}
		seen := map[string]bool{}
		for _, m := range req.Messages {
			if m.Role != "assistant" {
				for _, r := range headlessResult.FindAllString(m.Content, -1) {
					seen[r] = true
				}
			}
		}
		switch {
		case len(seen) == 3:
			var all []string
			for r := range seen {
				all = append(all, r)
			}
			sort.Strings(all)
			return mockmodel.Reply{Text: "FINAL: " + strings.Join(all, " ")}
		case last.Role == "user" && req.LastUser == "FANOUT":
			return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{sys.call("Part A", "CHILD A"), sys.call("Part B", "CHILD B"), sys.call("Part C", "CHILD C")}}
		}
		return mockmodel.Reply{Text: "launched"}
	}
}

// headlessRun is one run's figures: the whole run, and from the slowest child's answer to the
// parent's last model call and to the process's exit.
type headlessRun struct {
	System    string  `json:"system"`
	Project   string  `json:"project"`
	TotalMs   float64 `json:"total_ms"`
	ToFinalMs float64 `json:"slowest_child_to_last_turn_ms"`
	BeyondMs  float64 `json:"beyond_slowest_child_ms"`
}

// headlessReport is BenchmarkHeadlessRun's part of dist/bench.json.
type headlessReport struct {
	Date    string             `json:"date"`
	Rounds  int                `json:"rounds"`
	Load    []float64          `json:"load_average,omitempty"` // at the end
	Method  string             `json:"method"`
	Medians map[string]float64 `json:"beyond_slowest_child_p50_ms"` // by "system, project"
	Runs    []headlessRun      `json:"runs"`
}

const headlessMethod = "`opencode run FANOUT` with the mock model: three subagents answering after 2, 3 and 4 s; the " +
	"parent's last answer quotes the three results. Beyond the slowest child: from the slowest child's answer " +
	"(its request's arrival plus its delay) to the process's exit. Systems and projects interleaved, median over rounds."

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkHeadlessRun measures how long `opencode run` takes beyond its slowest child when the
// parent collects three subagents' results, ours against OpenCode's native foreground `task`.
func BenchmarkHeadlessRun(b *testing.B) {
	root := ocserve.RepoRoot(b)
	for i := 0; i < b.N; i++ {
		rep := &headlessReport{Date: time.Now().Format(time.RFC3339), Rounds: headlessRounds, Method: headlessMethod, Medians: map[string]float64{}}
		byKey := map[string][]float64{}
		for round := 0; round < headlessRounds; round++ {
			for _, noGit := range []bool{false, true} {
				for _, sys := range headlessSystems {
					r := headlessOnce(b, sys, noGit)
					rep.Runs = append(rep.Runs, r)
					key := r.System + ", " + r.Project
					byKey[key] = append(byKey[key], r.BeyondMs)
				}
			}
		}
		rep.Load = loadAverage()
		fmt.Printf("\n`opencode run` with three subagents of 2, 3 and 4 s (%d rounds; load average %v at the end):\n\n", headlessRounds, rep.Load)
		fmt.Println("| system, project | beyond the slowest child p50 (ms) | rounds (ms) |")
		fmt.Println("| --- | --- | --- |")
		var keys []string
		for k := range byKey {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rep.Medians[k] = median(byKey[k])
			fmt.Printf("| %s | %.0f | %v |\n", k, rep.Medians[k], rounded(byKey[k]))
			b.ReportMetric(rep.Medians[k], strings.NewReplacer(" ", "-", ",", "").Replace(k)+"-beyond-ms")
		}
		out := filepath.Join(root, "dist", "bench.json")
		if err := addReportField(out, "headless_run", rep); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("\nadded the headless run's figures to %s\n", out)
	}
}

func headlessOnce(b *testing.B, sys headlessSystem, noGit bool) headlessRun {
	model := mockmodel.Start(b, headlessScript(sys))
	defer model.Close()
	opt := ocserve.Options{ModelURL: model.URL(), NoGit: noGit, LogLevel: "WARN"}
	if sys.plugins {
		opt.Plugins = []string{ocserve.PluginSpec(b)}
	}
	out, took, err := ocserve.Run(b, opt, 3*time.Minute, "FANOUT")
	exit := time.Now()
	if err != nil || !strings.Contains(out, "FINAL: RESULT-A RESULT-B RESULT-C") {
		b.Fatalf("%s: the run did not answer with the three results (%v):\n%s", sys.name, err, out)
	}
	var childDone, final time.Time
	for _, r := range model.Turns() {
		for _, m := range r.Messages {
			if d, ok := headlessDelays[m.Content]; ok && m.Role == "user" && r.Received.Add(d).After(childDone) {
				childDone = r.Received.Add(d)
			}
			break
		}
		if r.Received.After(final) {
			final = r.Received
		}
	}
	project := projectGit
	if noGit {
		project = projectNoGit
	}
	return headlessRun{System: sys.name, Project: project, TotalMs: ms(took), ToFinalMs: ms(final.Sub(childDone)), BeyondMs: ms(exit.Sub(childDone))}
}
