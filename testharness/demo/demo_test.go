//go:build demo

// Package demo is `make demo`: real OpenCode, headless, with the asyncagents plugin and the local
// mock model (no API key). A parent agent fans three tasks out in one turn; the demo prints what
// happens and when. It is a Go test only to reuse the harness; `make test` does not build it.
package demo

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

var children = []struct {
	desc, prompt, answer string
	delay                time.Duration
}{
	{"Survey auth module", "CHILD auth", "auth: 3 handlers, token refresh in src/auth/refresh.ts", 1 * time.Second},
	{"Survey billing module", "CHILD billing", "billing: invoices built in src/billing/invoice.ts, no tests", 2 * time.Second},
	{"Survey search module", "CHILD search", "search: ranking in src/search/rank.ts, cache TTL 60 s", 3 * time.Second},
}

func TestDemo(t *testing.T) {
	say := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	model := mockmodel.Start(t, func(req mockmodel.Request) mockmodel.Reply {
		for _, c := range children {
			if req.LastUser == c.prompt {
				return mockmodel.Reply{Text: c.answer, Delay: c.delay}
			}
		}
		last := ""
		if n := len(req.Messages); n > 0 {
			last = req.Messages[n-1].Role
		}
		switch {
		case last == "tool":
			return mockmodel.Reply{Text: "Three surveys are running in the background. Waiting for them."}
		case strings.Contains(req.LastUser, "All 3 tasks finished"):
			return mockmodel.Reply{Text: "All three surveys are in; summary follows."}
		case strings.Contains(req.LastUser, "Agent \""):
			return mockmodel.Reply{Text: "waiting"}
		case strings.HasPrefix(req.LastUser, "Survey"):
			var calls []mockmodel.ToolCall
			for _, c := range children {
				calls = append(calls, mockmodel.ToolCall{Name: "asyncagents_task", Args: map[string]any{"description": c.desc, "prompt": c.prompt, "agent": "general"}})
			}
			return mockmodel.Reply{ToolCalls: calls}
		}
		return mockmodel.Reply{Text: "ok"}
	})

	say("starting opencode serve (opencode-ai %s) with the asyncagents plugin and the mock model…", "1.18.33")
	oc := ocserve.Start(t, ocserve.Options{ModelURL: model.URL(), Plugins: []string{ocserve.PluginSpec(t)}, LogLevel: "WARN"})
	say("  up in %s at %s\n", oc.Started.Round(time.Millisecond), oc.URL)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	parent, err := oc.CreateSession(ctx, "demo")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	say("user → build agent: \"Survey the auth, billing and search modules\"")
	if err := oc.PromptAsync(ctx, parent, "build", "Survey the auth, billing and search modules"); err != nil {
		t.Fatal(err)
	}

	visible := regexp.MustCompile(`^(✓|✗|⊘) (Agent|Resume)`)
	took := regexp.MustCompile(`in ([0-9.]+)s\.`)
	seen := map[string]bool{}
	launched := false
	var launchedAt, lastNotice time.Duration
	var childTime float64
	for len(seen) < len(children) {
		if ctx.Err() != nil {
			t.Fatalf("timed out; logs:\n%s", oc.Logs())
		}
		time.Sleep(100 * time.Millisecond)
		msgs, err := oc.Messages(ctx, parent)
		if err != nil {
			t.Fatal(err)
		}
		var launches []ocserve.Part
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.Type == "tool" && p.Tool == "asyncagents_task" && p.State.Status == "completed" {
					launches = append(launches, p)
				}
				if m.Info.Role == "user" && p.Type == "text" && !p.Synthetic && visible.MatchString(p.Text) && !seen[p.ID] {
					seen[p.ID] = true
					lastNotice = time.Since(start)
					if m := took.FindStringSubmatch(p.Text); m != nil {
						var secs float64
						fmt.Sscanf(m[1], "%g", &secs)
						childTime += secs
					}
					say("[%6.2fs] notice in the parent: %s", time.Since(start).Seconds(), strings.ReplaceAll(p.Text, "\n", " | "))
				}
			}
		}
		if !launched && len(launches) == len(children) {
			launched = true
			launchedAt = time.Since(start)
			for _, p := range launches {
				id := strings.TrimPrefix(strings.SplitN(p.State.Output, "\n", 2)[0], "task_id: ")
				say("[%6.2fs] launched %-24q as %s in %d ms", time.Since(start).Seconds(), p.State.Input["description"], id, p.State.Time.End-p.State.Time.Start)
			}
		}
	}
	if err := oc.WaitIdle(ctx, parent); err != nil {
		t.Fatal(err)
	}
	say("\nfrom the launches to the last result: %.1fs; the three tasks ran %.1fs in all (their notices' times added up).",
		(lastNotice - launchedAt).Seconds(), childTime)
	say("the parent's first turn waited %.1fs for OpenCode itself (first prompt of a fresh project).", launchedAt.Seconds())
	msgs, _ := oc.Messages(ctx, parent)
	// The parent's model calls: those of its launching turn (the launches, and its reply once
	// they answered), and those after the first notice (the wake with the results).
	before, after, noticed := 0, 0, false
	for _, m := range msgs {
		for _, p := range m.Parts {
			noticed = noticed || (m.Info.Role == "user" && p.Type == "text" && !p.Synthetic && visible.MatchString(p.Text))
		}
		switch {
		case m.Info.Role != "assistant":
		case noticed:
			after++
		default:
			before++
		}
	}
	say("the parent's model calls: %d in its launching turn (the launches, then its reply), %d after the %d notices (its wake with the results).",
		before, after, len(children))
	say("The last notice carried this to the model (hidden from the user):\n")
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Info.Role != "user" {
			continue
		}
		for _, p := range msgs[i].Parts {
			if p.Synthetic {
				say("%s", indent(p.Text))
				i = -1
				break
			}
		}
	}
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }
