// The workers' event streams against a fake `opencode serve`: events fed tagged with their
// worker (OpenCode's own frames and sync copies left out), worker.state on connect and on drop,
// reconnects with a doubling backoff up to its cap, a silent stream counted as dropped, one
// stream per worker, and nothing more once stopped.

import { afterEach, beforeEach, expect, test } from "bun:test";
import type { CoreEvent } from "../bridge/types";
import { fakeWorker, frame, until, type FakeWorker } from "./fake_worker";
import { WorkerFollowers, type FollowTiming } from "./workers_follow";
import { EventGroup } from "./workers_group";

const PW = "s3cret-pw";
const FAST: FollowTiming = { firstBackoffMs: 40, maxBackoffMs: 160, silenceMs: 400 };
let fake: FakeWorker;
let fed: CoreEvent[];
let followers: WorkerFollowers;
const remote = () => ({ url: fake.url, username: "opencode", passwordEnv: "AA_TEST_W1_PASSWORD" });
const states = () => fed.filter((e) => e.type === "worker.state");
const events = (): CoreEvent[] => fed.filter((e) => e.type === "opencode");
const streamOpens = () => fake.seen.filter((s) => s.path === "/global/event");

beforeEach(() => {
  fake = fakeWorker("opencode", PW);
  process.env.AA_TEST_W1_PASSWORD = PW;
  fed = [];
  followers = new WorkerFollowers((e) => void fed.push(e), FAST);
});

afterEach(() => {
  followers.stop();
  fake.stop();
  delete process.env.AA_TEST_W1_PASSWORD;
});

test("up after server.connected; payloads fed as opencode events tagged with the worker; heartbeats, sync copies and unwanted types left out", async () => {
  followers.follow("w1", remote());
  const s = await fake.nthStream(1);
  expect(fake.seen[0].auth).toBe(`Basic ${Buffer.from(`opencode:${PW}`).toString("base64")}`);
  s.send({ payload: { id: "evt_0", type: "server.connected", properties: {} } });
  await until("up", () => states().length === 1);
  expect(states()).toEqual([{ type: "worker.state", worker: "w1", up: true }]);
  s.send({ payload: { type: "server.heartbeat", properties: {} } });
  s.send(frame("sync", { name: "session.idle" }));
  s.send(frame("lsp.updated"));
  s.send(frame("session.idle", { sessionID: "ses_r" }, "/repo/on/w1"));
  await until("the idle event", () => events().length === 1);
  expect(events()).toEqual([{ type: "opencode", worker: "w1", event: { id: "evt_session.idle", type: "session.idle", properties: { sessionID: "ses_r" } } } as CoreEvent]);
  // Fed in order: had the skipped frames been fed, they would be before the idle event.
  expect(fed.length).toBe(2);
});

test("a config update's disposes are fed, as OpenCode 1.18.33 sends them (the core asks the worker's agents again), and the stream stays up", async () => {
  followers.follow("w1", remote());
  const s = await fake.nthStream(1);
  s.send({ payload: { id: "evt_0", type: "server.connected", properties: {} } });
  s.send(frame("server.instance.disposed", { directory: "/repo/on/w1" }, "/repo/on/w1"));
  s.send({ directory: "global", payload: { type: "global.disposed", properties: {}, id: "evt_g" } });
  await until("both disposes", () => events().length === 2);
  expect(events().map((e: any) => e.event.type)).toEqual(["server.instance.disposed", "global.disposed"]);
  expect((events()[0] as any).event.properties).toEqual({ directory: "/repo/on/w1" });
  expect(states()).toEqual([{ type: "worker.state", worker: "w1", up: true }]);
});

test("a stream that ends is down with the reason, reconnects, and is up again", async () => {
  followers.follow("w1", remote());
  const first = await fake.nthStream(1);
  first.send({ payload: { type: "server.connected", properties: {} } });
  await until("up", () => states().length === 1);
  first.end();
  const second = await fake.nthStream(2);
  second.send({ payload: { type: "server.connected", properties: {} } });
  await until("up again", () => states().length === 3);
  expect(states().map((e: any) => [e.up, e.error])).toEqual([
    [true, undefined],
    [false, "the event stream ended"],
    [true, undefined],
  ]);
});

test("a worker that refuses the password is down once with '401', and is retried with a backoff doubling to its cap", async () => {
  fake.password = "another";
  const waits: number[] = [];
  followers.stop();
  followers = new WorkerFollowers((e) => void fed.push(e), { ...FAST, onBackoff: (ms) => void waits.push(ms) });
  followers.follow("w1", remote());
  await until("six attempts", () => streamOpens().length >= 6);
  expect(states()).toEqual([{ type: "worker.state", worker: "w1", up: false, error: "wrong username or password (401)" }]);
  // The waits asked for double up to the cap; each attempt came no sooner than its wait (a loaded
  // machine may make it later: only the lower bound is the follower's).
  const want = [40, 80, 160, 160, 160];
  expect(waits.slice(0, 5)).toEqual(want);
  const at = streamOpens().map((s) => s.at);
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  gaps.slice(0, 5).forEach((g, i) => expect(g).toBeGreaterThanOrEqual(want[i] - 5));
  expect(JSON.stringify(fed)).not.toContain(PW);
});

