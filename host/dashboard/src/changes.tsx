/** @jsxImportSource preact */
// An isolated task's worktree on its page: the branch, the merge state, the files it changed and
// its diff, as the core recorded them (the core cuts the diff; diffCut says so), and the Merge
// button, built like the cancel: the core merges, and its answer comes back as mergeNote.

import { useState } from "preact/hooks";
import { post, seg } from "./api";
import { health, openTask } from "./store";
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
          {w.files.map((f, i) => (
            <li key={f.path}>
              <code>{f.path}</code> <span class="muted">{t.view?.changes?.[i]}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {w.mergeNote ? <p role="status">{w.mergeNote}</p> : null}
      {w.merge === "pending" && !health.value?.readOnly ? <Merge t={t} /> : null}
      {w.diff ? <pre class="diff">{w.diff}</pre> : null}
      {w.diffCut ? <p class="muted">The diff is cut; the branch holds it whole.</p> : null}
    </section>
  );
}

function Merge({ t }: { t: Task }) {
  const [asking, setAsking] = useState<"" | "merge" | "discard">("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const act = async (discard: boolean) => {
    setBusy(true);
    setError("");
    try {
      openTask.value = await post<Task>(`/v1/tasks/${seg(t.id)}/merge${discard ? "?discard=true" : ""}`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
      setAsking("");
    }
  };
  return (
    <div class="cancel">
      {!asking ? (
        <>
          <button type="button" onClick={() => setAsking("merge")}>
            Merge…
          </button>
          <button type="button" class="danger" onClick={() => setAsking("discard")}>
            Discard…
          </button>
        </>
      ) : (
        <>
          <span>
            {asking === "merge"
              ? `Apply “${t.description}” to the working tree as uncommitted changes?`
              : `Throw away the changes of “${t.description}” and its branch?`}
          </span>
          <button type="button" class={asking === "discard" ? "danger" : ""} disabled={busy} onClick={() => act(asking === "discard")} ref={(b) => b?.focus()}>
            {asking === "merge" ? "Yes, merge it" : "Yes, discard it"}
          </button>
          <button type="button" onClick={() => setAsking("")}>
            Keep it as it is
          </button>
        </>
      )}
      {error && <p class="error">{error}</p>}
    </div>
  );
}
