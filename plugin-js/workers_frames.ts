// Splits a worker's `/global/event` stream into frames on its bytes, and decodes only the frames
// that may be of a type the core reads. Nearly all of a busy worker's stream is text deltas
// (message.part.delta: 93% of the frames of a 20-child fan-out, 84% of its bytes), which the core
// never reads. Decoding them into strings only to pass them over would be a line parser's pass
// and a string's garbage for every byte the children stream; here a frame passed over costs two
// native byte searches. (Measured, the saving shows only with the plain socket of
// workers_stream.ts: through `fetch`, its delivery of each piece cost more than all of this.)
//
// A frame of a type the core lets wait (progress) is not decoded when it comes either: its bytes are
// held (workers_group.ts) and decoded when its batch goes, so that a read of the stream makes no
// garbage of its own. Bun collects a Worker's heap on a timer that what it allocates arms, and
// those collections were a third of the plugin's Worker's CPU in a remote fan-out
// (docs/rationale/workers.md).
//
// OpenCode ends each line with LF, so a frame ends at the first LF LF. A stream that holds a CR
// anywhere is read from there on by the full parser (bridge/sse.ts), which knows every line end
// the standard allows; the frames given on are the same either way.

import { SSEParser } from "../bridge/sse";

const LF_LF = Buffer.from("\n\n");
const TYPE_MARK = Buffer.from('"type":"');
const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const DATA = Buffer.from("data: ");
/** A ByteStore grown past this goes back to its first size when emptied (memory back to Bun). */
const KEEP_BYTES = 1 << 20;

/**
 * Bytes copied in run after run, in one buffer kept from use to use: what is appended allocates
 * nothing unless the buffer must grow (the reads of a stream make no garbage, see above).
 */
export class ByteStore {
  bytes: Buffer;
  /** The bytes in use: bytes[0, length). */
  length = 0;

  constructor(private readonly firstBytes: number) {
    this.bytes = Buffer.allocUnsafe(firstBytes);
  }

  /** Appends src[from, to). */
  append(src: Buffer, from: number, to: number): void {
    const need = this.length + (to - from);
    if (need > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, 2 * this.bytes.length));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    src.copy(this.bytes, this.length, from, to);
    this.length = need;
  }

  /** Empties it; one that grew past KEEP_BYTES (a large output) does not keep that memory. */
  clear(): void {
    this.length = 0;
    if (this.bytes.length > KEEP_BYTES) this.bytes = Buffer.allocUnsafe(this.firstBytes);
  }
}

/** Integers pushed one after another into a typed array kept from use to use (see ByteStore). */
export class IntList {
  items = new Int32Array(256);
  /** The integers in use: items[0, count). */
  count = 0;

  /** Appends v; returns its index. */
  push(v: number): number {
    if (this.count === this.items.length) {
      const grown = new Int32Array(2 * this.items.length);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.count] = v;
    return this.count++;
  }
}

/** What a frame is to its reader: passed over, given on now, or held (its type may wait). */
export const PASS = 0;
export const NOW = 1;
export const HOLD = 2;
export type FrameKind = typeof PASS | typeof NOW | typeof HOLD;

/** The types a reader wants, some of them held, told from a frame's bytes without decoding it. */
export class FrameTypes {
  /** Each type's bytes, with its kind, by the types' byte length. */
  private readonly byLength = new Map<number, { bytes: Buffer; kind: FrameKind }[]>();

  constructor(wanted: Iterable<string>, held: ReadonlySet<string> = new Set()) {
    for (const type of wanted) {
      const bytes = Buffer.from(type);
      const list = this.byLength.get(bytes.length) ?? [];
      list.push({ bytes, kind: held.has(type) ? HOLD : NOW });
      this.byLength.set(bytes.length, list);
    }
  }

  /**
   * The kind of the frame in bytes[start, end): PASS when it holds `"type":"` and no type so
   * written is wanted; HOLD when the wanted ones so written are all held; NOW otherwise, and when
   * the frame is not in the shape this test knows (the parser decides). Quotes inside a JSON
   * string are escaped, and a byte of a UTF-8 sequence is never an ASCII one, so text that
   * mentions a type cannot pass for it. Compared on bytes: nothing is allocated.
   */
  kind(bytes: Buffer, start: number, end: number): FrameKind {
    let at = bytes.indexOf(TYPE_MARK, start);
    if (at < 0 || at >= end) return NOW;
    let kind: FrameKind = PASS;
    for (; at >= 0 && at < end; at = bytes.indexOf(TYPE_MARK, at + TYPE_MARK.length)) {
      const from = at + TYPE_MARK.length;
      const close = bytes.indexOf(QUOTE, from);
      if (close < 0 || close >= end) return NOW;
      const k = this.typeKind(bytes, from, close);
      if (k === NOW) return NOW;
      if (k === HOLD) kind = HOLD;
    }
    return kind;
  }