test("a stream silent for silenceMs counts as dropped, and is opened again", async () => {
  followers.follow("w1", remote());
  const first = await fake.nthStream(1);
  first.send({ payload: { type: "server.connected", properties: {} } });
  await until("up", () => states().length === 1);
  const upAt = performance.now();
  await until("down", () => states().length === 2, 3_000);
  expect(performance.now() - upAt).toBeGreaterThanOrEqual(FAST.silenceMs - 20);
  expect(states()[1]).toEqual({ type: "worker.state", worker: "w1", up: false, error: "no event for 0.4 s" });
  // The silent stream was let go, and a new one opened.
  await first.closed;
  await fake.nthStream(2);
});

test("heartbeats keep a stream up past silenceMs", async () => {
  followers.follow("w1", remote());
  const s = await fake.nthStream(1);
  s.send({ payload: { type: "server.connected", properties: {} } });
  await until("up", () => states().length === 1);
  // Three silence periods of heartbeats, then one idle event on the same first stream: it arrives
  // only if that stream was never let go.
  for (let i = 0; i < (FAST.silenceMs * 3) / 100; i++) {
    s.send({ payload: { type: "server.heartbeat", properties: {} } });
    await Bun.sleep(100);
  }
  s.send(frame("session.idle", { sessionID: "ses_r" }));
  await until("the idle event", () => events().length === 1);
  expect(states().length).toBe(1);
  expect(streamOpens().length).toBe(1);
});

test("a second follow of the same worker opens no second stream; stop ends the stream and follows no more", async () => {
  followers.follow("w1", remote());
  followers.follow("w1", remote());
  const s = await fake.nthStream(1);
  s.send({ payload: { type: "server.connected", properties: {} } });
  s.send(frame("session.idle", { sessionID: "ses_r" }));
  await until("the idle event", () => events().length >= 1);
  // Two streams of one worker would be two requests to the fake.
  s.send(frame("session.status", { sessionID: "ses_r", status: { type: "idle" } }));
  await until("the status event", () => events().length >= 2);
  expect(events().length).toBe(2);
  expect(streamOpens().length).toBe(1);
  // Stopping lets the stream go (the fake sees its client leave), and feeds no drop.
  followers.stop();
  await s.closed;
  expect(states().length).toBe(1);
});

test("unfollow closes the stream and feeds nothing more, not even its end; a later follow opens a new one, heard from its connect", async () => {
  followers.follow("w1", remote());
  const s = await fake.nthStream(1);
  s.send({ payload: { type: "server.connected", properties: {} } });
  await until("up", () => states().length === 1);
  followers.unfollow("w1");
  await s.closed; // the fake sees its client leave
  s.send(frame("session.idle", { sessionID: "ses_r" }));
  followers.follow("w1", remote());
  const again = await fake.nthStream(2);
  again.send({ payload: { type: "server.connected", properties: {} } });
  again.send(frame("session.idle", { sessionID: "ses_q" }));
  await until("the new stream's event", () => events().length === 1);
  expect(states()).toEqual([{ type: "worker.state", worker: "w1", up: true }, { type: "worker.state", worker: "w1", up: true }]);
  expect((events()[0] as any).event.properties).toEqual({ sessionID: "ses_q" });
  expect(streamOpens().length).toBe(2);
});

test("a follow asked again (a new core after a trap) opens no second stream and hears the state the stream is in", async () => {
  followers.follow("w1", remote());
  followers.follow("w1", remote()); // before the stream said anything: nothing to tell yet
  const s = await fake.nthStream(1);
  s.send({ payload: { type: "server.connected", properties: {} } });
  await until("up", () => states().length === 1);
  followers.follow("w1", remote());
  expect(states()).toEqual([{ type: "worker.state", worker: "w1", up: true }, { type: "worker.state", worker: "w1", up: true }]);
  s.end();
  await until("down", () => states().length === 3);
  followers.follow("w1", remote());
  expect(states()[3]).toEqual(states()[2]);
  expect(states()[3].up).toBe(false);
  expect(streamOpens().length).toBeLessThanOrEqual(2); // the reconnect's, never the follow's
});

test("a worker that cannot be reached is down with 'connection refused'", async () => {
  const closed = fakeWorker();
  closed.stop();
  followers.follow("w2", { ...remote(), url: closed.url });
  await until("down", () => states().length === 1);
  expect(states()).toEqual([{ type: "worker.state", worker: "w2", up: false, error: "connection refused" }]);
});

/** Runs fn with JSON.parse counting the texts it parses that hold marker; returns the count. */
async function parsesOf(marker: string, fn: () => Promise<void>): Promise<number> {
  const parse = JSON.parse;
  let n = 0;
  JSON.parse = ((s: string, r?: any) => {
    if (typeof s === "string" && s.includes(marker)) n++;
    return parse(s, r);
  }) as typeof JSON.parse;
  try {
    await fn();
  } finally {
    JSON.parse = parse;
  }
  return n;
}

