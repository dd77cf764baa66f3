package bench

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// noticeFloorTool is the notice floor's launching tool.
const noticeFloorTool = "floor_task"

// noticeFloorPrefix starts the notice floor's notice, a user message in the parent.
const noticeFloorPrefix = "Floor notice.\n"

// noticeFloorPlugin is the least a plugin can do to tell a parent of a child's answer: its tool
// creates the child session under the parent, prompts it without waiting and answers with the
// child's session ID; its event hook posts the child's answer to the parent the moment the
// child's last message completes (an assistant message completed with a finish other than
// tool-calls), one request per child through the plugin's own client, nothing batched, nothing
// kept, no model turn asked (noReply). It is a measuring fixture, not a product: no history, no
// retries, no limits. Its notice is the floor under ours.
var noticeFloorPlugin = `import { tool } from "@opencode-ai/plugin";

export const BenchNoticeFloor = async ({ client, directory }) => {
  const query = { directory };
  const parentOf = new Map(); // child session -> parent session
  const texts = new Map(); // message ID -> its text parts, by part ID
  return {
    tool: {
      ` + noticeFloorTool + `: tool({
        description: "Runs a child session and tells the parent its answer (benchmark floor).",
        args: {
          description: tool.schema.string().optional(),
          prompt: tool.schema.string(),
          agent: tool.schema.string().optional(),
        },
        execute: async (args, ctx) => {
          const r = await client.session.create({ body: { parentID: ctx.sessionID, title: args.description ?? "floor" }, query });
          const id = r.data?.id;
          if (!id) throw new Error("no child session: " + JSON.stringify(r.error));
          parentOf.set(id, ctx.sessionID);
          client.session.promptAsync({ path: { id }, body: { agent: args.agent, parts: [{ type: "text", text: args.prompt }] }, query });
          return "task_id: " + id;
        },
      }),
    },
    event: async ({ event }) => {
      const p = event.properties ?? {};
      if (event.type === "message.part.updated" && p.part?.type === "text" && parentOf.has(p.part.sessionID)) {
        const m = texts.get(p.part.messageID) ?? new Map();
        m.set(p.part.id, p.part.text ?? "");
        texts.set(p.part.messageID, m);
        return;
      }
      if (event.type !== "message.updated") return;
      const info = p.info ?? {};
      const parent = parentOf.get(info.sessionID);
      if (!parent || info.role !== "assistant" || !info.time?.completed || info.finish === "tool-calls") return;
      parentOf.delete(info.sessionID);
      const answer = [...(texts.get(info.id)?.values() ?? [])].join("\n");
      texts.delete(info.id);
      const text = ` + "`" + noticeFloorJSPrefix + `task_id: ${info.sessionID}\n\n${answer}` + "`" + `;
      client.session.promptAsync({ path: { id: parent }, body: { noReply: true, parts: [{ type: "text", text }] }, query });
    },
  };
};
`

// noticeFloorJSPrefix is noticeFloorPrefix as a JavaScript template literal holds it.
var noticeFloorJSPrefix = strings.ReplaceAll(noticeFloorPrefix, "\n", `\n`)

var floorTaskID = regexp.MustCompile(`(?m)^task_id: (\S+)$`)

// noticeFloor is the notice floor as a system: the task ID is the child session's ID.
var noticeFloor = system{
	name:  "notice-floor",
	tool:  noticeFloorTool,
	quiet: true,
	args: func(desc, prompt string) map[string]any {
		return map[string]any{"description": desc, "prompt": prompt, "agent": "general"}
	},
	notices: func(text string) []notice {
		if !strings.HasPrefix(text, noticeFloorPrefix) {
			return nil
		}
		if m := floorTaskID.FindStringSubmatch(text); m != nil {
			return []notice{{task: m[1], session: m[1]}}
		}
		return nil
	},
	idOf: func(out string) string {
		if m := floorTaskID.FindStringSubmatch(out); m != nil {
			return m[1]
		}
		return ""
	},
}

// writeNoticeFloorPlugin writes the notice floor plugin into dir (beside the launch floor's, with
// the same node_modules link) and returns its opencode.json "plugin" entry.
func writeNoticeFloorPlugin(dir, repoRoot string) (string, error) {
	return writeBesideFloor(dir, repoRoot, "bench-notice-floor.js", noticeFloorPlugin)
}

// writeBesideFloor writes the plugin module source as dir/name, beside the launch floor's and its
// node_modules link, and returns its opencode.json "plugin" entry.
func writeBesideFloor(dir, repoRoot, name, source string) (string, error) {
	if _, err := writeFloorPlugin(dir, repoRoot); err != nil {
		return "", err
	}
	js := filepath.Join(dir, name)
	if err := os.WriteFile(js, []byte(source), 0o644); err != nil {
		return "", err
	}
	return "file://" + js, nil
}
