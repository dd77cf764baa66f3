// The event stream parser against the standard's edge cases.

import { describe, expect, test } from "bun:test";
import { SSEParser, readEvents } from "./sse";

function parse(...chunks: string[]): [string, string][] {
  const got: [string, string][] = [];
  const p = new SSEParser((name, data) => got.push([name, data]));
  for (const c of chunks) p.push(c);
  return got;
}

describe("SSEParser", () => {
  test("LF, CRLF and CR each end a line", () => {
    expect(parse("event: task\ndata: 1\n\n")).toEqual([["task", "1"]]);
    expect(parse("event: task\r\ndata: 1\r\n\r\n")).toEqual([["task", "1"]]);
    expect(parse("event: task\rdata: 1\r\r")).toEqual([["task", "1"]]);
  });

  test("a CRLF split across two chunks is one line end, not a blank line", () => {
    expect(parse("data: a\r", "\ndata: b\r\n\r\n")).toEqual([["message", "a\nb"]]);
  });

  test("a frame split anywhere across chunks is one event", () => {
    const frame = "event: task\ndata: {\"id\":1}\n\n";
    for (let i = 1; i < frame.length; i++) expect(parse(frame.slice(0, i), frame.slice(i))).toEqual([["task", '{"id":1}']]);
  });

  test("comments are skipped, and a frame of comments only is no event", () => {
    expect(parse(": ping\n\n: hello\ndata: x\n\n")).toEqual([["message", "x"]]);
  });

  test("data lines are joined with LF; one leading space is dropped, not two", () => {
    expect(parse("data: a\ndata:  b\ndata:c\n\n")).toEqual([["message", "a\n b\nc"]]);
  });

  test("a field with no colon has an empty value", () => {
    expect(parse("data\n\n")).toEqual([["message", ""]]);
    expect(parse("data\ndata\n\n")).toEqual([["message", "\n"]]);
    expect(parse("event\ndata: x\n\n")).toEqual([["message", "x"]]);
  });

  test("a frame without data is no event, and the name does not carry over", () => {
    expect(parse("event: heartbeat\n\ndata: x\n\n")).toEqual([["message", "x"]]);
  });

  test("unknown fields are ignored, and a leading byte order mark is dropped", () => {
    expect(parse("\uFEFFid: 7\nretry: 10\nfoo: bar\ndata: x\n\n")).toEqual([["message", "x"]]);
  });

  test("an unfinished frame at the end is not dispatched", () => {
    expect(parse("data: x\n")).toEqual([]);
  });
});

test("readEvents decodes UTF-8 split across chunks", async () => {
  const bytes = new TextEncoder().encode("data: é\n\n");
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes.slice(0, 7)); // the middle of é
      c.enqueue(bytes.slice(7));
      c.close();
    },
  });
  const got: string[] = [];
  await readEvents(body, (_, data) => got.push(data));
  expect(got).toEqual(["é"]);
});
