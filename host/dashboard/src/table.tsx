/** @jsxImportSource preact */
// The task table: the API's status filter, search and sort, over all tasks, a page of PAGE_SIZE
// tasks at a time. Live: the stream updates the rows shown and brings new tasks in.

import { useRef } from "preact/hooks";
import { shown, statusLabel, time, whereText } from "./format";
import { list, listError, offset, PAGE_SIZE, refreshList, search, searchPending, sortDesc, sortKey, statusFilter, type SortKey } from "./store";

const FILTERS: [string, string][] = [
  ["", "All statuses"],
  ["running,resumed", "Running"],
  ["queued", "Queued"],
  ["completed", "Completed"],
  ["error", "Failed"],
  ["cancelled", "Cancelled"],
];

const COLUMNS: [SortKey, string][] = [
  ["description", "Description"],
  ["agent", "Agent"],
  ["status", "Status"],
  ["startedAt", "Started"],
  ["duration", "Duration"],
  ["model", "Model"],
  ["tokens", "Tokens"],
  ["cost", "Cost"],
];

function setFilter(status: string) {
  statusFilter.value = status;
  offset.value = 0;
  void refreshList();
}

export function TaskTable() {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const l = list.value;
  const rows = l.tasks;
  const from = l.total === 0 ? 0 : l.offset + 1;
  const to = l.offset + l.tasks.length;
  const onSearch = (v: string) => {
    search.value = v;
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      if (!searchPending()) return; // another control read the list with it meanwhile
      offset.value = 0;
      void refreshList();
    }, 250);
  };
  const page = (delta: number) => {
    offset.value = Math.max(0, offset.value + delta * PAGE_SIZE);
    void refreshList();
  };
  const sortBy = (key: SortKey) => {
    if (sortKey.value === key) sortDesc.value = !sortDesc.value;
    else {
      sortKey.value = key;
      sortDesc.value = key === "startedAt" || key === "duration" || key === "tokens" || key === "cost";
    }
    offset.value = 0;
    void refreshList();
  };
  return (
    <section class="tasks card" aria-label="Tasks">
      <div class="controls">
        <h2>Tasks</h2>
        <label>
          <span class="sr">Status</span>
          <select value={statusFilter.value} onChange={(e) => setFilter((e.target as HTMLSelectElement).value)}>
            {FILTERS.map(([v, label]) => (
              <option value={v}>{label}</option>
            ))}
          </select>
        </label>
        <label class="search">
          <span class="sr">Search descriptions</span>
          <input type="search" placeholder="Search descriptions" value={search.value} onInput={(e) => onSearch((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      {listError.value && <p class="error">{listError.value}</p>}
      <div class="scroll">
        <table>
          <thead>
            <tr>
              {COLUMNS.map(([key, label]) => {
                const active = sortKey.value === key;
                return (
                  <th class={`col-${key}`} aria-sort={active ? (sortDesc.value ? "descending" : "ascending") : "none"}>
                    <button type="button" onClick={() => sortBy(key)}>
                      {label}
                      <span aria-hidden="true">{active ? (sortDesc.value ? " ▼" : " ▲") : ""}</span>
                    </button>
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => {
              const label = statusLabel(t);
              return (
                <tr key={t.id}>
                  <td class="col-description">
                    <a href={`#/task/${encodeURIComponent(t.id)}`}>{t.description || t.id}</a>
                  </td>
                  <td class="col-agent">
                    {t.agent}
                    {whereText(t) && <div class="worker muted">{whereText(t)}</div>}
                  </td>
                  <td class="col-status">
                    <span class={`status st-${label}`}>{label}</span>
                    {t.view?.retry && <div class="retry">{t.view.retry}</div>}
                  </td>
                  <td class="col-startedAt">{time(t.startedAt)}</td>
                  <td class="col-duration">{shown(t.view?.duration)}</td>
                  <td class="col-model">{t.model ?? "–"}</td>
                  <td class="col-tokens">{shown(t.view?.tokens)}</td>
                  <td class="col-cost">{shown(t.view?.cost)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {l.tasks.length === 0 && <p class="muted empty">{statusFilter.value || search.value ? "No task matches." : "No tasks yet."}</p>}
      </div>
      <div class="pager">
        <span>
          {from}–{to} of {l.total}
        </span>
        <button type="button" disabled={l.offset === 0} onClick={() => page(-1)}>
          {sortKey.value === "startedAt" && sortDesc.value ? "Newer" : "Previous"}
        </button>
        <button type="button" disabled={to >= l.total} onClick={() => page(1)}>
          {sortKey.value === "startedAt" && sortDesc.value ? "Older" : "Next"}
        </button>
      </div>
    </section>
  );
}
