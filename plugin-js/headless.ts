// Whether OpenCode runs non-interactively, read from its command line: the plugin runs in
// OpenCode's own process, whose arguments name the command. `opencode run …` (one message, then
// exit; also how scripts and CI run it) and `opencode github run` (the GitHub agent) are
// headless; the TUI, `opencode serve` and anything else are not. `opencode run --attach` sends
// the message to another server, whose plugin sees `serve`: such a run is not recognised.
// The core decides what a headless run changes (core/headless.go); this file only tells it.

/** OpenCode's global options that take a value (yargs in 1.18); the others are flags. */
const VALUED = new Set(["--log-level"]);

/** The command words of argv (the runtime and script first, as process.argv has them). */
function commandWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  const args = argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") break;
    if (a.startsWith("-")) {
      if (VALUED.has(a)) i++; // its value follows
      continue;
    }
    words.push(a);
  }
  return words;
}

/** Reports whether argv is a non-interactive OpenCode run. */
export function headlessRun(argv: readonly string[]): boolean {
  const [first, second] = commandWords(argv);
  return first === "run" || (first === "github" && second === "run");
}

/** The core's headless options: the user's, with the host's finding (see tmuxConfig). */
export function headlessConfig(user: unknown, active: boolean): unknown {
  if (user === undefined) return { active };
  if (user === null || typeof user !== "object" || Array.isArray(user)) return user;
  return { ...user, active };
}
