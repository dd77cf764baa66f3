package view

// OnWorkerPrefix comes before a worker's name wherever a task on a worker is shown ("on worker
// w1"): the terminal UI's rows, the dashboard's task list and task page (which read it as
// VIEW_ON_WORKER), the tools' answers and the notices.
const OnWorkerPrefix = "on worker "

// OnWorker says where a task runs when it runs on a worker: "on worker w1"; "" for a local task.
func OnWorker(worker string) string {
	if worker == "" {
		return ""
	}
	return OnWorkerPrefix + worker
}
