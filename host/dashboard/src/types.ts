// The status API's shapes, as the core writes them (core/task/task.go, core/httpapi/).

export type Status = "running" | "completed" | "error" | "cancelled" | "resumed";

export interface FallbackAttempt {
  model: string;
  success: boolean;
  error?: string;
  class?: string;
  timestamp: number;
  compacted?: boolean;
}

export interface Task {
  id: string;
  sessionID?: string;
  parentSessionID: string;
  parentMessageID: string;
  parentAgent?: string;
  batchId: string;
  description: string;
  prompt: string;
  agent: string;
  status: Status;
  startedAt: number;
  completedAt?: number;
  result?: string;
  error?: { name: string; message: string; statusCode?: number };
  progress: { toolCalls: number; lastTools: string[]; lastUpdate: number };
  resumeCount: number;
  isForked: boolean;
  queued?: boolean;
  depth: number;
  cancelReason?: string;
  resumedAt?: number;
  forkTokens?: number;
  models?: string[];
  model?: string;
  fallbackInfo?: {
    occurred: boolean;
    attempts?: FallbackAttempt[];
    skipped?: string[];
    successfulModel?: string;
    totalAttempts: number;
  };
  /** What the child spent, over all its runs; absent until OpenCode reported any. */
  tokens?: Tokens;
  cost?: number;
}

export interface Tokens {
  input: number;
  output: number;
  reasoning: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface Stats {
  byStatus: Record<string, number>;
  byAgent: Record<string, number>;
  totalTasks: number;
  activeTasks: number;
  tokens?: Tokens;
  cost?: number;
}

export interface TaskList {
  tasks: Task[];
  total: number;
  limit: number;
  offset: number;
}

export interface Group {
  batchId: string;
  stats: { completed: number; running: number; error: number; cancelled: number; total: number; tokens?: Tokens; cost?: number };
}

export interface Health {
  status: string;
  version: string;
  taskCount: number;
  readOnly?: boolean;
}
