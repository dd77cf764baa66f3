import { describe, expect, test } from "bun:test";
import { headlessConfig, headlessRun } from "./headless";

const oc = (...args: string[]) => ["bun", "/$bunfs/root/opencode", ...args];

describe("headlessRun", () => {
  test("opencode run and the GitHub agent are headless", () => {
    expect(headlessRun(oc("run", "hello"))).toBe(true);
    expect(headlessRun(oc("--log-level", "DEBUG", "--print-logs", "run", "hello"))).toBe(true);
    expect(headlessRun(oc("--log-level=INFO", "run", "--format", "json", "hi"))).toBe(true);
    expect(headlessRun(oc("github", "run", "--event", "x"))).toBe(true);
  });
  test("the TUI, serve and a message that says run are not", () => {
    expect(headlessRun(oc())).toBe(false);
    expect(headlessRun(oc("serve", "--port", "4096"))).toBe(false);
    expect(headlessRun(oc(".", "--port", "4096"))).toBe(false);
    expect(headlessRun(oc("--log-level", "run"))).toBe(false); // run is the option's value here
    expect(headlessRun(oc("github", "install"))).toBe(false);
    expect(headlessRun(oc("--", "run"))).toBe(false);
  });
});

describe("headlessConfig", () => {
  test("adds the host's finding to the user's options, and passes a wrong value on for the core to refuse", () => {
    expect(headlessConfig(undefined, true)).toEqual({ active: true });
    expect(headlessConfig({ waitForTasks: false }, true)).toEqual({ waitForTasks: false, active: true });
    expect(headlessConfig("yes", true)).toBe("yes");
  });
});
