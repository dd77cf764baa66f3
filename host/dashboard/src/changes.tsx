/** @jsxImportSource preact */
// An isolated task's worktree on its page: the branch, the merge state, the files it changed and
// its diff, as the core recorded them (the core cuts the diff; diffCut says so).

import type { Task } from "./types";

export function Changes({ t }: { t: Task }) {
  const w = t.worktree;
  if (!w) return null;
  return (
    <section class="card" aria-label="Changes">
      <h2>Changes</h2>
      <p>
        <code>{w.branch}</code> <span class="muted">{w.merge || t.status}</span>
      </p>
      {w.files?.length ? (
        <ul>
          {w.files.map((f) => (
            <li key={f.path}>
              <code>{f.path}</code> {f.added < 0 ? <span class="muted">binary</span> : <span class="muted">+{f.added} −{f.removed}</span>}
            </li>
          ))}
        </ul>
      ) : null}
      {w.diff ? <pre class="diff">{w.diff}</pre> : null}
      {w.diffCut ? <p class="muted">The diff is cut; the branch holds it whole.</p> : null}
    </section>
  );
}
