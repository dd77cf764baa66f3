// Splits a worker's `/global/event` stream into frames on its bytes, and decodes only the frames
// that may be of a type the core reads. Nearly all of a busy worker's stream is text deltas
// (message.part.delta: 93% of the frames of a 20-child fan-out, 84% of its bytes), which the core
// never reads: decoding them into strings to pass them over cost the plugin's Worker the
// decoding, a line parser's pass and the garbage of the strings, on every byte the children
// stream. Here a frame passed over costs two native byte searches.
//
// OpenCode ends each line with LF, so a frame ends at the first LF LF. A stream that holds a CR
// anywhere is read from there on by the full parser (bridge/sse.ts), which knows every line end
// the standard allows; the frames given on are the same either way.

import { SSEParser } from "../bridge/sse";

const LF_LF = Buffer.from("\n\n");
const TYPE_MARK = Buffer.from('"type":"');
const QUOTE = 0x22;
const CR = 0x0d;

/**
 * Whether the frame in bytes[start, end) may be of a type in wanted, told as mayBeWanted
 * (workers_follow.ts) tells it of a frame's text: passed over only when it holds `"type":"` and
 * no type so written is wanted. Quotes inside a JSON string are escaped, and a byte of a UTF-8
 * sequence is never an ASCII one, so text that mentions a type cannot pass for it.
 */
export function frameMayBeWanted(bytes: Buffer, start: number, end: number, wanted: ReadonlySet<string>): boolean {
  let at = bytes.indexOf(TYPE_MARK, start);
  if (at < 0 || at >= end) return true; // not in the shape this test knows: the parser decides
  for (; at >= 0 && at < end; at = bytes.indexOf(TYPE_MARK, at + TYPE_MARK.length)) {
    const from = at + TYPE_MARK.length;
    const close = bytes.indexOf(QUOTE, from);
    if (close < 0 || close >= end || wanted.has(bytes.toString("latin1", from, close))) return true;
  }
  return false;
}

/** Splits a stream's chunks into frames and gives on the data of each that may be wanted. */
export class FrameSplitter {
  private pending: Buffer = Buffer.alloc(0);
  /** Set once the stream shows a CR: from there on every byte goes through the full parser. */
  private full?: { parser: SSEParser; decoder: TextDecoder };
  private readonly parser: SSEParser;

  constructor(
    private readonly wanted: ReadonlySet<string> | undefined,
    private readonly onData: (data: string) => void,
  ) {
    this.parser = new SSEParser((_name, data) => onData(data));
  }

  push(chunk: Uint8Array): void {
    if (this.full) {
      this.full.parser.push(this.full.decoder.decode(chunk, { stream: true }));
      return;
    }
    const bytes = this.pending.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([this.pending, chunk]);
    if (bytes.indexOf(CR, this.pending.length) >= 0) {
      this.pending = Buffer.alloc(0);
      const onData = (data: string) => {
        const bytes = Buffer.from(data);
        if (!this.wanted || frameMayBeWanted(bytes, 0, bytes.length, this.wanted)) this.onData(data);
      };
      this.full = { parser: new SSEParser((_name, data) => onData(data)), decoder: new TextDecoder() };
      this.full.parser.push(this.full.decoder.decode(bytes, { stream: true }));
      return;
    }
    let pos = 0;
    for (let end = bytes.indexOf(LF_LF, pos); end >= 0; end = bytes.indexOf(LF_LF, pos)) {
      if (!this.wanted || frameMayBeWanted(bytes, pos, end, this.wanted)) {
        // The frame and its blank line: the parser gives its data as the standard reads it.
        this.parser.push(bytes.toString("utf8", pos, end + 2));
      }
      pos = end + 2;
    }
    // What is left is a frame's start: copied, as the chunk's memory may be the stream's to reuse.
    this.pending = pos === bytes.length ? Buffer.alloc(0) : Buffer.from(bytes.subarray(pos));
  }
}
