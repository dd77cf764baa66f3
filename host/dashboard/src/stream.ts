// The event stream (/v1/events) read with fetch, so it sends the page's credential as a header
// (EventSource sends none), parsed by the one parser of the TypeScript side (bridge/sse.ts).

import { readEvents } from "../../../bridge/sse";
import { authHeaders } from "./api";

export interface Stream {
  /** Settles when the stream ends, whatever the reason; never rejects. */
  ended: Promise<void>;
  close(): void;
}

export function openStream(path: string, onEvent: (name: string, data: string) => void): Stream {
  const abort = new AbortController();
  const ended = (async () => {
    try {
      const res = await fetch(path, { credentials: "omit", cache: "no-store", headers: authHeaders("text/event-stream"), signal: abort.signal });
      if (!res.ok || !res.body) return;
      await readEvents(res.body, onEvent);
    } catch {
      // Aborted, or the connection failed: ended either way.
    }
  })();
  return { ended, close: () => abort.abort() };
}
