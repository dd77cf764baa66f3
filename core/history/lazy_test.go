package history

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/task"
)

// A finished task's record is read head first only when its head holds every field the head
// stands for; one written in another order (agent after startedAt here) is read whole.
func TestRecordsInAnotherOrderAreReadWhole(t *testing.T) {
	inOrder := `{"task":{"sessionID":"a","parentSessionID":"p","parentMessageID":"m","batchId":"b","description":"d","prompt":"x","agent":"general","status":"completed","startedAt":1,"result":"r","progress":{"toolCalls":0,"lastTools":[],"lastUpdate":0}}}`
	reordered := `{"task":{"sessionID":"a","parentSessionID":"p","parentMessageID":"m","batchId":"b","description":"d","prompt":"x","status":"completed","startedAt":1,"agent":"general","result":"r"}}`
	running := strings.Replace(inOrder, `"completed"`, `"running"`, 1)
	for _, c := range []struct {
		body string
		head bool
	}{{inOrder, true}, {reordered, false}, {running, false}} {
		r, err := ReadHead(c.body)
		require.NoError(t, err)
		require.Equal(t, c.head, r.Task.Lazy(), c.body)
		require.Equal(t, "general", r.Task.Agent)
		Load(r.Task)
		whole, err := Decode(c.body)
		require.NoError(t, err)
		if whole.Task.Progress.LastTools == nil && c.head {
			whole.Task.Progress.LastTools = []string{}
		}
		require.Equal(t, whole.Task, r.Task, c.body)
	}
}

// FuzzLazyRecord: a record the fast reader reads (every record the core writes), read head first
// and then loaded, is the record read whole. (A record only encoding/json reads, such as one
// with a key repeated after the head, can only be made by hand: see lazy.go.)
func FuzzLazyRecord(f *testing.F) {
	for _, l := range strings.Split(sampleLog(12, true), "\n") {
		if _, body, ok := strings.Cut(l, " "); ok {
			f.Add(body)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		whole, err := fastRecord(body)
		if err != nil || whole.Task == nil {
			return
		}
		r, err := ReadHead(body)
		require.NoError(t, err)
		Load(r.Task)
		for _, tk := range []*task.Task{whole.Task, r.Task} {
			if tk.Progress.LastTools == nil {
				tk.Progress.LastTools = []string{}
			}
		}
		require.Equal(t, whole.Task, r.Task, "%q", body)
	})
}
