// Command gen writes the token-estimate corpus (core/forkctx/testdata/tokens/*.txt):
// conversations built from this repository's own files, rendered by forkctx.BuildForkContext the
// way a forked child sees them. Run it from the repository root, then recompute reference.json:
//
//	go run ./core/forkctx/testdata/tokens/gen
//	node_modules/.bin/bun core/forkctx/testdata/tokens/reference.ts
//
// The corpus is a snapshot: it is committed, and regenerating it is only needed to change it.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/asyncagents/asyncagents/core/forkctx"
)

const outDir = "core/forkctx/testdata/tokens"

type part map[string]any

type msg struct {
	Info  map[string]any `json:"info"`
	Parts []part         `json:"parts"`
}

type conv struct {
	name string
	msgs []msg
	n    int
}

func (c *conv) id(prefix string) string {
	c.n++
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d", c.name, prefix, c.n)))
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var b strings.Builder
	b.WriteString(prefix)
	for _, x := range h[:22] {
		b.WriteByte(alphabet[int(x)%len(alphabet)])
	}
	return b.String()
}

func (c *conv) add(role string, parts ...part) {
	c.msgs = append(c.msgs, msg{Info: map[string]any{"id": c.id("msg_"), "role": role}, Parts: parts})
}

func (c *conv) user(s string) { c.add("user", text(s)) }

func text(s string) part { return part{"type": "text", "text": s} }

func reasoning(s string) part { return part{"type": "reasoning", "text": s} }

func (c *conv) tool(name string, input any, output string) part {
	prefix := "call_"
	if c.n%3 == 0 {
		prefix = "toolu_01"
	}
	return part{"type": "tool", "tool": name, "callID": c.id(prefix),
		"state": map[string]any{"status": "completed", "input": input, "output": output}}
}

