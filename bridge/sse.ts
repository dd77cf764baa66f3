// Server-Sent Events as the HTML standard parses them ("Interpreting an event stream"), for both
// TypeScript readers of the status API's event stream: the dashboard's page and the terminal UI
// module. A line ends at CRLF, LF or CR (a CRLF split across two chunks is one end); a blank line
// ends a frame; a line that starts with a colon is a comment; a line without a colon is a field
// with an empty value; one space after the colon is dropped; the data lines of a frame are joined
// with LF; a frame without data is not an event; the event name defaults to "message".

export type SSEHandler = (name: string, data: string) => void;

/** Parses a stream given in chunks of text, calling onEvent for each complete event. */
export class SSEParser {
  private buf = "";
  private name = "";
  private data: string[] = [];
  /** The last chunk ended in CR: a LF that starts the next one ends nothing. */
  private afterCR = false;
  private begun = false;

  constructor(private readonly onEvent: SSEHandler) {}

  /** Whether the stream has begun (a byte order mark is dropped only before it has). */
  get started(): boolean {
    return this.begun;
  }

  push(chunk: string): void {
    if (!this.begun && chunk !== "") {
      this.begun = true;
      if (chunk.startsWith("\uFEFF")) chunk = chunk.slice(1);
    }
    if (this.afterCR && chunk.startsWith("\n")) chunk = chunk.slice(1);
    this.afterCR = false;
    this.buf += chunk;
    let end: number;
    while ((end = this.buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buf.slice(0, end);
      let next = end + 1;
      if (this.buf[end] === "\r") {
        if (end === this.buf.length - 1) this.afterCR = true;
        else if (this.buf[end + 1] === "\n") next++;
      }
      this.buf = this.buf.slice(next);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === "") {
      if (this.data.length > 0) this.onEvent(this.name || "message", this.data.join("\n"));
      this.name = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.name = value;
    else if (field === "data") this.data.push(value);
  }
}

/** Reads an event stream's body to its end, calling onEvent for each event. */
export async function readEvents(body: ReadableStream<Uint8Array>, onEvent: SSEHandler): Promise<void> {
  const parser = new SSEParser(onEvent);
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.push(decoder.decode(value, { stream: true }));
  }
}
