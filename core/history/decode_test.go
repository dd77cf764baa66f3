package history

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/task"
	"github.com/stretchr/testify/require"
)

// The core's own records take the fast path, whatever their strings hold.
func TestFastRecordReadsTheCoresOwnLines(t *testing.T) {
	log := sampleLog(33, false)
	tricky := &task.Task{ID: "ses_x", Prompt: "line\nquote\" back\\slash \u2028 tab\t é 😀 <html>&", Result: strings.Repeat("ü", 40),
		Error: &task.TaskError{Name: "E", Message: "m\"x"}, Progress: task.Progress{LastTools: []string{"a\"b"}}, Status: task.StatusError, StartedAt: -5,
		Tokens: &task.Tokens{Input: 12, Output: 3, CacheRead: 100}, Cost: 0.000125}
	lines := strings.Split(log+Line(Record{Task: tricky})+Line(Record{Removed: "ses_y"}), "\n")
	fast := 0
	for _, l := range lines {
		if l == "" {
			continue
		}
		_, body, _ := strings.Cut(l, " ")
		got, err := fastRecord(body)
		require.NoError(t, err, body)
		var want Record
		require.NoError(t, unmarshalRecord([]byte(body), &want))
		require.Equal(t, want, got)
		fast++
	}
	require.Greater(t, fast, 10)
}

// FuzzDecodeRecord holds the fast decoder to encoding/json: whatever it accepts, encoding/json
// accepts too and decodes to the same record.
func FuzzDecodeRecord(f *testing.F) {
	log := sampleLog(11, false)
	for _, l := range strings.Split(log, "\n") {
		if _, body, ok := strings.Cut(l, " "); ok {
			f.Add(body)
		}
	}
	f.Add(`{"removed":"ses_\u00e9"}`)
	f.Add(`{"task":{"sessionID":"a","startedAt":-0,"isForked":true,"error":null,"progress":{"toolCalls":1,"lastTools":["x"]}}}`)
	f.Add(`{"task":{"sessionID":"a","cost":1.5e-7,"tokens":{"input":1,"cacheWrite":2}}}`)
	f.Add(`{"task":{"sessionID":"a","cost":-0.0E+01}}`)
	f.Add(`{"task":{"sessionID":"a","cost":1e400}}`)
	f.Add(`{"task":{"sessionID":"a\ud83d\ude00\ud800x","depth":01}}`)
	f.Fuzz(func(t *testing.T, body string) {
		got, err := fastRecord(body)
		if err != nil {
			return
		}
		var want Record
		require.NoError(t, unmarshalRecord([]byte(body), &want), "the fast path accepted what encoding/json refuses: %q", body)
		require.Equal(t, want, got, "%q", body)
	})
}