func (c *conv) render(opt forkctx.ForkOptions) string {
	// As OpenCode (JavaScript) writes JSON: no HTML escapes.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	check(enc.Encode(c.msgs))
	s, _, err := forkctx.BuildForkContext(buf.Bytes(), opt)
	check(err)
	return s + "\n"
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func read(path string) string {
	b, err := os.ReadFile(path)
	check(err)
	return string(b)
}

func sh(name string, args ...string) string {
	out, _ := exec.Command(name, args...).CombinedOutput()
	return strings.TrimRight(string(out), "\n")
}

// readOutput is OpenCode's read tool output: numbered lines in a <file> element.
func readOutput(content string) string {
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	var b strings.Builder
	b.WriteString("<file>\n")
	for i, l := range lines {
		fmt.Fprintf(&b, "%05d| %s\n", i+1, l)
	}
	fmt.Fprintf(&b, "\n(End of file - total %d lines)\n</file>", len(lines))
	return b.String()
}

func glob(pattern string) []string {
	m, err := filepath.Glob(pattern)
	check(err)
	var out []string
	for _, f := range m {
		if !strings.HasSuffix(f, "_test.go") || strings.Contains(pattern, "_test") {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// sections splits markdown at its "## " headings.
func sections(md string) (titles, bodies []string) {
	for _, s := range regexp.MustCompile(`(?m)^## `).Split(md, -1)[1:] {
		title, body, _ := strings.Cut(s, "\n")
		titles = append(titles, title)
		bodies = append(bodies, strings.TrimSpace(body))
	}
	return
}

// docComments gathers a Go file's comments as prose paragraphs.
func docComments(src string) []string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, l := range strings.Split(src, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "//go:") {
			cur = append(cur, strings.TrimSpace(strings.TrimPrefix(t, "//")))
		} else {
			flush()
		}
	}
	flush()
	return paras
}

var whole = forkctx.ForkOptions{MaxToolResultChars: 1 << 30, MaxParamPreviewChars: 200, MaxTokens: 1 << 30}

func prose() string {
	c := &conv{name: "prose"}
	c.user("I'm new to this repository. Before we touch anything, explain what asyncagents is for and how it is put together. Keep it readable, I'll ask follow-ups.")
	for _, f := range []string{"README.md", "RATIONALE.md", "ABI.md"} {
		titles, bodies := sections(read(f))
		for i := range titles {
			c.user(fmt.Sprintf("What does %s say about \"%s\"? Summarise it in your own words if it is long.", f, titles[i]))
			c.add("assistant", part{"type": "step-start"},
				reasoning("The user wants the section "+titles[i]+" explained. I will restate it."),
				text(fmt.Sprintf("Here is what %s says under **%s**:\n\n%s", f, titles[i], bodies[i])),
				part{"type": "step-finish", "reason": "stop"})
		}
	}
	for _, f := range glob("core/*.go") {
		paras := docComments(read(f))
		if len(paras) < 3 {
			continue
		}
		c.user("And what is " + f + " responsible for? Just the idea, no code.")
		c.add("assistant", text("From its comments, "+f+" works like this.\n\n"+strings.Join(paras, "\n\n")+
			"\n\nIn short: it is pure logic with no I/O, like the rest of the core, so its behaviour is fixed by the events it is given."))
	}
	return c.render(whole)
}

func goCode() string {
	c := &conv{name: "go"}
	c.user("Read the Go core and the wazero host so you know how they fit together. I want to change how notices are built afterwards.")
	files := append(glob("core/*.go"), glob("host/*.go")...)
	for i, f := range files {
		var parts []part
		if i%4 == 0 {
			parts = append(parts, text(fmt.Sprintf("Next I'll look at `%s`.", f)))
		}
		parts = append(parts, c.tool("read", map[string]any{"filePath": "/work/main/" + f}, readOutput(read(f))))
		if i%3 == 1 {
			src := read(f)
			if j := strings.Index(src, "\nfunc "); j >= 0 {
				fn := src[j+1:]
				if k := strings.Index(fn, "\n}\n"); k >= 0 {
					fn = fn[:k+2]
				}
				parts = append(parts, text("The central function here is:\n\n```go\n"+fn+"\n```\n\nIt is called from the machine's step loop."))
				parts = append(parts, c.tool("edit", map[string]any{"filePath": "/work/main/" + f, "oldString": fn, "newString": strings.Replace(fn, "{", "{ // reviewed", 1)}, "Edit applied successfully."))
			}
		}
		c.add("assistant", parts...)
	}
	c.add("assistant", text("I've read the whole core and the host. The notices are built in `core/notify.go`; the host only carries effects out."))
	return c.render(whole)
}

func tsCode() string {
	c := &conv{name: "ts"}
	c.user("Now the TypeScript side: the bridge that runs the wasm module in Bun and the plugin itself.")
	files := append(glob("bridge/*.ts"), glob("plugin-js/*.ts")...)
	files = append(files, "tsconfig.json", "Makefile", "package.json")
	for i, f := range files {
		if f == "plugin-js/tokens.test.ts" {
			continue
		}
		var parts []part
		if i%2 == 0 {
			parts = append(parts, text(fmt.Sprintf("Reading `%s`.", f)))
			parts = append(parts, c.tool("read", map[string]any{"filePath": "/work/main/" + f}, readOutput(read(f))))
		} else {
			parts = append(parts, c.tool("bash", map[string]any{"command": "cat " + f, "description": "Show " + f}, read(f)))
		}
		c.add("assistant", parts...)
		if i%3 == 2 {
			c.user("Where does " + f + " get its configuration from, and what happens if the core fails to load?")
			c.add("assistant", text("It reads the plugin options passed by OpenCode and hands them to the core's `init`; if the module fails to compile, every tool call answers with the error instead of crashing OpenCode:\n\n```ts\nconst core = await loadCore(options).catch((e) => ({ error: String(e) }))\n```"))
		}
	}
	return c.render(whole)
}

func jsonCases() string {
	c := &conv{name: "json"}
	c.user("Show me the conformance cases, I want to see the exact JSON steps the hosts replay.")
	for i, f := range glob("core/conformance/cases/*.json") {
		var p part
		if i%2 == 0 {
			p = c.tool("bash", map[string]any{"command": "cat " + f, "description": "Print conformance case"}, read(f))
		} else {
			p = c.tool("read", map[string]any{"filePath": "/work/main/" + f}, read(f))
		}
		c.add("assistant", text(fmt.Sprintf("Case %d:", i+1)), p)
	}
	c.user("Also what does a session's message list look like over the API?")
	sample := []map[string]any{
		{"info": map[string]any{"id": "msg_a1", "role": "user", "sessionID": "ses_parent", "time": map[string]any{"created": 1763798400000}},
			"parts": []any{map[string]any{"id": "prt_1", "type": "text", "text": "Find the auth code"}}},
		{"info": map[string]any{"id": "msg_a2", "role": "assistant", "sessionID": "ses_parent", "modelID": "gpt-5", "providerID": "openai", "finish": "stop",
			"time": map[string]any{"created": 1763798401000, "completed": 1763798409000}, "tokens": map[string]any{"input": 12034, "output": 512, "reasoning": 0, "cache": map[string]any{"read": 8000, "write": 0}}, "cost": 0.0123},
			"parts": []any{map[string]any{"id": "prt_2", "type": "step-start"}, map[string]any{"id": "prt_3", "type": "tool", "tool": "grep", "callID": "call_9", "state": map[string]any{"status": "completed", "input": map[string]any{"pattern": "auth", "path": "src"}, "output": "src/auth.ts:12: export function authenticate(", "title": "auth", "metadata": map[string]any{"matches": 1}, "time": map[string]any{"start": 1763798402000, "end": 1763798402100}}}}},
	}
	b, _ := json.MarshalIndent(sample, "", "  ")
	c.add("assistant", c.tool("bash", map[string]any{"command": "curl -s localhost:4096/session/ses_parent/message | jq", "description": "Fetch messages"}, string(b)))
	return c.render(whole)
}

func shell() string {
	c := &conv{name: "shell"}
	c.user("Check the state of the repository: history, what changed recently, and whether everything builds.")
	cmds := []struct{ desc, cmd string }{
		{"Show recent history", "git log --stat -n 12"},
		{"Show recent changes", "git diff HEAD~4 HEAD -- core plugin-js"},
		{"List files", "ls -la . core core/conformance/cases bridge plugin-js host"},
		{"Vet the Go packages", "go vet ./core/ ./host/"},
		{"List Go modules", "go list -m all"},
		{"Count lines", "find . -path ./node_modules -prune -o -type f ( -name *.go -o -name *.ts ) -print | sort | xargs wc -l"},
		{"Size of dependencies", "du -sh node_modules/*"},
		{"Find functions", "grep -rn func core/"},
		{"Installed packages", "npm ls --all"},
	}
	for _, x := range cmds {
		var out string
		switch x.cmd {
		case "git log --stat -n 12":
			out = sh("git", "log", "--stat", "-n", "12")
		case "git diff HEAD~4 HEAD -- core plugin-js":
			out = sh("git", "diff", "HEAD~4", "HEAD", "--", "core", "plugin-js")
		case "ls -la . core core/conformance/cases bridge plugin-js host":
			out = sh("ls", "-la", ".", "core", "core/conformance/cases", "bridge", "plugin-js", "host")
		case "go vet ./core/ ./host/":
			out = sh("go", "vet", "./core/", "./host/")
			if out == "" {
				out = "(no output)"
			}
		case "go list -m all":
			out = sh("go", "list", "-m", "all")
		case "du -sh node_modules/*":
			out = sh("sh", "-c", "du -sh node_modules/* | sort -h")
		case "grep -rn func core/":
			out = sh("sh", "-c", "grep -rn 'func ' core/*.go | sort")
		case "npm ls --all":
			out = sh("sh", "-c", "npm ls --all 2>/dev/null | head -60")
		default:
			out = sh("sh", "-c", "find . -path ./node_modules -prune -o -type f \\( -name '*.go' -o -name '*.ts' \\) -print | sort | xargs wc -l")
		}
		if len(out) > 20000 { // keep each output modest: the corpus is committed
			out = out[:strings.LastIndex(out[:20000], "\n")]
		}
		c.add("assistant", text(x.desc+":"), c.tool("bash", map[string]any{"command": x.cmd, "description": x.desc}, out))
	}
	c.add("assistant", text("The history is linear, the last commits touched the plugin runtime and the property test, and `go vet` is clean."))
	return c.render(whole)
}

// forkDefault is a whole session rendered with the default options: what a child really gets.
func forkDefault() string {
	c := &conv{name: "fork"}
	c.user("We need to add the fork option to asyncagents_task. Read the spec rules first, then the code that launches tasks, and make a plan. Don't edit yet.")
	c.add("assistant", part{"type": "step-start"}, reasoning("Plan: read the tool, the machine, the notices."),
		text("I'll start with the task tool and the machine."),
		c.tool("read", map[string]any{"filePath": "/work/main/core/tool_task.go"}, readOutput(read("core/tool_task.go"))),
		c.tool("read", map[string]any{"filePath": "/work/main/core/machine.go"}, readOutput(read("core/machine.go"))),
		part{"type": "step-finish", "reason": "tool-calls"})
	c.add("assistant", c.tool("grep", map[string]any{"pattern": "Fork|fork", "path": "/work/main/core", "include": "*.go"}, sh("sh", "-c", "grep -rn -i fork core/*.go | head -40")),
		c.tool("bash", map[string]any{"command": "git log --oneline -n 15", "description": "Recent commits"}, sh("git", "log", "--oneline", "-n", "15")))
	c.add("assistant", text("Here is the plan:\n\n1. Parse `fork` in `taskArgs` and reject it together with `resume` (\"fork and resume are mutually exclusive\").\n2. Read the parent's messages (`session.messages`), render them with `BuildForkContext`, and send the text as a `noReply` prompt to the new child before its real prompt.\n3. Mark the task `isForked` so `asyncagents_list` shows `(forked)`.\n4. Tests: a conformance case for the happy path, one for the rejection, and table tests for the rendering.\n\nRisks: the parent's own call is still running when we read its messages — it shows up as a pending tool call; large pasted logs can blow the budget — oldest messages go first."))
	c.user("Sounds right. Also check what the conformance cases look like and the bridge's types; the French docs team asked whether the notice texts are translatable — « les notifications sont-elles traduisibles ? » — answer that too.")
	for _, f := range glob("core/conformance/cases/*.json")[:6] {
		c.add("assistant", c.tool("read", map[string]any{"filePath": "/work/main/" + f}, read(f)))
	}
	c.add("assistant", c.tool("read", map[string]any{"filePath": "/work/main/bridge/types.ts"}, readOutput(read("bridge/types.ts"))),
		c.tool("read", map[string]any{"filePath": "/work/main/plugin-js/runtime.ts"}, readOutput(read("plugin-js/runtime.ts"))))
	c.add("assistant", text("The cases are JSON steps: a request (`init`, `step` with an event) and the effects expected back. Notices are built in Go, in English only, with fixed glyphs (✓ finished, ✗ error, ⊘ cancelled); translating them would mean a `locale` option in `Config` and per-locale tables in `notify.go` — possible, but the model-facing hidden part should stay English. Réponse courte : pas encore, mais c'est faisable."))
	c.user("ok. run the tests and tell me what fails")
	c.add("assistant", c.tool("bash", map[string]any{"command": "go test ./core/... 2>&1 | tail -40", "description": "Run core tests"}, sh("sh", "-c", "go test ./core/conformance/ 2>&1 | tail -40")),
		c.tool("bash", map[string]any{"command": "go vet ./...", "description": "Vet"}, sh("sh", "-c", "go vet ./core/ 2>&1; echo exit=$?")))
	c.add("assistant", text("Results are above. Nothing in the fork path is covered yet; the next step is the rendering table test."))
	for _, f := range []string{"README.md", "RATIONALE.md"} {
		c.user("Paste me the current " + f + " so I can review the wording.")
		c.add("assistant", c.tool("read", map[string]any{"filePath": "/work/main/" + f}, readOutput(read(f))), text("That's the whole of "+f+"; the sections about completion and notices are the ones the fork change touches."))
	}
	return c.render(forkctx.ForkOptions{})
}

func main() {
	files := map[string]string{
		"01_prose.txt":        prose(),
		"02_go_code.txt":      goCode(),
		"03_ts_code.txt":      tsCode(),
		"04_json.txt":         jsonCases(),
		"05_shell.txt":        shell(),
		"06_fork_default.txt": forkDefault(),
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		check(os.WriteFile(filepath.Join(outDir, n), []byte(files[n]), 0o644))
		fmt.Printf("%-22s %7d bytes\n", n, len(files[n]))
	}
}