  private typeKind(bytes: Buffer, from: number, close: number): FrameKind {
    const list = this.byLength.get(close - from);
    if (list === undefined) return PASS;
    // An indexed loop: `for...of` makes an iterator where the JIT has not yet done away with it.
    for (let i = 0; i < list.length; i++) {
      if (bytes.compare(list[i].bytes, 0, list[i].bytes.length, from, close) === 0) return list[i].kind;
    }
    return PASS;
  }
}

/** The data of a held frame: bytes[start, end), valid only during the call (copy what is kept). */
export type HoldFrame = (bytes: Buffer, start: number, end: number) => void;

/**
 * Splits a stream's chunks into frames: gives on the data of each frame types may want, as text,
 * and the data of each held one as bytes to onHold (as text to onData without onHold). A frame
 * that is not one `data: ` line goes through the parser and is given on as text.
 */
export class FrameSplitter {
  /** The start of a frame the last chunk did not end. */
  private readonly carry = new ByteStore(4096);
  /** Set once the stream shows a CR: from there on every byte is decoded for the parser. */
  private decoder?: TextDecoder;
  private readonly parser: SSEParser;

  constructor(
    private readonly types: FrameTypes | undefined,
    private readonly onData: (data: string) => void,
    private readonly onHold?: HoldFrame,
  ) {
    this.parser = new SSEParser((_name, data) => {
      // Split on bytes, a frame was tested before it was decoded; read whole, it is tested here.
      if (!this.decoder || !types) return onData(data);
      const bytes = Buffer.from(data);
      if (types.kind(bytes, 0, bytes.length) !== PASS) onData(data);
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
    if (bytes.indexOf(CR) >= 0) {
      // The carried bytes start a frame, so the parser, whose frames so far all ended, reads on.
      const carried = this.carry.length ? Buffer.concat([this.carry.bytes.subarray(0, this.carry.length), bytes]) : bytes;
      this.carry.clear();
      this.decoder = new TextDecoder();
      this.parser.push(this.decoder.decode(carried, { stream: true }));
      return;
    }
    let pos = 0;
    if (this.carry.length > 0) {
      // The frame the last chunk began ends in this one (its blank line may straddle the two),
      // or goes on past it. Only that frame is joined: the chunk's others are read where they are.
      const straddles = this.carry.bytes[this.carry.length - 1] === LF && bytes[0] === LF;
      const end = straddles ? -1 : bytes.indexOf(LF_LF);
      if (!straddles && end < 0) return this.carry.append(bytes, 0, bytes.length);
      pos = straddles ? 1 : end + 2;
      this.carry.append(bytes, 0, pos);
      this.frame(this.carry.bytes, 0, this.carry.length - 2);
      this.carry.clear();
    }
    for (let end = bytes.indexOf(LF_LF, pos); end >= 0; end = bytes.indexOf(LF_LF, pos)) {
      this.frame(bytes, pos, end);
      pos = end + 2;
    }
    // What is left is a frame's start, copied: the chunk's memory may be the stream's to reuse.
    if (pos < bytes.length) this.carry.append(bytes, pos, bytes.length);
  }

  /** Gives on the frame in bytes[start, end) (its blank line after end) as its kind says. */
  private frame(bytes: Buffer, start: number, end: number): void {
    const kind = this.types ? this.types.kind(bytes, start, end) : NOW;
    if (kind === PASS) return;
    // OpenCode's frames are one `data: ` line each: its value is the frame's data, as the parser
    // would read it, without the parser's pass over it. Anything else (other fields, comments,
    // more lines, the stream's first frame, which may open with a byte order mark) is the
    // parser's, which gives its data as the standard reads it.
    if (this.parser.started && end - start > DATA.length && bytes.compare(DATA, 0, DATA.length, start, start + DATA.length) === 0) {
      const lf = bytes.indexOf(LF, start);
      if (lf === end) {
        if (kind === HOLD && this.onHold) return this.onHold(bytes, start + DATA.length, end);
        return this.onData(bytes.toString("utf8", start + DATA.length, end));
      }
    }
    this.parser.push(bytes.toString("utf8", start, end + 2));
  }
}
