// How times, durations and statuses read on the page.

import type { Task, Tokens } from "./types";

export function duration(ms: number): string {
  if (!(ms >= 0)) return "–";
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.floor(s % 60)} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m % 60} min`;
}

/** How long a task ran, or has been running at now. */
export function taskDuration(t: Task, now: number): number {
  const end = t.completedAt || (isActive(t) ? now : t.progress.lastUpdate || t.startedAt);
  return Math.max(0, end - t.startedAt);
}

export function time(ms: number | undefined): string {
  if (!ms) return "–";
  const d = new Date(ms);
  const today = new Date();
  const sameDay = d.toDateString() === today.toDateString();
  return sameDay ? d.toLocaleTimeString() : d.toLocaleString();
}

export const isActive = (t: Task) => t.status === "running" || t.status === "queued" || t.status === "resumed";

/** The status as the page names it (queued, waiting, failed...): the core's, in the task's view. */
export function statusLabel(t: Task): string {
  return t.view?.label ?? t.status;
}

/** Every token counted: input, output, reasoning and cache alike. */
export function tokenTotal(k: Tokens | undefined): number {
  return k ? k.input + k.output + k.reasoning + k.cacheRead + k.cacheWrite : 0;
}

/** A token count, short: 950, 12.3k, 4.1M; a dash when none was reported. */
export function tokens(k: Tokens | undefined): string {
  if (!k) return "–";
  const n = tokenTotal(k);
  if (n < 1000) return `${n}`;
  if (n < 1e6) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  return `${(n / 1e6).toFixed(1).replace(/\.0$/, "")}M`;
}

/** A cost in dollars: cents when there are some, else four decimals, so a cheap task is not shown as free. */
export function cost(c: number | undefined): string {
  if (c === undefined || c === 0) return "–";
  return Math.abs(c) >= 0.01 ? `$${c.toFixed(2)}` : `$${c.toFixed(4)}`;
}

/** A task's usage against its budget: "2 of 3 model calls · 1.2k of 5k tokens · $0.01 of $0.50" (the core's). */
export function budgetText(t: Task): string {
  return t.view?.budget ?? "";
}
