// The byte-level frame splitter of the workers' streams: the frames it gives on are the ones the
// full event-stream parser gives, minus those of unwanted types, however the stream is cut into
// chunks; a frame of a wanted type is never passed over, even beside text that names types.

import { expect, test } from "bun:test";
import { SSEParser } from "../bridge/sse";
import { frame } from "./fake_worker";
import { FrameSplitter, FrameTypes, HOLD, NOW, PASS } from "./workers_frames";

const wanted = new FrameTypes(["session.idle", "message.part.updated", "server.connected"]);
/** Whether the frame in bytes[start, end) may be wanted (is not passed over). */
const frameMayBeWanted = (bytes: Buffer, start: number, end: number, types: FrameTypes) => types.kind(bytes, start, end) !== PASS;
// The shape of /global/event's frames as OpenCode writes them (JSON.stringify, compact).
const text = (type: string, properties: unknown) => JSON.stringify(frame(type, properties));
const delta = (d: string) => text("message.part.delta", { sessionID: "ses_r", messageID: "msg_1", partID: "prt_1", field: "text", delta: d });
const tells = (data: string) => {
  const bytes = Buffer.from(data);
  return frameMayBeWanted(bytes, 0, bytes.length, wanted);
};

test("frameMayBeWanted: text deltas and sync copies are passed over, even when their text names a wanted type", () => {
  expect(tells(delta(" findings,"))).toBe(false);
  expect(tells(delta('{"type":"session.idle"} and "type":"message.part.updated" — ünïcödé'))).toBe(false);
  const sync = { type: "message.part.updated.1", data: { part: { type: "tool", state: { status: "completed" } } } };
  expect(tells(JSON.stringify({ directory: "/repo", payload: { type: "sync", syncEvent: sync } }))).toBe(false);
  expect(tells(text("session.idle", { sessionID: "ses_r" }))).toBe(true);
  expect(tells(text("message.part.updated", { part: { type: "text", text: "a" } }))).toBe(true);
  expect(tells(JSON.stringify({ payload: { type: "server.connected", properties: {} } }))).toBe(true);
  // Not in the compact shape the test knows: left to the parser.
  expect(tells(JSON.stringify(frame("message.part.delta", {}), null, 1))).toBe(true);
});

test("frameMayBeWanted looks only inside its frame: a wanted type in the next frame does not count", () => {
  const two = Buffer.from(`data: ${delta("x")}\n\ndata: ${text("session.idle", {})}\n\n`);
  const end = two.indexOf("\n\n");
  expect(frameMayBeWanted(two, 0, end, wanted)).toBe(false);
  expect(frameMayBeWanted(two, end + 2, two.length - 2, wanted)).toBe(true);
});

test("FrameTypes tells a held type from one given now, on bytes; a frame with a type given now is not held", () => {
  const types = new FrameTypes(["session.idle", "message.part.updated", "message.updated"], new Set(["message.part.updated", "message.updated"]));
  const kind = (data: string) => types.kind(Buffer.from(data), 0, Buffer.byteLength(data));
  expect(kind(text("message.part.updated", { part: { type: "tool" } }))).toBe(HOLD);
  expect(kind(text("message.updated", { info: { id: "msg_1" } }))).toBe(HOLD);
  expect(kind(text("session.idle", { sessionID: "ses_r" }))).toBe(NOW);
  expect(kind(delta("x"))).toBe(PASS);
  // A type of the same length as a wanted one, and one that only starts like it, are not it.
  expect(kind(text("message.part.uXdated", {}))).toBe(PASS);
  expect(kind(text("message.part.updated.1", {}))).toBe(PASS);
  // Held and given-now types in one frame: it goes now (the parser then reads its type).
  expect(kind(JSON.stringify({ payload: { type: "session.idle", properties: { part: { type: "message.updated" } } } }))).toBe(NOW);
  expect(kind(JSON.stringify(frame("message.part.delta", {}), null, 1))).toBe(NOW);
});

/** A stream as OpenCode writes it: heartbeats, deltas in between, multi-byte text. */
function stream(): string {
  const frames = [
    JSON.stringify({ payload: { type: "server.connected", properties: {} } }),
    text("session.status", { sessionID: "ses_r", status: { type: "busy" } }),
  ];
  for (let i = 0; i < 40; i++) {
    frames.push(delta(`${i} "type":"session.idle" — café ☕ 𝄞`));
    if (i % 7 === 0) frames.push(text("message.part.updated", { part: { id: `prt_${i}`, text: `part ${i} — ☕` } }));
    if (i % 13 === 0) frames.push(JSON.stringify({ payload: { type: "server.heartbeat", properties: {} } }));
  }
  frames.push(text("session.idle", { sessionID: "ses_r" }));
  const lines = frames.map((f) => `data: ${f}\n\n`);
  // Frames that are not one `data: ` line, which OpenCode does not write but the standard
  // allows: the splitter gives them as the full parser reads them.
  const idle = text("session.idle", { sessionID: "ses_x" });
  lines.splice(5, 0, `event: message\ndata: ${idle}\n\n`, `: a comment\ndata:${idle}\n\n`, `data: {"payload":\ndata: {"type":"session.idle","properties":{}}}\n\n`);
  lines.splice(20, 0, `id: 7\ndata: ${text("message.part.updated", { part: { id: "prt_id" } })}\n\n`, `data:  ${idle}\n\n`);
  // A byte order mark opens the stream: the parser drops it from the first frame only.
  return "\uFEFF" + lines.join("");
}

