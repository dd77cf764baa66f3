/** @jsxImportSource preact */
// A batch's page: its timeline, one bar per task from its launch to its end, with the stretches
// that held it (queued, stalled) marked, as the core lays them out (GET /v1/views/batch/:id, in
// percent of the batch's span). The page only draws.

import { useEffect, useState } from "preact/hooks";
import { APIError, get, seg } from "./api";
import { stats } from "./store";
import type { ViewTimeline } from "./types";

export function BatchPage({ id }: { id: string }) {
  const [tl, setTl] = useState<ViewTimeline | undefined>(undefined);
  const [error, setError] = useState("");
  const changed = stats.value; // read again when the tasks change
  useEffect(() => {
    let gone = false;
    const load = () =>
      get<ViewTimeline>(`/v1/views/batch/${seg(id)}`).then(
        (v) => !gone && (setTl(v), setError("")),
        (err: Error) => !gone && setError(err instanceof APIError && err.status === 404 ? `No batch ${id} on this server.` : err.message),
      );
    void load();
    // A running task's bar grows with the time.
    const tick = setInterval(() => tl?.live && void load(), 1000);
    return () => {
      gone = true;
      clearInterval(tick);
    };
  }, [id, changed, tl?.live]);
  return (
    <article class="batch">
      <p>
        <a href="#/">← All tasks</a>
      </p>
      {error && <p class="error">{error}</p>}
      {!tl && !error && <p class="muted">Loading…</p>}
      {tl && (
        <>
          <header class="task-head">
            <h1>{tl.name || tl.batchId}</h1>
            <span class="muted">
              {tl.bars.length} tasks · {tl.span}
            </span>
          </header>
          <ul class="legend" aria-label="Legend">
            {tl.legend.map((l) => (
              <li>
                <span class={`seg seg-${l.kind}`} aria-hidden="true" /> {l.label}
              </li>
            ))}
          </ul>
          <ol class="bars" aria-label="Timeline">
            {tl.bars.map((b) => (
              <li class="bar-row">
                <a class="bar-label" href={`#/task/${seg(b.id)}`} title={b.id}>
                  <span class={`mark tone-${b.tone}`}>{b.mark}</span> {b.description}
                </a>
                <span class="bar-track">
                  <span class={`bar tone-${b.tone}`} style={{ left: `${b.left}%`, width: `${Math.max(b.width, 0.5)}%` }} title={b.elapsed}>
                    {b.segments.map((s) => (
                      <span
                        class={`seg seg-${s.kind}`}
                        style={{ left: `${((s.left - b.left) / Math.max(b.width, 0.01)) * 100}%`, width: `${(s.width / Math.max(b.width, 0.01)) * 100}%` }}
                        title={s.title}
                      />
                    ))}
                  </span>
                </span>
                <span class="bar-time muted">{b.elapsed}</span>
              </li>
            ))}
          </ol>
        </>
      )}
    </article>
  );
}
