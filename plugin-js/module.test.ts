// The built bundle, as OpenCode imports it: every export of a plugin module must be a plugin
// function, or OpenCode refuses the whole module.
import { expect, test } from "bun:test";
import { join } from "node:path";

test("the bundle exports the plugin function and nothing else", async () => {
  const mod = await import(join(import.meta.dir, "..", "dist", "asyncagents.js"));
  expect(Object.keys(mod)).toEqual(["AsyncAgents"]);
  expect(typeof mod.AsyncAgents).toBe("function");
});
