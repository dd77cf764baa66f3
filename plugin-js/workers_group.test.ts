// The grouping of a worker's events as the core's follow rule says: what may wait goes as one
// batch after batchMs; a later update of the same key stands for the earlier and keeps its own
// place; anything else goes at once after what waits; an event without a key is never dropped.

import { expect, test } from "bun:test";
import type { FollowRule, OpenCodeEvent } from "../bridge/types";
import { EventGroup, keyAt } from "./workers_group";

const RULE: FollowRule = {
  batchMs: 40,
  defer: ["message.part.updated", "message.updated", "session.status"],
  coalesce: { "message.part.updated": "part.id", "message.updated": "info.id" },
};
const part = (id: string, status: string): OpenCodeEvent => ({ type: "message.part.updated", properties: { part: { id, state: { status } } } });
const msg = (id: string, output: number): OpenCodeEvent => ({ type: "message.updated", properties: { info: { id, tokens: { output } } } });
const status = (type: string): OpenCodeEvent => ({ type: "session.status", properties: { sessionID: "ses_r", status: { type } } });
const idle: OpenCodeEvent = { type: "session.idle", properties: { sessionID: "ses_r" } };

function collect(rule?: FollowRule) {
  const sent: OpenCodeEvent[][] = [];
  return { sent, group: new EventGroup(rule, (events) => void sent.push(events)) };
}

test("keyAt reads a string at a dot path, nothing else", () => {
  expect(keyAt({ part: { id: "prt_1" } }, "part.id")).toBe("prt_1");
  expect(keyAt({ part: { id: 7 } }, "part.id")).toBeUndefined();
  expect(keyAt({ part: null }, "part.id")).toBeUndefined();
  expect(keyAt(undefined, "part.id")).toBeUndefined();
});

test("an event that may not wait goes at once, after what waits, in one batch and in order", () => {
  const { sent, group } = collect(RULE);
  group.push(status("busy"));
  group.push(part("prt_1", "pending"));
  group.push(msg("msg_1", 3));
  expect(sent).toEqual([]);
  group.push(idle);
  expect(sent).toEqual([[status("busy"), part("prt_1", "pending"), msg("msg_1", 3), idle]]);
  group.push(idle);
  expect(sent.length).toBe(2);
  expect(sent[1]).toEqual([idle]);
});

test("a later update of the same part or message stands for the earlier, in the later one's place", () => {
  const { sent, group } = collect(RULE);
  group.push(part("prt_1", "pending"));
  group.push(part("prt_2", "pending"));
  group.push(status("busy"));
  group.push(part("prt_1", "running"));
  group.push(msg("msg_1", 1));
  group.push(part("prt_1", "completed"));
  group.push(msg("msg_1", 9));
  group.push(status("busy"));
  group.flush();
  expect(sent).toEqual([[part("prt_2", "pending"), status("busy"), part("prt_1", "completed"), msg("msg_1", 9), status("busy")]]);
});

test("what waits goes after batchMs on its own, once", async () => {
  const { sent, group } = collect(RULE);
  group.push(part("prt_1", "pending"));
  group.push(part("prt_1", "running"));
  const deadline = Date.now() + 2_000;
  while (sent.length === 0 && Date.now() < deadline) await Bun.sleep(5);
  expect(sent).toEqual([[part("prt_1", "running")]]);
  await Bun.sleep(3 * RULE.batchMs);
  expect(sent.length).toBe(1);
});

test("without a rule every event goes alone, at once; an event without its key is kept", () => {
  const none = collect(undefined);
  none.group.push(part("prt_1", "pending"));
  none.group.push(part("prt_1", "running"));
  expect(none.sent).toEqual([[part("prt_1", "pending")], [part("prt_1", "running")]]);
  const { sent, group } = collect(RULE);
  const keyless: OpenCodeEvent = { type: "message.part.updated", properties: { part: {} } };
  group.push(keyless);
  group.push(keyless);
  group.flush();
  expect(sent).toEqual([[keyless, keyless]]);
});

test("drop forgets what waits, and nothing goes later", async () => {
  const { sent, group } = collect(RULE);
  group.push(part("prt_1", "pending"));
  group.drop();
  await Bun.sleep(3 * RULE.batchMs);
  group.flush();
  expect(sent).toEqual([]);
});

/** The group of collect, with frames held as bytes and decoded as the follower does. */
function collectHeld(rule?: FollowRule) {
  const sent: OpenCodeEvent[][] = [];
  const decoded: string[] = [];
  const group = new EventGroup(rule, (events) => void sent.push(events), (data) => {
    decoded.push(data);
    const ev = JSON.parse(data) as OpenCodeEvent;
    return ev.type === "lsp.updated" ? undefined : ev;
  });
  /** Holds ev's JSON, given inside a larger buffer as a socket's read would be. */
  const hold = (ev: OpenCodeEvent) => {
    const bytes = Buffer.from(`data: ${JSON.stringify(ev)}\n\n`);
    group.hold(bytes, 6, bytes.length - 2);
    bytes.fill(0); // the caller's bytes are its own again once hold returns
  };
  return { sent, decoded, group, hold };
}

test("held frames are decoded only when their batch goes, and keep their places among the events pushed", () => {
  const { sent, decoded, group, hold } = collectHeld(RULE);
  hold(part("prt_1", "pending"));
  group.push(status("busy"));
  hold(msg("msg_1", 1));
  hold(part("prt_1", "completed"));
  hold({ type: "lsp.updated", properties: {} });
  expect(decoded).toEqual([]);
  group.push(idle);
  expect(decoded.length).toBe(4);
  expect(sent).toEqual([[status("busy"), msg("msg_1", 1), part("prt_1", "completed"), idle]]);
});

test("the held bytes are kept in one buffer from batch to batch: frames past its first size, and many of them, come back whole", () => {
  const { sent, group, hold } = collectHeld(RULE);
  // 100,000 bytes of UTF-8, past the buffer's first 64 KiB; then 1.5 MB, past what it keeps.
  const bigs = ["é".repeat(50_000), "é".repeat(750_000), "é".repeat(50_000), "ü".repeat(10)];
  for (const [round, big] of bigs.entries()) {
    for (let i = 0; i < 300; i++) hold(part(`prt_${i}`, `${round}`));
    hold({ type: "message.updated", properties: { info: { id: `msg_${round}`, text: big } } });
    group.flush();
  }
  expect(sent.length).toBe(bigs.length);
  for (const [round, batch] of sent.entries()) {
    expect(batch.length).toBe(301);
    expect(batch[299]).toEqual(part("prt_299", `${round}`));
    expect((batch[300].properties as any).info.text).toBe(bigs[round]);
  }
});

test("a held frame without a rule that groups is decoded and sent at once; drop forgets held frames", async () => {
  const none = collectHeld(undefined);
  none.hold(part("prt_1", "pending"));
  expect(none.sent).toEqual([[part("prt_1", "pending")]]);
  const { sent, group, hold } = collectHeld(RULE);
  hold(part("prt_1", "pending"));
  group.drop();
  await Bun.sleep(3 * RULE.batchMs);
  group.flush();
  expect(sent).toEqual([]);
});