func BenchmarkDecodeRecord(b *testing.B) {
	line := strings.TrimSuffix(sampleLog(1, false), "\n")
	_, body, _ := strings.Cut(line, " ")
	b.Run("fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := fastRecord(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var r Record
			if err := json.Unmarshal([]byte(body), &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// validPlain agrees with the byte-at-a-time check on every length and every position of a
// control byte, a non-ASCII rune and an invalid byte.
func TestValidPlainMatchesSlowCheck(t *testing.T) {
	bad := []string{"\x00", "\x1f", "\n", "é", "\xff", "\xe2\x82", "日本", "\x7f", " ", "~"}
	for n := 0; n < 20; n++ {
		base := strings.Repeat("a", n)
		require.Equal(t, validPlainSlow(base), validPlain(base), "%q", base)
		for at := 0; at <= n; at++ {
			for _, b := range bad {
				s := base[:at] + b + base[at:]
				require.Equal(t, validPlainSlow(s), validPlain(s), "%q", s)
			}
		}
	}
}

// plainASCIIPrefix stops exactly at the first quote, backslash, control or non-ASCII byte, at
// every position and length.
func TestPlainASCIIPrefix(t *testing.T) {
	slow := func(s string) int {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return i
			}
		}
		return len(s)
	}
	for n := 0; n < 20; n++ {
		base := strings.Repeat("x", n)
		require.Equal(t, n, plainASCIIPrefix(base))
		for at := 0; at <= n; at++ {
			for _, b := range []string{`"`, `\`, "\x00", "\x1f", "\x7f", "é", "\xff", "!", "#", "[", "]", " ", "~"} {
				s := base[:at] + b + base[at:]
				require.Equal(t, slow(s), plainASCIIPrefix(s), "%q", s)
			}
		}
	}
}

// Every field of a task, set: the hand-written reader gives what encoding/json gives, and takes
// the fast path for all of them but fallbackInfo, partial and steers (lists of structs, which
// encoding/json reads).
func TestFastTaskReadsEveryField(t *testing.T) {
	full := task.Task{ID: "bg_a", SessionID: "ses_a", ParentSessionID: "ses_p", ParentMessageID: "msg_p", ParentAgent: "build", ParentTitle: "t", BatchID: "b1",
		Description: "d", Prompt: "p\n\"q\"", Agent: "general", Worker: "w1", Status: task.StatusError, StartedAt: 1, CompletedAt: -2, Result: "r",
		Error: &task.TaskError{Name: "E", Message: "m", StatusCode: 429}, Progress: task.Progress{ToolCalls: 3, LastTools: []string{"read", "grep"}, LastUpdate: 4},
		ResumeCount: 5, IsForked: true, RetrievedAt: 6, Queued: true, Waiting: &task.Wait{Limit: "l", Max: 1, Position: 2}, Depth: 2, CancelReason: "why", ResumedAt: 7, ForkTokens: 8,
		Models: []string{"a/b", "c/d"}, Model: "a/b", TimeoutMs: 9, StalledSince: 10, QueuedUntil: 11, Stalls: []task.Span{{From: 12, To: 13}}, Tokens: &task.Tokens{Input: 9, Reasoning: 2}, Cost: 0.25,
		Steps: 4, UsageMarks: []task.UsageMark{{Session: "ses_a", Message: "msg_2", Tokens: task.Tokens{Input: 3}, Cost: 0.1, Step: "prt_4"}}, Budget: &task.Budget{Tokens: 7}, NoticeOwed: 11, NotifiedAt: 12, Retry: &task.Retry{Attempt: 2, Message: "HTTP 500", Next: 14},
		Worktree: &task.Worktree{Path: "/w/bg_a", Branch: "asyncagents/bg_a", Base: "b", Head: "h", Commit: "c", Files: []task.FileChange{{Path: "x.go", Added: 1, Removed: 2}}, Diff: "d", DiffCut: true, Merge: task.MergePending, MergeNote: "n"}}
	// The test notices a field added to Task and not set here. View is the status API's, never
	// in the history.
	v := reflect.ValueOf(full)
	for i := 0; i < v.NumField(); i++ {
		if name := v.Type().Field(i).Name; v.Type().Field(i).IsExported() && name != "FallbackInfo" && name != "Partial" && name != "Steers" && name != "Permissions" && name != "View" {
			require.False(t, v.Field(i).IsZero(), "set %s in this test", v.Type().Field(i).Name)
		}
	}
	withFallback := full
	withFallback.FallbackInfo = &task.FallbackInfo{Occurred: true, Attempts: []task.FallbackAttempt{{Model: "a/b"}}, TotalAttempts: 1}
	withPartial := full
	withPartial.Partial = &task.Partial{Text: "half", TextChars: 4, Tools: []task.ToolRun{{Name: "read", Title: "a.go"}, {Name: "bash"}}}
	withSteers := full
	withSteers.Steers = []task.Steer{{At: 3, Text: "x"}, {At: 4, Text: "y", BeforeStart: true}}
	withPermissions := full
	withPermissions.Permissions = []task.PermissionRequest{{ID: "per_1", SessionID: "ses_a", Permission: "bash", Patterns: []string{"echo"}, At: 5}}
	for _, tk := range []task.Task{full, withFallback, withPartial, withSteers, withPermissions} {
		body, err := json.Marshal(Record{Task: &tk})
		require.NoError(t, err)
		var want Record
		require.NoError(t, unmarshalRecord(body, &want))
		got, err := Decode(string(body))
		require.NoError(t, err)
		require.Equal(t, want, got)
		_, err = fastRecord(string(body))
		require.NoError(t, err, "the fast path reads every field, arrays of objects included")
	}
}

// A repeated key, a key in another case, a null and a space are left to encoding/json, which merges,
// matches case-insensitively and ignores them.
func TestFastTaskLeavesOddRecordsToEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{"task":{"sessionID":"a","sessionID":"b"}}`,
		`{"task":{"SessionID":"a"}}`,
		`{"task":{"sessionID":"a","result":null}}`,
		`{"task":{"sessionID": "a"}}`,
		`{"task":{"sessionID":"a","progress":{"toolCalls":1,"toolCalls":2}}}`,
	} {
		_, err := fastRecord(body)
		require.ErrorIs(t, err, errSlowPath, body)
		var want Record
		require.NoError(t, unmarshalRecord([]byte(body), &want))
		got, err := Decode(body)
		require.NoError(t, err)
		require.Equal(t, want, got, body)
	}
}

// unmarshalRecord reads a record as encoding/json does, then as the core reads an ID (a record
// of an earlier release names its task by its session).
func unmarshalRecord(b []byte, r *Record) error {
	err := json.Unmarshal(b, r)
	if r.Task != nil {
		r.Task.AdoptLegacyID()
	}
	return err
}
