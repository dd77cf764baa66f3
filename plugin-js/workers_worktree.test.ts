// A remote isolated task's worktree through a fake worker's OpenCode API: create replies only
// after OpenCode's worktree.ready for that worktree (also when it came before the POST's answer),
// fails with worktree.failed's words; diff reads the patch from a throwaway session's shell and
// deletes that session; remove asks OpenCode to remove the worktree; list reads OpenCode's list.

import { expect, test } from "bun:test";
import { frame, until, workerPerTest, type FakeWorker } from "./fake_worker";
import { DIFF_COMMAND } from "./workers_worktree";

const PW = "s3cret-pw";
const WT = "/data/opencode/worktree/p1/tsk-1";
const w = workerPerTest("AA_TEST_W1_PASSWORD", PW);
const on = w.on;

/** Answers the create as OpenCode 1.18 does: at once, the worktree not populated yet. */
function answerCreate() {
  w.fake.on("POST /experimental/worktree", () => Response.json({ name: "tsk-1", branch: "opencode/tsk-1", directory: WT }));
}

test("create replies {directory, branch} only once the worker says that worktree is ready", async () => {
  answerCreate();
  let replied = false;
  const made = on({ kind: "worker.worktree.create", directory: "/repo/on/w1", taskID: "tsk_1" }).then((r) => ((replied = true), r));
  const s = await w.fake.nthStream(1);
  s.send({ payload: { type: "server.connected", properties: {} } });
  await until("the POST", () => w.fake.seen.some((x) => x.path === "/experimental/worktree"));
  const post = w.fake.seen.find((x) => x.path === "/experimental/worktree")!;
  expect([post.method, post.directory, post.body]).toEqual(["POST", "/repo/on/w1", { name: "tsk_1" }]);
  // Another worktree's failure is not this one's: taken for it, the create would fail.
  s.send(frame("worktree.failed", { message: "another's failure" }, "/data/opencode/worktree/p1/other"));
  s.send(frame("session.idle", { sessionID: "x" }, WT));
  expect(replied).toBe(false);
  s.send(frame("worktree.ready", { name: "tsk-1", branch: "opencode/tsk-1" }, WT));
  expect(await made).toEqual({ directory: WT, branch: "opencode/tsk-1" });
  // The stream it opened for the wait is let go.
  await s.closed;
});

test("a worktree.ready that comes before the POST's answer is not missed", async () => {
  let stream: Awaited<ReturnType<FakeWorker["nthStream"]>> | undefined;
  w.fake.on("POST /experimental/worktree", async () => {
    stream!.send(frame("worktree.ready", { name: "tsk-1", branch: "opencode/tsk-1" }, WT));
    // Lets the frame reach the plugin before this answer does (two connections: no order otherwise).
    await Bun.sleep(100);
    return Response.json({ name: "tsk-1", branch: "opencode/tsk-1", directory: WT });
  });
  const made = on({ kind: "worker.worktree.create", directory: "/repo/on/w1", taskID: "tsk_1" });
  stream = await w.fake.nthStream(1);
  stream.send({ payload: { type: "server.connected", properties: {} } });
  expect(await made).toEqual({ directory: WT, branch: "opencode/tsk-1" });
});

test("worktree.failed fails the create with OpenCode's words, naming the worker", async () => {
  answerCreate();
  const failed = on({ kind: "worker.worktree.create", directory: "/repo/on/w1", taskID: "tsk_1" }).then(() => "", (e: Error) => e.message);
  const s = await w.fake.nthStream(1);
  s.send({ payload: { type: "server.connected", properties: {} } });
  await until("the POST", () => w.fake.seen.some((x) => x.path === "/experimental/worktree"));
  s.send(frame("worktree.failed", { message: "fatal: could not reset" }, WT));
  expect(await failed).toBe("worker w1: making the worktree: fatal: could not reset");
});

test("a clone that is no git repository fails with OpenCode's words and the status", async () => {
  w.fake.on("POST /experimental/worktree", () => Response.json({ name: "WorktreeNotGitError", data: { message: "Worktrees are only supported for git projects" } }, { status: 400 }));
  const failed = on({ kind: "worker.worktree.create", directory: "/not/git", taskID: "tsk_1" }).then(() => "", (e: Error) => e.message);
  (await w.fake.nthStream(1)).send({ payload: { type: "server.connected", properties: {} } });
  expect(await failed).toBe("worker w1: making the worktree: Worktrees are only supported for git projects (400)");
});

test("diff reads the patch from a throwaway session's shell in the worktree, then deletes that session", async () => {
  const patch = "diff --git a/x.bin b/x.bin\nGIT binary patch\n\xff\xfe\n";
  w.fake.on("POST /session", () => Response.json({ id: "ses_diff" }));
  w.fake.on("POST /session/ses_diff/shell", () =>
    Response.json({ info: { id: "msg" }, parts: [{ type: "tool", state: { status: "completed", output: `asyncagents-patch:${Buffer.from(patch, "latin1").toString("base64")}:end\n` } }] }),
  );
  w.fake.on("DELETE /session/ses_diff", () => Response.json(true));
  expect(await on({ kind: "worker.worktree.diff", directory: WT })).toEqual({ patch });
  expect(w.fake.seen.map((s) => [s.method, s.path, s.directory])).toEqual([
    ["POST", "/session", WT],
    ["POST", "/session/ses_diff/shell", WT],
    ["DELETE", "/session/ses_diff", WT],
  ]);
  expect(w.fake.seen[1].body).toEqual({ agent: "build", command: DIFF_COMMAND });
});

test("a diff command that fails says what it printed, and the session still goes", async () => {
  w.fake.on("POST /session", () => Response.json({ id: "ses_diff" }));
  w.fake.on("POST /session/ses_diff/shell", () => Response.json({ parts: [{ type: "tool", state: { output: "fatal: not a git repository\n" } }] }));
  w.fake.on("DELETE /session/ses_diff", () => Response.json(true));
  await expect(on({ kind: "worker.worktree.diff", directory: WT })).rejects.toThrow("worker w1: reading the worktree's changes: fatal: not a git repository");
  expect(w.fake.seen.at(-1)?.method).toBe("DELETE");
});

test("remove asks the worker's OpenCode to remove the worktree of its clone", async () => {
  w.fake.on("DELETE /experimental/worktree", () => Response.json(true));
  expect(await on({ kind: "worker.worktree.remove", directory: "/repo/on/w1", path: WT })).toBeNull();
  expect(w.fake.seen.map((s) => [s.method, s.path, s.directory, s.body])).toEqual([["DELETE", "/experimental/worktree", "/repo/on/w1", { directory: WT }]]);
});

test("list replies the directories OpenCode lists for the clone, and refuses any other answer", async () => {
  let answer: unknown = [WT, "/data/opencode/worktree/p1/other"];
  w.fake.on("GET /experimental/worktree", () => Response.json(answer));
  expect(await on({ kind: "worker.worktree.list", directory: "/repo/on/w1" })).toEqual({ directories: [WT, "/data/opencode/worktree/p1/other"] });
  expect(w.fake.seen.map((s) => [s.method, s.path, s.directory])).toEqual([["GET", "/experimental/worktree", "/repo/on/w1"]]);
  answer = { name: "x" };
  await expect(on({ kind: "worker.worktree.list", directory: "/repo/on/w1" })).rejects.toThrow("worker w1: listing the worktrees: OpenCode answered with no list of directories");
});
