package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// cases are the fan-outs measured for both systems.
var cases = []struct {
	name   string
	delays []time.Duration
}{
	{"3 tasks, same length", same(3, 500*time.Millisecond)},
	{"10 tasks, same length", same(10, 500*time.Millisecond)},
	{"3 tasks finishing 3 s apart", []time.Duration{500 * time.Millisecond, 3500 * time.Millisecond, 6500 * time.Millisecond}},
}

func same(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// BenchmarkFanOut prints, for asyncagents and for native background subagents measured in the
// same run: the launching tool call's duration, the delay from a child's completion to its notice
// in the parent, and the parent model turns spent after the launch.
func BenchmarkFanOut(b *testing.B) {
	var table []string
	for _, m := range []mode{asyncagents, native} {
		model := mockmodel.Start(b, mockmodel.Text("idle"))
		opt := ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN"}
		if m.name == "asyncagents" {
			opt.Plugins = []string{ocserve.PluginSpec(b)}
		} else {
			opt.Env = []string{"OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true"}
		}
		oc := ocserve.Start(b, opt)
		for _, c := range cases {
			b.Run(m.name+"/"+strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
				var f figures
				for i := 0; i < b.N; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					var err error
					f, err = fanOut(ctx, oc, model, m, c.delays)
					cancel()
					if err != nil {
						b.Fatalf("%v\nlogs:\n%s", err, oc.Logs())
					}
				}
				b.ReportMetric(median(f.launch), "launch-median-ms")
				b.ReportMetric(maxOf(f.launch), "launch-max-ms")
				b.ReportMetric(median(f.notice), "notice-median-ms")
				b.ReportMetric(maxOf(f.notice), "notice-max-ms")
				b.ReportMetric(float64(f.parentTurns), "parent-turns")
				table = append(table, fmt.Sprintf("| %s | %s | %.0f (max %.0f) | %.0f (max %.0f) | %d |",
					m.name, c.name, median(f.launch), maxOf(f.launch), median(f.notice), maxOf(f.notice), f.parentTurns))
			})
		}
		if err := oc.Stop(); err != nil {
			b.Fatalf("stop: %v", err)
		}
	}
	fmt.Println()
	fmt.Println("| system | case | launch ms, median | child done -> notice ms, median | parent turns after launch |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	for _, row := range table {
		fmt.Println(row)
	}
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

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x + 0.5)
	}
	return out
}
