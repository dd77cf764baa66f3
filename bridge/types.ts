// The shapes of the core's JSON envelope (ABI v1, see ../ABI.md). These mirror core/*.go; the
// conformance cases keep the two honest.

export const ABI_VERSION = 1;

export interface CoreConfig {
  maxResultChars?: number;
  pollIntervalMs?: number;
  defaultBlockTimeoutMs?: number;
  maxBlockTimeoutMs?: number;
  development?: boolean;
  maxConcurrentStarts?: number;
  maxDepth?: number;
  notify?: { wake?: "batch" | "each" };
  /** Panes for running children (tmux.open/close); inside is the host's: OpenCode runs in tmux. */
  tmux?: { enabled?: boolean; inside?: boolean };
  api?: { token?: string; auth?: "token" | "none"; maxSubscribers?: number; startedAt?: number; version?: string };
  /** Model chains per agent: models, else model ("provider/model"). */
  agents?: Record<string, { model?: string; models?: string[] }>;
  fallback?: { attemptTimeoutMs?: number; failureThreshold?: number; cooldownMs?: number };
}

/** A config file as the host read it, for init (core/fileconfig.go). */
export interface ConfigFile {
  path: string;
  text: string;
  /** Why a file that exists could not be read; absent files are not sent. */
  error?: string;
}

export interface ArgSpec {
  name: string;
  type: "string" | "boolean" | "number";
  required?: boolean;
  description: string;
}

export interface ToolSpec {
  name: string;
  description: string;
  args: ArgSpec[];
}

export interface TextPart {
  type: "text";
  text: string;
  synthetic?: boolean;
}

export interface Effect {
  id: number;
  kind: string;
  reply?: boolean;
  sessionID?: string;
  /** The task a session effect works for (session.create has no session yet). */
  taskID?: string;
  /** session.promptAsync: this prompt is a notice to a task's parent. */
  notice?: boolean;
  parentID?: string;
  title?: string;
  permission?: { permission: string; pattern: string; action: string }[];
  agent?: string;
  parts?: TextPart[];
  tools?: Record<string, boolean>;
  noReply?: boolean;
  callID?: string;
  output?: string;
  error?: string;
  metadata?: Record<string, unknown>;
  timerID?: string;
  delayMs?: number;
  level?: string;
  message?: string;
  line?: string;
  content?: string;
  frame?: string;
  /** "provider/model" for session.promptAsync and session.summarize; absent: OpenCode chooses. */
  model?: string;
  /** state.write: a file name in the plugin's storage directory. */
  file?: string;
}

export type CoreEvent =
  | { type: "tool.call"; callID: string; tool: string; sessionID: string; messageID?: string; agent?: string; args: unknown }
  | { type: "tool.aborted"; callID: string }
  | { type: "effect.done"; effectID: number; ok: boolean; result?: unknown; error?: string }
  | { type: "opencode"; event: { type: string; properties: unknown } }
  | { type: "timer.fired"; timerID: string }
  | { type: "start" };

/** A trap the host saw (Unix ms, the runtime's words), passed to the next instance's init. */
export interface Trap {
  at: number;
  error: string;
}

export interface CoreResponse {
  ok: boolean;
  error?: string;
  effects?: Effect[];
  abi?: number;
  version?: string;
  tools?: ToolSpec[];
  subscribe?: string[];
  config?: CoreConfig;
  /** init: an invalid config file, named with its field; asyncagents_task then fails with it. */
  configError?: string;
  /** init with traps: what the failed call answers, whether to stop, the traps to keep. */
  recovery?: { message: string; halt?: boolean; traps?: Trap[] };
  tasks?: Record<string, unknown>[];
  task?: Record<string, unknown>;
  storage?: { dir: string; history: string; historyIndex: string; serverDir: string; serverJSON: string; modelHealth: string; apiPorts: number[]; configFiles?: string[] };
  /** server.file: the server file's content. */
  serverFile?: string;
  restore?: { restored: number; corrupt: number; problems?: string[]; indexed?: number };
}
