// Turns the core's tool specs into OpenCode tool definitions with tool.schema (zod) arguments.
// The words (descriptions) are the core's; this file only maps types.

import { tool } from "@opencode-ai/plugin/tool";
import type { ToolSpec } from "../bridge/core";
import type { CoreHost } from "./remote";

function argSchema(a: ToolSpec["args"][number]) {
  const z = tool.schema;
  const base = a.type === "boolean" ? z.boolean() : a.type === "number" ? z.number() : z.string();
  const described = base.describe(a.description);
  return a.required ? described : described.optional();
}

export function makeTools(specs: ToolSpec[], runtime: CoreHost) {
  const tools: Record<string, ReturnType<typeof tool>> = {};
  for (const spec of specs) {
    const args: Record<string, any> = {};
    for (const a of spec.args) args[a.name] = argSchema(a);
    tools[spec.name] = tool({
      description: spec.description,
      args,
      execute: (input, ctx) => runtime.callTool(spec.name, input, ctx as any),
    });
  }
  return tools;
}
