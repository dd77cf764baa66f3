/** @jsxImportSource preact */
// The Markdown renderer builds elements and text only: whatever HTML a result holds stays text.
import { expect, test } from "bun:test";
import type { VNode } from "preact";
import { inline, Markdown, safeHref } from "./markdown";

const ALLOWED = new Set(["div", "p", "h3", "h4", "h5", "h6", "pre", "code", "ul", "ol", "li", "blockquote", "hr", "strong", "em", "a"]);

/** Every element type and text in a tree, failing on raw HTML. */
function walk(node: unknown, types: string[], texts: string[]): void {
  if (node == null || typeof node === "boolean") return;
  if (typeof node === "string" || typeof node === "number") return void texts.push(String(node));
  if (Array.isArray(node)) return node.forEach((n) => walk(n, types, texts));
  const v = node as VNode<Record<string, unknown>>;
  expect(typeof v.type).toBe("string");
  expect(v.props.dangerouslySetInnerHTML).toBeUndefined();
  types.push(v.type as string);
  walk(v.props.children, types, texts);
}

test("HTML in a result is text, links keep only safe targets", () => {
  const text = "## Title\n\n<script>alert(1)</script> and <img src=x onerror=alert(1)>\n\n- [x](javascript:alert(1))\n- [ok](https://example.com)\n\n```\n<b>code</b>\n```";
  const types: string[] = [];
  const texts: string[] = [];
  walk(Markdown({ text }), types, texts);
  for (const t of types) expect(ALLOWED.has(t)).toBe(true);
  expect(texts.join("")).toContain("<script>alert(1)</script>");
  expect(texts.join("")).toContain("<b>code</b>");
  expect(types.filter((t) => t === "a").length).toBe(1);
});

test("safeHref keeps http(s) and mailto only", () => {
  expect(safeHref("https://a.example")).toBe("https://a.example");
  expect(safeHref(" JavaScript:alert(1)")).toBeUndefined();
  expect(safeHref("data:text/html,x")).toBeUndefined();
  expect(inline("`a` **b** *c*").length).toBe(5);
});
