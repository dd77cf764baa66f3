package core

// --- The tools as the model sees them: names, arguments and descriptions. ---

// Tools lists the tools the plugin registers.
func Tools() []ToolSpec {
	return []ToolSpec{
		{
			Name: ToolTask,
			Description: `Launch a subagent in the background and keep working while it runs.

Use this instead of the task tool when the work can run in parallel with yours or with other subagents: call asyncagents_task several times in one turn to fan work out. Each call returns at once with a task_id (bg_…); once the subagent's session exists, answers and notices also give its session_id (ses_…), and every tool takes either.

When a task finishes, a notice arrives in this conversation with its result, so you do not need to poll. Tasks launched in the same turn form a batch: you are woken once, when the whole batch is done (or at once if one fails). If you have nothing else to do, say that you are waiting and stop. To read a result (or check progress) before the notice, call asyncagents_output with the task_id.

A new task starts with a fresh context: put everything it needs in the prompt (files, goals, what to return). With fork: true it starts with this conversation's context instead (long tool outputs cut). With resume: <task_id> and a prompt, a completed task continues in its own session with a follow-up.`,
			Args: []ArgSpec{
				{Name: "description", Type: "string", Description: "A short (3-5 words) label for a new task, shown in notices and in the TUI (not needed with resume)"},
				{Name: "prompt", Type: "string", Required: true, Description: "The full task for the subagent, with all the context it needs; with resume, the follow-up message"},
				{Name: "agent", Type: "string", Description: "The subagent to run for a new task (a non-primary agent, e.g. general or explore; not needed with resume)"},
				{Name: "fork", Type: "boolean", Description: "Give the new task this conversation's context (default false)"},
				{Name: "isolation", Type: "string", Description: "\"worktree\": the subagent works in a git worktree of its own, built from your working tree as it is now, so that its edits never touch your files or another task's; its changes come back as a branch, which asyncagents_merge applies. Use it for tasks that edit code in parallel. \"none\" (the default unless the user's config says otherwise): it works in your directory"},
				{Name: "worker", Type: "string", Description: "Where the subagent runs: the name of a worker the user configured (another machine running OpenCode on a clone of this repository), \"auto\" (the place with the most free slots, this machine included) or \"local\" (this machine). Default: the agent's configured worker, else local. Not with resume: a resumed task stays where it ran"},
				{Name: "resume", Type: "string", Description: "The task_id (or session_id) of a completed task to continue with prompt, instead of starting a new task"},
				{Name: "timeout", Type: "number", Description: "A wall-clock limit in seconds (with resume: for the follow-up): at it the subagent is stopped and the task fails, with the work it did so far (default: no limit)"},
				{Name: "budget", Type: "object", Description: "Limits on what the task may spend (over the user's configured defaults; 0: no limit). Past one, the subagent is stopped and the task fails with the figures and the work it did so far. Set one for open-ended or exploratory work that could loop", Fields: []ArgSpec{
					{Name: "steps", Type: "number", Description: "The most model calls"},
					{Name: "tokens", Type: "number", Description: "The most tokens, over all its model calls"},
					{Name: "costUsd", Type: "number", Description: "The most cost in US dollars"},
				}},
			},
		},
		{
			Name: ToolOutput,
			Description: `Get the result of a background task launched with asyncagents_task, or its progress while it runs.

It answers at once by default. Set block to true to wait until the task finishes (or until timeout seconds pass); prefer not to block while you have other work, since a notice arrives by itself when the task is done.`,
			Args: []ArgSpec{
				{Name: "task_id", Type: "string", Required: true, Description: "The task_id returned by asyncagents_task (or the task's session_id)"},
				{Name: "block", Type: "boolean", Description: "Wait until the task finishes (default false)"},
				{Name: "timeout", Type: "number", Description: "With block: the most seconds to wait (default 120, at most 600)"},
				{Name: "offset", Type: "number", Description: "A long result comes in parts: the character where the part starts (default 0); each answer names the next part's offset"},
				{Name: "limit", Type: "number", Description: "The most characters of the result in this part (default and most: 40000)"},
			},
		},
		{
			Name:        ToolCancel,
			Description: "Cancel a background task of this session (its subagent is stopped), or all of them with all: true. Use it when a task's result is no longer needed. A notice confirms each cancellation.",
			Args: []ArgSpec{
				{Name: "task_id", Type: "string", Description: "The task to cancel: its task_id (or its session_id)"},
				{Name: "all", Type: "boolean", Description: "Cancel every running or queued task of this session instead"},
				{Name: "reason", Type: "string", Description: "Why, kept with the task"},
			},
		},
		{
			Name:        ToolList,
			Description: "List this session's background tasks with their status, agent, run time and tool calls. (resumed) and (forked) mark tasks that were resumed or started with this conversation's context.",
			Args:        []ArgSpec{},
		},
		messageTool(),
		mergeTool(),
		{
			Name:        ToolClear,
			Description: "Forget this session's finished background tasks (completed, failed or cancelled), to tidy asyncagents_list. Running and queued tasks are kept and keep running; to stop them, use asyncagents_cancel.",
			Args:        []ArgSpec{},
		},
	}
}
