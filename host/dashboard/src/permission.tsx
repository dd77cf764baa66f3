/** @jsxImportSource preact */
// A task whose child waits for the user's permission: what it asks, and the user's three answers
// (POST /v1/tasks/:id/permission, forwarded to OpenCode). The answer names the request shown, so a
// request that arrived since is never answered by a click meant for another; the server answers
// 409 when the one shown was answered meanwhile. The request clears when OpenCode says it was
// answered, here or in the TUI.

import { useState } from "preact/hooks";
import { post, seg } from "./api";
import type { Task } from "./types";

type Reply = "once" | "always" | "reject";

export function PermissionCard({ t, readOnly }: { t: Task; readOnly: boolean }) {
  const what = t.view?.permission;
  const requestId = t.view?.permissionId;
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState("");
  const [error, setError] = useState("");
  const [reason, setReason] = useState("");
  if (!what || !requestId) return null;
  const answer = async (reply: Reply) => {
    setBusy(true);
    setError("");
    try {
      const body = reply === "reject" && reason.trim() ? { requestId, reply, message: reason.trim() } : { requestId, reply };
      await post(`/v1/tasks/${seg(t.id)}/permission`, body);
      setSent(reply);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card permission" aria-live="polite">
      <h2>Waiting for permission</h2>
      <p>
        The subagent asks to run <code>{what}</code> ({t.view?.permissionWait} ago). The parent agent cannot answer this: you do.
      </p>
      {readOnly ? (
        <p class="muted">Answer it in OpenCode: this server only reads the history.</p>
      ) : sent ? (
        <p class="muted">Sent “{sent}”; waiting for OpenCode to pass it on…</p>
      ) : (
        <div class="permission-actions">
          <button type="button" disabled={busy} onClick={() => answer("once")}>
            Allow once
          </button>
          <button type="button" disabled={busy} onClick={() => answer("always")}>
            Always
          </button>
          <input type="text" placeholder="Reason (optional, sent with a reject)" aria-label="Reason for a reject" value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
          <button type="button" class="danger" disabled={busy} onClick={() => answer("reject")}>
            Reject
          </button>
        </div>
      )}
      {error && <p class="error">{error}</p>}
    </section>
  );
}
