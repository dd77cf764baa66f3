// TmuxPanes against a real tmux server on a private socket: panes open with the attach command,
// show what it prints, close again; every failure is logged and nothing throws.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TmuxPanes, opencodeProgram, tmuxConfig } from "./tmux";

const hasTmux = !!Bun.which("tmux");
const socket = `aa-test-${process.pid}-${Date.now()}`;
let env: Record<string, string | undefined> = {};
let basePane = "";
let socketPath = "";
let dir = "";
let fakeOpencode = "";
let server: ReturnType<typeof Bun.serve> | undefined;

function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", timeout: 5000 });
}

interface PaneInfo {
  id: string;
  width: number;
  height: number;
  command: string;
}

function panes(): PaneInfo[] {
  return tmux("list-panes", "-a", "-F", "#{pane_id}\t#{pane_width}\t#{pane_height}\t#{pane_start_command}")
    .trim()
    .split("\n")
    .map((l) => {
      const [id, w, h, command] = l.split("\t");
      return { id, width: Number(w), height: Number(h), command };
    });
}

async function until(what: string, cond: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

function recorder() {
  const logs: { level: string; message: string }[] = [];
  return { logs, log: (level: string, message: string) => logs.push({ level, message }) };
}

// Run, never skipped: without tmux these fail and say so (a skip would count as a pass).
describe("TmuxPanes in a real tmux", () => {
  beforeAll(() => {
    if (!hasTmux) throw new Error("tmux is not installed: these tests need it (apt-get install tmux)");
    dir = mkdtempSync(join(tmpdir(), "aa-tmux-"));
    // A stand-in for `opencode`: prints its arguments and stays, as `opencode attach` would.
    fakeOpencode = join(dir, "opencode");
    writeFileSync(fakeOpencode, '#!/bin/sh\necho "fake opencode: $*"\necho "auth: $OPENCODE_SERVER_USERNAME $OPENCODE_SERVER_PASSWORD"\nexec sleep 60\n');
    chmodSync(fakeOpencode, 0o755);
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "200", "-y", "50");
    const [path, pid, pane] = tmux("display", "-p", "#{socket_path}\t#{pid}\t#{pane_id}").trim().split("\t");
    basePane = pane;
    socketPath = path;
    // What OpenCode inside tmux sees: $TMUX names the server, $TMUX_PANE its own pane.
    env = { ...process.env, TMUX: `${path},${pid},0`, TMUX_PANE: pane };
    server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ healthy: true }) });
  });

  afterAll(() => {
    try {
      tmux("kill-server");
    } catch {}
    rmSync(socketPath, { force: true }); // tmux leaves its socket file behind
    server?.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });

  const make = (over: Partial<ConstructorParameters<typeof TmuxPanes>[0]> = {}) => {
    const r = recorder();
    const panesOf = new TmuxPanes({ serverUrl: () => server!.url, directory: dir, opencode: fakeOpencode, env, log: r.log, timeoutMs: 3000, ...over });
    return { tp: panesOf, logs: r.logs };
  };

  test("opens a pane per session running attach, then closes each", async () => {
    const { tp, logs } = make();
    await tp.open("ses_a", "Survey auth");
    await tp.open("ses_b", "Map routes");
    await tp.open("ses_a", "Survey auth"); // a second open of the same session is no second pane
    const open = await tp.list();
    expect([...open.keys()]).toEqual(["ses_a", "ses_b"]);
    const a = open.get("ses_a")!;
    const b = open.get("ses_b")!;

    const all = panes();
    expect(all.map((p) => p.id).sort()).toEqual([basePane, a, b].sort());
    const url = server!.url.toString();
    const cmdA = all.find((p) => p.id === a)!.command;
    expect(cmdA).toContain(`${fakeOpencode} attach ${url} --session ses_a --dir ${dir}`);
    expect(all.find((p) => p.id === b)!.command).toContain("--session ses_b");
    // OpenCode's pane keeps half the width; the children share the other half.
    const base = all.find((p) => p.id === basePane)!;
    expect(base.width).toBeLessThan(110);
    expect(base.height).toBe(50);
    expect(all.find((p) => p.id === a)!.height).toBeLessThan(30);

    // What the pane shows is the program's output.
    await until("the pane's output", () => tmux("capture-pane", "-p", "-t", a).includes(`fake opencode: attach ${url} --session ses_a`));
    expect(logs.some((l) => l.message.includes(`tmux pane ${a} for "Survey auth" (ses_a)`))).toBe(true);

    await tp.close("ses_a");
    expect(panes().map((p) => p.id).sort()).toEqual([basePane, b].sort());
    await tp.close("ses_b");
    await tp.close("ses_b"); // closing twice is harmless
    expect(panes().map((p) => p.id)).toEqual([basePane]);
    expect(logs.filter((l) => l.level !== "info")).toEqual([]);
  });

  test("a pane the user closed already: closing it only logs", async () => {
    const { tp, logs } = make();
    await tp.open("ses_gone");
    const pane = (await tp.list()).get("ses_gone")!;
    tmux("kill-pane", "-t", pane);
    await tp.close("ses_gone");
    expect(logs.some((l) => l.message.includes(`closing tmux pane ${pane} of ses_gone`))).toBe(true);
    // The next pane splits OpenCode's pane again, not the one that is gone.
    await tp.open("ses_next");
    const next = (await tp.list()).get("ses_next");
    expect(next).toBeDefined();
    await tp.close("ses_next");
    expect(panes().map((p) => p.id)).toEqual([basePane]);
  });

  test("a close that arrives while the pane is opening closes it once it is open", async () => {
    const { tp } = make();
    const opening = tp.open("ses_fast");
    await tp.close("ses_fast");
    await opening;
    expect(panes().map((p) => p.id)).toEqual([basePane]);
  });

  test("stop closes every pane still open, once the one opening is open, and opens no more", async () => {
    const tied: TmuxPanes[] = [];
    const { tp, logs } = make({ endWithProcess: (p) => tied.push(p) });
    await tp.open("ses_a");
    await tp.open("ses_b");
    expect(tied).toEqual([tp]); // tied to the process once, at the first pane
    const opening = tp.open("ses_c");
    await tp.stop(3000);
    await opening;
    expect(panes().map((p) => p.id)).toEqual([basePane]);
    expect((await tp.list()).size).toBe(0);
    await tp.open("ses_d");
    expect(panes().map((p) => p.id)).toEqual([basePane]);
    expect(logs.filter((l) => l.level !== "info")).toEqual([]);
  });

  // The process side, in a child process: the panes tied to its end by stopWithProcess.
  async function childWithPane(how: "exit" | "signal") {
    const script = join(dir, `child-${how}.ts`);
    writeFileSync(
      script,
      `import { TmuxPanes } from ${JSON.stringify(join(import.meta.dir, "tmux.ts"))};
import { stopWithProcess } from ${JSON.stringify(join(import.meta.dir, "process_end.ts"))};
const tp = new TmuxPanes({ serverUrl: () => process.env.SERVER_URL, opencode: process.env.FAKE_OC, log: () => {}, timeoutMs: 3000, endWithProcess: stopWithProcess });
await tp.open("ses_child");
console.log("pane " + (await tp.list()).get("ses_child"));
if (process.env.HOW === "exit") process.exit(0);
setInterval(() => {}, 1000); // stays until signalled
`,
    );
    const child = Bun.spawn([process.execPath, script], {
      env: { ...(env as Record<string, string>), SERVER_URL: server!.url.toString(), FAKE_OC: fakeOpencode, HOW: how },
      stdout: "pipe",
      stderr: "inherit",
    });
    const reader = child.stdout.getReader();
    const first = await Promise.race([reader.read(), Bun.sleep(3000).then(() => undefined)]);
    const line = first && !first.done ? new TextDecoder().decode(first.value) : "";
    const pane = /pane (%\d+)/.exec(line)?.[1];
    if (!pane) child.kill("SIGKILL");
    return { child, pane };
  }

  test("when the process exits, its panes close with it", async () => {
    const { child, pane } = await childWithPane("exit");
    try {
      expect(pane).toBeDefined();
      expect(await Promise.race([child.exited, Bun.sleep(4000).then(() => "still running")])).toBe(0);
      expect(panes().map((p) => p.id)).toEqual([basePane]);
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("on SIGTERM the process closes its panes, then ends by the signal", async () => {
    const { child, pane } = await childWithPane("signal");
    try {
      expect(pane).toBeDefined();
      expect(panes().map((p) => p.id)).toContain(pane!);
      child.kill("SIGTERM");
      await Promise.race([child.exited, Bun.sleep(4000)]);
      expect(child.signalCode).toBe("SIGTERM");
      expect(panes().map((p) => p.id)).toEqual([basePane]);
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("a worker's pane attaches to the worker with its basic auth, never the local one, and no --dir; no password on a command line", async () => {
    // tmux itself, with each call's arguments written down first.
    const calls = join(dir, "tmux-calls");
    const recording = join(dir, "recording-tmux");
    writeFileSync(recording, `#!/bin/sh\nprintf '%s\\n' "$@" > "${calls}"\nexec tmux "$@"\n`);
    chmodSync(recording, 0o755);
    const remote = { url: "https://w1.example:4096", username: "bob", passwordEnv: "AA_W1_PW" };
    const pw = `worker-pw 'q' $HOME "x"`; // what a shell would otherwise split, unquote or expand
    const { tp, logs } = make({ tmux: recording, env: { ...env, OPENCODE_SERVER_PASSWORD: "local-pw", AA_W1_PW: pw } });
    await tp.open("ses_r", "Remote survey", { worker: "w1", remote });
    const pane = (await tp.list()).get("ses_r")!;
    expect(pane).toBeDefined();

    const args = readFileSync(calls, "utf8").trimEnd().split("\n");
    expect(args[0]).toBe("split-window");
    const command = args.slice(args.indexOf("--") + 1);
    expect(command.slice(-5)).toEqual([fakeOpencode, "attach", remote.url, "--session", "ses_r"]);
    const opts = args.slice(0, args.indexOf("--"));
    expect(opts).not.toContain("-e");
    expect(args.join(" ")).not.toContain("local-pw");
    expect(args.join(" ")).not.toContain("worker-pw");
    expect(opts[opts.indexOf("-c") + 1]).toBe(dir); // the pane's shell starts here, on this machine
    // The attach in the pane runs with the worker's credentials, from a file the pane removed.
    await until("the pane's output", () => tmux("capture-pane", "-p", "-J", "-t", pane).includes(`auth: bob ${pw}`));
    const handoff = command[command.length - 6];
    expect(handoff).toStartWith(join(tmpdir(), "asyncagents-pane-"));
    expect(existsSync(handoff)).toBe(false);
    expect(logs.map((l) => l.message)).toEqual([`asyncagents: tmux pane ${pane} for "Remote survey" (ses_r) on worker w1`]);

    await tp.close("ses_r");
    expect(panes().map((p) => p.id)).toEqual([basePane]);
  });

  test("a worker's pane that cannot open logs why, naming the worker, never the password", async () => {
    const remote = { url: "https://w1.example:4096", username: "", passwordEnv: "AA_W1_PW" };
    const unset = make({ env: { ...env, AA_W1_PW: undefined } });
    await unset.tp.open("ses_r", "R", { worker: "w1", remote });
    expect(unset.logs.map((l) => l.message)).toEqual(["asyncagents: no tmux pane for ses_r on worker w1: environment variable AA_W1_PW is not set"]);

    // A tmux that fails with nothing on stderr: Node's own error quotes the command line, -e and all.
    const silent = join(dir, "silent-tmux");
    const calls = join(dir, "silent-calls");
    writeFileSync(silent, `#!/bin/sh\nprintf '%s\\n' "$@" > "${calls}"\nexit 3\n`);
    chmodSync(silent, 0o755);
    const failing = make({ tmux: silent, env: { ...env, AA_W1_PW: "worker-pw" } });
    await failing.tp.open("ses_r", "R", { worker: "w1", remote });
    expect(failing.logs).toHaveLength(1);
    expect(failing.logs[0].message).toContain("no tmux pane for ses_r on worker w1: tmux split-window: exited with code 3");
    expect(failing.logs[0].message).not.toContain("worker-pw");
    const args = readFileSync(calls, "utf8").trimEnd().split("\n");
    const handoff = args[args.indexOf("--") + 5];
    expect(handoff).toStartWith(join(tmpdir(), "asyncagents-pane-"));
    expect(existsSync(handoff)).toBe(false); // no pane started to remove it: the plugin did

    const nowhere = make();
    await nowhere.tp.open("ses_r", "R", { worker: "w1" });
    expect(nowhere.logs[0].message).toContain("says nowhere how to reach the worker");
    expect(panes().map((p) => p.id)).toEqual([basePane]);
  });

  test("a pane that cannot open only logs: bad target, no tmux server, no OpenCode server", async () => {
    const badTarget = make({ env: { ...env, TMUX_PANE: "%999" } });
    await badTarget.tp.open("ses_x", "X");
    expect((await badTarget.tp.list()).size).toBe(0);
    expect(badTarget.logs).toHaveLength(1);
    expect(badTarget.logs[0].level).toBe("warn");
    expect(badTarget.logs[0].message).toContain("no tmux pane for ses_x: tmux split-window: can't find pane: %999");
    await badTarget.tp.close("ses_x");

    const noServer = make({ env: { ...env, TMUX: join(dir, "no-such-socket") + ",1,0" } });
    await noServer.tp.open("ses_y");
    expect(noServer.logs[0].message).toContain("no tmux pane for ses_y: tmux split-window:");

    const notInside = make({ env: { ...env, TMUX: undefined } });
    await notInside.tp.open("ses_z");
    expect(notInside.logs[0].message).toContain("$TMUX is not set");

    // Nothing listens: the TUI started without --port.
    const port = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const deadURL = port.url;
    port.stop(true);
    const noOpenCode = make({ serverUrl: () => deadURL });
    await noOpenCode.tp.open("ses_w");
    expect(noOpenCode.logs[0].message).toContain("OpenCode's server does not answer");
    expect(noOpenCode.logs[0].message).toContain("--port");

    const noTmux = make({ tmux: join(dir, "no-such-tmux") });
    await noTmux.tp.open("ses_v");
    expect(noTmux.logs[0].message).toContain("no tmux pane for ses_v");

    expect(panes().map((p) => p.id)).toEqual([basePane]);
  });
});

test("tmuxConfig sets inside from $TMUX and keeps the user's options", () => {
  expect(tmuxConfig(undefined, undefined)).toEqual({ inside: false });
  expect(tmuxConfig({ enabled: true }, "/tmp/tmux-1/default,1,0")).toEqual({ enabled: true, inside: true });
  expect(tmuxConfig({ enabled: true, inside: true }, undefined)).toEqual({ enabled: true, inside: false });
  expect(tmuxConfig(true, "x")).toBe(true); // the core refuses it by name
});

test("opencodeProgram is the OpenCode binary running the plugin, else opencode from PATH", () => {
  expect(opencodeProgram("/home/u/.opencode/bin/opencode")).toBe("/home/u/.opencode/bin/opencode");
  expect(opencodeProgram("/usr/local/bin/bun")).toBe("opencode");
});
