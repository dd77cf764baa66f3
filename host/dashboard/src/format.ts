// How times and statuses read on the page. A duration, a token figure or a cost is the core's,
// written in the task's view (core/view, core/text): the page formats none.

import { VIEW_ON_WORKER } from "../../../bridge/abi_types.gen";
import type { Task } from "./types";

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

/** A task's usage against its budget: "2 of 3 model calls · 1.2k of 5k tokens · $0.01 of $0.50" (the core's). */
export function budgetText(t: Task): string {
  return t.view?.budget ?? "";
}

/** What the core wrote for a figure, or a dash when it wrote none (nothing reported yet). */
export const shown = (text: string | undefined) => text || "–";

/** Where a task on a worker runs: "on worker w1" (the core's words, as the TUI's rows); "" for a local one. */
export const whereText = (t: Task) => (t.view?.worker ? VIEW_ON_WORKER + t.view.worker : "");
