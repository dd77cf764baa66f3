// The shapes the runtime (runtime.ts) takes from its hosts and gives back: where the plugin's
// files go, what a tool call carries, and a tool's answer.

/** What the core needs to place the plugin's files. */
export interface StorageEnv {
  xdgDataHome?: string;
  /** For the global config file ($XDG_CONFIG_HOME/opencode, else ~/.config/opencode). */
  xdgConfigHome?: string;
  home?: string;
  directory?: string;
  apiPort?: string;
  /** This process: it names its server file. */
  pid?: number;
}

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
