// The direct path to OpenCode's server: taken only for a client built on this process's listening
// server, and carrying session.create and session.promptAsync as OpenCode's API takes them.
import { expect, test } from "bun:test";
import { directServer, directly } from "./direct";

const clientOn = (baseUrl: string, headers: Record<string, string> = {}) => ({ _client: { getConfig: () => ({ baseUrl, headers }) } });

test("a client built on the listening server is taken; OpenCode's in-process placeholder is not", () => {
  const url = new URL("http://127.0.0.1:4242");
  // OpenCode passes the listening URL without its trailing slash (as the SDK keeps it).
  const d = directServer(clientOn("http://127.0.0.1:4242", { "x-opencode-directory": "%2Fp", authorization: "Basic eA==" }), url, true);
  expect(d).toEqual({ url: "http://127.0.0.1:4242/", headers: { "x-opencode-directory": "%2Fp", authorization: "Basic eA==" } });
  // The TUI without --port: the client is in-process, on a placeholder where nothing of ours listens.
  expect(directServer(clientOn("http://localhost:4096"), new URL("http://localhost:4096"), true)).toBeUndefined();
  expect(directServer(clientOn(url.toString()), url, false)).toBeUndefined(); // ASYNCAGENTS_DIRECT=false
  expect(directServer({}, url, true)).toBeUndefined();
  expect(directServer(clientOn("http://127.0.0.1:4243"), url, true)).toBeUndefined(); // another server
});

test("session.create, prompts and message reads go straight to the server; anything else to the client; errors name OpenCode's words", async () => {
  const seen: { path: string; body: any; dir: string | null }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method === "GET") return Response.json([{ info: { id: "m1" }, parts: [] }]);
      seen.push({ path, body: await req.json(), dir: req.headers.get("x-opencode-directory") });
      if (path === "/session") return Response.json({ id: "ses_new" });
      if (path === "/session/ses_gone/prompt_async") return Response.json({ name: "NotFoundError", data: { message: "Session not found" } }, { status: 404 });
      return new Response(null, { status: 204 });
    },
  });
  try {
    const viaClient: any[] = [];
    const perform = directly({ url: `http://127.0.0.1:${server.port}/`, headers: { "x-opencode-directory": "%2Fp" } }, async (e) => {
      viaClient.push(e.kind);
      return "client";
    });
    expect(await perform({ id: 1, kind: "session.create", parentID: "ses_p", title: "t", permission: [] })).toEqual({ id: "ses_new" });
    expect(await perform({ id: 2, kind: "session.promptAsync", sessionID: "ses_p", agent: "build", notice: true, parts: [{ type: "text", text: "done" }], model: "p/m/x", providerID: "p", modelID: "m/x" })).toBeNull();
    expect(await perform({ id: 3, kind: "session.messages", sessionID: "ses_p" })).toEqual([{ info: { id: "m1" }, parts: [] }]);
    expect(await perform({ id: 5, kind: "session.abort", sessionID: "ses_p" })).toBe("client");
    await expect(perform({ id: 4, kind: "session.promptAsync", sessionID: "ses_gone", parts: [] })).rejects.toThrow("prompting the session: Session not found");
    expect(viaClient).toEqual(["session.abort"]);
    expect(seen[0]).toEqual({ path: "/session", body: { parentID: "ses_p", title: "t", permission: [] }, dir: "%2Fp" });
    expect(seen[1]).toEqual({ path: "/session/ses_p/prompt_async", body: { agent: "build", parts: [{ type: "text", text: "done" }], model: { providerID: "p", modelID: "m/x" } }, dir: "%2Fp" });
  } finally {
    server.stop(true);
  }
});

test("an isolated task's session effects (they name a directory) take the client's path, never the direct one", async () => {
  const viaClient: string[] = [];
  const perform = directly({ url: "http://127.0.0.1:9/", headers: {} }, async (e) => (viaClient.push(e.kind), "client"));
  for (const kind of ["session.create", "session.promptAsync", "session.messages"]) {
    expect(await perform({ id: 1, kind, sessionID: "ses_1", directory: "/data/worktrees/k/bg_1" } as any)).toBe("client");
  }
  expect(viaClient).toEqual(["session.create", "session.promptAsync", "session.messages"]);
});
