package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// remoteFloorTool is the remote floor's launching tool.
const remoteFloorTool = "floor_remote_task"

// remoteFloorPlugin is the launching half of the remote floor (remoteFloorNotifier is the other),
// loaded alone in a parent of its own: its tool creates the child session on the worker named
// (BENCH_REMOTE_FLOOR_WORKERS: each worker's url, password and directory), prompts it without
// waiting, writes a line "parent child worker" to BENCH_REMOTE_FLOOR_LAUNCHED and answers with
// the child's session ID. Nothing in the parent follows the child, unless BENCH_FOLLOW_STREAMS
// names the script of a Worker that follows the workers' streams (the streams floor, below).
var remoteFloorPlugin = `import { tool } from "@opencode-ai/plugin";
import { appendFileSync } from "node:fs";

export const BenchRemoteFloor = async () => {
  if (process.env.BENCH_FOLLOW_STREAMS) new Worker(process.env.BENCH_FOLLOW_STREAMS);
  const workers = JSON.parse(process.env.BENCH_REMOTE_FLOOR_WORKERS ?? "{}");
  const headers = (w) => ({ authorization: "Basic " + btoa("opencode:" + w.password), "content-type": "application/json" });
  return {
    tool: {
      ` + remoteFloorTool + `: tool({
        description: "Runs a child session on a worker (benchmark floor).",
        args: {
          description: tool.schema.string().optional(),
          prompt: tool.schema.string(),
          agent: tool.schema.string().optional(),
          worker: tool.schema.string(),
        },
        execute: async (args, ctx) => {
          const w = workers[args.worker];
          const at = "?directory=" + encodeURIComponent(w.directory);
          const r = await fetch(w.url + "/session" + at, { method: "POST", headers: headers(w), body: JSON.stringify({ title: args.description ?? "floor" }) });
          const id = (await r.json()).id;
          if (!id) throw new Error("no child session: " + r.status);
          const body = JSON.stringify({ agent: args.agent, parts: [{ type: "text", text: args.prompt }] });
          const p = await fetch(w.url + "/session/" + id + "/prompt_async" + at, { method: "POST", headers: headers(w), body });
          if (!p.ok) throw new Error("prompt: " + p.status);
          appendFileSync(process.env.BENCH_REMOTE_FLOOR_LAUNCHED, ctx.sessionID + " " + id + " " + args.worker + "\n");
          return "task_id: " + id;
        },
      }),
    },
  };
};
`

// remoteFloor is the remote floor as a system: its notices are the notice floor's.
var remoteFloor = system{
	name:    "remote-floor",
	tool:    remoteFloorTool,
	args:    noticeFloor.args,
	notices: noticeFloor.notices,
	idOf:    noticeFloor.idOf,
}

// writeRemoteFloorPlugin writes the remote floor plugin into dir (beside the launch floor's, with
// the same node_modules link) and returns its opencode.json "plugin" entry.
func writeRemoteFloorPlugin(dir, repoRoot string) (string, error) {
	return writeBesideFloor(dir, repoRoot, "bench-remote-floor.js", remoteFloorPlugin)
}

