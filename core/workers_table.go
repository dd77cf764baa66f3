package core

import (
	"encoding/json"
	"fmt"

	"github.com/asyncagents/asyncagents/core/text"
)

// workersAnswer is GET /v1/workers's answer (workersBody), as the CLIs fetch it from the running
// server and hand it over.
type workersAnswer struct {
	Workers []WorkerInfo `json:"workers"`
}

// NoWorkers is the table when the config names no worker.
const NoWorkers = "No workers configured: add them under \"workers\" in the asyncagents config\n"

// WorkersTable renders GET /v1/workers's answer for a terminal (`asyncagents workers`): one row
// a worker, with its health (and for how long, and why, when it is not up), its load and the
// OpenCode version it answered with. The health comes last: its reason is the longest cell. A
// read-only view's rows show its own health asks, and a line under them says so; a resting
// worker's row says so, with what its last health ask heard.
func WorkersTable(body string, now int64) (string, error) {
	var a workersAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		return "", fmt.Errorf("the server's answer to /v1/workers is not its JSON: %v", err)
	}
	if len(a.Workers) == 0 {
		return NoWorkers, nil
	}
	rows := [][]string{{"NAME", "URL", "RUNNING", "QUEUED", "VERSION", "HEALTH"}}
	note := ""
	for _, w := range a.Workers {
		health, since, why := w.State, w.LastChangeAt, w.Error
		if w.State == WorkerNotFollowed {
			// A read-only view: its own health asks, never a stream's state.
			health, since, why, note = w.Health, w.HealthSince, w.HealthError, probeNote()
		}
		if health == "" {
			health = "unknown"
		}
		if since > 0 && now > 0 {
			health += " for " + text.Duration(now-since)
		}
		if w.PollMs > 0 && w.State != WorkerNotFollowed {
			health += ", polled every " + text.Duration(w.PollMs) // no stream: its health asks
		}
		if w.State == WorkerResting {
			// No task of this parent there: its stream is closed, its health asked.
			health += ", " + cellOr(w.Health, WorkerUnknown)
			why = w.HealthError
		}
		if why != "" {
			health += ": " + why
		}
		version := w.Version
		if version == "" {
			version = "-" // not asked yet, or never reached
		}
		rows = append(rows, []string{w.Name, w.URL, fmt.Sprintf("%d/%d", w.Running, w.MaxTasks), fmt.Sprint(w.Queued), version, health})
	}
	return alignColumns(rows) + note, nil
}
