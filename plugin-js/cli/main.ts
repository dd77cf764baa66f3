// The npm package's CLI (package.json "bin"): the Go CLI's commands (host/cmd/asyncagents) run
// under Node on the package's own core .wasm, so `npx asyncagents` works wherever the plugin was
// installed (docs/rationale/shape.md says why it is not a Go binary per platform).

import { dashboard } from "./dashboard";
import { doctor, DoctorTrouble } from "./doctor";
import { ls } from "./ls";
import { ENV_API_PORT, type CoreResponse } from "../../bridge/core";
import { flagsOf, loadCore, type Flags } from "./project";
import { serve } from "./serve";
import { workers } from "./workers";

async function run(args: string[]): Promise<number> {
  const out = (s: string) => process.stdout.write(s);
  const err = (s: string) => process.stderr.write(s);
  const what = args[0] && !args[0].startsWith("-") ? `asyncagents ${args[0]}` : "asyncagents";
  // The command line is the core's to read (core/cli_args.go), as the Go CLI's is. The core that
  // reads it is the one the command runs on (--wasm, else $ASYNCAGENTS_WASM, else the package's),
  // so --wasm is looked for first, by itself.
  let r: CoreResponse;
  let flags: Flags | undefined;
  try {
    const core = await loadCore(wasmFlag(args));
    try {
      r = core.call({ op: "cli.args", args, env: { apiPort: process.env[ENV_API_PORT] || undefined } });
    } catch (e) {
      throw new Error(`that core module is not this CLI's (${(e as Error).message}): pass --wasm with the package's own`);
    }
    if (r.cli) flags = flagsOf(r.cli); // the working directory may be gone
  } catch (e) {
    err(`${what}: ${(e as Error).message}\n`);
    return 1;
  }
  if (r.usageError) {
    err(r.usageError + "\n");
    return 2;
  }
  if (r.report || !r.cli || !flags) {
    out((r.report ?? "") + "\n");
    return 0;
  }
  const a = r.cli;
  const f = flags;
  const commands: Record<string, () => Promise<void>> = {
    ls: () => ls(f, out, err),
    dashboard: () => dashboard(f, out, err),
    doctor: () => doctor(f, out),
    serve: () => serve(f, out, err),
    workers: () => workers(f, out, err),
  };
  try {
    await commands[a.command!]!();
    return 0;
  } catch (e) {
    if (e instanceof DoctorTrouble) return 1;
    err(`asyncagents ${a.command}: ${(e as Error).message}\n`);
    return 1;
  }
}

/** The value of --wasm (or -wasm, =FILE) before any "--", to find the core that reads the rest. */
function wasmFlag(args: string[]): string | undefined {
  for (let i = 1; i < args.length && args[i] !== "--"; i++) {
    const m = /^--?wasm(?:=(.*))?$/s.exec(args[i]!);
    if (m) return m[1] ?? args[i + 1];
  }
  return undefined;
}

process.exitCode = await run(process.argv.slice(2));
