package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// tuiRounds is how many rounds BenchmarkTUI runs (ASYNCAGENTS_BENCH_TUI_ROUNDS overrides it).
var tuiRounds = func() int {
	if n, err := strconv.Atoi(os.Getenv("ASYNCAGENTS_BENCH_TUI_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}()

// tuiCases are the fan-outs BenchmarkTUI runs.
var tuiCases = []fanCase{cases[0], cases[1]}

// BenchmarkTUI measures the same four systems as BenchmarkFanOut in OpenCode's TUI started
// without --port, as most users run it: OpenCode's server listens nowhere, the plugin's client is
// in-process, and our notices go through it. Each fan-out is typed into the TUI (in tmux) in a
// new session; the figures are read from OpenCode's database once the run has settled, the
// systems interleaved as in BenchmarkFanOut. It adds its figures to dist/bench.json (tui_*
// fields), beside those BenchmarkFanOut wrote, and prints its table.
func BenchmarkTUI(b *testing.B) {
	root := ocserve.RepoRoot(b)
	for i := 0; i < b.N; i++ {
		tm, err := startTmuxSession()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(tm.close)
		tmp := b.TempDir()
		floorSpec, err := writeFloorPlugin(filepath.Join(tmp, "floor"), root)
		if err != nil {
			b.Fatal(err)
		}
		noticeFloorSpec, err := writeNoticeFloorPlugin(filepath.Join(tmp, "floor"), root)
		if err != nil {
			b.Fatal(err)
		}
		profilePath := filepath.Join(tmp, "profile.jsonl")
		model := mockmodel.Start(b, script)
		oc := ocserve.StartTUI(b, ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN", NoPort: true,
			Plugins: []string{ocserve.PluginSpec(b), floorSpec, noticeFloorSpec},
			Env:     append([]string{"OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true", "ASYNCAGENTS_PROFILE=" + profilePath}, pluginSwitches()...)}, tm.socket)
		tui, err := newTUIOpenCode(tm, oc, root, tmp)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if err := tui.waitScreen(ctx, homePrompt); err != nil {
			b.Fatalf("%v\nlogs:\n%s", err, oc.Logs())
		}
		cancel()

		rs := &rounds{oc: tui, model: model, project: projectTUI, profilePath: profilePath, fail: func(format string, args ...any) {
			screen, _ := tui.screen()
			b.Fatalf(format+"\nscreen:\n%s\nlogs:\n%s", append(args, screen, oc.Logs())...)
		}}
		warmup, runs := rs.play(tuiCases, tuiRounds)
		oc.Kill()

		cs := summarize(tuiCases, runs)
		for _, c := range cs {
			c.Project = projectTUI
			if rs.profiled == 0 {
				c.Profile = nil
			}
			if c.NoticeOursNative != nil {
				b.ReportMetric(*c.NoticeOursNative, c.Case+"-tui-notice-ours/native")
			}
			if c.NoticeOursFloor != nil {
				b.ReportMetric(*c.NoticeOursFloor, c.Case+"-tui-notice-ours/floor")
			}
		}
		note := ""
		if rs.profiled == 0 {
			note = "no profile"
		}
		t := &tuiReport{Date: time.Now().Format(time.RFC3339), Rounds: tuiRounds, Load: loadAverage(), Method: tuiMethod,
			Cases: cs, Warmup: warmup, Runs: runs}
		fmt.Printf("\nfan-out in the TUI without --port: %d rounds; load average %v at the end\n", tuiRounds, t.Load)
		printCases(os.Stdout, "in the TUI without --port (a git project)", cs, note)
		out := filepath.Join(root, "dist", "bench.json")
		if err := addTUIReport(out, t); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("\nadded the TUI's figures to %s\n", out)
	}
}
