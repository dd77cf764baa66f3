// The page's state and how it stays current: the task list is read a page at a time (the API's
// own paging, so 10,000 tasks open as fast as 50), and /v1/events says what changed. Changes are
// gathered and applied at most a few times a second, so a thousand busy tasks never freeze the
// page; a lost stream comes back with growing pauses, and everything is read again then, since
// changes may have been missed meanwhile.

import { batch, signal } from "@preact/signals";
import { VIEW_LIVE_REFRESH_MS } from "../../../bridge/abi_types.gen";
import { APIError, get, seg, tradeCode } from "./api";
import { isActive } from "./format";
import { openStream, type Stream } from "./stream";
import type { Group, Health, Stats, Task, TaskList } from "./types";

export type Access = "checking" | "granted" | "denied" | "failed";
export type Connection = { state: "connecting" | "live" | "waiting"; retryIn?: number; error?: string };
export type SortKey = "startedAt" | "description" | "agent" | "status" | "duration" | "model" | "tokens" | "cost";

export const PAGE_SIZE = 50;
/** How often at most the list, the counts and the batches are read again while tasks change. */
const REFRESH_MS = 1000;
/** The longest pause between two attempts to reopen the event stream. */
const MAX_BACKOFF_MS = 30_000;
/** How many recent batches the overview shows. */
const RECENT_BATCHES = 6;

export const access = signal<Access>("checking");
export const accessError = signal("");
export const health = signal<Health | undefined>(undefined);
export const stats = signal<Stats | undefined>(undefined);
export const connection = signal<Connection>({ state: "connecting" });
export const list = signal<TaskList>({ tasks: [], total: 0, limit: PAGE_SIZE, offset: 0 });
export const listError = signal("");
export const groups = signal<Group[]>([]);

/** The list's filters: the API's status filter and search, and the page. */
export const statusFilter = signal("");
export const search = signal("");
export const offset = signal(0);
export const sortKey = signal<SortKey>("startedAt");
export const sortDesc = signal(true);

/** The task shown on its own page, kept current by the stream. */
export const openTask = signal<Task | undefined>(undefined);

let source: Stream | undefined;
let backoff = 1000;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let lastRefresh = 0;
const changed = new Map<string, Task>();
let flushScheduled = false;

/** Checks access, then reads everything and opens the stream. */
export async function start(): Promise<void> {
  try {
    await tradeCode();
    health.value = await get<Health>("/v1/health");
    stats.value = await get<Stats>("/v1/stats");
    access.value = "granted";
  } catch (err) {
    if (err instanceof APIError && (err.status === 401 || err.status === 403)) {
      accessError.value = err.message;
      access.value = "denied";
      return;
    }
    accessError.value = (err as Error).message;
    access.value = "failed";
    return;
  }
  // The durations are the core's, as of each answer: while a task shown is at work, it is read
  // again each VIEW_LIVE_REFRESH_MS to see them grow, as the terminal UI reads its views.
  setInterval(() => {
    if (list.value.tasks.some(isActive)) void refreshList();
    const open = openTask.value;
    if (open && isActive(open)) void loadTask(open.id).catch(() => undefined); // the stream tells when the server is gone
  }, VIEW_LIVE_REFRESH_MS);
  void refreshAll();
  connect();
}

export async function refreshAll(): Promise<void> {
  lastRefresh = Date.now();
  await Promise.all([refreshList(), refreshStats(), refreshGroups()]);
}

let listSeq = 0;
let listedSearch = "";

/** Whether the search box says something else than the list shown was read with. */
export const searchPending = () => search.value.trim() !== listedSearch;

export async function refreshList(): Promise<void> {
  // Only the latest read is shown: one sent before the filters or the page changed may answer
  // after the one sent since.
  const seq = ++listSeq;
  const q = new URLSearchParams({ limit: String(PAGE_SIZE), offset: String(offset.value) });
  if (statusFilter.value) q.set("status", statusFilter.value);
  // The API sorts every matching task, so the first page by cost holds the costliest of all.
  if (sortKey.value !== "startedAt") q.set("sort", sortKey.value);
  if (!sortDesc.value) q.set("order", "asc");
  listedSearch = search.value.trim();
  if (listedSearch) q.set("search", listedSearch);
  try {
    const page = await get<TaskList>(`/v1/tasks?${q}`);
    if (seq !== listSeq) return;
    batch(() => {
      list.value = page;
      listError.value = "";
    });
  } catch (err) {
    if (seq === listSeq) listError.value = (err as Error).message;
  }
}

