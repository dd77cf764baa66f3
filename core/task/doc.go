// Package task is the task record: Task, its Status and lifecycle, its error, progress and
// fallback record, and its JSON encoding (encode.go, byte for byte what encoding/json writes).
// It is what the hosts, the status API and the history see of a task; what the machine keeps of
// a run beside the record (the fallback loop's place, the tracked message, the index positions)
// is package core's run and never leaves the machine.
//
// It imports errclass (a failure's provider error) and the internal JSON writer, nothing above.
package task
