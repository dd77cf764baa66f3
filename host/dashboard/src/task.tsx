/** @jsxImportSource preact */
// One task's page: its prompt, its result (Markdown, rendered safely), the fallback timeline, its
// lineage, the child's conversation (live while it runs), and a cancel while it runs.

import { useEffect, useRef, useState } from "preact/hooks";
import { APIError, get, post, seg } from "./api";
import { budgetText, isActive, shown, statusLabel, time, whereText } from "./format";
import { Changes } from "./changes";
import { Markdown } from "./markdown";
import { PermissionCard } from "./permission";
import { health, loadTask, openTask } from "./store";
import type { APIConversation, APIToolCall, Task, ViewTimeline } from "./types";

export function TaskPage({ id }: { id: string }) {
  const [error, setError] = useState("");
  useEffect(() => {
    openTask.value = undefined;
    setError("");
    loadTask(id).catch((err: Error) => setError(err instanceof APIError && err.status === 404 ? `No task ${id} on this server.` : err.message));
    return () => (openTask.value = undefined);
  }, [id]);
  const t = openTask.value;
  return (
    <article class="task">
      <p>
        <a href="#/">← All tasks</a>
      </p>
      {error && <p class="error">{error}</p>}
      {!t && !error && <p class="muted">Loading…</p>}
      {t && <TaskDetail t={t} />}
    </article>
  );
}

function TaskDetail({ t }: { t: Task }) {
  const label = statusLabel(t);
  return (
    <>
      <header class="task-head">
        <h1>{t.description || t.id}</h1>
        <span class={`status st-${label}`}>{label}</span>
      </header>
      <dl class="facts">
        <dt>Task</dt>
        <dd>
          <code>{t.id}</code>
        </dd>
        <dt>Session</dt>
        <dd>{t.sessionID ? <code>{t.sessionID}</code> : "none yet (queued)"}</dd>
        <dt>Agent</dt>
        <dd>
          {t.agent}
          {whereText(t) && <span class="worker"> {whereText(t)}</span>}
        </dd>
        <dt>Model</dt>
        <dd>{t.model ?? "OpenCode's choice"}</dd>
        <dt>Started</dt>
        <dd>{time(t.startedAt)}</dd>
        <dt>Duration</dt>
        <dd>{shown(t.view?.duration)}</dd>
        <dt>Tool calls</dt>
        <dd>
          {t.progress.toolCalls}
          {t.progress.lastTools.length > 0 && <span class="muted"> (last: {t.progress.lastTools.join(", ")})</span>}
        </dd>
        <dt>Tokens</dt>
        <dd>
          {shown(t.view?.tokens)}
          {t.tokens && (
            <span class="muted">
              {" "}
              ({t.tokens.input} in, {t.tokens.output} out, {t.tokens.reasoning} reasoning, {t.tokens.cacheRead} cache read, {t.tokens.cacheWrite} cache write)
            </span>
          )}
        </dd>
        <dt>Cost</dt>
        <dd>{shown(t.view?.cost)}</dd>
        {t.view?.queue && (
          <>
            <dt>Waits for</dt>
            <dd>a slot: {t.view.queue}</dd>
          </>
        )}
        {(t.steps ?? 0) > 0 && (
          <>
            <dt>Model calls</dt>
            <dd>{t.steps}</dd>
          </>
        )}
        {t.budget && (
          <>
            <dt>Budget</dt>
            <dd>{budgetText(t)}</dd>
          </>
        )}
      </dl>
      {t.view?.retry && (
        <p class="retry" role="status">
          {t.view.retry}
        </p>
      )}
      {isActive(t) && <PermissionCard key={t.view?.permissionId} t={t} readOnly={!!health.value?.readOnly} />}
      {isActive(t) && !health.value?.readOnly && <Cancel t={t} />}
      <section class="card">
        <h2>Prompt</h2>
        <pre class="prompt">{t.prompt}</pre>
      </section>
      {t.error && (
        <section class="card">
          <h2>Error</h2>
          <p class="error">
            {t.error.name}: {t.error.message}
          </p>
        </section>
      )}
      {t.cancelReason && (
        <section class="card">
          <h2>Cancelled</h2>
          <p>{t.cancelReason}</p>
        </section>
      )}
      <section class="card">
        <h2>Result</h2>
        {t.result ? <Markdown text={t.result} /> : <p class="muted">{isActive(t) ? "Still running." : "No result."}</p>}
      </section>
      <Changes t={t} />
      {t.view?.attempts?.length ? <Timeline t={t} /> : null}
      <Lineage t={t} />
      <Logs t={t} />
    </>
  );
}

