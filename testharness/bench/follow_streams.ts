// The streams floor's Worker (workers_floor.go): follows each worker's /global/event as the
// plugin's Worker does, with the rule the core gives it (BENCH_FOLLOW_RULE), and feeds what it
// reads to nothing. Its CPU is what following the streams costs before the core sees an event.
import { WorkerFollowers } from "../../plugin-js/workers_follow";

const workers: Record<string, { url: string; password: string }> = JSON.parse(process.env.BENCH_REMOTE_FLOOR_WORKERS ?? "{}");
const rule = JSON.parse(process.env.BENCH_FOLLOW_RULE ?? "null") ?? undefined;
const followers = new WorkerFollowers(() => {});
for (const [name, w] of Object.entries(workers)) {
  const passwordEnv = `BENCH_FOLLOW_PASSWORD_${name}`;
  process.env[passwordEnv] = w.password;
  followers.follow(name, { url: w.url, username: "opencode", passwordEnv }, rule);
}
