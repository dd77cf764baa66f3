/** @jsxImportSource preact */
// The overview: how many tasks are in each status, the recent batches as "n/m done", and where
// the API is.

import { shown } from "./format";
import { groups, health, stats } from "./store";
import type { Stats } from "./types";

const STATUSES: [string, string][] = [
  ["running", "Running"],
  ["queued", "Queued"],
  ["resumed", "Resumed"],
  ["completed", "Completed"],
  ["error", "Failed"],
  ["cancelled", "Cancelled"],
];

/** A status's count: the API counts a task waiting for a slot as queued, not running. */
function count(s: Stats | undefined, key: string): number {
  if (!s) return 0;
  return s.byStatus[key] ?? 0;
}

export function Overview() {
  const s = stats.value;
  return (
    <section class="overview" aria-label="Overview">
      <div class="counts">
        <div class="count total">
          <span class="n">{s?.totalTasks ?? 0}</span>
          <span class="label">Tasks</span>
        </div>
        {STATUSES.map(([key, label]) => (
          <div class={`count st-${key}`}>
            <span class="n">{count(s, key)}</span>
            <span class="label">{label}</span>
          </div>
        ))}
        <div class="count usage">
          <span class="n">{shown(s?.view?.tokens)}</span>
          <span class="label">Tokens{s?.view?.cost ? ` · ${s.view.cost}` : ""}</span>
        </div>
      </div>
      <div class="side">
        <div class="batches card">
          <h2>Recent batches</h2>
          {groups.value.length === 0 ? (
            <p class="muted">No batches yet.</p>
          ) : (
            <ul>
              {groups.value.map((g) => {
                const done = g.stats.completed + g.stats.error + g.stats.cancelled;
                return (
                  <li>
                    <a class="batch-id" href={`#/batch/${encodeURIComponent(g.batchId)}`} title={g.batchId}>
                      {g.name || g.batchId}
                    </a>
                    <progress max={g.stats.total} value={done} aria-label={`batch ${g.name || g.batchId}`} />
                    <span class="done">
                      {done}/{g.stats.total} done
                    </span>
                    {g.stats.tokens && (
                      <span class="muted batch-usage">
                        {shown(g.stats.view?.tokens)} tokens{g.stats.view?.cost ? ` · ${g.stats.view.cost}` : ""}
                      </span>
                    )}
                  </li>
                );
              })}
            </ul>
          )}
        </div>
        <p class="muted address">
          API at <code>{location.origin}</code>
          {health.value ? ` · version ${health.value.version}` : ""}
        </p>
      </div>
    </section>
  );
}
