// Turns the core's tool specs into OpenCode tool definitions with tool.schema (zod) arguments.
// The words (descriptions) are the core's; this file only maps types.

import { tool } from "@opencode-ai/plugin/tool";
import type { ToolSpec } from "../bridge/core";
import type { CoreHost } from "./remote";
import { hop, profiling } from "./profile";

function argSchema(a: ToolSpec["args"][number]): any {
  const z = tool.schema;
  const base =
    a.type === "object"
      ? // passthrough: a key the core does not know reaches it, which refuses it by name (zod
        // would drop it in silence, and `budget: {dollars: 5}` would run with no budget).
        z.object(Object.fromEntries((a.fields ?? []).map((f) => [f.name, argSchema(f)]))).passthrough()
      : a.type === "boolean"
        ? z.boolean()
        : a.type === "number"
          ? z.number()
          : z.string();
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
      execute: profiling ? (input, ctx) => profiled(runtime, spec.name, input, ctx) : (input, ctx) => runtime.callTool(spec.name, input, ctx as any),
    });
  }
  return tools;
}

/** A tool call with its profile hops (see profile.ts): when OpenCode called it, when it returns. */
async function profiled(runtime: CoreHost, name: string, input: unknown, ctx: any) {
  hop("tool.called", { call: ctx.callID });
  const answer = await runtime.callTool(name, input, ctx);
  hop("tool.returned", { call: ctx.callID, task: answer.metadata?.taskId as string | undefined });
  return answer;
}
