// The npm package's CLI (package.json "bin"): the Go CLI's commands (host/cmd/asyncagents) run
// under Node on the package's own core .wasm, so `npx asyncagents` works wherever the plugin was
// installed (docs/rationale/shape.md says why it is not a Go binary per platform).

import { dashboard } from "./dashboard";
import { doctor } from "./doctor";
import { ls } from "./ls";
import { parseFlags } from "./project";

const usage = `usage:
  asyncagents ls        [--project DIR] [--wasm FILE]             print the project's tasks as a table
  asyncagents serve     [--project DIR] [--wasm FILE] [--port N]  serve the status API over the stored history
  asyncagents dashboard [--project DIR] [--print]                 open the project's running status API page
                                                                  in the browser (--print: print its URL)
  asyncagents doctor    [--project DIR]                           say whether the plugin loaded, and what to fix
The project is the working directory unless --project (or --dir) names one; a symlink to it is
the same project.`;

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
    dashboard: { run: (rest) => dashboard(parseFlags(rest, ["project", "wasm", "print"]), out) },
    doctor: { run: (rest) => doctor(parseFlags(rest, ["project", "wasm"]), out) },
    serve: { run: (rest) => serve(rest) },
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

async function serve(rest: string[]): Promise<void> {
  parseFlags(rest, ["project", "wasm", "port"]);
  throw new Error("not in the npm package yet: the read-only server is the Go CLI's (`make build`, then dist/asyncagents serve)");
}

process.exitCode = await run(process.argv.slice(2));
