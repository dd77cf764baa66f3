import { expect, test } from "bun:test";
import { inWorker } from "./core_thread";

test("the core runs in a Worker where OpenCode's server listens, on OpenCode's thread where it does not", () => {
  expect(inWorker(undefined, true)).toBe(true);
  expect(inWorker(undefined, false)).toBe(false);
  expect(inWorker("", false)).toBe(false);
});

test("ASYNCAGENTS_WORKER decides when it says true or false", () => {
  expect(inWorker("false", true)).toBe(false);
  expect(inWorker("true", false)).toBe(true);
  expect(inWorker("yes", false)).toBe(false); // anything else: as if unset
});