test("a followed worker's text deltas are never parsed; the events around them are fed in order", async () => {
  const deltasParsed = await parsesOf("message.part.delta", async () => {
    followers.follow("w1", remote());
    const s = await fake.nthStream(1);
    s.send({ payload: { type: "server.connected", properties: {} } });
    s.send(frame("session.status", { sessionID: "ses_r", status: { type: "busy" } }));
    for (let i = 0; i < 50; i++) {
      s.send(frame("message.part.delta", { sessionID: "ses_r", partID: "prt_1", field: "text", delta: `${i} "type":"session.idle"` }));
    }
    s.send(frame("session.idle", { sessionID: "ses_r" }));
    await until("the idle event", () => events().length === 2);
  });
  expect(events().map((e: any) => e.event.type)).toEqual(["session.status", "session.idle"]);
  expect(deltasParsed).toBe(0);
});

test("with the core's rule, a child's progress comes as one batch, its idle at once after it; a drop sends what waits first", async () => {
  const rule = { batchMs: 60_000, defer: ["message.part.updated"], coalesce: { "message.part.updated": "part.id" } };
  followers.follow("w1", remote(), rule);
  const s = await fake.nthStream(1);
  s.send({ payload: { type: "server.connected", properties: {} } });
  for (const status of ["pending", "running", "completed"]) {
    s.send(frame("message.part.updated", { part: { id: "prt_1", sessionID: "ses_r", state: { status } } }));
  }
  s.send(frame("session.idle", { sessionID: "ses_r" }));
  await until("the batch", () => events().length === 1);
  const batch = events()[0] as any;
  expect(batch.worker).toBe("w1");
  expect(batch.events.map((e: any) => e.properties.part?.state.status ?? e.type)).toEqual(["completed", "session.idle"]);
  s.send(frame("message.part.updated", { part: { id: "prt_2", sessionID: "ses_r", state: { status: "running" } } }));
  s.end();
  await until("down", () => states().length === 2);
  const after = fed.slice(fed.indexOf(batch) + 1);
  expect(after.map((e: any) => e.type)).toEqual(["opencode", "worker.state"]);
  expect((after[0] as any).event.properties.part.id).toBe("prt_2");
});

test("with the core's rule, a type it does not list is passed over unparsed; what it lists comes", async () => {
  const titlesParsed = await parsesOf("session.updated", async () => {
    followers.follow("w1", remote(), { batchMs: 0, defer: [], coalesce: {}, types: ["session.status", "session.idle"] });
    const s = await fake.nthStream(1);
    s.send({ payload: { type: "server.connected", properties: {} } });
    s.send(frame("session.updated", { info: { id: "ses_r", title: "a long title" } }));
    s.send(frame("session.status", { sessionID: "ses_r", status: { type: "busy" } }));
    s.send(frame("session.idle", { sessionID: "ses_r" }));
    await until("the idle event", () => events().length === 2);
  });
  expect(events().map((e: any) => e.event.type)).toEqual(["session.status", "session.idle"]);
  expect(titlesParsed).toBe(0);
});

test("with the core's rule, a child's progress is held undecoded until its batch goes, then decoded once a frame", async () => {
  const rule = { batchMs: 60_000, defer: ["message.part.updated"], coalesce: { "message.part.updated": "part.id" } };
  let s!: Awaited<ReturnType<FakeWorker["nthStream"]>>;
  // The group's hold is watched: the three parts are seen to be read and held, not assumed.
  const hold = EventGroup.prototype.hold;
  let holds = 0;
  EventGroup.prototype.hold = function (this: EventGroup, ...args: Parameters<typeof hold>) {
    holds++;
    return hold.apply(this, args);
  };
  let decoded: number;
  try {
    decoded = await parsesOf('"message.part.updated"', async () => {
      followers.follow("w1", remote(), rule);
      s = await fake.nthStream(1);
      s.send({ payload: { type: "server.connected", properties: {} } });
      await until("up", () => states().length === 1);
      for (const status of ["pending", "running", "completed"]) {
        s.send(frame("message.part.updated", { part: { id: "prt_1", sessionID: "ses_r", state: { status } } }));
      }
      await until("the three parts read and held", () => holds === 3);
    });
  } finally {
    EventGroup.prototype.hold = hold;
  }
  expect(decoded).toBe(0);
  expect(events()).toEqual([]);
  const sent = await parsesOf('"message.part.updated"', async () => {
    s.send(frame("session.status", { sessionID: "ses_r", status: { type: "busy" } }));
    await until("the status, which goes at once, after the parts", () => events().length === 1);
  });
  expect(sent).toBe(3);
  expect((events()[0] as any).events.map((e: any) => e.properties.part?.state.status ?? e.type)).toEqual(["completed", "session.status"]);
});
