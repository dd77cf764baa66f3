// Stopping the core's effects: those in flight finish, later ones never start.
import { expect, test } from "bun:test";
import type { Effect } from "../bridge/core";
import { drainable } from "./perform_drain";

test("drain lets an effect in flight finish, and holds every later one: none reaches perform", async () => {
  const started: string[] = [];
  let answer!: (v: unknown) => void;
  const perform = drainable((e: Effect) => {
    started.push(`${e.kind} ${e.sessionID}`);
    return e.sessionID === "ses_slow" ? new Promise((r) => (answer = r)) : Promise.resolve("done");
  });
  const slow = perform({ id: 1, kind: "session.messages", sessionID: "ses_slow" });

  const order: string[] = [];
  const draining = perform.drain(10_000).then(() => order.push("drained"));
  void slow.then(() => order.push("read"));
  let held = false;
  void perform({ id: 2, kind: "session.promptAsync", sessionID: "ses_later" }).then(() => (held = true), () => (held = true));
  answer("messages");
  expect(await slow).toBe("messages");
  await draining;
  expect(order).toEqual(["read", "drained"]); // the effect in flight was waited for
  expect(started).toEqual(["session.messages ses_slow"]); // the later one never started
  expect(held).toBe(false);
});

test("drain gives up on an effect that does not finish within its grace", async () => {
  const perform = drainable(() => new Promise(() => {}));
  void perform({ id: 1, kind: "session.create", parentID: "ses_p", title: "t", permission: [] });
  // The effect never ends: drain resolving at all is the outcome (else the test times out).
  expect(await perform.drain(200)).toBeUndefined();
});

test("drain with nothing in flight holds what comes after at once", async () => {
  const started: string[] = [];
  const perform = drainable(async (e: Effect) => void started.push(e.kind));
  await perform({ id: 1, kind: "log", level: "info", message: "before" });
  await perform.drain(10_000);
  void perform({ id: 2, kind: "log", level: "info", message: "after" });
  expect(started).toEqual(["log"]);
});
