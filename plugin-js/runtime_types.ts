// The shapes the runtime (runtime.ts) takes from its hosts and gives back: where the plugin's
// files go, what a tool call carries, and a tool's answer.

/** What the core needs to place the plugin's files: the storage op's env, as the ABI types it. */
export type { StorageEnv } from "../bridge/core";

export interface ToolCallContext {
  sessionID: string;
  messageID: string;
  agent: string;
  callID?: string;
  abort?: AbortSignal;
  /**
   * Resolves once OpenCode's thread has the call's answer (the Worker hears it back from the main
   * thread). Without it, a macrotask after the answer stands in.
   */
  returned?: Promise<void>;
  /** Hears the call's answer the moment the core gives it (before the promise settles). */
  onAnswer?: (answer: { answer?: ToolAnswer; error?: string }) => void;
}

export interface ToolAnswer {
  title?: string;
  output: string;
  metadata?: Record<string, unknown>;
}

/**
 * How long effects after a tool's answer wait for OpenCode to have taken it, at most: past it they
 * go on, so a lost acknowledgement never holds a task back.
 */
export const RETURN_WAIT_MS = 1000;

/** A tool call awaiting the core's answer. */
export interface PendingCall {
  resolve(answer: ToolAnswer): void;
  reject(err: Error): void;
  ctx: ToolCallContext;
}
