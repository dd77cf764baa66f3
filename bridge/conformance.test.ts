// The conformance kit through the .wasm under Bun: the same case files that core/conformance
// plays natively and host/ plays under wazero.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Core, compile, parseResponse } from "./core";
import { match } from "./match";
import { HEARTBEAT_TIMER, PROGRESS_TIMER } from "./abi_types.gen";

const casesDir = join(import.meta.dir, "..", "core", "conformance", "cases");
const wasmPath = process.env.ASYNCAGENTS_WASM ?? join(import.meta.dir, "..", "dist", "asyncagents.wasm");
const module = await compile(readFileSync(wasmPath));

interface Step {
  note?: string;
  request?: unknown;
  requestText?: string;
  expect?: unknown;
  expectEffects?: unknown[];
}

const files = readdirSync(casesDir).filter((f) => f.endsWith(".json")).sort();

describe("conformance through bun", () => {
  test("there are cases", () => expect(files.length).toBeGreaterThan(0));
  for (const file of files) {
    test(file, async () => {
      const c = JSON.parse(readFileSync(join(casesDir, file), "utf8")) as { steps: Step[]; history?: boolean; sse?: boolean; toasts?: boolean };
      const core = await Core.instantiate(module);
      c.steps.forEach((s, i) => {
        const raw = core.callRaw(s.requestText ?? JSON.stringify(s.request));
        const got = parseResponse(raw) as any;
        const label = `step ${i} (${s.note ?? ""})`;
        if (s.expect !== undefined) {
          const err = match(s.expect, got);
          if (err) throw new Error(`${label}: ${err}\nfull response: ${raw}`);
        }
        if (s.expectEffects !== undefined) {
          // Like the Go runner: history.*, sse.* and tui.* effects (and the timers of the history's
          // progress and the streams' heartbeat) are matched only in cases that ask for them.
          const effects = (got.effects ?? []).filter(
            (e: { kind: string; timerID?: string }) =>
              (c.history || !(e.kind.startsWith("history.") || e.timerID === PROGRESS_TIMER)) &&
              (c.sse || !(e.kind.startsWith("sse.") || e.timerID === HEARTBEAT_TIMER)) &&
              (c.toasts || !e.kind.startsWith("tui.")),
          );
          const err = match(s.expectEffects, effects, "effects");
          if (err) throw new Error(`${label}: ${err}\nfull response: ${raw}`);
        }
      });
    });
  }
});
