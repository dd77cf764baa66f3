package core

import (
	"encoding/binary"
	"strings"

	"github.com/asyncagents/asyncagents/core/history"
	"github.com/asyncagents/asyncagents/core/internal/xxh64"
	"github.com/asyncagents/asyncagents/core/task"
)

// Task IDs are the core's own: "bg_" and 22 characters, minted when asyncagents_task is called,
// so a launch answers without waiting for OpenCode to create the child session (that round trip
// made our launch 11 to 16 times slower than OpenCode's native background task). A task learns
// its child session's ID once the session exists; every lookup takes either ID.
//
// The ID is the launch time in milliseconds and a per-machine sequence number (12 hex digits:
// sortable, like OpenCode's own IDs), then 10 hex digits of XXH64 over the host's random seed
// and that number. The sequence keeps two launches of one process apart, even in the same
// millisecond; the seed keeps apart two processes (two projects, or two OpenCode instances on
// one), which may launch in the same millisecond. The core reads no clock and draws no random
// number: with the same seed, the same steps mint the same IDs.

// mintTaskID returns a new task ID.
func (m *Machine) mintTaskID() string {
	m.idSeq++
	stamp := uint64(m.now)<<12 | (m.idSeq & 0xfff)
	var in [8]byte
	binary.LittleEndian.PutUint64(in[:], m.idSeq)
	mix := xxh64.Sum(append([]byte(m.idSeed), in[:]...))
	b := make([]byte, 0, len(task.IDPrefix)+22)
	b = append(b, task.IDPrefix...)
	b = appendHexN(b, stamp, 12)
	b = appendHexN(b, mix, 10)
	return string(b)
}

// appendHexN appends the low n hex digits of v.
func appendHexN(b []byte, v uint64, n int) []byte {
	const digits = "0123456789abcdef"
	for i := n - 1; i >= 0; i-- {
		b = append(b, digits[(v>>(4*uint(i)))&0xf])
	}
	return b
}

// task returns the task with id, its own ID or its child session's, read whole; nil if none.
func (m *Machine) task(id string) *run {
	t := m.tasks[id]
	if t == nil && id != "" && !strings.HasPrefix(id, task.IDPrefix) {
		if m.sessionsStale {
			m.indexSessions()
		}
		t = m.tasks[m.sessions[id]]
	}
	if t != nil {
		history.Load(&t.Task)
	}
	return t
}

// bindSession records that t's child session is sessionID.
func (m *Machine) bindSession(t *run, sessionID string) {
	t.SessionID = sessionID
	// What was seen of another session (a rerun elsewhere, on another clock) says nothing here.
	t.userAfter = 0
	if t.Worker != "" {
		// A walk that ended at a parentless session while this child was unbound held that
		// session's spending back (workers_trace.go): it may have been this child's subagent.
		m.walkHeld = nil
	}
	if sessionID != t.ID {
		if m.sessions == nil {
			m.sessions = map[string]string{}
		}
		m.sessions[sessionID] = t.ID
	}
}

// indexSessions maps every task's session to the task, after a restore brought tasks in (it
// reads only the heads, which hold the session).
func (m *Machine) indexSessions() {
	m.sessionsStale = false
	m.sessions = map[string]string{}
	for id, t := range m.tasks {
		if t.SessionID != "" && t.SessionID != id {
			m.sessions[t.SessionID] = id
		}
	}
}

// metadata is a tool answer's metadata for t: the title the TUI shows, both IDs, and extra
// key-value pairs.
func (t *run) metadata(title string, kv ...string) map[string]any {
	md := map[string]any{"title": title, "taskId": t.ID}
	if t.SessionID != "" {
		md["sessionId"] = t.SessionID
	}
	for i := 0; i+1 < len(kv); i += 2 {
		md[kv[i]] = kv[i+1]
	}
	return md
}

// sessionTask returns the task with id if a session launched it, read whole; nil otherwise.
// Loops over every task that pick one session's use it: the parent is in the head, so the
// other sessions' tasks (a whole history of them) are not read.
func (m *Machine) sessionTask(id, parentSessionID string) *run {
	t := m.tasks[id]
	if t == nil || t.ParentSessionID != parentSessionID {
		return nil
	}
	history.Load(&t.Task)
	return t
}
