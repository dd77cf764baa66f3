/** @jsxImportSource preact */
// A small Markdown renderer for task results, safe by construction: it builds elements and text
// nodes, never HTML, so whatever a result holds (tags, scripts, entities) is shown as text.
// Links keep only http(s) and mailto targets; images become links (an image would be a request
// to another server the moment the page shows it).

import type { ComponentChildren, VNode } from "preact";

const SAFE_URL = /^(https?:|mailto:)/i;

export function safeHref(url: string): string | undefined {
  const u = url.trim();
  return SAFE_URL.test(u) ? u : undefined;
}

/** Inline Markdown: code spans, links, images, bold, italics; the rest is text. */
export function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  const re = /(`+)([\s\S]*?)\1|!?\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    last = re.lastIndex;
    if (m[1] !== undefined) {
      out.push(<code>{m[2]}</code>);
    } else if (m[4] !== undefined) {
      const href = safeHref(m[4]);
      const label = m[3] || m[4];
      out.push(href ? <a href={href} target="_blank" rel="noopener noreferrer">{label}</a> : `${label} (${m[4]})`);
    } else if (m[5] !== undefined || m[6] !== undefined) {
      out.push(<strong>{inline(m[5] ?? m[6])}</strong>);
    } else {
      out.push(<em>{inline(m[7] ?? m[8])}</em>);
    }
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const HEADING = /^(#{1,6})\s+(.*)$/;
const FENCE = /^\s*(```|~~~)(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;

/** Block Markdown: headings, fenced code, lists, quotes, rules and paragraphs. */
export function Markdown({ text }: { text: string }): VNode {
  return <div class="md">{blocks(text.replace(/\r\n?/g, "\n").split("\n"))}</div>;
}

function blocks(lines: string[]): VNode[] {
  const out: VNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m: RegExpMatchArray | null;
    if (line.trim() === "") {
      i++;
    } else if ((m = line.match(FENCE))) {
      const fence = m[1];
      const code: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) code.push(lines[i++]);
      i++;
      out.push(
        <pre>
          <code>{code.join("\n")}</code>
        </pre>,
      );
    } else if ((m = line.match(HEADING))) {
      const level = Math.min(m[1].length + 2, 6); // the page's own headings come first
      const H = `h${level}` as "h3";
      out.push(<H>{inline(m[2])}</H>);
      i++;
    } else if (RULE.test(line)) {
      out.push(<hr />);
      i++;
    } else if (QUOTE.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && (m = lines[i].match(QUOTE))) quoted.push(m[1]), i++;
      out.push(<blockquote>{blocks(quoted)}</blockquote>);
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const ordered = !BULLET.test(line);
      const re = ordered ? NUMBERED : BULLET;
      const items: string[] = [];
      while (i < lines.length && (m = lines[i].match(re))) {
        let item = m[1];
        i++;
        // Continuation lines (indented, not a new item) belong to the item.
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !BULLET.test(lines[i]) && !NUMBERED.test(lines[i])) item += " " + lines[i++].trim();
        items.push(item);
      }
      const lis = items.map((it) => <li>{inline(it)}</li>);
      out.push(ordered ? <ol>{lis}</ol> : <ul>{lis}</ul>);
    } else {
      const para: string[] = [];
      while (i < lines.length && lines[i].trim() !== "" && !FENCE.test(lines[i]) && !HEADING.test(lines[i]) && !QUOTE.test(lines[i]) && !BULLET.test(lines[i]) && !NUMBERED.test(lines[i])) {
        para.push(lines[i++]);
      }
      out.push(<p>{inline(para.join("\n"))}</p>);
    }
  }
  return out;
}
