// The terminal UI module's data source: this process's server file, found by its pid among the
// projects' folders; the status API read with its token; the event stream's task frames (not its
// heartbeats) calling for a fresh read; a cancel sent with the server's own Origin.
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findServer, ViewClient } from "./source";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(files: Record<string, object | string>): string {
  const data = mkdtempSync(join(tmpdir(), "aa-tui-"));
  dirs.push(data);
  for (const [rel, content] of Object.entries(files)) {
    const path = join(data, "opencode", "asyncagents", rel);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  }
  return data;
}

test("the server file is this process's, whichever project folder holds it", () => {
  const data = dataDir({
    "servers-aaaa/111.json": { port: 5165, pid: 111, url: "http://127.0.0.1:5165", token: "other" },
    "servers-bbbb/222.json": { port: 5166, pid: 222, url: "http://127.0.0.1:5166", token: "mine" },
    "servers-cccc/333.json": "half a file",
    "history-x.log": "not a folder of server files",
  });
  expect(findServer({ XDG_DATA_HOME: data }, 222)).toEqual({ url: "http://127.0.0.1:5166", token: "mine", port: 5166 });
  expect(findServer({ XDG_DATA_HOME: data }, 333)).toBeUndefined();
  expect(findServer({ XDG_DATA_HOME: data }, 444)).toBeUndefined();
  // A file named for this pid that another process wrote (its pid inside differs) is not ours.
  const stale = dataDir({ "servers-aaaa/555.json": { port: 5165, pid: 556, url: "http://127.0.0.1:5165", token: "x" } });
  expect(findServer({ XDG_DATA_HOME: stale }, 555)).toBeUndefined();
  // Without XDG_DATA_HOME: under HOME, as the core places it.
  const home = mkdtempSync(join(tmpdir(), "aa-tui-home-"));
  dirs.push(home);
  const share = join(home, ".local", "share");
  mkdirSync(join(share, "opencode", "asyncagents", "servers-z"), { recursive: true });
  writeFileSync(join(share, "opencode", "asyncagents", "servers-z", "7.json"), JSON.stringify({ port: 1, pid: 7, url: "http://127.0.0.1:1", token: "h" }));
  expect(findServer({ HOME: home }, 7)?.token).toBe("h");
});

test("the client reads with the token, follows task frames, and cancels with the server's Origin", async () => {
  const seen: { path: string; auth: string | null; origin: string | null }[] = [];
  const enc = new TextEncoder();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      seen.push({ path: url.pathname + url.search, auth: req.headers.get("authorization"), origin: req.headers.get("origin") });
      if (url.pathname === "/v1/events") {
        // Line ends of all three kinds the standard allows: each frame is one event.
        const frames = ["event: snapshot\ndata: {}\n\n", "event: heartbeat\rdata: {}\r\r", "event: task.updated\r\ndata: {}\r\n\r\n", "event: task.created\r\ndata: {}\r\n\r\n"];
        return new Response(new ReadableStream({ start: (c) => { for (const f of frames) c.enqueue(enc.encode(f)); c.close(); } }), {
          headers: { "Content-Type": "text/event-stream" },
        });
      }
      if (url.pathname.endsWith("/cancel")) return Response.json({ error: "task bg_1 already ended (completed); nothing was cancelled" }, { status: 409 });
      return Response.json({ title: "Background tasks", rows: [], live: false, empty: "" });
    },
  });
  try {
    const client = new ViewClient({ url: `http://127.0.0.1:${server.port}`, token: "t0k", port: server.port! });
    expect((await client.section("ses/1")).title).toBe("Background tasks");
    expect(seen[0]).toEqual({ path: "/v1/views/session/ses%2F1", auth: "Bearer t0k", origin: null });

    let changes = 0;
    await client.follow(() => changes++, new AbortController().signal);
    expect(changes).toBe(3); // the snapshot, the update and the creation; the heartbeat is not a change

    expect(await client.cancel("bg_1", "cancelled from OpenCode's terminal UI")).toBe("task bg_1 already ended (completed); nothing was cancelled");
    const cancel = seen.at(-1)!;
    expect(cancel.path).toBe("/v1/tasks/bg_1/cancel?reason=cancelled%20from%20OpenCode%27s%20terminal%20UI");
    expect(cancel.origin).toBe(`http://127.0.0.1:${server.port}`);
    expect(cancel.auth).toBe("Bearer t0k");
  } finally {
    server.stop(true);
  }
});
