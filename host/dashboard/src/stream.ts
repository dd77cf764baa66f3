// The event stream (/v1/events) read with fetch, so it sends the page's credential as a header
// (EventSource sends none): Server-Sent Events parsed as the standard says, a frame at each
// blank line, its event name and its data lines joined.

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
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      let name = "";
      let data: string[] = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value;
        let nl: number;
        while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
          if (nl === buf.length - 1 && buf[nl] === "\r") break; // maybe the half of a \r\n
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
          if (line === "") {
            if (data.length > 0) onEvent(name || "message", data.join("\n"));
            name = "";
            data = [];
            continue;
          }
          if (line.startsWith(":")) continue; // a comment
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let v = colon < 0 ? "" : line.slice(colon + 1);
          if (v.startsWith(" ")) v = v.slice(1);
          if (field === "event") name = v;
          else if (field === "data") data.push(v);
        }
      }
    } catch {
      // Aborted, or the connection failed: ended either way.
    }
  })();
  return { ended, close: () => abort.abort() };
}
