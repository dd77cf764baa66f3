// Splits a worker's `/global/event` stream into frames on its bytes, and decodes only the frames
// that may be of a type the core reads. Nearly all of a busy worker's stream is text deltas
// (message.part.delta: 93% of the frames of a 20-child fan-out, 84% of its bytes), which the core
// never reads. Decoding them into strings only to pass them over would be a line parser's pass
// and a string's garbage for every byte the children stream; here a frame passed over costs two
// native byte searches. (Measured, the saving shows only with the plain socket of
// workers_stream.ts: through `fetch`, its delivery of each piece cost more than all of this.)
//
// OpenCode ends each line with LF, so a frame ends at the first LF LF. A stream that holds a CR
// anywhere is read from there on by the full parser (bridge/sse.ts), which knows every line end
// the standard allows; the frames given on are the same either way.

import { SSEParser } from "../bridge/sse";

const LF_LF = Buffer.from("\n\n");
const TYPE_MARK = Buffer.from('"type":"');
const QUOTE = 0x22;
const LF = 0x0a;
const EMPTY = Buffer.alloc(0);
const CR = 0x0d;
const DATA = Buffer.from("data: ");

/**
 * Whether the frame in bytes[start, end) may be of a type in wanted, told without decoding it:
 * passed over only when it holds `"type":"` and no type so written is wanted. Quotes inside a
 * JSON string are escaped, and a byte of a UTF-8 sequence is never an ASCII one, so text that
 * mentions a type cannot pass for it.
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
  private pending: Buffer = EMPTY;
  /** Set once the stream shows a CR: from there on every byte is decoded for the parser. */
  private decoder?: TextDecoder;
  private readonly parser: SSEParser;

  constructor(
    private readonly wanted: ReadonlySet<string> | undefined,
    private readonly onData: (data: string) => void,
  ) {
    this.parser = new SSEParser((_name, data) => {
      // Split on bytes, a frame was tested before it was decoded; read whole, it is tested here.
      if (!this.decoder || !wanted) return onData(data);
      const bytes = Buffer.from(data);
      if (frameMayBeWanted(bytes, 0, bytes.length, wanted)) onData(data);
    });
  }

  push(chunk: Uint8Array): void {
    // Bun's sockets hand in Buffers. Their memory is made an ArrayBuffer of its own only when
    // something asks for it (`.buffer`, `subarray`), which costs more than all the rest of a read
    // (docs/rationale/workers.md), so the chunk is read in place and copied out of, never viewed.
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.decoder) {
      this.parser.push(this.decoder.decode(bytes, { stream: true }));
      return;
    }
    const pending = this.pending;
    if (bytes.indexOf(CR) >= 0) {
      // The pending bytes start a frame, so the parser, whose frames so far all ended, reads on.
      this.pending = EMPTY;
      this.decoder = new TextDecoder();
      this.parser.push(this.decoder.decode(pending.length ? Buffer.concat([pending, bytes]) : bytes, { stream: true }));
      return;
    }
    let pos = 0;
    if (pending.length > 0) {
      // The frame the last chunk began ends in this one (its blank line may straddle the two),
      // or goes on past it. Only that frame is joined: the chunk's others are read where they are.
      const straddles = pending[pending.length - 1] === LF && bytes[0] === LF;
      const end = straddles ? -1 : bytes.indexOf(LF_LF);
      if (!straddles && end < 0) {
        this.pending = Buffer.concat([pending, bytes]);
        return;
      }
      pos = straddles ? 1 : end + 2;
      const frame = Buffer.allocUnsafe(pending.length + pos);
      pending.copy(frame, 0);
      bytes.copy(frame, pending.length, 0, pos);
      this.frame(frame, 0, frame.length - 2);
    }
    for (let end = bytes.indexOf(LF_LF, pos); end >= 0; end = bytes.indexOf(LF_LF, pos)) {
      this.frame(bytes, pos, end);
      pos = end + 2;
    }
    // What is left is a frame's start, copied: the chunk's memory may be the stream's to reuse.
    if (pos === bytes.length) this.pending = EMPTY;
    else {
      this.pending = Buffer.allocUnsafe(bytes.length - pos);
      bytes.copy(this.pending, 0, pos);
    }
  }

  /** Gives on the frame in bytes[start, end) (its blank line after end) when it may be wanted. */
  private frame(bytes: Buffer, start: number, end: number): void {
    if (this.wanted && !frameMayBeWanted(bytes, start, end, this.wanted)) return;
    // OpenCode's frames are one `data: ` line each: its value is the frame's data, as the parser
    // would read it, without the parser's pass over it. Anything else (other fields, comments,
    // more lines, the stream's first frame, which may open with a byte order mark) is the
    // parser's, which gives its data as the standard reads it.
    if (this.parser.started && end - start > DATA.length && bytes.compare(DATA, 0, DATA.length, start, start + DATA.length) === 0) {
      const lf = bytes.indexOf(LF, start);
      if (lf === end) return this.onData(bytes.toString("utf8", start + DATA.length, end));
    }
    this.parser.push(bytes.toString("utf8", start, end + 2));
  }
}
