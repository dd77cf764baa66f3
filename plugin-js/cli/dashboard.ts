// asyncagents dashboard: opens the project's running status API page with a one-time code, as
// host/cmd/asyncagents (dashboard) does. The token never leaves this process.

import { spawn } from "node:child_process";
import type { ServerFile } from "../../bridge/core";
import { openProject, pickServer, type Flags } from "./project";

export async function dashboard(flags: Flags, out: (s: string) => void, err: (s: string) => void): Promise<void> {
  const { project, core, storage } = await openProject(flags);
  const { server: f, name } = pickServer(core, storage.serverDir, "dashboard", project);
  const origin = `http://127.0.0.1:${f.port}`;
  const code = f.auth === "none" ? "" : await askCode(f, origin);
  const url = origin + "/" + (code ? `?code=${encodeURIComponent(code)}` : "");
  if (flags.print) {
    err(name + "\n"); // stdout stays the URL alone, for scripts
    out(url + "\n");
    return;
  }
  const opener = ({ darwin: "open", win32: "explorer" } as Record<string, string>)[process.platform] ?? "xdg-open";
  const opened = await new Promise<boolean>((done) => {
    const child = spawn(opener, [url], { detached: true, stdio: "ignore" });
    child.once("error", () => done(false));
    child.once("spawn", () => {
      child.unref();
      done(true);
    });
  });
  out(opened ? `opening ${name}: ${url} (the link opens the dashboard once, within a minute)\n` : `${name}: ${url}\n`);
}

async function askCode(f: ServerFile, origin: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(origin + "/v1/dashboard/code", {
      method: "POST",
      headers: { Authorization: `Bearer ${f.token}` },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new Error(`the server at ${origin} did not give a dashboard link: ${(err as Error).message}`);
  }
  const body = await res.text();
  let code = "";
  try {
    code = (JSON.parse(body) as { code?: string }).code ?? "";
  } catch {}
  if (res.status !== 200 || !code) throw new Error(`the server at ${origin} did not give a dashboard link: ${res.status} ${body.trim()}`);
  return code;
}
