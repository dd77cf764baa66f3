package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// fanOutRounds is how many rounds BenchmarkFanOut runs (ASYNCAGENTS_BENCH_ROUNDS overrides it, for
// a quick look with fewer; the figures want at least 3).
var fanOutRounds = func() int {
	if n, err := strconv.Atoi(os.Getenv("ASYNCAGENTS_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 5
}()

// fanOutCases are the cases BenchmarkFanOut runs: all, or those whose keys
// ASYNCAGENTS_BENCH_CASES lists (comma-separated: n3, n10, n25, n3-apart).
func fanOutCases(b *testing.B) []fanCase {
	keys := os.Getenv("ASYNCAGENTS_BENCH_CASES")
	if keys == "" {
		return cases
	}
	var out []fanCase
	for _, k := range strings.Split(keys, ",") {
		found := false
		for _, c := range cases {
			if c.Key == strings.TrimSpace(k) {
				out, found = append(out, c), true
			}
		}
		if !found {
			b.Fatalf("ASYNCAGENTS_BENCH_CASES: no case %q", k)
		}
	}
	return out
}

const (
	// runTimeout bounds one fan-out, from its prompt until its parent is idle again.
	runTimeout = 3 * time.Minute
	// settle is the pause after each fan-out, so what is left of one (titles, history writes)
	// does not land in the next.
	settle = 500 * time.Millisecond
)

// fanOutProjects are the projects BenchmarkFanOut runs in: a git repository with every case, and
// a folder that is no git repository with n = 10 (there OpenCode finishes the children back to
// back). ASYNCAGENTS_BENCH_PROJECTS=git or no-git runs one of them.
func fanOutProjects(b *testing.B) (git, noGit bool) {
	switch v := os.Getenv("ASYNCAGENTS_BENCH_PROJECTS"); v {
	case "":
		return true, true
	case "git":
		return true, false
	case "no-git":
		return false, true
	default:
		b.Fatalf("ASYNCAGENTS_BENCH_PROJECTS: %q is none of git, no-git", v)
	}
	return false, false
}

// noGitCases are the cases run in the folder that is no git repository.
var noGitCases = []fanCase{cases[1]}

// BenchmarkFanOut measures asyncagents, OpenCode's native background subagents, a plugin tool
// that does nothing (the launch floor) and a plugin that posts each child's answer to its parent
// the moment it completes (the notice floor, notice_floor.go), in one `opencode serve`,
// interleaved: after a discarded warm-up, each round runs every case for every system, case by
// case, the systems in the opposite order every other round, so the machine's drift touches all
// alike. Per run it takes the p50 over tasks of the launching tool call's duration and of the
// delay from a child's completion to its notice in the parent, and counts the parent's model turns
// after the launch turn; per case and system it reports the median over rounds of those, the
// ratios ours/native (and ours/floor), the targets, and the plugin's hop profile
// (ASYNCAGENTS_PROFILE). It does so in a git project, then again at n = 10 in a folder that is no
// git repository, each in its own server. It writes everything, every round's raw figures
// included, to dist/bench.json, and prints tables for BENCHMARKS.md.
func BenchmarkFanOut(b *testing.B) {
	root := ocserve.RepoRoot(b)
	cs := fanOutCases(b)
	withGit, withoutGit := fanOutProjects(b)
	version := ocserve.Version(b)
	for i := 0; i < b.N; i++ {
		cpus, osArch := machine()
		rep := &report{Benchmark: "BenchmarkFanOut", Date: time.Now().Format(time.RFC3339), OpenCodeVersion: version,
			CPUs: cpus, OS: osArch, Rounds: fanOutRounds, Method: method, Load: loadAverage()}
		if withGit {
			p := fanOutProject(b, root, false, cs)
			rep.Cases, rep.Warmup, rep.Runs = p.cases, p.warmup, p.runs
			if !p.profiled {
				rep.ProfileNote = "no profile"
			}
		}
		if withoutGit {
			p := fanOutProject(b, root, true, noGitCases)
			rep.CasesNoGit, rep.WarmupNoGit, rep.RunsNoGit = p.cases, p.warmup, p.runs
		}
		rep.LoadAfter = loadAverage()
		for _, c := range append(append([]*caseSummary(nil), rep.Cases...), rep.CasesNoGit...) {
			key := c.Case
			if c.Project == projectNoGit {
				key += "-nogit"
			}
			if c.LaunchOursNative != nil {
				b.ReportMetric(*c.LaunchOursNative, key+"-launch-ours/native")
			}
			if c.NoticeOursNative != nil {
				b.ReportMetric(*c.NoticeOursNative, key+"-notice-ours/native")
			}
			if c.NoticeOursFloor != nil {
				b.ReportMetric(*c.NoticeOursFloor, key+"-notice-ours/floor")
			}
		}
		printReport(os.Stdout, rep)
		out := filepath.Join(root, "dist", "bench.json")
		raw, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(out, append(raw, '\n'), 0o644); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("\nwrote %s\n", out)
	}
}

// projectRuns is what the fan-out measured in one project.
type projectRuns struct {
	cases        []*caseSummary
	warmup, runs []*run
	profiled     bool
}

// fanOutProject runs the warm-up and the rounds of cs in one `opencode serve` on a fresh project,
// a git repository unless noGit.
func fanOutProject(b *testing.B, root string, noGit bool, cs []fanCase) projectRuns {
	project := projectGit
	if noGit {
		project = projectNoGit
	}
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
	env := []string{"OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true", "ASYNCAGENTS_PROFILE=" + profilePath}
	env = append(env, pluginSwitches()...)
	model := mockmodel.Start(b, script)
	oc := ocserve.Start(b, ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN", NoGit: noGit,
		Plugins: []string{ocserve.PluginSpec(b), floorSpec, noticeFloorSpec}, Env: env})
	rs := &rounds{oc: served{oc}, model: model, project: project, profilePath: profilePath, fail: b.Fatalf}
	var out projectRuns
	out.warmup, out.runs = rs.play(cs, fanOutRounds)
	if err := oc.Stop(); err != nil {
		b.Fatalf("stop: %v", err)
	}
	out.cases = summarize(cs, out.runs)
	out.profiled = rs.profiled > 0
	for _, c := range out.cases {
		c.Project = project
		if !out.profiled {
			c.Profile = nil
		}
	}
	return out
}

// BenchmarkStartup measures what loading the plugin adds to OpenCode's start: plugins load on
// the first request for a project, so the figure is that request's duration, with and without the
// plugin, median of several starts.
func BenchmarkStartup(b *testing.B) {
	const runs = 7
	model := mockmodel.Start(b, mockmodel.Text("idle"))
	once := func(plugins []string) float64 {
		oc := ocserve.Start(b, ocserve.Options{ModelURL: model.URL(), Plugins: plugins, LogLevel: "WARN"})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		t0 := time.Now()
		if _, err := oc.CreateSession(ctx, "first"); err != nil {
			b.Fatalf("first request: %v", err)
		}
		ms := float64(time.Since(t0).Microseconds()) / 1000
		if err := oc.Stop(); err != nil {
			b.Fatalf("stop: %v", err)
		}
		return ms
	}
	for i := 0; i < b.N; i++ {
		// Alternate the two, so drift in the machine's load touches both alike.
		var without, with []float64
		for r := 0; r < runs; r++ {
			without = append(without, once(nil))
			with = append(with, once([]string{ocserve.PluginSpec(b)}))
		}
		added := median(with) - median(without)
		b.ReportMetric(median(without), "first-request-without-ms")
		b.ReportMetric(median(with), "first-request-with-ms")
		b.ReportMetric(added, "startup-added-ms")
		fmt.Printf("\nfirst request (plugins load): without plugin %v ms, with plugin %v ms; added by the plugin: %.0f ms (median of %d)\n",
			rounded(without), rounded(with), added, runs)
	}
}
