/** @jsxImportSource preact */
// One task's page: its prompt, its result (Markdown, rendered safely), the fallback timeline, its
// lineage, its session's log, and a cancel while it runs.

import { useEffect, useState } from "preact/hooks";
import { APIError, get, post, seg } from "./api";
import { cost, duration, isActive, statusLabel, taskDuration, time, tokens } from "./format";
import { Markdown } from "./markdown";
import { health, loadTask, now, openTask } from "./store";
import type { Task } from "./types";

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
        <dd>{t.agent}</dd>
        <dt>Model</dt>
        <dd>{t.model ?? "OpenCode's choice"}</dd>
        <dt>Started</dt>
        <dd>{time(t.startedAt)}</dd>
        <dt>Duration</dt>
        <dd>{duration(taskDuration(t, now.value))}</dd>
        <dt>Tool calls</dt>
        <dd>
          {t.progress.toolCalls}
          {t.progress.lastTools.length > 0 && <span class="muted"> (last: {t.progress.lastTools.join(", ")})</span>}
        </dd>
        <dt>Tokens</dt>
        <dd>
          {tokens(t.tokens)}
          {t.tokens && (
            <span class="muted">
              {" "}
              ({t.tokens.input} in, {t.tokens.output} out, {t.tokens.reasoning} reasoning, {t.tokens.cacheRead} cache read, {t.tokens.cacheWrite} cache write)
            </span>
          )}
        </dd>
        <dt>Cost</dt>
        <dd>{cost(t.cost)}</dd>
      </dl>
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
      {t.fallbackInfo?.attempts?.length ? <Timeline t={t} /> : null}
      <Lineage t={t} />
      <Logs id={t.id} status={t.status} />
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

function Timeline({ t }: { t: Task }) {
  const f = t.fallbackInfo!;
  return (
    <section class="card">
      <h2>Model fallback</h2>
      <ol class="timeline">
        {f.attempts!.map((a) => (
          <li class={a.success ? "ok" : "failed"}>
            <code>{a.model}</code> {a.success ? "answered" : `failed${a.class ? ` (${a.class})` : ""}`}
            {a.compacted ? ", after a compaction" : ""} <span class="muted">at {time(a.timestamp)}</span>
            {a.error && <div class="muted">{a.error}</div>}
          </li>
        ))}
      </ol>
      {f.skipped?.length ? <p class="muted">Skipped (circuit open): {f.skipped.join(", ")}</p> : null}
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
          Batch: <code>{t.batchId}</code>
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

interface Part {
  type: string;
  text?: string;
  tool?: string;
  state?: { status?: string };
}
interface Message {
  info?: { role?: string };
  parts?: Part[];
}

/** The child session's messages, as OpenCode keeps them. */
function Logs({ id, status }: { id: string; status: string }) {
  const [messages, setMessages] = useState<Message[] | undefined>(undefined);
  const [error, setError] = useState("");
  useEffect(() => {
    get<Message[]>(`/v1/tasks/${seg(id)}/logs`).then(
      (m) => (setMessages(m), setError("")),
      (err: Error) => setError(err.message),
    );
  }, [id, status]);
  return (
    <section class="card">
      <h2>Log</h2>
      {error && <p class="muted">{error}</p>}
      {messages?.length === 0 && <p class="muted">No messages yet.</p>}
      {messages?.map((m) => (
        <div class={`msg msg-${m.info?.role ?? "unknown"}`}>
          <div class="role">{m.info?.role ?? "message"}</div>
          {(m.parts ?? []).map((p) =>
            p.type === "text" && p.text ? (
              <pre class="text">{p.text}</pre>
            ) : p.type === "tool" ? (
              <div class="tool">
                tool <code>{p.tool}</code> {p.state?.status ?? ""}
              </div>
            ) : null,
          )}
        </div>
      ))}
    </section>
  );
}
