package core

// --- The words of tasks on workers (workers.go, workers_launch.go). ---

const (
	workerUnreachableFmt = "asyncagents_task: worker %s cannot be reached: %s; no task was created"
	workerLostFmt        = "worker %s was lost: %s"
	workerGoneFmt        = "worker %s is no longer configured (workers in asyncagents.json), so the task cannot be followed"
	workerOnResume       = "asyncagents_task: worker applies to a new task; a resumed task stays on the worker it ran on; no task was resumed"
	onWorkerFmt          = " on worker %s"
)
