// The npm package's CLI (package.json "bin"): the Go CLI's commands (host/cmd/asyncagents) run
// under Node on the package's own core .wasm, so `npx asyncagents` works wherever the plugin was
// installed (docs/rationale/shape.md says why it is not a Go binary per platform).

import { dashboard } from "./dashboard";
import { doctor, DoctorTrouble } from "./doctor";
import { ls } from "./ls";
import { flagsOf, loadCore } from "./project";
import { serve } from "./serve";
import { workers } from "./workers";

async function run(args: string[]): Promise<number> {
  const out = (s: string) => process.stdout.write(s);
  const err = (s: string) => process.stderr.write(s);
  // The command line is the core's to read (core/cli_args.go), as the Go CLI's is: the package's
  // own core reads it (a --wasm it names runs the command).
  let r;
  try {
    r = (await loadCore()).call({ op: "cli.args", args });
  } catch (e) {
    err(`asyncagents: ${(e as Error).message}\n`);
    return 1;
  }
  if (r.usageError) {
    err(r.usageError + "\n");
    return 2;
  }
  if (r.report) {
    out(r.report + "\n");
    return 0;
  }
  const a = r.cli!;
  const flags = flagsOf(a);
  const commands: Record<string, () => Promise<void>> = {
    ls: () => ls(flags, out, err),
    dashboard: () => dashboard(flags, out, err),
    doctor: () => doctor(flags, out),
    serve: () => serve(flags, out, err),
    workers: () => workers(flags, out, err),
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

process.exitCode = await run(process.argv.slice(2));
