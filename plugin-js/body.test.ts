// A POST body is read no further than the cap: a long body is cut one byte past it (the core then
// refuses it by its length), and a body that would never end is not read to its end.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCapped } from "./body";
import { ApiServer } from "./server";
import { MAX_REQUEST_BODY_BYTES } from "../bridge/types";

/** A body of `total` bytes of "x" in 64 KiB chunks, counting what was pulled from it. */
function streamed(total: number): { req: Request; pulled: () => number } {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= total) return c.close();
      const n = Math.min(65536, total - sent);
      sent += n;
      c.enqueue(new Uint8Array(n).fill(0x78));
    },
  });
  return { req: new Request("http://127.0.0.1/v1/x", { method: "POST", body, duplex: "half" } as RequestInit), pulled: () => sent };
}

test.each([
  ["a short body is read whole", 10, 10],
  ["a body at the cap is read whole", 100, 100],
  ["a long body is cut one byte past the cap", 1000, 101],
])("%s", async (_, total, want) => {
  const { req } = streamed(total);
  expect((await readCapped(req, 100)).length).toBe(want);
});

test("a body of 1 GiB is not read to its end", async () => {
  const { req, pulled } = streamed(1 << 30);
  expect((await readCapped(req, 16384)).length).toBe(16385);
  expect(pulled()).toBeLessThan(1 << 20);
});

test("no body reads as empty", async () => {
  expect(await readCapped(new Request("http://127.0.0.1/", { method: "POST" }), 100)).toBe("");
});

test("the status API answers a POST whose body never ends, having read no more than the cap", async () => {
  const dir = mkdtempSync(join(tmpdir(), "asyncagents-body-"));
  let seen = -1;
  const api = new ApiServer({
    http: (req) => ((seen = req.body?.length ?? 0), { status: 413, headers: {}, body: "{}" }),
    logs: async () => [],
    conversation: () => ({ status: 200, headers: {}, body: "{}" }),
    log: () => {},
  });
  const port = api.start([], join(dir, "server.json"), (port) => JSON.stringify({ port }));
  const ac = new AbortController();
  try {
    const endless = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new Uint8Array(65536).fill(0x78)) });
    const answer = fetch(`http://127.0.0.1:${port}/v1/tasks/bg_x/permission`, { method: "POST", body: endless, signal: ac.signal, duplex: "half" } as RequestInit);
    const bound = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer in 5 s: the body was read to its end")), 5000));
    expect((await Promise.race([answer, bound])).status).toBe(413);
    expect(seen).toBe(MAX_REQUEST_BODY_BYTES + 1);
  } finally {
    ac.abort();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
