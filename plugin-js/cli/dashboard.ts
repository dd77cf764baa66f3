// asyncagents dashboard: opens the project's running status API page with a one-time code, as
// host/cmd/asyncagents (dashboard) does, in the core's steps and words (the dashboard.link op).
// The token never leaves this process.

import { spawn } from "node:child_process";
import type { Core, DashboardLink, ServerFile } from "../../bridge/core";
import { askFailed, askServer, openProject, pickServer, type Flags } from "./project";

export async function dashboard(flags: Flags, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  const { project, core, storage } = await openProject(flags);
  const { server: f, name } = pickServer(core, storage.serverDir, "dashboard", project);
  let link = linkOf(core, { server: f });
  if (link.codePath) {
    const got = await askCode(f, link.codePath);
    if ("failure" in got) askFailed(core, "dashboard.link", f, got.failure);
    link = linkOf(core, { server: f, code: got.code });
  }
  if (flags.print) {
    err(name + "\n"); // stdout stays the URL alone, for scripts
    out(link.url + "\n");
    return;
  }
  const opener = ({ darwin: "open", win32: "explorer" } as Record<string, string>)[process.platform] ?? "xdg-open";
  const opened = await new Promise<boolean>((done) => {
    const child = spawn(opener, [link.url!], { detached: true, stdio: "ignore" });
    child.once("error", () => done(false));
    child.once("spawn", () => {
      child.unref();
      done(true);
    });
  });
  out((opened ? link.opening : link.plain) + "\n");
}

/** The core's next step. */
function linkOf(core: Core, ask: { server: ServerFile; code?: string }): DashboardLink {
  return core.call({ op: "dashboard.link", ...ask }).link!;
}

/** Asks f for a code at path: the code, or why none came (the core words the error). */
async function askCode(f: ServerFile, path: string): Promise<{ code: string } | { failure: string }> {
  const got = await askServer(f, path, "POST");
  if ("failure" in got) return got;
  let code = "";
  try {
    code = (JSON.parse(got.body) as { code?: string }).code ?? "";
  } catch {}
  return code ? { code } : { failure: `200 ${got.body}` };
}
