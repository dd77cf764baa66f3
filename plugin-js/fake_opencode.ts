// A stand-in for OpenCode's side of the effects, for the plugin's bun tests: it records every
// effect it is asked to carry out and answers as OpenCode would for a child that finished with
// "the answer". Not part of the plugin.

import type { Effect } from "../bridge/core";

export function fakeOpenCode() {
  const performed: Effect[] = [];
  const perform = async (e: Effect): Promise<unknown> => {
    performed.push(e);
    switch (e.kind) {
      case "agents.list":
        return [{ name: "build", mode: "primary" }, { name: "general", mode: "subagent" }];
      case "session.create":
        return { id: "ses_child" };
      case "session.messages":
        return [
          { info: { id: "u", role: "user" }, parts: [{ type: "text", text: "p" }] },
          { info: { id: "a", role: "assistant", finish: "stop", time: { created: 1, completed: 2 } }, parts: [{ type: "text", text: "the answer" }] },
        ];
    }
    return null;
  };
  return { performed, perform };
}