function Cancel({ t }: { t: Task }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const cancel = async () => {
    setBusy(true);
    setError("");
    try {
      openTask.value = await post<Task>(`/v1/tasks/${seg(t.id)}/cancel`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    <div class="cancel">
      {!asking ? (
        <button type="button" class="danger" onClick={() => setAsking(true)}>
          Cancel task…
        </button>
      ) : (
        <>
          <span>Cancel “{t.description}”? Its parent gets the usual cancelled notice.</span>
          <button type="button" class="danger" disabled={busy} onClick={cancel} ref={(b) => b?.focus()}>
            Yes, cancel it
          </button>
          <button type="button" onClick={() => setAsking(false)}>
            Keep it running
          </button>
        </>
      )}
      {error && <p class="error">{error}</p>}
    </div>
  );
}

/** The model attempts, as the core lists them (view.attempts): how each went, and when. */
function Timeline({ t }: { t: Task }) {
  const skipped = t.fallbackInfo?.skipped;
  return (
    <section class="card">
      <h2>Model fallback</h2>
      <ol class="timeline">
        {t.view!.attempts!.map((a) => (
          <li class={`tone-${a.tone}`}>
            <code>{a.model}</code> {a.outcome}
            {a.compacted ? ", after a compaction" : ""}{" "}
            <span class="muted">
              {time(a.from)}
              {a.to ? ` – ${time(a.to)} (${a.took})` : ""}
            </span>
            {a.error && <div class="muted">{a.error}</div>}
          </li>
        ))}
      </ol>
      {skipped?.length ? <p class="muted">Skipped (circuit open): {skipped.join(", ")}</p> : null}
    </section>
  );
}

function Lineage({ t }: { t: Task }) {
  return (
    <section class="card">
      <h2>Lineage</h2>
      <ul class="lineage">
        <li>
          Parent: <code>{t.parentSessionID}</code>{" "}
          {t.depth > 1 ? <a href={`#/task/${encodeURIComponent(t.parentSessionID)}`}>the task that launched it</a> : <span class="muted">(a user's session)</span>}
        </li>
        <li>
          Batch: <BatchLink id={t.batchId} />
        </li>
        {t.isForked && <li>Forked from its parent's conversation{t.forkTokens ? ` (about ${t.forkTokens} tokens of context)` : ""}</li>}
        {t.resumeCount > 0 && (
          <li>
            Resumed {t.resumeCount} time{t.resumeCount > 1 ? "s" : ""} in its own session{t.resumedAt ? `, last at ${time(t.resumedAt)}` : ""}
          </li>
        )}
      </ul>
    </section>
  );
}

/** The batch's link, named as the core names it (its timeline's name), its ID until then. */
function BatchLink({ id }: { id: string }) {
  const [name, setName] = useState("");
  useEffect(() => {
    setName("");
    get<ViewTimeline>(`/v1/views/batch/${seg(id)}`).then(
      (tl) => setName(tl.name),
      () => {},
    );
  }, [id]);
  return (
    <a href={`#/batch/${seg(id)}`} title={id}>
      {name || id}
    </a>
  );
}

/** How often at most the conversation is read again while the task changes. */
const LOG_REFRESH_MS = 1000;

/**
 * The child's conversation (GET /v1/tasks/:id/messages): its prompt, its replies and its tool
 * calls. Read again, at most once a second, whenever the stream says the task changed, so it is
 * live while the task runs.
 */
function Logs({ t }: { t: Task }) {
  const [conv, setConv] = useState<APIConversation | undefined>(undefined);
  const [error, setError] = useState("");
  const last = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const version = `${t.status}|${t.progress.lastUpdate}|${t.progress.toolCalls}|${t.sessionID ?? ""}`;
  useEffect(() => {
    const read = () => {
      last.current = Date.now();
      get<APIConversation>(`/v1/tasks/${seg(t.id)}/messages`).then(
        (c) => (setConv(c), setError("")),
        (err: Error) => setError(err.message),
      );
    };
    clearTimeout(timer.current);
    timer.current = setTimeout(read, Math.max(0, last.current + LOG_REFRESH_MS - Date.now()));
    return () => clearTimeout(timer.current);
  }, [t.id, version]);
  return (
    <section class="card" aria-label="Conversation">
      <h2>Conversation{isActive(t) ? <span class="muted"> (live)</span> : null}</h2>
      {error && <p class="error">{error}</p>}
      {conv?.note && <p class="muted">{conv.note}</p>}
      {conv?.messages.length === 0 && <p class="muted">No messages yet.</p>}
      <ol class="log">
        {conv?.messages.map((m) => (
          <li key={m.id} class={`msg msg-${m.role} msg-${m.type}`}>
            <div class="role">
              {LABELS[m.type] ?? m.role} {m.timestamp > 0 && <span class="muted">{time(m.timestamp)}</span>}
            </div>
            {m.content && (m.role === "assistant" && m.type !== "error" ? <Markdown text={m.content} /> : <pre class="text">{m.content}</pre>)}
            {m.toolCalls.map((c) => (
              <ToolCall c={c} />
            ))}
          </li>
        ))}
      </ol>
    </section>
  );
}

const LABELS: Record<string, string> = { prompt: "Prompt", reply: "Reply", tools: "Tools", partial: "Partial work", error: "Error" };

function ToolCall({ c }: { c: APIToolCall }) {
  const input = c.input == null ? "" : JSON.stringify(c.input, null, 2);
  return (
    <details class={`tool tool-${c.status ?? "unknown"}`}>
      <summary>
        tool <code>{c.name}</code>
        {c.title ? ` ${c.title}` : ""} <span class="muted">{c.status ?? ""}</span>
      </summary>
      {input && input !== "{}" && (
        <>
          <div class="muted">input</div>
          <pre class="in">{input}</pre>
        </>
      )}
      {c.output && (
        <>
          <div class="muted">output</div>
          <pre class="out">{c.output}</pre>
        </>
      )}
      {c.error && <pre class="error">{c.error}</pre>}
    </details>
  );
}