async function refreshStats(): Promise<void> {
  try {
    // The health with them: a history that cannot be written is said there (degraded).
    [stats.value, health.value] = await Promise.all([get<Stats>("/v1/stats"), get<Health>("/v1/health")]);
  } catch {
    // The stream's state says when the server is gone.
  }
}

/** The batches of the newest tasks, each with its own counts. */
async function refreshGroups(): Promise<void> {
  try {
    const recent = await get<TaskList>("/v1/tasks?limit=100");
    const ids: string[] = [];
    for (const t of recent.tasks) if (t.batchId && !ids.includes(t.batchId)) ids.push(t.batchId);
    const found = await Promise.all(ids.slice(0, RECENT_BATCHES).map((id) => get<Group>(`/v1/task-groups/${seg(id)}`).catch(() => undefined)));
    groups.value = found.filter((g): g is Group => g !== undefined);
  } catch {
    // As above.
  }
}

/** Reads again what a change may have moved, at most once per REFRESH_MS. */
function scheduleRefresh(): void {
  if (refreshTimer) return;
  const wait = Math.max(0, lastRefresh + REFRESH_MS - Date.now());
  refreshTimer = setTimeout(() => {
    refreshTimer = undefined;
    void refreshAll();
  }, wait);
}

/** Applies the gathered changes to what is shown: one render for many events. */
function flush(): void {
  flushScheduled = false;
  if (changed.size === 0) return;
  const updates = new Map(changed);
  changed.clear();
  batch(() => {
    const cur = list.value;
    let hit = false;
    const tasks = cur.tasks.map((t) => {
      const u = updates.get(t.id);
      if (u) hit = true;
      return u ?? t;
    });
    if (hit) list.value = { ...cur, tasks };
    const open = openTask.value;
    if (open && updates.has(open.id)) openTask.value = updates.get(open.id);
  });
  scheduleRefresh();
}

function onTask(data: string): void {
  try {
    const t = JSON.parse(data) as Task;
    changed.set(t.id, t);
  } catch {
    return;
  }
  if (!flushScheduled) {
    flushScheduled = true;
    setTimeout(flush, 100);
  }
}

export function connect(): void {
  clearTimeout(retryTimer);
  source?.close();
  connection.value = { state: "connecting" };
  // The snapshot with the counts alone: the list is read page by page. A fetch stream, not an
  // EventSource, which cannot send the credential's header.
  const s = openStream("/v1/events?snapshot=stats", (name, data) => {
    switch (name) {
      case "snapshot":
        backoff = 1000;
        connection.value = { state: "live" };
        try {
          stats.value = (JSON.parse(data) as { stats: Stats }).stats;
        } catch {}
        // Whatever happened while the stream was down.
        void refreshAll();
        reloadOpenTask();
        return;
      case "task.created":
      case "task.updated":
      case "task.completed":
      case "task.error":
      case "task.cancelled":
        onTask(data);
        return;
      case "resync":
        // More changes at once than a stream holds (a burst of tasks): read everything again.
        scheduleRefresh();
        reloadOpenTask();
    }
  });
  source = s;
  void s.ended.then(() => {
    if (source !== s) return;
    // Ended (the server stopped, refused it, or dropped a reader too far behind): the page
    // retries, waiting longer each time.
    const wait = backoff;
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    connection.value = { state: "waiting", retryIn: Math.round(wait / 1000) };
    retryTimer = setTimeout(connect, wait);
  });
}

function reloadOpenTask(): void {
  const open = openTask.value;
  if (open) void loadTask(open.id);
}

/** Reads one task for its page. */
export async function loadTask(id: string): Promise<void> {
  openTask.value = await get<Task>(`/v1/tasks/${seg(id)}`);
}