// remoteFloorNotifier is the telling half of the remote floor, run by the benchmark outside the
// parent's process, so that the floor holds what OpenCode itself does for a fan-out on workers and
// nothing a plugin does to follow it. Every pace it reads the children launched past the first
// from bytes of launched (an earlier fan-out's are told already), asks each worker which sessions
// are busy, reads the messages of each child no longer busy and, once its last message is an
// answer, posts it to the parent as the notice floor's plugin does (noReply but for the parent's
// n-th child told, which asks for the one parent turn ours asks for), then writes "parent child"
// to told. It returns when ctx ends.
func remoteFloorNotifier(ctx context.Context, parent *ocserve.Server, workers map[string]*ocserve.Server, launched string, from int64, told string, n int) {
	done := map[string]bool{}
	count := map[string]int{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollEvery):
		}
		busy := map[string]map[string]string{}
		for _, f := range launchedSince(launched, from) {
			if done[f[1]] || workers[f[2]] == nil {
				continue
			}
			w := workers[f[2]]
			if busy[f[2]] == nil {
				st, err := w.Status(ctx)
				if err != nil {
					continue
				}
				busy[f[2]] = st
			}
			if _, ok := busy[f[2]][f[1]]; ok {
				continue
			}
			msgs, err := w.Messages(ctx, f[1])
			if err != nil || len(msgs) == 0 {
				continue
			}
			last := msgs[len(msgs)-1]
			if last.Info.Role != "assistant" || last.Info.Time.Completed == 0 || last.Info.Finish == "tool-calls" {
				continue
			}
			var answer []string
			for _, p := range last.Parts {
				if p.Type == "text" {
					answer = append(answer, p.Text)
				}
			}
			count[f[0]]++
			text := noticeFloorPrefix + "task_id: " + f[1] + "\n\n" + strings.Join(answer, "\n")
			body := ocserve.PromptBody{NoReply: count[f[0]] < n, Parts: []ocserve.TextPart{{Type: "text", Text: text}}}
			if err := parent.PromptAsyncBody(ctx, f[0], body); err != nil {
				count[f[0]]--
				continue
			}
			done[f[1]] = true
			file, err := os.OpenFile(told, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				fmt.Fprintf(file, "%s %s\n", f[0], f[1])
				file.Close()
			}
		}
	}
}

// fileSize is path's size, 0 when it cannot be read.
func fileSize(path string) int64 {
	if st, err := os.Stat(path); err == nil {
		return st.Size()
	}
	return 0
}

// launchedSince is the lines "parent child worker" written to path after its first from bytes.
func launchedSince(path string, from int64) [][3]string {
	raw, _ := os.ReadFile(path)
	var out [][3]string
	for _, line := range strings.Split(string(raw[min(from, int64(len(raw))):]), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			out = append(out, [3]string{f[0], f[1], f[2]})
		}
	}
	return out
}

// toldFile is the remote floor's told probe: the lines "parent child" its plugin writes.
type toldFile struct{ path string }

// allTold: n of parent's children are told.
func (f toldFile) allTold(_ context.Context, parent string, n int) (bool, error) {
	file, err := os.Open(f.path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer file.Close()
	told := 0
	for s := bufio.NewScanner(file); s.Scan(); {
		if strings.HasPrefix(s.Text(), parent+" ") {
			told++
		}
	}
	return told >= n, nil
}

// remoteFloorParent is the remote floor's own parent `opencode serve`, with the floor's plugin
// alone, and the files its two halves write.
type remoteFloorParent struct {
	parent         *ocserve.Server
	model          *mockmodel.Server
	workers        map[string]*ocserve.Server
	launched, told string
}

// startRemoteFloor starts the remote floor's parent on fl's workers and the one mock model; with
// streams, the streams floor's: the same parent, and in it a Worker that follows each worker's
// stream as the plugin's Worker does (plugin-js/workers_follow.ts, with the core's rule), feeding
// what it reads to nothing. That is what any plugin that follows the workers' event streams
// pays for the bytes alone, whatever it then does with them.
func startRemoteFloor(b *testing.B, root string, model *mockmodel.Server, fl *ocserve.Fleet, streams bool) *remoteFloorParent {
	tmp := b.TempDir()
	spec, err := writeRemoteFloorPlugin(filepath.Join(tmp, "floor"), root)
	if err != nil {
		b.Fatal(err)
	}
	workers := map[string]map[string]string{}
	for name, w := range fl.Workers {
		workers[name] = map[string]string{"url": w.URL, "password": w.Password(), "directory": w.Dir}
	}
	list, _ := json.Marshal(workers)
	f := &remoteFloorParent{model: model, workers: fl.Workers, launched: filepath.Join(tmp, "launched"), told: filepath.Join(tmp, "told")}
	env := []string{"BENCH_REMOTE_FLOOR_WORKERS=" + string(list), "BENCH_REMOTE_FLOOR_LAUNCHED=" + f.launched}
	if streams {
		rule, _ := json.Marshal(core.WorkerFollowRule())
		env = append(env, "BENCH_FOLLOW_STREAMS="+filepath.Join(root, "testharness", "bench", "follow_streams.ts"), "BENCH_FOLLOW_RULE="+string(rule))
	}
	f.parent = ocserve.Start(b, ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN", Plugins: []string{spec}, Env: env})
	return f
}
