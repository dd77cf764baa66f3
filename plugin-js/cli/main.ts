// The npm package's CLI (package.json "bin"): the Go CLI's commands (host/cmd/asyncagents) run
// under Node on the package's own core .wasm, so `npx asyncagents` works wherever the plugin was
// installed (docs/rationale/shape.md says why it is not a Go binary per platform).

import { CLI_USAGE as usage } from "../../bridge/types";
import { dashboard } from "./dashboard";
import { doctor } from "./doctor";
import { ls } from "./ls";
import { parseFlags } from "./project";
import { serve } from "./serve";
import { workers } from "./workers";


async function run(args: string[]): Promise<number> {
  const out = (s: string) => process.stdout.write(s);
  const err = (s: string) => process.stderr.write(s);
  const cmd = args[0];
  if (!cmd || cmd === "-h" || cmd === "--help" || cmd === "help") {
    out(usage + "\n");
    return 0;
  }
  const commands: Record<string, { run: (rest: string[]) => Promise<void> }> = {
    ls: { run: (rest) => ls(parseFlags(rest, ["project", "wasm"]), out, err) },
    dashboard: { run: (rest) => dashboard(parseFlags(rest, ["project", "wasm", "print"]), out, err) },
    doctor: { run: (rest) => doctor(parseFlags(rest, ["project", "wasm"]), out) },
    serve: { run: (rest) => serve(parseFlags(rest, ["project", "wasm", "port"]), out, err) },
    workers: { run: (rest) => workers(parseFlags(rest, ["project", "wasm", "json"]), out, err) },
  };
  const c = commands[cmd];
  if (!c) {
    err(`asyncagents: unknown command "${cmd}"\n${usage}\n`);
    return 2;
  }
  try {
    await c.run(args.slice(1));
    return 0;
  } catch (e) {
    err(`asyncagents ${cmd}: ${(e as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await run(process.argv.slice(2));
