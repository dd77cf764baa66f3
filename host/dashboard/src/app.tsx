/** @jsxImportSource preact */
// The page's frame: the header with the connection's state, and the view the address names
// (#/ for the overview and the task table, #/task/<id> for one task, #/batch/<id> for a batch). Routing by the fragment
// keeps every view at the server's one route, /.

import { signal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { access, accessError, connect, connection, health } from "./store";
import { Overview } from "./overview";
import { TaskTable } from "./table";
import { BatchPage } from "./batch";
import { TaskPage } from "./task";

const route = signal(location.hash);
addEventListener("hashchange", () => (route.value = location.hash));

export function App() {
  const a = access.value;
  useEffect(() => {
    document.title = "asyncagents dashboard";
  }, []);
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">
          asyncagents
        </a>
        {a === "granted" && <ConnectionState />}
      </header>
      <main>
        {a === "granted" && health.value?.status === "degraded" && (
          <p class="error" role="alert">
            Degraded: {health.value.reason}
          </p>
        )}
        {a === "checking" ? <p class="muted">Loading…</p> : a === "granted" ? <View /> : <Gate />}
      </main>
    </>
  );
}

function View() {
  const m = route.value.match(/^#\/task\/(.+)$/);
  if (m) return <TaskPage id={decodeURIComponent(m[1])} />;
  const b = route.value.match(/^#\/batch\/(.+)$/);
  if (b) return <BatchPage id={decodeURIComponent(b[1])} />;
  return (
    <>
      <Overview />
      <TaskTable />
    </>
  );
}

function ConnectionState() {
  const c = connection.value;
  const text = c.state === "live" ? "Live" : c.state === "connecting" ? "Connecting…" : `Disconnected: retrying in ${c.retryIn} s`;
  return (
    <div class={`conn conn-${c.state}`} role="status" aria-live="polite">
      <span class="dot" aria-hidden="true" />
      {text}
      {c.state === "waiting" && (
        <button type="button" class="link" onClick={() => connect()}>
          Retry now
        </button>
      )}
      {health.value?.readOnly && <span class="badge">read-only</span>}
    </div>
  );
}

/** Without a credential: how to open the dashboard, and no task data. */
function Gate() {
  return (
    <section class="gate card">
      <h1>Open the dashboard with its link</h1>
      <p>This dashboard shows your tasks' prompts and results, so it opens only with a link from this server. Run</p>
      <pre>
        <code>asyncagents dashboard</code>
      </pre>
      <p>
        in the project's directory: it opens this page with a code good once, for a minute, which the page trades for a credential kept in
        this tab only.
      </p>
      {access.value === "failed" && <p class="error">The status API did not answer: {accessError.value}</p>}
      {access.value === "denied" && <p class="muted">The server said: {accessError.value}</p>}
    </section>
  );
}
