package httpapi

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/asyncagents/asyncagents/core/task"
)

// Server-Sent Events for GET /v1/events. A stream opens with a snapshot (Serve's Body);
// then the core hands hosts one frame per task change (TaskFrame) and a heartbeat after 30
// seconds without an event (HeartbeatFrame). Every frame is "event: <name>\ndata: <JSON>\n\n":
// no id lines, so a reconnecting client (whatever its Last-Event-ID) always starts again from a
// fresh snapshot.

// SSE event names.
const (
	SSESnapshot      = "snapshot"
	SSEHeartbeat     = "heartbeat"
	SSETaskCreated   = "task.created"
	SSETaskUpdated   = "task.updated"
	SSETaskCompleted = "task.completed"
	SSETaskError     = "task.error"
	SSETaskCancelled = "task.cancelled"
	// SSEResync stands for more task changes at once than a stream may hold (a burst a follow
	// read, a cancel of many): the client reads the tasks again, as after a snapshot.
	SSEResync = "resync"
)

// SSEResyncData is a resync event's data: how many tasks changed.
type SSEResyncData struct {
	Changed int `json:"changed"`
}

// ResyncFrame is the one frame that stands for changed task frames.
func ResyncFrame(changed int) string { return SSEFrame(SSEResync, SSEResyncData{Changed: changed}) }

// SSEHeartbeatIntervalMs is how long a stream may stay silent before a heartbeat.
const SSEHeartbeatIntervalMs = 30_000

// SSEFrame renders one event. data is marshalled with encoding/json, whose output has no raw
// newlines, so the frame has one data line; a marshalling failure sends {"error": ...} instead.
func SSEFrame(event string, data any) string {
	b, err := json.Marshal(data)
	if err != nil {
		b, _ = json.Marshal(apiErrorBody{Error: "encoding the event failed: " + err.Error()})
	}
	return SSEFrameJSON(event, b)
}

// eventNameBreaks takes line breaks out of an event's name, which would end its line early.
var eventNameBreaks = strings.NewReplacer("\r", "", "\n", "")

// SSEFrameJSON renders one event whose data is JSON already written as json.Marshal writes it
// (task.AppendJSON): a task's frame goes out on every change of a running task, and marshalling
// its bytes again (encoding/json re-reads a RawMessage whole) was most of that change's cost.
func SSEFrameJSON(event string, b []byte) string {
	if strings.ContainsAny(event, "\r\n") {
		event = eventNameBreaks.Replace(event)
	}
	var sb strings.Builder
	sb.Grow(len(event) + len(b) + 16)
	sb.WriteString("event: ")
	sb.WriteString(event)
	sb.WriteByte('\n')
	// Defensive: should data ever hold a line break, each line goes on its own data line,
	// which a client joins back with "\n".
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		sb.WriteString("data: ")
		sb.WriteString(line)
		sb.WriteByte('\n')
	}
	sb.WriteByte('\n')
	return sb.String()
}

// SSESnapshotData is a snapshot event's data: every task, newest first as /v1/tasks lists them, and
// the stats /v1/stats gives.
type SSESnapshotData struct {
	Tasks []*task.Task `json:"tasks"`
	Stats APIStats     `json:"stats"`
}

// SnapshotFrame renders the snapshot event a stream opens with.
func SnapshotFrame(tasks []task.Task, now int64) string {
	return Snapshot(apiPtrs(tasks), now)
}

// Snapshot is SnapshotFrame over tasks shared, not copied.
func Snapshot(tasks []*task.Task, now int64) string {
	s := SSESnapshotData{Tasks: apiOutAll(tasks, apiNewestFirst(tasks, nil), now), Stats: apiComputeStats(tasks, now)}
	return SSEFrame(SSESnapshot, s)
}

// TaskEventName names the event for a task change: task.created for a new task (whatever its
// status), task.completed / task.error / task.cancelled when it has just reached that status,
// and task.updated for anything else (progress, a resume, a retrieved result).
func TaskEventName(prev, next task.Status, created bool) string {
	if created {
		return SSETaskCreated
	}
	if next != prev {
		switch next {
		case task.StatusCompleted:
			return SSETaskCompleted
		case task.StatusError:
			return SSETaskError
		case task.StatusCancelled:
			return SSETaskCancelled
		}
	}
	return SSETaskUpdated
}

// TaskFrame renders the event for a task change: the task itself is the data, as the API shows
// it everywhere.
func TaskFrame(prev task.Status, created bool, t task.Task, now int64) string {
	return SSEFrame(TaskEventName(prev, t.Status, created), apiOut(&t, now))
}

// SSEHeartbeatData is a heartbeat event's data.
type SSEHeartbeatData struct {
	TS string `json:"ts"`
}

// HeartbeatFrame renders a heartbeat; ts is now in ISO 8601 UTC with milliseconds, as
// JavaScript's Date.toISOString writes it.
func HeartbeatFrame(now int64) string {
	return SSEFrame(SSEHeartbeat, SSEHeartbeatData{TS: ISOMillis(now)})
}

// ISOMillis is ms (Unix milliseconds) as an ISO 8601 UTC time with milliseconds, as
// JavaScript's Date.toISOString writes it.
func ISOMillis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
