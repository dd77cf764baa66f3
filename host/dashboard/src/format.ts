// How times, durations and statuses read on the page.

import type { Task } from "./types";

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

export const isActive = (t: Task) => t.status === "running" || t.status === "resumed";

/** The status as the page names it: a running task that waits for a slot is queued. */
export function statusLabel(t: Task): string {
  if (t.status === "running" && t.queued) return "queued";
  if (t.status === "error") return "failed";
  return t.status;
}
