// The status API's shapes, as the core writes them: the task's are generated (bridge/), the
// answers' (core/httpapi) are written here.

// A task and its parts are the core's own types, generated from its Go source (make generate):
// the page cannot drift from what the API writes.
import type { Task, Tokens } from "../../../bridge/abi_types.gen";
export type { APIConversation, APIMessage, APIToolCall, FallbackAttempt, Task, Tokens, ViewTimeline } from "../../../bridge/abi_types.gen";
export type Status = Task["status"];

export interface Stats {
  byStatus: Record<string, number>;
  byAgent: Record<string, number>;
  totalTasks: number;
  activeTasks: number;
  /** Running tasks still waiting for a slot. */
  queued?: number;
  tokens?: Tokens;
  cost?: number;
  /** The sums as the page shows them (the core's). */
  view?: UsageView;
}

/** A sum of tokens and cost as the core writes it for the page ("12.3k", "$0.25"). */
export interface UsageView {
  tokens?: string;
  cost?: string;
}

export interface TaskList {
  tasks: Task[];
  total: number;
  limit: number;
  offset: number;
}

export interface Group {
  batchId: string;
  /** The batch as its user knows it: its first tasks' descriptions (the core's). */
  name: string;
  stats: { completed: number; running: number; error: number; cancelled: number; total: number; tokens?: Tokens; cost?: number; view?: UsageView };
}

export interface Health {
  status: string;
  version: string;
  taskCount: number;
  readOnly?: boolean;
  /** Why status is "degraded" (the task history cannot be written). */
  reason?: string;
}
