// Package history is the task history's format: a line is `<xxh64> <json>\n`, where the JSON is
// a task's record (or {"removed": id}) and the checksum (16 hex digits, package
// internal/xxh64; 8 of CRC-32 on lines written before it) covers the JSON. It writes and checks
// lines (record.go), decodes records, mostly without encoding/json's reflection (decode.go,
// decode_task.go), and reads a finished task's record head first, the rest on first need
// (lazy.go).
//
// It decides nothing: when to write, compact, restore or reconcile is the machine's (package
// core, history*.go). It imports task and the leaves, nothing above.
package history