/** What the full parser gives of text, kept to the frames the type test may want. */
function reference(all: string): string[] {
  const out: string[] = [];
  new SSEParser((_n, data) => {
    if (frameMayBeWanted(Buffer.from(data), 0, Buffer.byteLength(data), wanted)) out.push(data);
  }).push(all);
  return out;
}

/** The bytes of text cut at the given offsets (which may fall inside a UTF-8 sequence). */
function cut(bytes: Buffer, at: number[]): Uint8Array[] {
  const points = [0, ...at.filter((n) => n > 0 && n < bytes.length).sort((a, b) => a - b), bytes.length];
  // A socket hands in Buffers, `fetch` plain Uint8Arrays: the chunks are of both kinds, in turn.
  return points.slice(1).map((end, i) => (i % 2 ? Buffer.from(bytes.subarray(points[i], end)) : new Uint8Array(bytes.subarray(points[i], end))));
}

test("whatever the chunks, the splitter gives the full parser's wanted frames, in order, and no delta", () => {
  const all = stream();
  const bytes = Buffer.from(all);
  const want = reference(all);
  expect(want.some((d) => d.includes("message.part.delta"))).toBe(false);
  expect(want.map((d) => JSON.parse(d).payload.type)).toContain("session.idle");
  let seed = 7;
  // mulberry32, in 32-bit integer arithmetic: a float LCG loses its low bits past 2^53 and drew
  // even offsets 99 times in 100, so odd cuts were hardly tried.
  const rand = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const cuts: number[][] = [[], Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)];
  for (let k = 0; k < 200; k++) cuts.push(Array.from({ length: 1 + rand(30) }, () => rand(bytes.length)));
  for (const at of cuts) {
    const got: string[] = [];
    const splitter = new FrameSplitter(wanted, (d) => void got.push(d));
    for (const chunk of cut(bytes, at)) splitter.push(chunk);
    expect(got).toEqual(want);
  }
});

test("without a wanted set every frame is given on, as the full parser gives it", () => {
  const all = stream();
  const every: string[] = [];
  new SSEParser((_n, data) => void every.push(data)).push(all);
  const got: string[] = [];
  const splitter = new FrameSplitter(undefined, (d) => void got.push(d));
  for (const chunk of cut(Buffer.from(all), [5, 300, 301, 2000])) splitter.push(chunk);
  expect(got).toEqual(every);
});

test("a stream with CR line ends is read by the full parser from the first CR on, frames split across the switch included", () => {
  const lf = `data: ${text("session.idle", { sessionID: "a" })}\n\n`;
  const crlf = `data: ${delta("skip")}\r\n\r\ndata: ${text("session.idle", { sessionID: "b" })}\r\n\r\ndata: ${text("message.part.updated", { part: { id: "p" } })}\r\r`;
  const got: string[] = [];
  const splitter = new FrameSplitter(wanted, (d) => void got.push(d));
  const bytes = Buffer.from(lf + crlf);
  for (const chunk of cut(bytes, [lf.length + 3, lf.length + 40, bytes.length - 1])) splitter.push(chunk);
  expect(got.map((d) => JSON.parse(d).payload.properties.sessionID ?? JSON.parse(d).payload.properties.part.id)).toEqual(["a", "b", "p"]);
});

test("a byte order mark inside the stream is not its opening one: that frame is no event, as the parser reads it", () => {
  const idle = (id: string) => text("session.idle", { sessionID: id });
  const all = `data: ${idle("a")}\n\n\uFEFFdata: ${idle("bom")}\n\ndata: ${idle("b")}\n\n`;
  const got: string[] = [];
  const splitter = new FrameSplitter(wanted, (d) => void got.push(d));
  splitter.push(Buffer.from(all));
  expect(got).toEqual(reference(all));
  expect(got.map((d) => JSON.parse(d).payload.properties.sessionID)).toEqual(["a", "b"]);
});

test("a socket's Buffer is read in place and copied out of, never viewed (a view costs Bun a copy of its memory)", () => {
  const all = Buffer.from(stream());
  const want = reference(all.toString());
  const got: string[] = [];
  const splitter = new FrameSplitter(wanted, (d) => void got.push(d));
  for (const chunk of cut(all, [100, 2000, 2001, 5000])) {
    const bytes = Buffer.from(chunk);
    const viewed = () => {
      throw new Error("the chunk was viewed");
    };
    Object.defineProperty(bytes, "buffer", { get: viewed });
    Object.defineProperty(bytes, "subarray", { value: viewed });
    Object.defineProperty(bytes, "slice", { value: viewed });
    splitter.push(bytes);
  }
  expect(got).toEqual(want);
});

test("held frames come to onHold as bytes, in their places among the frames given as text, however the stream is cut", () => {
  const all = stream();
  const bytes = Buffer.from(all);
  const want = reference(all);
  const held = new FrameTypes(["session.idle", "message.part.updated", "server.connected"], new Set(["message.part.updated"]));
  for (const at of [[], [1, 2, 3, 700, 701, 702], Array.from({ length: 60 }, (_, i) => i * 97 + 5)]) {
    const got: string[] = [];
    let holds = 0;
    const splitter = new FrameSplitter(held, (d) => void got.push(d), (b, start, end) => {
      holds++;
      got.push(b.toString("utf8", start, end));
    });
    for (const chunk of cut(bytes, at)) splitter.push(chunk);
    expect(got).toEqual(want);
    // The one-line part updates are held; the one with an id: field goes through the parser, as text.
    expect(holds).toBe(want.filter((d) => d.includes('"message.part.updated"')).length - 1);
  }
});
